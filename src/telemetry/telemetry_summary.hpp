#pragma once
// report.json's `telemetry` section: what thermal.csv says over the whole run.
//
//   ThrottleDetector detector(detector_settings(platform));
//   TelemetrySummary summary;
//   for each row written:  Assessment a = detector.feed(point_from(row));
//                          for (auto& e : a.events) events.write(e.name, e.fields);
//                          summary.add(row, a);
//   report["telemetry"] = summary.to_json();

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/thermal_csv.hpp"
#include "telemetry/throttle_detector.hpp"

namespace sg::telemetry {

class TelemetrySummary {
public:
    void add(const ThermalRow& row, const Assessment& assessment);

    // {"rows", "gpu_rows", "first", "last", "peak_temp_c", "peak_temp_at", "mean_power_w",
    //  "max_power_w", "cap_w", "seconds_at_cap", "throttle_episodes", "seconds_throttled",
    //  "peak_pool_used_gb", "peak_trainer_rss_gb"}; null where nothing was measured.
    // Time at the cap (and throttled) counts the intervals between two rows of the same attempt
    // that were both at the cap (both throttling).
    nlohmann::json to_json() const;

private:
    struct Previous {
        double elapsed_s;
        int attempt;
        bool at_cap;
        bool throttling;
    };

    long long rows_ = 0;
    long long gpu_rows_ = 0;
    std::string first_, last_;
    std::optional<double> peak_temp_;
    std::string peak_temp_at_;
    double power_sum_ = 0;
    long long power_rows_ = 0;
    std::optional<double> max_power_;
    std::optional<double> cap_w_;
    double seconds_at_cap_ = 0;
    long long throttle_episodes_ = 0;
    double seconds_throttled_ = 0;
    std::optional<double> peak_pool_used_;
    std::optional<double> peak_rss_;
    std::optional<Previous> previous_;
};

// The summary of rows already written (thermal.csv read back, e.g. by `sparkguard report` or after
// --resume-run), with a fresh detector for `platform`; the events it finds are left out.
nlohmann::json summarize_rows(const std::vector<ThermalRow>& rows, std::string_view platform);

}  // namespace sg::telemetry
