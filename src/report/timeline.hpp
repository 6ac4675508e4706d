#pragma once
// The run as a timeline: what the SVG draws, before any pixel. Pure: built from RunInputs.

#include <optional>
#include <string>
#include <vector>

#include "report/run_inputs.hpp"
#include "report/run_summary.hpp"

namespace sg {

struct TimePoint {
    double time = 0;  // epoch seconds
    double value = 0;
};

// A line broken where nothing was measured (between attempts, across a gap in the samples).
using Series = std::vector<std::vector<TimePoint>>;

struct AttemptBand {
    int n = 0;
    std::string rung;  // "as given" for the first
    double start = 0, end = 0;
    std::string outcome;
    std::optional<double> peak_pool_used_gb;  // report.json's measurement, drawn when thermal.csv is absent
};

enum class MarkerKind { oom, rung, stall, throttle, power_cap, end };

struct Marker {
    double time = 0;
    MarkerKind kind = MarkerKind::end;
    std::string label;   // short, drawn: "OOM cpu-allocator"
    std::string detail;  // long, a tooltip: the evidence, the change
    bool failure = false;  // an end that is not success is drawn red
};

struct Timeline {
    double start = 0, end = 0;  // epoch seconds
    int utc_offset_minutes = 0;
    std::string title;
    std::string subtitle;
    std::vector<AttemptBand> attempts;
    std::vector<Marker> markers;
    Series temp_c, power_w, power_limit_w, pool_used_gb, pool_total_gb, step_rate;
    std::optional<double> cap_w;        // the power cap an event reported
    std::optional<double> estimate_gb;  // the plan's peak
    std::string thermal_note;  // why temperature and power are empty, when they are
    std::string memory_note;
    std::string steps_note;
};

Timeline build_timeline(const RunInputs& inputs, const RunSummary& summary);

// Steps per minute from step changes: over a window of at least `window_s` (and at least two
// changes), one series segment per attempt.
Series step_rate(const std::vector<StepPoint>& points, double window_s);

}  // namespace sg
