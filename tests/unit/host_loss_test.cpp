#include <catch2/catch.hpp>

#include "oom/host_loss.hpp"

using namespace sg::oom;

TEST_CASE("a host lost with the pool in the warning band in its last 10 s is an OOM", "[host-loss]") {
    HostLossFacts facts;
    facts.warning_gb = 12.8;
    facts.records = {{1000, 40, "thermal.csv"}, {1085, 11.9, "memory-low event"}, {1094, 8.2, "memory-low event"}};
    facts.last_seen = 1095;
    const HostLossJudgement j = judge_host_loss(facts);
    CHECK(j.oom);
    CHECK(j.memory);
    CHECK(j.evidence.find("MemAvailable 8.20 GB (memory-low event, 1.0 s before the last record) under 12.80 GB") !=
          std::string::npos);
}

TEST_CASE("memory records older than the host's last 10 s do not count", "[host-loss]") {
    HostLossFacts facts;
    facts.warning_gb = 12.8;
    facts.records = {{1000, 8, "memory-low event"}, {1090, 60, "thermal.csv"}};
    facts.last_seen = 1100;
    const HostLossJudgement j = judge_host_loss(facts);
    CHECK_FALSE(j.oom);
    CHECK(j.evidence.find("relaunching the same configuration") != std::string::npos);
    facts.warning_gb = 0;  // the guard was off: the band is unknown
    facts.records = {{1099, 1, "thermal.csv"}};
    CHECK_FALSE(judge_host_loss(facts).oom);
}

TEST_CASE("a second loss on the same configuration counts as OOM", "[host-loss]") {
    HostLossFacts facts;
    facts.earlier_losses = 1;
    const HostLossJudgement j = judge_host_loss(facts);
    CHECK(j.oom);
    CHECK_FALSE(j.memory);
    CHECK(j.evidence.find("lost again on the same configuration (2 times)") != std::string::npos);
}
