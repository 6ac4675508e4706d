#include "telemetry/throttle_detector.hpp"

#include <cmath>

namespace sg::telemetry {
namespace {

using nlohmann::json;

constexpr double kSparkSustainedCapW = 100;  // DESIGN.md section 1: the GB10's sustained cap
constexpr double kSparkRatedW = 240;

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(); }
json optional_json(const std::optional<long long>& value) { return value ? json(*value) : json(); }

double rounded(double value, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

json where(const TelemetryPoint& p) {
    return {{"sample_time", p.timestamp}, {"elapsed_s", p.elapsed_s}, {"attempt", p.attempt}, {"step", optional_json(p.step)}};
}

}  // namespace

TelemetryPoint point_from(const ThermalRow& row) {
    return {row.timestamp, row.elapsed_s, row.attempt, row.step, row.gpu.temp_c, row.gpu.power_w, row.gpu.power_limit_w};
}

DetectorSettings detector_settings(std::string_view platform) {
    DetectorSettings settings;
    settings.platform = std::string(platform);
    if (platform == "dgx-spark") {
        settings.platform_cap_w = kSparkSustainedCapW;
        settings.rated_w = kSparkRatedW;
    }
    return settings;
}

Assessment ThrottleDetector::feed(const TelemetryPoint& p) {
    Assessment out;
    track_cap(p, out);
    if (!attempt_ || *attempt_ != p.attempt || (p.step && !marks_.empty() && *p.step < marks_.back().step))
        start_attempt(p, out);
    out.step_time_s = step_time(p);
    judge_throttle(p, out);
    out.throttling = episode_start_.has_value();
    return out;
}

void ThrottleDetector::track_cap(const TelemetryPoint& p, Assessment& out) {
    out.cap_w = settings_.platform_cap_w ? settings_.platform_cap_w : p.power_limit_w;
    out.at_cap = out.cap_w && p.power_w && *p.power_w >= settings_.near_cap * *out.cap_w;
    if (!out.at_cap) {
        at_cap_since_.reset();
        return;
    }
    if (!at_cap_since_) at_cap_since_ = p.elapsed_s;
    const double held = p.elapsed_s - *at_cap_since_;
    if (cap_reported_ || held < settings_.cap_hold_s) return;
    cap_reported_ = true;
    json fields = where(p);
    fields.update({{"power_w", *p.power_w}, {"cap_w", *out.cap_w}, {"held_s", held}, {"platform", settings_.platform},
                   {"temp_c", optional_json(p.temp_c)}});
    if (settings_.platform_cap_w) {
        fields["source"] = "platform";
        fields["rated_w"] = optional_json(settings_.rated_w);
        fields["message"] = "power held near the " + settings_.platform + " sustained cap of ~" +
                            std::to_string(std::lround(*out.cap_w)) + " W" +
                            (settings_.rated_w ? " (rated " + std::to_string(std::lround(*settings_.rated_w)) + " W)" : "") +
                            ": this is the platform's power cap, not a configuration problem";
    } else {
        fields["source"] = "driver";
        fields["message"] = "power held at the driver's enforced limit of " + std::to_string(std::lround(*out.cap_w)) +
                            " W: the GPU is power-limited";
    }
    out.events.push_back({"power-cap", std::move(fields)});
}

void ThrottleDetector::start_attempt(const TelemetryPoint& p, Assessment& out) {
    if (episode_start_) out.events.push_back(end_episode(p, "attempt ended"));
    attempt_ = p.attempt;
    marks_.clear();
    best_.reset();
}

// Seconds per step over the newest window that spans window_s and window_steps; older marks go.
std::optional<double> ThrottleDetector::step_time(const TelemetryPoint& p) {
    if (!p.step) return std::nullopt;
    if (marks_.empty() || marks_.back().step != *p.step) marks_.push_back({p.elapsed_s, *p.step});
    auto spans = [&](const StepMark& m) {
        return p.elapsed_s - m.elapsed_s >= settings_.window_s && *p.step - m.step >= settings_.window_steps;
    };
    if (!spans(marks_.front())) return std::nullopt;
    while (marks_.size() > 2 && spans(marks_[1])) marks_.pop_front();
    const StepMark& from = marks_.front();
    return (p.elapsed_s - from.elapsed_s) / static_cast<double>(*p.step - from.step);
}

void ThrottleDetector::judge_throttle(const TelemetryPoint& p, Assessment& out) {
    if (!out.step_time_s) return;
    const double step_time = *out.step_time_s;
    if (episode_start_) {
        if (step_time < settings_.recovered * best_->step_time_s) out.events.push_back(end_episode(p, "step time recovered"));
        return;
    }
    if (!best_ || step_time < best_->step_time_s) {
        best_ = Best{step_time, p.temp_c};
        return;
    }
    const bool slower = step_time >= settings_.slowdown * best_->step_time_s;
    const bool hotter = p.temp_c && best_->temp_c && *p.temp_c - *best_->temp_c >= settings_.temp_rise_c;
    if (!slower || !out.at_cap || !hotter) return;
    episode_start_ = p.elapsed_s;
    json fields = where(p);
    fields.update({{"temp_c", *p.temp_c},
                   {"power_w", *p.power_w},
                   {"cap_w", *out.cap_w},
                   {"step_time_s", rounded(step_time, 3)},
                   {"baseline_step_time_s", rounded(best_->step_time_s, 3)},
                   {"slowdown", rounded(step_time / best_->step_time_s, 2)},
                   {"temp_rise_c", rounded(*p.temp_c - *best_->temp_c, 1)}});
    out.events.push_back({"throttle", std::move(fields)});
}

TelemetryEvent ThrottleDetector::end_episode(const TelemetryPoint& p, const std::string& why) {
    json fields = where(p);
    fields.update({{"duration_s", p.elapsed_s - *episode_start_}, {"why", why}});
    episode_start_.reset();
    return {"throttle-end", std::move(fields)};
}

}  // namespace sg::telemetry
