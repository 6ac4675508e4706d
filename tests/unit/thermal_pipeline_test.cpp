// The telemetry pieces end to end, with the fake nvidia-smi's sampling child scripted to heat up:
// its lines parsed, folded into thermal.csv rows, written, judged, summarised, and read back.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "fake_gpu.hpp"
#include "supervise/capture.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/telemetry_summary.hpp"
#include "telemetry/thermal_csv.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

using namespace sg;
using namespace sg::telemetry;
namespace fs = std::filesystem;

TEST_CASE("a GB10 that heats up at its cap: from nvidia-smi lines to events and a summary", "[thermal_pipeline]") {
    const fs::path dir = fs::temp_directory_path() / ("sparkguard-pipeline-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // 60 intervals, standing for 30 s each: cool, then at the ~100 W cap, then at the cap and hot.
    std::string rows = "[";
    for (int i = 0; i < 60; ++i) {
        const char* power = i < 20 ? "60.25" : i < 40 ? "98.10" : "99.40";
        const int temp = i < 20 ? 55 : i < 40 ? 62 : 71;
        rows += std::string(i ? "," : "") + R"({"power_draw": ")" + power + R"(", "temperature": )" + std::to_string(temp) +
                (i >= 40 ? R"(, "throttle": "0x24")" : "") + "}";
    }
    std::ofstream(dir / "gpu.json") << R"({"rows": )" << rows << "]}";

    test::FakeNvidiaSmi fake("gb10");
    test::ScopedEnv script("SPARKGUARD_FAKE_GPU_SCRIPT", (dir / "gpu.json").string());
    test::ScopedEnv loops("SPARKGUARD_FAKE_GPU_LOOPS", "60");
    SmiProbe probe = probe_smi_sampling();
    REQUIRE(probe.query);
    auto run = capture_output(smi_loop_argv(*probe.query, 5), 30);
    REQUIRE(run);
    auto lines = split(trim(run->out), '\n');
    REQUIRE(lines.size() == 60);

    auto writer = ThermalCsvWriter::open(dir / "thermal.csv");
    REQUIRE(writer);
    ThrottleDetector detector(detector_settings("dgx-spark"));
    TelemetrySummary summary;
    std::vector<TelemetryEvent> events;
    LatestGpuSamples latest;
    double steps = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
        auto sample = parse_smi_line(*probe.query, lines[i]);
        REQUIRE(sample);
        latest.update(*sample);
        ThermalRow row;
        row.elapsed_s = 30.0 * static_cast<double>(i);
        row.timestamp = "t+" + std::to_string(static_cast<int>(row.elapsed_s));
        row.attempt = 1;
        row.step = static_cast<long long>(std::floor(steps));
        steps += 30.0 / (i < 40 ? 2.0 : 3.2);
        row.gpu = aggregate(latest.current());
        row.mem_total_gb = 128;
        row.mem_available_gb = 70;
        REQUIRE(writer->write(row));
        Assessment assessment = detector.feed(point_from(row));
        summary.add(row, assessment);
        events.insert(events.end(), assessment.events.begin(), assessment.events.end());
    }

    REQUIRE(events.size() == 2);
    CHECK(events[0].name == "power-cap");
    CHECK(events[0].fields["elapsed_s"] == 720);  // at the cap from row 20 (600 s), held 120 s
    CHECK(events[1].name == "throttle");
    CHECK(events[1].fields["temp_c"] == 71);
    CHECK(events[1].fields["power_w"] == 99.4);

    nlohmann::json live = summary.to_json();
    CHECK(live["rows"] == 60);
    CHECK(live["peak_temp_c"] == 71);
    CHECK(live["max_power_w"] == 99.4);
    CHECK(live["seconds_at_cap"] == (59 - 20) * 30);  // rows 20 to 59
    CHECK(live["throttle_episodes"] == 1);

    auto csv = parse_thermal_csv(*read_file(dir / "thermal.csv"));
    REQUIRE(csv);
    REQUIRE(csv->rows.size() == 60);
    CHECK(csv->rows[45].gpu.throttle == (0x4u | 0x20u));
    CHECK_FALSE(csv->rows[0].gpu.power_limit_w);  // GB10: [N/A], an empty cell
    CHECK(summarize_rows(csv->rows, "dgx-spark") == live);
    fs::remove_all(dir);
}
