#include "telemetry/telemetry_summary.hpp"

#include <algorithm>
#include <cmath>

namespace sg::telemetry {
namespace {

using nlohmann::json;

json rounded(const std::optional<double>& value, int decimals) {
    if (!value) return json();
    const double scale = std::pow(10.0, decimals);
    return std::round(*value * scale) / scale;
}

void keep_max(std::optional<double>& peak, const std::optional<double>& value) {
    if (value && (!peak || *value > *peak)) peak = value;
}

bool has_gpu_values(const GpuAggregate& gpu) {
    return gpu.temp_c || gpu.power_w || gpu.sm_clock_mhz || gpu.util_pct || gpu.throttle;
}

}  // namespace

void TelemetrySummary::add(const ThermalRow& row, const Assessment& assessment) {
    ++rows_;
    if (first_.empty()) first_ = row.timestamp;
    last_ = row.timestamp;
    if (has_gpu_values(row.gpu)) ++gpu_rows_;
    if (row.gpu.temp_c && (!peak_temp_ || *row.gpu.temp_c > *peak_temp_)) {
        peak_temp_ = row.gpu.temp_c;
        peak_temp_at_ = row.timestamp;
    }
    if (row.gpu.power_w) power_sum_ += *row.gpu.power_w, ++power_rows_;
    keep_max(max_power_, row.gpu.power_w);
    if (assessment.cap_w) cap_w_ = assessment.cap_w;
    keep_max(peak_pool_used_, row.pool_used_gb());
    keep_max(peak_rss_, row.trainer_rss_gb);
    throttle_episodes_ += std::count_if(assessment.events.begin(), assessment.events.end(),
                                        [](const TelemetryEvent& e) { return e.name == "throttle"; });
    if (previous_ && previous_->attempt == row.attempt) {
        const double interval = std::max(0.0, row.elapsed_s - previous_->elapsed_s);
        if (previous_->at_cap && assessment.at_cap) seconds_at_cap_ += interval;
        if (previous_->throttling && assessment.throttling) seconds_throttled_ += interval;
    }
    previous_ = Previous{row.elapsed_s, row.attempt, assessment.at_cap, assessment.throttling};
}

json TelemetrySummary::to_json() const {
    return {
        {"rows", rows_},
        {"gpu_rows", gpu_rows_},
        {"first", first_.empty() ? json() : json(first_)},
        {"last", last_.empty() ? json() : json(last_)},
        {"peak_temp_c", rounded(peak_temp_, 1)},
        {"peak_temp_at", peak_temp_at_.empty() ? json() : json(peak_temp_at_)},
        {"mean_power_w", power_rows_ ? rounded(power_sum_ / static_cast<double>(power_rows_), 2) : json()},
        {"max_power_w", rounded(max_power_, 2)},
        {"cap_w", rounded(cap_w_, 2)},
        {"seconds_at_cap", rounded(seconds_at_cap_, 1)},
        {"throttle_episodes", throttle_episodes_},
        {"seconds_throttled", rounded(seconds_throttled_, 1)},
        {"peak_pool_used_gb", rounded(peak_pool_used_, 3)},
        {"peak_trainer_rss_gb", rounded(peak_rss_, 3)},
    };
}

json summarize_rows(const std::vector<ThermalRow>& rows, std::string_view platform) {
    ThrottleDetector detector(detector_settings(platform));
    TelemetrySummary summary;
    for (const auto& row : rows) summary.add(row, detector.feed(point_from(row)));
    return summary.to_json();
}

}  // namespace sg::telemetry
