#include "supervise/drop_caches.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include "supervise/capture.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"

namespace sg {

namespace {

constexpr const char* kDropCaches = "/proc/sys/vm/drop_caches";
constexpr double kSudoTimeout = 60;  // sync alone can take a while with much dirty data

std::string user_name() {
    const passwd* pw = ::getpwuid(::geteuid());
    return pw ? pw->pw_name : "#" + std::to_string(::geteuid());
}

// sudo -n ARGS...: the command's exit 0, or what sudo (or the command) said.
Status run_sudo(std::vector<std::string> args) {
    args.insert(args.begin(), {"sudo", "-n"});
    auto ran = capture_output(args, kSudoTimeout);
    if (!ran) return ran.error();
    if (ran->timed_out) return make_error(join(args, " ") + ": timed out");
    if (ran->exit_code == 0) return Ok{};
    const std::string said(trim(ran->err.empty() ? ran->out : ran->err));
    return make_error(join(args, " ") + ": exit " + std::to_string(ran->exit_code) + (said.empty() ? "" : ": " + said));
}

std::string refused(const std::string& why) {
    const std::string exe = executable_path().string();
    return "not root, and " + why + "; to allow it, add to /etc/sudoers.d/sparkguard (visudo -f): " +
           sudoers_line(user_name(), exe) + " (example: sparkguard-drop-caches.sudoers in the package's examples)";
}

}  // namespace

Status drop_caches_here() {
    ::sync();
    int fd = ::open(kDropCaches, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return make_error(std::string(kDropCaches) + ": " + errno_text(errno));
    bool ok = ::write(fd, "3\n", 2) == 2;
    int saved = errno;
    ::close(fd);
    if (!ok) return make_error(std::string(kDropCaches) + ": " + errno_text(saved));
    return Ok{};
}

DropCachesResult drop_caches() {
    if (::geteuid() == 0) {
        auto dropped = drop_caches_here();
        return {bool(dropped), "root", dropped ? "" : dropped.error().message};
    }
    auto dropped = run_sudo({executable_path().string(), "drop-caches"});
    return {bool(dropped), "sudo", dropped ? "" : dropped.error().message};
}

std::string sudoers_line(std::string_view user, std::string_view exe) {
    return std::string(user) + " ALL=(root) NOPASSWD: " + std::string(exe) + " drop-caches";
}

std::string drop_caches_blocker() {
    if (::geteuid() == 0)
        return ::access(kDropCaches, W_OK) == 0 ? "" : std::string(kDropCaches) + " is not writable here (a container?)";
    auto allowed = run_sudo({"-l", executable_path().string(), "drop-caches"});
    return allowed ? "" : refused("sudo -n did not allow it (" + allowed.error().message + ")");
}

}  // namespace sg
