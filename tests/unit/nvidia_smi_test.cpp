#include <catch2/catch.hpp>

#include <fstream>

#include "fake_gpu.hpp"
#include "supervise/capture.hpp"
#include "telemetry/gpu_inventory.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "util/strings.hpp"

using namespace sg;
using namespace sg::telemetry;
using test::FakeNvidiaSmi;
using test::ScopedEnv;

namespace {

const SmiQuery kFullQuery{{"index", "temp", "power", "power_limit", "sm_clock", "util", "throttle"},
                          {"index", "temperature.gpu", "power.draw", "enforced.power.limit", "clocks.sm",
                           "utilization.gpu", "clocks_event_reasons.active"}};

std::string write_script(const std::string& name, const std::string& json) {
    std::string path = "/tmp/sparkguard-test-" + std::to_string(::getpid()) + "-" + name + ".json";
    std::ofstream(path) << json;
    return path;
}

}  // namespace

TEST_CASE("nvidia-smi cells: [N/A], [Not Supported] and N/A are empty; units are tolerated", "[nvidia_smi]") {
    CHECK_FALSE(smi_number("[N/A]"));
    CHECK_FALSE(smi_number(" [Not Supported]"));
    CHECK_FALSE(smi_number("N/A"));
    CHECK_FALSE(smi_number("[Unknown Error]"));
    CHECK_FALSE(smi_number(""));
    CHECK(smi_number(" 11.62") == 11.62);
    CHECK(smi_number("11.62 W") == 11.62);
    CHECK(smi_number("208 MHz") == 208);
    CHECK_FALSE(smi_number("hot"));
    CHECK(smi_bitmask("0x0000000000000004") == 4u);
    CHECK(smi_bitmask(" 0x00000000000000A0") == 0xA0u);
    CHECK_FALSE(smi_bitmask("[N/A]"));
    CHECK_FALSE(smi_bitmask("0x"));
    CHECK_FALSE(smi_bitmask("4"));
}

TEST_CASE("the real refusal message names the field", "[nvidia_smi]") {
    CHECK(refused_field("Field \"clocks_event_reasons.active\" is not a valid field to query.\n\n") ==
          "clocks_event_reasons.active");
    CHECK_FALSE(refused_field("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."));
}

TEST_CASE("a refused name falls back to the field's next name, then the field is dropped", "[nvidia_smi]") {
    const auto& fields = sample_fields();
    std::vector<SmiFieldChoice> choices;
    for (const auto& f : fields) choices.push_back({&f, 0});
    REQUIRE(skip_refused(choices, "clocks_event_reasons.active"));
    CHECK(choices.back().field->names[choices.back().name] == "clocks_throttle_reasons.active");
    REQUIRE(skip_refused(choices, "clocks_throttle_reasons.active"));
    CHECK(choices.size() == fields.size() - 1);
    CHECK_FALSE(skip_refused(choices, "memory.total"));  // not asked for
    auto refused_index = skip_refused(choices, "index");
    REQUIRE_FALSE(refused_index);
    CHECK_THAT(refused_index.error().message, Catch::Contains("does not know the field \"index\""));
}

TEST_CASE("one sampling line per GPU parses into a sample; [N/A] is empty", "[nvidia_smi]") {
    auto gb10 = parse_smi_line(kFullQuery, "0, 41, 11.62, [N/A], 208, 0, 0x0000000000000001");
    REQUIRE(gb10);
    CHECK(gb10->index == 0);
    CHECK(gb10->temp_c == 41);
    CHECK(gb10->power_w == 11.62);
    CHECK_FALSE(gb10->power_limit_w);
    CHECK(gb10->sm_clock_mhz == 208);
    CHECK(gb10->util_pct == 0);
    CHECK(gb10->throttle == 1u);

    auto capped = parse_smi_line(kFullQuery, "1, 71, 398.20, 400.00, 1275, 100, 0x0000000000000004\n");
    REQUIRE(capped);
    CHECK(capped->index == 1);
    CHECK(capped->power_limit_w == 400);

    auto short_line = parse_smi_line(kFullQuery, "0, 41, 11.62");
    REQUIRE_FALSE(short_line);
    CHECK_THAT(short_line.error().message, Catch::Contains("expected 7 fields") && Catch::Contains("got 3"));
    auto bad_index = parse_smi_line(kFullQuery, "GPU0, 41, 11.62, [N/A], 208, 0, 0x0");
    REQUIRE_FALSE(bad_index);
    CHECK_THAT(bad_index.error().message, Catch::Contains("field index"));
}

TEST_CASE("the probe keeps the fields that answer: GB10's [N/A] power limit is left out", "[nvidia_smi]") {
    SmiAnswer answer{kFullQuery.keys, kFullQuery.names, "0, 41, 11.62, [N/A], 208, 0, 0x0000000000000001\n", {}};
    SmiProbe probe = smi_probe_from_answer(answer);
    REQUIRE(probe.query);
    CHECK(join(probe.query->names, ",") == "index,temperature.gpu,power.draw,clocks.sm,utilization.gpu,clocks_event_reasons.active");
    REQUIRE(probe.notes.size() == 1);
    CHECK_THAT(probe.notes[0], Catch::Contains("enforced.power.limit is [N/A] on every GPU"));
    REQUIRE(probe.first.size() == 1);
    CHECK(probe.first[0].temp_c == 41);

    SmiAnswer nothing{{"index", "temp"}, {"index", "temperature.gpu"}, "0, [N/A]\n", {}};
    CHECK_FALSE(smi_probe_from_answer(nothing).query);
    SmiAnswer empty{kFullQuery.keys, kFullQuery.names, "", {}};
    CHECK(smi_probe_from_answer(empty).problem == "nvidia-smi listed no GPU");
}

TEST_CASE("probing the fake nvidia-smi: GB10, a discrete card, an R470 driver, no GPU", "[nvidia_smi]") {
    {
        FakeNvidiaSmi fake("gb10");
        SmiProbe probe = probe_smi_sampling();
        REQUIRE(probe.query);
        CHECK(std::find(probe.query->keys.begin(), probe.query->keys.end(), "power_limit") == probe.query->keys.end());
        CHECK(probe.query->names.back() == "clocks_event_reasons.active");
        REQUIRE(probe.first.size() == 1);
        CHECK(probe.first[0].power_w == 11.62);
    }
    {
        FakeNvidiaSmi fake("rtx4090");
        SmiProbe probe = probe_smi_sampling();
        REQUIRE(probe.query);
        CHECK(probe.query->keys.size() == 7);
        CHECK(probe.first.at(0).power_limit_w == 450);
        CHECK(probe.notes.empty());
    }
    {
        FakeNvidiaSmi fake("v100-470");
        SmiProbe probe = probe_smi_sampling();
        REQUIRE(probe.query);
        CHECK(probe.query->names.back() == "clocks_throttle_reasons.active");
        CHECK(probe.first.at(0).throttle == 1u);
        REQUIRE_FALSE(probe.notes.empty());
        CHECK_THAT(probe.notes[0], Catch::Contains("does not know clocks_event_reasons.active"));
    }
    {
        FakeNvidiaSmi fake("none");
        SmiProbe probe = probe_smi_sampling();
        CHECK_FALSE(probe.query);
        CHECK_THAT(probe.problem, Catch::Contains("exited 9") && Catch::Contains("couldn't communicate"));
    }
    {
        ScopedEnv path("PATH", "/nonexistent");
        SmiProbe probe = probe_smi_sampling();
        CHECK_FALSE(probe.query);
        CHECK_THAT(probe.problem, Catch::StartsWith("nvidia-smi: "));
    }
}

TEST_CASE("the -lms child prints one line per GPU per interval, each one parsed", "[nvidia_smi]") {
    FakeNvidiaSmi fake("two-a100");
    ScopedEnv loops("SPARKGUARD_FAKE_GPU_LOOPS", "3");
    std::string script = write_script("loop", R"({"rows": [{}, [{"power_draw": "398.20", "throttle": "0x4"}, {}],
                                                           {"temperature": 80}]})");
    ScopedEnv scripted("SPARKGUARD_FAKE_GPU_SCRIPT", script);
    SmiProbe probe = probe_smi_sampling();
    REQUIRE(probe.query);
    auto argv = smi_loop_argv(*probe.query, 50);
    CHECK(join(argv, " ") == "nvidia-smi --query-gpu=index,temperature.gpu,power.draw,enforced.power.limit,clocks.sm,"
                             "utilization.gpu,clocks_event_reasons.active --format=csv,noheader,nounits -lms 50");
    auto run = capture_output(argv, 10);
    REQUIRE(run);
    REQUIRE(run->exit_code == 0);
    auto lines = split(trim(run->out), '\n');
    REQUIRE(lines.size() == 6);
    LatestGpuSamples latest;
    std::vector<GpuSample> samples;
    for (const auto& line : lines) {
        auto sample = parse_smi_line(*probe.query, line);
        REQUIRE(sample);
        samples.push_back(*sample);
        latest.update(*sample);
    }
    CHECK(samples[2].power_w == 398.2);
    CHECK(samples[2].throttle == 4u);
    CHECK(samples[3].power_w == 62.1);
    CHECK(samples[4].temp_c == 80);
    CHECK(latest.current().size() == 2);
    CHECK(latest.current()[1].temp_c == 80);
    latest.clear();
    CHECK(latest.current().empty());
    std::remove(script.c_str());
}

TEST_CASE("the inventory survives an R470 driver that does not know compute_cap", "[gpu_inventory]") {
    FakeNvidiaSmi fake("v100-470");
    auto inventory = probe_gpus();
    REQUIRE(inventory.gpus.size() == 1);
    CHECK(inventory.gpus[0].name == "Tesla V100-SXM2-32GB");
    CHECK_FALSE(inventory.gpus[0].compute_cap);
    CHECK(inventory.gpus[0].memory_total_mib == 32510);
    CHECK(inventory.gpus[0].driver_version == "470.182.03");
}

TEST_CASE("the driver's CUDA version comes from nvidia-smi --version", "[gpu_inventory]") {
    CHECK(*parse_cuda_version("NVIDIA-SMI version  : 580.142\nNVML version        : 580.142\n"
                              "DRIVER version      : 580.142\nCUDA Version        : 13.0\n") == "13.0");
    CHECK(*parse_cuda_version("NVIDIA-SMI version  : 610.43.03\nCUDA UMD Version    : 13.2\n") == "13.2");
    CHECK_FALSE(parse_cuda_version("NVIDIA-SMI version  : 610.43.03\n"));
    {
        FakeNvidiaSmi fake("rtx4090");
        CHECK(*probe_cuda_version() == "12.4");
    }
    {
        FakeNvidiaSmi fake("rtx-pro-610");  // no CUDA line in --version: the -q header says "CUDA UMD Version"
        CHECK(*probe_cuda_version() == "13.2");
    }
    {
        FakeNvidiaSmi fake("none");
        CHECK_FALSE(probe_cuda_version());
    }
}
