#include <catch2/catch.hpp>

#include "fake_gpu.hpp"
#include "telemetry/gpu_inventory.hpp"

using namespace sg;

using test::FakeNvidiaSmi;

TEST_CASE("GB10's [N/A] memory fields become empty, not a crash", "[gpu_inventory]") {
    auto gpus = parse_gpu_query("0, NVIDIA GB10, GPU-5f0e, [N/A], [N/A], 12.1, 580.95.05\n");
    REQUIRE(gpus);
    REQUIRE(gpus->size() == 1);
    CHECK(gpus->at(0).name == "NVIDIA GB10");
    CHECK_FALSE(gpus->at(0).memory_total_mib);
    CHECK(gpus->at(0).compute_cap == "12.1");
}

TEST_CASE("a discrete card's numbers are read; bad lines are errors", "[gpu_inventory]") {
    auto gpus = parse_gpu_query("0, NVIDIA GeForce RTX 4090, GPU-1a, 24564, 1024, 8.9, 550.120\n"
                                "1, NVIDIA A100-SXM4-80GB, [Not Supported], 81920, N/A, 8.0, 535.183.01\n");
    REQUIRE(gpus);
    CHECK(gpus->at(0).memory_total_mib == 24564);
    CHECK(gpus->at(1).index == 1);
    CHECK_FALSE(gpus->at(1).uuid);
    CHECK_FALSE(gpus->at(1).memory_used_mib);
    CHECK_FALSE(parse_gpu_query("0, only two\n"));
    CHECK_FALSE(parse_gpu_query("x, a, b, 1, 2, 3, 4\n"));
}

TEST_CASE("probe_gpus runs nvidia-smi once", "[gpu_inventory]") {
    {
        FakeNvidiaSmi fake("rtx4090");
        auto inventory = probe_gpus();
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].memory_total_mib == 24564);
    }
    {
        FakeNvidiaSmi fake("gb10");
        auto inventory = probe_gpus();
        REQUIRE(inventory.gpus.size() == 1);
        CHECK_FALSE(inventory.gpus[0].memory_total_mib);
    }
    {
        FakeNvidiaSmi fake("none");
        auto inventory = probe_gpus();
        CHECK(inventory.gpus.empty());
        CHECK_THAT(inventory.problem, Catch::Contains("exited 9") && Catch::Contains("couldn't communicate"));
    }
}
