#include <catch2/catch.hpp>

#include "supervise/status_line.hpp"
#include "util/strings.hpp"

using namespace sg;

TEST_CASE("durations read like a clock", "[status]") {
    CHECK(format_duration(12.4) == "12s");
    CHECK(format_duration(245) == "4m05s");
    CHECK(format_duration(3725) == "1h02m");
}

TEST_CASE("the status line says attempt, progress, GPU, pool and time", "[status]") {
    StatusInfo info;
    info.attempt = 3;
    info.rung = "smaller-batch";
    info.step = 450;
    info.total_steps = 1000;
    info.steps_per_second = 0.5;
    info.gpu_temp_c = 71;
    info.gpu_power_w = 98.4;
    info.pool_used_gb = 61.2;
    info.pool_total_gb = 119.7;
    info.elapsed_seconds = 7380;
    CHECK(format_status(info, 200, false) ==
          "sparkguard │ attempt 3 (smaller-batch) │ step 450/1000 · 2.0 s/it · ETA 18m20s │ GPU 71°C 98 W │ "
          "pool 61.2/120 GB │ 2h03m");
}

TEST_CASE("the status line drops fields rather than wrap, and flags quiet and stalled trainers", "[status]") {
    StatusInfo info;
    info.attempt = 1;
    info.elapsed_seconds = 30;
    info.quiet_seconds = 600;
    CHECK(format_status(info, 200, false) == "sparkguard │ attempt 1 │ no step yet │ quiet 10m00s │ 30s");
    CHECK(format_status(info, 40, false) == "sparkguard │ attempt 1 │ no step yet");
    info.stalled = true;
    CHECK_THAT(format_status(info, 200, false), Catch::Contains("STALLED") && !Catch::Contains("quiet"));
    CHECK_THAT(format_status(info, 200, true), Catch::Contains("\x1b[1msparkguard"));
    CHECK(format_status(info, 200, false).find('\x1b') == std::string::npos);
}
