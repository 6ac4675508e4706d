#pragma once
// Reads the telemetry as it comes, row by row, and says two things (DESIGN.md section 6):
//  - power-cap: the draw has been held near the cap for a while. On a DGX Spark the cap is the
//    platform's sustained ~100 W (the GB10 is rated 240 W): reported once, as the platform, not a
//    configuration problem. Elsewhere the cap is the driver's enforced power limit.
//  - throttle: the step time has grown by half or more over the attempt's best while the power is
//    pinned at the cap and the temperature has climbed since that best; throttle-end when the
//    step time comes back.
// Pure: fed values, returns events (name + JSON fields for events.jsonl). No I/O, no clock.

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/thermal_csv.hpp"

namespace sg::telemetry {

struct TelemetryPoint {
    std::string timestamp;  // the row's, carried into events
    double elapsed_s = 0;
    int attempt = 0;
    std::optional<long long> step;
    std::optional<double> temp_c;
    std::optional<double> power_w;
    std::optional<double> power_limit_w;
};
TelemetryPoint point_from(const ThermalRow& row);

struct DetectorSettings {
    std::string platform;                  // the platform profile's name: "dgx-spark", "gpu-24gb", "host"
    std::optional<double> platform_cap_w;  // a sustained cap the platform holds whatever the driver says
    std::optional<double> rated_w;         // what the platform is rated for, for the message
    double near_cap = 0.9;                 // a draw at this fraction of the cap or more is "at the cap"
    double cap_hold_s = 120;               // held at the cap this long: reported
    double slowdown = 1.5;                 // step time this many times the attempt's best: throttling...
    double recovered = 1.2;                // ...until it is back under this many times the best
    double window_s = 120;                 // step time is measured over at least this long...
    long long window_steps = 10;           // ...and at least this many steps
    double temp_rise_c = 3;                // how much the temperature must have climbed since the best
};

// The defaults for a platform: dgx-spark holds ~100 W sustained (rated 240 W); others use the
// driver's enforced limit.
DetectorSettings detector_settings(std::string_view platform);

struct TelemetryEvent {
    std::string name;  // "power-cap", "throttle", "throttle-end"
    nlohmann::json fields;
};

struct Assessment {
    std::vector<TelemetryEvent> events;
    std::optional<double> cap_w;        // the cap this point was judged against
    bool at_cap = false;
    bool throttling = false;
    std::optional<double> step_time_s;  // over the measuring window, when there is one
};

class ThrottleDetector {
public:
    explicit ThrottleDetector(DetectorSettings settings) : settings_(std::move(settings)) {}
    Assessment feed(const TelemetryPoint& point);

private:
    struct StepMark {
        double elapsed_s;
        long long step;
    };
    struct Best {
        double step_time_s;
        std::optional<double> temp_c;
    };

    void track_cap(const TelemetryPoint& p, Assessment& out);
    void start_attempt(const TelemetryPoint& p, Assessment& out);
    std::optional<double> step_time(const TelemetryPoint& p);
    void judge_throttle(const TelemetryPoint& p, Assessment& out);
    TelemetryEvent end_episode(const TelemetryPoint& p, const std::string& why);

    DetectorSettings settings_;
    bool cap_reported_ = false;
    std::optional<double> at_cap_since_;
    std::optional<int> attempt_;
    std::deque<StepMark> marks_;
    std::optional<Best> best_;
    std::optional<double> episode_start_;
};

}  // namespace sg::telemetry
