#include <catch2/catch.hpp>

#include "oom/death.hpp"

#include <string>
#include <vector>

using namespace sg::oom;

namespace {
constexpr double GB = 1e9;
}

TEST_CASE("a SIGKILL with MemAvailable under 5% of MemTotal is probable OOM", "[death]") {
    const std::vector<MemoryReading> recent = {{128 * GB, 40 * GB}, {128 * GB, 6.3 * GB}};  // 4.9%
    REQUIRE(under_memory_pressure(recent));
    const Verdict v = judge_death(Verdict{}, ExitStatus::killed(9), recent, true);
    CHECK(v.oom);
    CHECK(v.kind == Kind::sigkill_probable);
    CHECK(kind_name(v.kind) == "sigkill-probable");
    CHECK(v.confidence == Confidence::probable);
    CHECK(v.phase == Phase::train);
    CHECK(v.reason.find("SIGKILL") != std::string::npos);
    CHECK(judge_death(Verdict{}, ExitStatus::killed(9), recent, false).phase == Phase::load);
}

TEST_CASE("the pressure line is 5% of MemTotal, and any one of the recent readings is enough", "[death]") {
    CHECK_FALSE(under_memory_pressure({{100 * GB, 5 * GB}}));    // exactly 5%: not under
    CHECK(under_memory_pressure({{100 * GB, 4.99 * GB}}));
    CHECK_FALSE(under_memory_pressure({{100 * GB, 5.01 * GB}}));
    CHECK(under_memory_pressure({{100 * GB, 2 * GB}, {100 * GB, 50 * GB}}));  // the pool recovered as it died
    CHECK_FALSE(under_memory_pressure({}));
    CHECK_FALSE(under_memory_pressure({{0, 0}}));  // MemTotal unknown is no evidence
}

TEST_CASE("a SIGKILL with memory to spare, or another death, stays what the evidence says", "[death]") {
    const std::vector<MemoryReading> plenty = {{128 * GB, 60 * GB}, {128 * GB, 6.5 * GB}};  // 5.1%
    const std::vector<MemoryReading> dry = {{128 * GB, 1 * GB}};
    CHECK_FALSE(judge_death(Verdict{}, ExitStatus::killed(9), plenty, true).oom);
    CHECK_FALSE(judge_death(Verdict{}, ExitStatus::killed(9), {}, true).oom);
    CHECK_FALSE(judge_death(Verdict{}, ExitStatus::killed(15), dry, true).oom);  // SIGTERM is not the OOM killer
    CHECK_FALSE(judge_death(Verdict{}, ExitStatus::exited(137), dry, true).oom);
    CHECK_FALSE(judge_death(Verdict{}, ExitStatus::exited(1), dry, true).oom);

    Verdict certain;  // the kernel's record already decided it: kept, not downgraded to probable
    certain.oom = true;
    certain.kind = Kind::cgroup_oom_kill;
    certain.confidence = Confidence::certain;
    certain.phase = Phase::load;
    certain.reason = "the kernel killed it";
    const Verdict kept = judge_death(certain, ExitStatus::killed(9), dry, true);
    CHECK(kept.kind == Kind::cgroup_oom_kill);
    CHECK(kept.confidence == Confidence::certain);
    CHECK(kept.phase == Phase::load);
    CHECK(kept.reason == "the kernel killed it");
}

TEST_CASE("a SIGKILL the classifier put down to a competing cause stays not OOM, however dry the pool", "[death]") {
    const std::vector<MemoryReading> dry = {{128 * GB, 1 * GB}};
    for (const std::vector<std::string>& lines : std::vector<std::vector<std::string>>{
             {"FileNotFoundError: [Errno 2] No such file or directory: 'data.json'", "Killed"},
             {"slurmstepd: error: *** JOB 42 ON node1 CANCELLED AT 2026-01-01T00:00:00 ***", "Killed"}}) {
        INFO(lines.front());
        Classifier classifier;
        for (const auto& line : lines) classifier.feed(line);
        const Verdict classified = classifier.verdict(ExitStatus::killed(9), KernelEvidence{});
        REQUIRE_FALSE(classified.oom);
        REQUIRE(classified.competing_cause);
        const Verdict judged = judge_death(classified, ExitStatus::killed(9), dry, true);
        CHECK_FALSE(judged.oom);
        CHECK(judged.kind == Kind::none);
        CHECK(judged.reason == classified.reason);
    }
    // Without one, the same dry pool decides a SIGKILL that the kernel's log did not explain (a killer in
    // user space, systemd-oomd or earlyoom, leaves no kernel record).
    KernelEvidence read_nothing;
    read_nothing.kernel_log_read = true;
    Classifier silent;
    silent.feed("step 12 loss 0.8");
    const Verdict unexplained = silent.verdict(ExitStatus::killed(9), read_nothing);
    REQUIRE_FALSE(unexplained.oom);
    CHECK_FALSE(unexplained.competing_cause);
    CHECK(judge_death(unexplained, ExitStatus::killed(9), dry, true).oom);
}
