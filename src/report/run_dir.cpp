#include "report/run_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

std::string command_slug(const std::vector<std::string>& argv) {
    std::string name;
    for (const auto& arg : argv) {
        fs::path p(arg);
        if (p.extension() == ".py" || p.extension() == ".sh") {
            name = p.stem().string();
            break;
        }
    }
    if (name.empty() && !argv.empty()) {
        name = fs::path(argv[0]).filename().string();
        if (argv.size() > 1 && !argv[1].empty() && argv[1][0] != '-' && argv[1].find('/') == std::string::npos &&
            name.rfind("python", 0) != 0)
            name += "-" + argv[1];
    }
    std::string slug;
    for (char c : name) slug += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    return slug.empty() ? "run" : slug.substr(0, 40);
}

RunDir prepare_run_dir(const fs::path& requested) {
    std::error_code ec;
    fs::create_directories(requested, ec);
    if (ec) throw UsageError("run directory " + requested.string(), ec.message());
    const fs::path probe = requested / (".sparkguard-probe-" + std::to_string(::getpid()));
    if (auto written = write_file_atomic(probe, ""); !written)
        throw UsageError("run directory " + requested.string(), "not writable (" + written.error().message + ")");
    fs::remove(probe, ec);
    return RunDir{requested};
}

RunDirLock::~RunDirLock() { ::close(fd_); }

void lock_run_dir(RunDir& dir, const std::vector<std::string>& command) {
    // O_CLOEXEC: a trainer that inherited the descriptor would hold the lock after sparkguard died.
    const int fd = ::open(dir.lock_file().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw UsageError("run directory " + dir.path.string(), dir.lock_file().string() + ": " + errno_text(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int saved = errno;
        ::close(fd);
        if (saved != EWOULDBLOCK) throw UsageError("run directory " + dir.path.string(), "cannot lock: " + errno_text(saved));
        auto holder = read_file(dir.lock_file());
        std::string who = holder ? std::string(trim(*holder)) : "";
        std::replace(who.begin(), who.end(), '\n', ' ');
        throw UsageError("run directory " + dir.path.string(),
                         "in use by another sparkguard (" + (who.empty() ? "its PID is not recorded" : "PID " + who) +
                             "): one run directory takes one sparkguard at a time");
    }
    const std::string owner = std::to_string(::getpid()) + "\n" + join(command, " ") + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, owner.data(), owner.size(), 0) != static_cast<ssize_t>(owner.size())) {
        // the lock holds regardless; only the note for whoever is refused is missing
    }
    dir.lock = std::make_shared<RunDirLock>(fd);
}

bool holds_a_run(const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / "train.log", ec) || fs::exists(dir / "report.json", ec);
}

fs::path move_aside(const fs::path& dir) {
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    const fs::path clean = dir.has_filename() ? dir : dir.parent_path();
    const fs::path base = clean.string() + ".previous-" + stamp;
    fs::path target = base;
    for (int n = 2; fs::exists(target); ++n) target = base.string() + "-" + std::to_string(n);
    std::error_code ec;
    fs::rename(clean, target, ec);
    if (ec) throw UsageError("--overwrite " + dir.string(), "cannot move the earlier run aside: " + ec.message());
    return target;
}

RunDir new_default_run_dir(const std::vector<std::string>& argv) {
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", &local);
    const fs::path base = fs::path("runs") / (std::string(date) + "-" + command_slug(argv));
    fs::path candidate = base;
    for (int n = 2; fs::exists(candidate); ++n) candidate = base.string() + "-" + std::to_string(n);
    return prepare_run_dir(candidate);
}

}  // namespace sg
