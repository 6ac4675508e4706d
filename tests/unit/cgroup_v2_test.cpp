// cgroup v2 paths on fixture files (the test machine mounts cgroup v1): the oom_kill counter in
// memory.events, through KernelWatch to a cgroup-oom-kill verdict, and memory.current/memory.max
// read for the stall judgement.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "oom/classifier.hpp"
#include "oom/kernel_evidence.hpp"
#include "oom/kernel_watch.hpp"
#include "oom/stall.hpp"
#include "supervise/stall_probe.hpp"
#include "util/files.hpp"

using namespace sg;
using namespace sg::oom;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    fs::path root = fs::temp_directory_path() / ("sg-cgroup2-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    Fixture() {
        fs::remove_all(root);
        fs::create_directories(root);
    }
    ~Fixture() { fs::remove_all(root); }
    void write(const fs::path& relative, const std::string& text) const {
        fs::create_directories((root / relative).parent_path());
        REQUIRE(write_file_atomic(root / relative, text));
    }
    static inline int counter = 0;
};

constexpr const char* kEvents = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n";

}  // namespace

TEST_CASE("cgroup v2: an oom_kill in memory.events during the attempt is a certain cgroup OOM kill", "[cgroup2]") {
    Fixture f;
    // A container's namespaced cgroup2 mount: its root is the container's cgroup.
    f.write("proc/self/mountinfo", "1 0 0:1 / / rw - overlay overlay rw\n"
                                   "41 31 0:38 /kubepods/pod7 " + (f.root / "cg").string() +
                                   " rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n");
    f.write("proc/5151/cgroup", "0::/kubepods/pod7/trainer\n");
    f.write("cg/trainer/memory.events", kEvents);
    f.write("proc/vmstat", "nr_free_pages 1\noom_kill 4\n");

    auto watch = KernelWatch::start(5151, KernelWatch::Sources{f.root / "no-kmsg", f.root / "proc", false});
    f.write("cg/trainer/memory.events", "low 0\nhigh 12\nmax 40\noom 2\noom_kill 1\noom_group_kill 0\n");
    const KernelEvidence kernel = watch.collect({5151});
    CHECK(kernel.cgroup_counter == (f.root / "cg" / "trainer" / "memory.events").string());
    CHECK(kernel.cgroup_oom_kills == 1);
    CHECK(kernel.system_oom_kills == 0);

    Classifier classifier;
    classifier.mark_training_started();
    const Verdict v = classifier.verdict(ExitStatus::killed(9), kernel);
    CHECK(v.oom);
    CHECK(v.kind == Kind::cgroup_oom_kill);
    CHECK(v.confidence == Confidence::certain);
    CHECK(v.phase == Phase::train);
    CHECK_THAT(v.evidence, Catch::Contains("memory.events") && Catch::Contains("oom_kill +1"));
}

TEST_CASE("cgroup v2: a memory.events whose oom_kill did not move is no cgroup evidence", "[cgroup2]") {
    Fixture f;
    f.write("proc/self/mountinfo", "35 24 0:30 / " + (f.root / "cg").string() + " rw - cgroup2 cgroup2 rw\n");
    f.write("proc/77/cgroup", "0::/job\n");
    f.write("cg/job/memory.events", "oom 1\noom_kill 3\n");
    f.write("proc/vmstat", "oom_kill 3\n");
    auto watch = KernelWatch::start(77, KernelWatch::Sources{f.root / "no-kmsg", f.root / "proc", false});
    f.write("cg/job/memory.events", "oom 2\noom_kill 3\n");  // the limit was hit, nobody was killed
    const KernelEvidence kernel = watch.collect({77});
    CHECK(kernel.cgroup_oom_kills.value_or(0) == 0);
    Classifier classifier;
    const Verdict v = classifier.verdict(ExitStatus::exited(1), kernel);
    CHECK_FALSE(v.oom);
}

TEST_CASE("cgroup v2: memory.current and memory.max beside memory.events feed the stall judgement", "[cgroup2]") {
    Fixture f;
    const fs::path events = f.root / "job" / "memory.events";
    f.write("job/memory.events", kEvents);
    f.write("job/memory.current", "1063256064\n");
    f.write("job/memory.max", "1073741824\n");
    f.write("job/memory.usage_in_bytes", "1\n");  // v1 files are not read for a v2 cgroup
    f.write("job/memory.limit_in_bytes", "2\n");

    StallReadings readings;
    read_cgroup_memory(events, readings);
    REQUIRE(readings.cgroup_usage);
    REQUIRE(readings.cgroup_limit);
    CHECK(*readings.cgroup_usage == 1063256064.0);
    CHECK(*readings.cgroup_limit == 1073741824.0);
    readings.quiet_seconds = 1800;
    const StallJudgement judged = judge_stall(readings);
    CHECK(judged.memory);
    CHECK_THAT(judged.evidence, Catch::Contains("memory cgroup is at its limit"));

    SECTION("memory.max \"max\" is no limit, and no memory evidence") {
        f.write("job/memory.max", "max\n");
        StallReadings unlimited;
        read_cgroup_memory(events, unlimited);
        CHECK(unlimited.cgroup_usage == 1063256064.0);
        CHECK_FALSE(unlimited.cgroup_limit);
        unlimited.quiet_seconds = 1800;
        CHECK_FALSE(judge_stall(unlimited).memory);
    }
}

TEST_CASE("cgroup v1 beside it: memory.usage_in_bytes and memory.limit_in_bytes, unlimited as ~2^63", "[cgroup2]") {
    Fixture f;
    const fs::path control = f.root / "job" / "memory.oom_control";
    f.write("job/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    f.write("job/memory.usage_in_bytes", "500\n");
    f.write("job/memory.limit_in_bytes", "9223372036854771712\n");
    f.write("job/memory.max", "600\n");
    StallReadings readings;
    read_cgroup_memory(control, readings);
    CHECK(readings.cgroup_usage == 500.0);
    CHECK_FALSE(readings.cgroup_limit);
}
