#include <catch2/catch.hpp>

#include "oom/memory_guard.hpp"

using namespace sg::oom;

namespace {
constexpr double GB = 1e9;
constexpr double kPool = 128 * GB;

GuardReading at(double time, double available_gb) { return {time, available_gb * GB, kPool}; }
}  // namespace

TEST_CASE("a memory floor is decimal GB or a share of MemTotal; 0 is off", "[memory-guard]") {
    auto gb = parse_floor("6.5");
    REQUIRE(gb);
    CHECK(gb->bytes(kPool) == Approx(6.5 * GB));
    CHECK(gb->text() == "6.5");
    auto share = parse_floor("5%");
    REQUIRE(share);
    CHECK(share->bytes(kPool) == Approx(6.4 * GB));
    CHECK(share->text() == "5%");
    auto off = parse_floor("0");
    REQUIRE(off);
    CHECK(off->off());
    CHECK_FALSE(parse_floor("-1"));
    CHECK_FALSE(parse_floor("100%"));
    CHECK_FALSE(parse_floor("6GB"));
    CHECK_FALSE(parse_floor(""));
}

TEST_CASE("the floor: as given, else 5% of MemTotal on unified memory only; 0 is off", "[memory-guard]") {
    CHECK(resolve_floor(std::nullopt, true, kPool) == Approx(6.4 * GB));
    CHECK_FALSE(resolve_floor(std::nullopt, false, kPool));
    CHECK(*resolve_floor(*parse_floor("3"), false, kPool) == Approx(3 * GB));
    CHECK_FALSE(resolve_floor(*parse_floor("0"), true, kPool));
}

TEST_CASE("one reading under the floor is not enough; two in a row kill", "[memory-guard]") {
    MemoryGuard guard(guard_settings(6 * GB));
    CHECK_FALSE(guard.feed(at(0, 7)).kill);
    CHECK_FALSE(guard.feed(at(0.01, 5.9)).kill);
    CHECK_FALSE(guard.feed(at(0.02, 6.1)).kill);  // back above: the count starts again
    CHECK_FALSE(guard.feed(at(0.03, 5.8)).kill);
    GuardDecision d = guard.feed(at(0.035, 5.7));
    CHECK(d.kill);
    CHECK(d.evidence.find("MemAvailable 5.700 GB, 0.300 GB under the floor 6.000 GB of a 128.000 GB pool") != std::string::npos);
    CHECK(d.evidence.find("2 readings in a row") != std::string::npos);
    CHECK(d.fall_rate == Approx(1.3 * GB / 0.035));  // over the last half second, not the last 5 ms
    CHECK(d.evidence.find("falling 37.14 GB/s") != std::string::npos);
    CHECK(guard.lowest_available() == Approx(5.7 * GB));
}

TEST_CASE("one reading under the floor with the driver's NV_ERR_NO_MEMORY kills", "[memory-guard]") {
    MemoryGuard guard(guard_settings(6 * GB));
    const std::string nvrm = "NVRM: _memdescAllocInternal: Out of memory [NV_ERR_NO_MEMORY]";
    CHECK_FALSE(guard.feed(at(0, 6.5), nvrm).kill);  // above the floor the record alone is not enough
    GuardDecision d = guard.feed(at(0.01, 5.9), nvrm);
    CHECK(d.kill);
    CHECK(d.evidence.find("NV_ERR_NO_MEMORY") != std::string::npos);
}

TEST_CASE("memory-low events under the warning band, at most once a second", "[memory-guard]") {
    MemoryGuard guard(guard_settings(6 * GB));
    CHECK_FALSE(guard.feed(at(0, 13)).memory_low);
    CHECK(guard.feed(at(0.1, 11.9)).memory_low);
    CHECK_FALSE(guard.feed(at(0.6, 11.5)).memory_low);
    CHECK_FALSE(guard.feed(at(1.05, 11)).memory_low);
    CHECK(guard.feed(at(1.1, 11)).memory_low);
}

TEST_CASE("the closer to the floor and the faster the fall, the sooner the next reading", "[memory-guard]") {
    MemoryGuard guard(guard_settings(6.4 * GB));
    CHECK(guard.feed(at(0, 100)).next_reading_in == Approx(1.0));   // far: once a second
    CHECK(guard.feed(at(1, 100)).next_reading_in == Approx(1.0));
    const double near = guard.feed(at(2, 7)).next_reading_in;       // 0.6 GB over the floor
    CHECK(near <= 0.02);
    CHECK(guard.feed(at(2.01, 6.3)).next_reading_in == Approx(0.005));  // under: confirm at once
    MemoryGuard falling(guard_settings(6.4 * GB));
    falling.feed(at(0, 40));
    const double slow = falling.feed(at(1, 40)).next_reading_in;
    const double fast = falling.feed(at(1.1, 36)).next_reading_in;  // 40 GB/s
    CHECK(fast < slow);
    CHECK(fast == Approx((36 - 6.4) / 80.0 / 2).epsilon(0.01));
}
