#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "telemetry/telemetry_summary.hpp"
#include "telemetry/throttle_detector.hpp"

using namespace sg::telemetry;

namespace {

// What the machine does at a moment: power draw, temperature and seconds per training step.
struct Phase {
    double power_w;
    double temp_c;
    double step_time_s;
};

// A run sampled every `interval` seconds for `seconds`; the step count integrates 1/step_time.
std::vector<ThermalRow> simulate(double seconds, const std::function<Phase(double)>& at, double interval = 30,
                                 std::optional<double> limit_w = std::nullopt) {
    std::vector<ThermalRow> rows;
    double steps = 0;
    for (double t = 0; t <= seconds; t += interval) {
        Phase phase = at(t);
        ThermalRow row;
        row.timestamp = "t+" + std::to_string(static_cast<int>(t));
        row.elapsed_s = t;
        row.attempt = 1;
        row.step = static_cast<long long>(std::floor(steps));
        row.gpu.power_w = phase.power_w;
        row.gpu.temp_c = phase.temp_c;
        row.gpu.power_limit_w = limit_w;
        row.mem_total_gb = 128;
        row.mem_available_gb = 80 - t / 1000;
        rows.push_back(row);
        steps += interval / phase.step_time_s;
    }
    return rows;
}

std::vector<TelemetryEvent> run(ThrottleDetector& detector, const std::vector<ThermalRow>& rows) {
    std::vector<TelemetryEvent> events;
    for (const auto& row : rows)
        for (auto& e : detector.feed(point_from(row)).events) events.push_back(std::move(e));
    return events;
}

std::vector<std::string> names(const std::vector<TelemetryEvent>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.name);
    return out;
}

// Cool and fast; at the cap from 600 s; 1.6 times slower and 15 C hotter from 1200 s; back at 1800 s.
Phase spark_run(double t) {
    if (t < 600) return {60, 55, 2.0};
    if (t < 1200) return {98, 62, 2.0};
    if (t < 1800) return {99, 70, 3.2};
    return {97, 66, 2.0};
}

}  // namespace

TEST_CASE("GB10 at ~100 W for a while is reported once, as the platform's cap", "[throttle]") {
    ThrottleDetector detector(detector_settings("dgx-spark"));
    auto events = run(detector, simulate(1150, spark_run));
    REQUIRE(names(events) == std::vector<std::string>{"power-cap"});
    const auto& cap = events[0].fields;
    CHECK(cap["elapsed_s"] == 720);  // at the cap from 600 s, held 120 s
    CHECK(cap["held_s"] == 120);
    CHECK(cap["cap_w"] == 100);
    CHECK(cap["rated_w"] == 240);
    CHECK(cap["source"] == "platform");
    CHECK(cap["power_w"] == 98);
    CHECK(cap["sample_time"] == "t+720");
    CHECK_THAT(cap["message"].get<std::string>(), Catch::Contains("not a configuration problem"));
}

TEST_CASE("slower steps at the cap with a climbing temperature are throttling, until they recover", "[throttle]") {
    ThrottleDetector detector(detector_settings("dgx-spark"));
    auto events = run(detector, simulate(2400, spark_run));
    REQUIRE(names(events) == std::vector<std::string>{"power-cap", "throttle", "throttle-end"});
    const auto& throttle = events[1].fields;
    CHECK(throttle["elapsed_s"].get<double>() > 1200);
    CHECK(throttle["elapsed_s"].get<double>() <= 1320);  // within one measuring window of the slowdown
    CHECK(throttle["temp_c"] == 70);
    CHECK(throttle["power_w"] == 99);
    CHECK(throttle["baseline_step_time_s"].get<double>() == Approx(2.0).epsilon(0.1));
    CHECK(throttle["slowdown"].get<double>() >= 1.5);
    CHECK(throttle["temp_rise_c"].get<double>() >= 3);
    CHECK(throttle["step"].is_number_integer());
    const auto& end = events[2].fields;
    CHECK(end["elapsed_s"].get<double>() > 1800);
    CHECK(end["why"] == "step time recovered");
    CHECK(end["duration_s"].get<double>() >= 500);
}

TEST_CASE("a slowdown alone is not throttling: it needs the cap and the heat", "[throttle]") {
    SECTION("cool") {
        ThrottleDetector detector(detector_settings("dgx-spark"));
        auto events = run(detector, simulate(2400, [](double t) { return Phase{98, 60, t < 1200 ? 2.0 : 3.5}; }));
        CHECK(names(events) == std::vector<std::string>{"power-cap"});
    }
    SECTION("well under the cap") {
        ThrottleDetector detector(detector_settings("dgx-spark"));
        auto events = run(detector, simulate(2400, [](double t) { return Phase{50, t < 1200 ? 55.0 : 75.0, t < 1200 ? 2.0 : 3.5}; }));
        CHECK(events.empty());
    }
    SECTION("a quarter slower is not half slower") {
        ThrottleDetector detector(detector_settings("dgx-spark"));
        auto events = run(detector, simulate(2400, [](double t) { return Phase{99, t < 1200 ? 55.0 : 75.0, t < 1200 ? 2.0 : 2.5}; }));
        CHECK(names(events) == std::vector<std::string>{"power-cap"});
    }
}

TEST_CASE("a discrete card's cap is the driver's enforced limit; without one there is no cap", "[throttle]") {
    ThrottleDetector discrete(detector_settings("gpu-24gb"));
    auto events = run(discrete, simulate(600, [](double) { return Phase{440, 70, 1.0}; }, 30, 450.0));
    REQUIRE(names(events) == std::vector<std::string>{"power-cap"});
    CHECK(events[0].fields["source"] == "driver");
    CHECK(events[0].fields["cap_w"] == 450);

    ThrottleDetector unknown(detector_settings("gpu"));
    CHECK(run(unknown, simulate(600, [](double) { return Phase{440, 70, 1.0}; })).empty());
}

TEST_CASE("a new attempt starts its own baseline; an open episode ends with the attempt", "[throttle]") {
    ThrottleDetector detector(detector_settings("dgx-spark"));
    auto first = simulate(1500, spark_run);  // ends throttling
    auto second = simulate(900, [](double) { return Phase{99, 70, 3.2}; });  // slow from its start
    for (auto& row : second) row.attempt = 2, row.elapsed_s += 1600;
    auto events = run(detector, first);
    CHECK(names(events) == std::vector<std::string>{"power-cap", "throttle"});
    auto later = run(detector, second);
    REQUIRE(names(later) == std::vector<std::string>{"throttle-end"});
    CHECK(later[0].fields["why"] == "attempt ended");
}

TEST_CASE("the telemetry summary over a run", "[throttle][summary]") {
    auto rows = simulate(2400, spark_run);
    rows[5].gpu.temp_c = 88;  // a spike
    nlohmann::json summary = summarize_rows(rows, "dgx-spark");
    CHECK(summary["rows"] == rows.size());
    CHECK(summary["gpu_rows"] == rows.size());
    CHECK(summary["peak_temp_c"] == 88);
    CHECK(summary["peak_temp_at"] == "t+150");
    CHECK(summary["max_power_w"] == 99);
    CHECK(summary["cap_w"] == 100);
    CHECK(summary["seconds_at_cap"] == 1800);  // 600 s to 2400 s
    CHECK(summary["throttle_episodes"] == 1);
    CHECK(summary["seconds_throttled"].get<double>() >= 500);
    CHECK(summary["peak_pool_used_gb"] == Approx(128 - 80 + 2.4));
    CHECK(summary["peak_trainer_rss_gb"].is_null());
    CHECK(summary["first"] == "t+0");

    nlohmann::json empty = summarize_rows({}, "host");
    CHECK(empty["rows"] == 0);
    CHECK(empty["peak_temp_c"].is_null());
    CHECK(empty["mean_power_w"].is_null());
}
