#include <catch2/catch.hpp>

#include "telemetry/gpu_sample.hpp"

using namespace sg::telemetry;

TEST_CASE("several GPUs fold into one row: hottest, summed, slowest, mean, union", "[gpu_sample]") {
    GpuSample a{0, 60.0, 300.0, 400.0, 1410.0, 90.0, 0x0};
    GpuSample b{1, 75.0, 390.0, 400.0, 1275.0, 100.0, 0x4 | 0x20};
    GpuAggregate row = aggregate({a, b});
    CHECK(row.temp_c == 75);
    CHECK(row.power_w == 690);
    CHECK(row.power_limit_w == 800);
    CHECK(row.sm_clock_mhz == 1275);
    CHECK(row.util_pct == 95);
    CHECK(row.throttle == (0x4u | 0x20u));
}

TEST_CASE("absent values stay absent; a partial power limit is no limit", "[gpu_sample]") {
    GpuSample gb10{0, 41.0, 11.62, std::nullopt, 208.0, 0.0, 0x1};
    GpuAggregate one = aggregate({gb10});
    CHECK_FALSE(one.power_limit_w);
    CHECK(one.power_w == 11.62);

    GpuSample limited{1, 40.0, 100.0, 450.0, std::nullopt, std::nullopt, std::nullopt};
    CHECK_FALSE(aggregate({gb10, limited}).power_limit_w);

    GpuSample silent{2, std::nullopt, std::nullopt, 450.0, std::nullopt, std::nullopt, std::nullopt};
    GpuAggregate mixed = aggregate({limited, silent});
    CHECK(mixed.power_limit_w == 900);  // the silent GPU reports no draw, so its limit may count

    GpuAggregate none = aggregate({});
    CHECK_FALSE(none.temp_c);
    CHECK_FALSE(none.power_w);
    CHECK_FALSE(none.util_pct);
    CHECK_FALSE(none.throttle);
}

TEST_CASE("throttle reasons are written by name and read back", "[gpu_sample]") {
    CHECK(throttle_text(std::nullopt).empty());
    CHECK(throttle_text(0) == "none");
    CHECK(throttle_text(0x1) == "gpu_idle");
    CHECK(throttle_text(0x4 | 0x40) == "sw_power_cap|hw_thermal_slowdown");
    CHECK(throttle_text(0x4 | 0x1000) == "sw_power_cap|0x1000");
    for (std::uint64_t mask : {0x0ull, 0x1ull, 0x4ull, 0x1FFull, 0x4ull | 0x1000ull})
        CHECK(parse_throttle_text(throttle_text(mask)) == mask);
    CHECK_FALSE(parse_throttle_text(""));
    CHECK_FALSE(parse_throttle_text("warp_drive"));
    CHECK_FALSE(parse_throttle_text("0xZZ"));
}
