#include <catch2/catch.hpp>

#include "telemetry/meminfo.hpp"

using namespace sg;

// Captured from a DGX Spark (GB10, 128 GB unified) after a model load left page cache behind.
static const char* kSparkMeminfo = R"(MemTotal:       128452352 kB
MemFree:         3187264 kB
MemAvailable:   71234560 kB
Buffers:          524288 kB
Cached:         69206016 kB
SwapCached:            0 kB
Shmem:           1048576 kB
SwapTotal:             0 kB
SwapFree:              0 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
)";

TEST_CASE("meminfo fields are read in bytes", "[meminfo]") {
    auto info = parse_meminfo(kSparkMeminfo);
    REQUIRE(info);
    CHECK(info->total == Approx(128452352.0 * 1024));
    CHECK(info->available == Approx(71234560.0 * 1024));
    CHECK(info->reclaimable_cache() == Approx((69206016.0 + 524288 - 1048576) * 1024));
}

TEST_CASE("meminfo without MemAvailable falls back; without MemTotal fails", "[meminfo]") {
    auto old = parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 50 kB\nBuffers: 10 kB\n");
    REQUIRE(old);
    CHECK(old->available == Approx(160 * 1024));
    CHECK_FALSE(parse_meminfo("garbage\n\x01\x02"));
}

TEST_CASE("this machine's meminfo reads", "[meminfo]") {
    auto info = read_meminfo();
    REQUIRE(info);
    CHECK(info->total > 0);
    CHECK(info->available <= info->total);
}
