#include <catch2/catch.hpp>

#include <dlfcn.h>

#include "fake_gpu.hpp"
#include "telemetry/gpu_source.hpp"
#include "telemetry/nvml.hpp"

using namespace sg;
using namespace sg::telemetry;
using test::FakeNvidiaSmi;
using test::FakeNvml;
using test::ScopedEnv;

namespace {

// init minus shutdown calls inside the fake library, read through its own handle.
int fake_sessions() {
    void* handle = ::dlopen(SPARKGUARD_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
    if (!handle) return 0;  // unloaded: nobody holds a session
    auto sessions = reinterpret_cast<int (*)()>(::dlsym(handle, "fake_nvml_sessions"));
    int count = sessions();
    ::dlclose(handle);
    return count;
}

}  // namespace

TEST_CASE("NVML is absent on this machine: an error naming the library, no crash", "[nvml]") {
    auto missing = Nvml::open("/nonexistent/libnvidia-ml.so.1");
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::StartsWith("NVML: ") && Catch::Contains("libnvidia-ml.so.1"));
    auto real = Nvml::open("libnvidia-ml.so.1");
    if (real) {
        WARN("this machine has a real NVML with " << (*real)->device_count() << " GPU(s)");
        return;
    }
    CHECK_THAT(real.error().message, Catch::Contains("libnvidia-ml.so.1"));
}

TEST_CASE("a library without NVML's entry points is refused", "[nvml]") {
    auto not_nvml = Nvml::open("libm.so.6");
    REQUIRE_FALSE(not_nvml);
    CHECK_THAT(not_nvml.error().message, Catch::Contains("lacks nvmlInit_v2"));
}

TEST_CASE("the fake GB10 through NVML: no power limit, everything else", "[nvml]") {
    FakeNvml fake("gb10");
    {
        auto nvml = Nvml::open();
        REQUIRE(nvml);
        CHECK(fake_sessions() == 1);
        REQUIRE((*nvml)->device_count() == 1);
        auto samples = (*nvml)->sample();
        REQUIRE(samples.size() == 1);
        CHECK(samples[0].temp_c == 41);
        CHECK(samples[0].power_w == Approx(11.62));
        CHECK_FALSE(samples[0].power_limit_w);
        CHECK(samples[0].sm_clock_mhz == 208);
        CHECK(samples[0].util_pct == 0);
        CHECK(samples[0].throttle == 1u);
        CHECK((*nvml)->name(0) == "NVIDIA GB10");
        CHECK((*nvml)->driver_version() == "580.95.05");
        CHECK((*nvml)->cuda_version() == "13.0");
        CHECK((*nvml)->compute_cap(0) == "12.1");
    }
    CHECK(fake_sessions() == 0);  // nvmlShutdown on destruction
}

TEST_CASE("a device that supports no value gives empty optionals", "[nvml]") {
    FakeNvml fake("absent");
    auto nvml = Nvml::open();
    REQUIRE(nvml);
    auto sample = (*nvml)->sample().at(0);
    CHECK_FALSE(sample.temp_c);
    CHECK_FALSE(sample.power_w);
    CHECK_FALSE(sample.power_limit_w);
    CHECK_FALSE(sample.sm_clock_mhz);
    CHECK_FALSE(sample.util_pct);
    CHECK_FALSE(sample.throttle);
    auto row = aggregate((*nvml)->sample());
    CHECK_FALSE(row.temp_c);
    CHECK_FALSE(row.power_w);
}

TEST_CASE("two GPUs through NVML, aggregated", "[nvml]") {
    FakeNvml fake("two-a100");
    auto nvml = Nvml::open();
    REQUIRE(nvml);
    REQUIRE((*nvml)->device_count() == 2);
    auto row = aggregate((*nvml)->sample());
    CHECK(row.temp_c == 71);
    CHECK(row.power_w == Approx(62.1 + 398.0));
    CHECK(row.power_limit_w == Approx(800));
    CHECK(row.sm_clock_mhz == 1275);
    CHECK(row.util_pct == 50);
    CHECK(row.throttle == 4u);
    CHECK((*nvml)->cuda_version() == "12.2");
}

TEST_CASE("a driver that is not loaded: NVML's own message, and the library is let go", "[nvml]") {
    FakeNvml fake("no-driver");
    auto nvml = Nvml::open();
    REQUIRE_FALSE(nvml);
    CHECK(nvml.error().message == "NVML: nvmlInit_v2: Driver Not Loaded (9)");
    CHECK(fake_sessions() == 0);
}

TEST_CASE("the GPU source: NVML first, else nvidia-smi, else none with a reason", "[gpu_source]") {
    {
        FakeNvml nvml("rtx4090");
        GpuSource source = probe_gpu_source();
        CHECK(source.kind() == "nvml");
        REQUIRE(source.first.size() == 1);
        CHECK(source.first[0].power_limit_w == 450);
    }
    {
        FakeNvidiaSmi smi("gb10");
        GpuSource source = probe_gpu_source("/nonexistent/libnvidia-ml.so.1");
        CHECK(source.kind() == "nvidia-smi");
        REQUIRE(source.smi);
        CHECK_THAT(source.notes.at(0), Catch::StartsWith("NVML: "));
        CHECK(source.first.at(0).temp_c == 41);
    }
    {
        FakeNvidiaSmi smi("none");
        GpuSource source = probe_gpu_source("/nonexistent/libnvidia-ml.so.1");
        CHECK(source.kind() == "none");
        CHECK_FALSE(source.any());
        CHECK_THAT(source.reason, Catch::Contains("couldn't communicate with the NVIDIA driver"));
        CHECK(source.first.empty());
    }
}
