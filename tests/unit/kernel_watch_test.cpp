// KernelWatch against a real kernel OOM kill: python3 in a 64 MiB memory cgroup allocating until
// the kernel kills it. Needs root and a writable memory cgroup (v1, or v2 with the memory
// controller delegated at the root); elsewhere the test says why it did not run.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "oom/classifier.hpp"
#include "oom/kernel_watch.hpp"
#include "util/files.hpp"

using namespace sg;
using namespace sg::oom;

namespace {

constexpr long long kLimitBytes = 64ll << 20;

bool write_text(const fs::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
    out.flush();
    return static_cast<bool>(out);
}

// A child memory cgroup with a unique name, removed on every exit path.
class TestCgroup {
public:
    static std::optional<TestCgroup> create(std::string& why_not) {
        if (::geteuid() != 0) {
            why_not = "not root";
            return std::nullopt;
        }
        auto mountinfo = read_file("/proc/self/mountinfo");
        if (!mountinfo) {
            why_not = mountinfo.error().message;
            return std::nullopt;
        }
        static int serial = 0;
        const std::string name = "sparkguard-test-" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
        for (const auto& mount : parse_cgroup_mounts(*mountinfo)) {
            if (mount.unified && !has_v2_memory(mount.mount_point)) continue;
            TestCgroup group(mount.mount_point / name, mount.unified);
            std::error_code ec;
            if (!fs::create_directory(group.path_, ec)) continue;
            if (group.limit()) return group;
        }
        why_not = "no writable memory cgroup hierarchy";
        return std::nullopt;
    }

    TestCgroup(TestCgroup&& other) noexcept : path_(std::exchange(other.path_, {})), unified_(other.unified_) {}
    ~TestCgroup() {
        if (path_.empty()) return;
        for (int attempt = 0; attempt < 100 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++attempt)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }

    bool add(pid_t pid) const { return write_text(path_ / "cgroup.procs", std::to_string(pid)); }
    const fs::path& path() const { return path_; }

private:
    TestCgroup(fs::path path, bool unified) : path_(std::move(path)), unified_(unified) {}

    static bool has_v2_memory(const fs::path& root) {
        auto controls = read_file(root / "cgroup.subtree_control");
        return controls && controls->find("memory") != std::string::npos;
    }

    bool limit() const {
        const std::string bytes = std::to_string(kLimitBytes);
        if (unified_) {
            if (fs::exists(path_ / "memory.swap.max")) write_text(path_ / "memory.swap.max", "0");
            return write_text(path_ / "memory.max", bytes);
        }
        if (!write_text(path_ / "memory.limit_in_bytes", bytes)) return false;
        if (fs::exists(path_ / "memory.memsw.limit_in_bytes")) write_text(path_ / "memory.memsw.limit_in_bytes", bytes);
        return true;
    }

    fs::path path_;
    bool unified_ = false;
};

// A python3 that waits for a byte on `go`, then allocates until something stops it.
pid_t spawn_allocator(int go) {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    char byte;
    if (::read(go, &byte, 1) != 1) ::_exit(120);
    ::execl("/usr/bin/python3", "python3", "-c",
            "chunks = []\nwhile True:\n    chunks.append(b'x' * (1 << 20))\n", static_cast<char*>(nullptr));
    ::_exit(127);
}

// Waits up to `seconds` for the child; kills it when it overstays.
std::optional<int> wait_for(pid_t pid, int seconds) {
    for (int i = 0; i < seconds * 50; ++i) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) return status;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return std::nullopt;
}

}  // namespace

TEST_CASE("a real kernel OOM kill in a memory cgroup is seen by KernelWatch", "[kernel][real]") {
    std::string why_not;
    auto cgroup = TestCgroup::create(why_not);
    if (!cgroup) {
        WARN("real OOM-kill test not run: " << why_not);
        return;
    }
    int go[2];
    REQUIRE(::pipe(go) == 0);
    const pid_t pid = spawn_allocator(go[0]);
    ::close(go[0]);
    REQUIRE(pid > 0);
    const bool added = cgroup->add(pid);
    auto watch = KernelWatch::start(pid);
    REQUIRE(::write(go[1], "g", 1) == 1);
    ::close(go[1]);
    const auto status = wait_for(pid, 60);
    REQUIRE(added);
    REQUIRE(status);
    REQUIRE(WIFSIGNALED(*status));
    CHECK(WTERMSIG(*status) == SIGKILL);

    const KernelEvidence kernel = watch.collect({pid});
    REQUIRE(watch.cgroup_counter());
    CHECK(watch.cgroup_counter()->parent_path() == cgroup->path());
    REQUIRE(kernel.cgroup_oom_kills);
    CHECK(*kernel.cgroup_oom_kills >= 1);
    if (kernel.kernel_log_read) {
        REQUIRE(kernel.trainer_kills.size() >= 1);
        CHECK(kernel.trainer_kills.front().pid == pid);
        CHECK(kernel.trainer_kills.front().memcg);
        CHECK_THAT(kernel.trainer_kills.front().text, Catch::Contains("Killed process " + std::to_string(pid)));
    } else {
        WARN("kernel log not readable here, checked the cgroup counter only: " << kernel.unavailable.front());
    }
    if (kernel.system_oom_kills) CHECK(*kernel.system_oom_kills >= 1);

    Classifier classifier;
    const Verdict v = classifier.verdict(ExitStatus::from_wait_status(*status), kernel);
    CHECK(v.oom);
    CHECK(v.kind == Kind::cgroup_oom_kill);
    CHECK(v.confidence == Confidence::certain);
}

TEST_CASE("KernelWatch on sources it cannot read says why and never throws", "[kernel]") {
    const fs::path root = fs::temp_directory_path() / ("sparkguard-watch-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "proc" / "self");
    fs::create_directories(root / "proc" / "4242");
    fs::create_directories(root / "cg" / "job");
    REQUIRE(write_text(root / "proc" / "self" / "mountinfo",
                       "41 31 0:38 / " + (root / "cg").string() + " rw,relatime - cgroup2 cgroup2 rw\n"));
    REQUIRE(write_text(root / "proc" / "4242" / "cgroup", "0::/job\n"));
    REQUIRE(write_text(root / "cg" / "job" / "memory.events", "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n"));
    REQUIRE(write_text(root / "proc" / "vmstat", "nr_free_pages 1\noom_kill 10\n"));

    KernelWatch::Sources sources{root / "no-kmsg", root / "proc", false};
    auto watch = KernelWatch::start(4242, sources);
    REQUIRE(write_text(root / "cg" / "job" / "memory.events", "low 0\nhigh 0\nmax 9\noom 3\noom_kill 3\n"));
    REQUIRE(write_text(root / "proc" / "vmstat", "nr_free_pages 1\noom_kill 13\n"));
    const KernelEvidence kernel = watch.collect({4242});
    CHECK_FALSE(kernel.kernel_log_read);
    REQUIRE(kernel.unavailable.size() == 1);
    CHECK_THAT(kernel.unavailable[0], Catch::Contains("no-kmsg") && Catch::Contains("No such file"));
    CHECK(kernel.cgroup_oom_kills == 2);
    CHECK(kernel.system_oom_kills == 3);
    CHECK(kernel.cgroup_counter == (root / "cg" / "job" / "memory.events").string());

    auto lost = KernelWatch::start(999999, sources);
    const KernelEvidence none = lost.collect({999999});
    CHECK_FALSE(none.cgroup_oom_kills);
    CHECK(none.unavailable.size() == 2);
    fs::remove_all(root);
}
