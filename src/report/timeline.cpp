#include "report/timeline.hpp"

#include <algorithm>
#include <filesystem>

#include "util/strings.hpp"

namespace sg {
namespace {

using nlohmann::json;
using telemetry::ThermalRow;
using Value = std::optional<double> (*)(const ThermalRow&);

std::string text_at(const json& fields, const char* key) {
    return fields.contains(key) && fields[key].is_string() ? fields[key].get<std::string>() : "";
}

// The marker an event stands for; nullopt for events the timeline does not mark.
std::optional<Marker> marker_from(const RunEvent& e) {
    const double t = e.time.epoch_s;
    const json& f = e.fields;
    if (e.name == "oom")
        return Marker{t, MarkerKind::oom, "OOM " + text_at(f, "kind"),
                      text_at(f, "phase") + ": " + (text_at(f, "evidence").empty() ? text_at(f, "reason") : text_at(f, "evidence"))};
    if (e.name == "rung") return Marker{t, MarkerKind::rung, "\xE2\x86\x92 " + text_at(f, "rung"), text_at(f, "change")};
    if (e.name == "stall")
        return Marker{t, MarkerKind::stall, f.value("memory", false) ? "memory stall" : "hang", text_at(f, "evidence")};
    if (e.name == "throttle") {
        std::string detail = "step time";
        if (auto slowdown = json_number(f, "slowdown")) detail += " \xC3\x97" + fixed(*slowdown, 2);
        if (auto temp = json_number(f, "temp_c")) detail += ", " + fixed(*temp, 0) + " \xC2\xB0""C";
        if (auto power = json_number(f, "power_w")) detail += ", " + fixed(*power, 0) + " W";
        return Marker{t, MarkerKind::throttle, "throttle", detail};
    }
    if (e.name == "power-cap") return Marker{t, MarkerKind::power_cap, "power cap", text_at(f, "message")};
    if (e.name == "end") {
        const std::string outcome = text_at(f, "outcome");
        return Marker{t, MarkerKind::end, outcome, text_at(f, "summary"), outcome != "succeeded"};
    }
    return std::nullopt;
}

// Without events.jsonl: the OOMs, rungs and end that report.json records.
std::vector<Marker> markers_from_report(const RunSummary& s) {
    std::vector<Marker> out;
    for (const auto& a : s.attempts) {
        const AttemptRecord& r = a.record;
        if (a.start && r.rung) out.push_back({*a.start, MarkerKind::rung, "\xE2\x86\x92 " + std::string(to_string(*r.rung)), ""});
        if (a.end && a.end_recorded && r.outcome == "oom")
            out.push_back({*a.end, MarkerKind::oom, "OOM " + r.oom_kind.value_or("?"), r.evidence.value_or("")});
    }
    if (s.end && s.end_recorded) out.push_back({*s.end, MarkerKind::end, s.outcome, s.summary, s.outcome != "succeeded"});
    return out;
}

double median_interval(const std::vector<ThermalRow>& rows) {
    std::vector<double> gaps;
    for (size_t i = 1; i < rows.size(); ++i) gaps.push_back(rows[i].time->epoch_s - rows[i - 1].time->epoch_s);
    if (gaps.empty()) return 1;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    return std::max(gaps[gaps.size() / 2], 0.001);
}

// One thermal.csv column as a series: broken where the attempt changes, a value is missing, or
// the samples pause for more than three of their usual intervals.
Series thermal_series(const std::vector<ThermalRow>& rows, Value value) {
    Series out;
    const double max_gap = 3 * median_interval(rows);
    const ThermalRow* previous = nullptr;
    for (const auto& row : rows) {
        const auto v = value(row);
        const double t = row.time->epoch_s;
        const bool breaks = !previous || previous->attempt != row.attempt || t - previous->time->epoch_s > max_gap;
        if (v && (breaks || out.empty())) out.emplace_back();
        if (v) out.back().push_back({t, *v});
        previous = v ? &row : nullptr;
    }
    return out;
}

std::string title_of(const RunSummary& s) {
    const std::string name = std::filesystem::path(s.run_dir).lexically_normal().filename().string();
    return "sparkguard run " + (name.empty() ? s.run_dir : name);
}

std::string subtitle_of(const RunSummary& s) {
    std::vector<std::string> parts;
    parts.push_back(s.outcome + (s.exit_code ? " (exit " + std::to_string(*s.exit_code) + ")" : ""));
    parts.push_back(std::to_string(s.attempts.size()) + (s.attempts.size() == 1 ? " attempt" : " attempts"));
    if (s.start) parts.push_back(format_local(*s.start, s.utc_offset_minutes).substr(0, 16));
    if (auto d = s.duration_s()) parts.push_back(format_duration(*d));
    if (s.final_config) parts.push_back("final: " + describe(*s.final_config));
    return join(parts, "  \xC2\xB7  ");
}

std::string thermal_note(const RunInputs& in) {
    if (!in.has_thermal) return "no thermal.csv in this run directory";
    if (in.thermal.empty()) return "thermal.csv has no samples";
    return "no GPU readings in thermal.csv (no GPU, or the driver answered [N/A])";
}

void set_time_range(Timeline& t, const RunInputs& in, const RunSummary& s) {
    std::vector<double> times;
    if (s.start) times.push_back(*s.start);
    if (s.end) times.push_back(*s.end);
    for (const auto& a : s.attempts)
        for (const auto& when : {a.start, a.end})
            if (when) times.push_back(*when);
    if (!in.thermal.empty()) times.insert(times.end(), {in.thermal.front().time->epoch_s, in.thermal.back().time->epoch_s});
    if (!in.events.empty()) times.insert(times.end(), {in.events.front().time.epoch_s, in.events.back().time.epoch_s});
    const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    t.start = times.empty() ? 0 : *lo;
    t.end = times.empty() ? 1 : std::max(*hi, *lo + 1);
}

}  // namespace

Series step_rate(const std::vector<StepPoint>& points, double window_s) {
    Series out;
    size_t from = 0;  // where the current window starts; it only moves forward
    for (size_t i = 0; i < points.size(); ++i) {
        if (i == 0 || points[i].attempt != points[i - 1].attempt) {
            from = i;
            out.emplace_back();
            continue;
        }
        if (i + 1 < points.size() && points[i + 1].attempt == points[i].attempt && points[i + 1].time == points[i].time)
            continue;  // lines read at once share a timestamp: take the last of them
        while (from + 1 < i && points[i].time - points[from + 1].time >= window_s) ++from;
        const double dt = points[i].time - points[from].time;
        const long long steps = points[i].step - points[from].step;
        if (dt > 0 && steps >= 0) out.back().push_back({points[i].time, 60.0 * static_cast<double>(steps) / dt});
    }
    std::erase_if(out, [](const auto& segment) { return segment.empty(); });
    return out;
}

Timeline build_timeline(const RunInputs& in, const RunSummary& s) {
    Timeline t;
    set_time_range(t, in, s);
    t.utc_offset_minutes = s.utc_offset_minutes;
    t.title = title_of(s);
    t.subtitle = subtitle_of(s);
    for (const auto& a : s.attempts)
        if (a.start && a.end)
            t.attempts.push_back({a.record.n, a.record.rung ? std::string(to_string(*a.record.rung)) : "as given", *a.start,
                                  *a.end, a.record.outcome, json_number(a.record.measured, "peak_pool_used_gb")});
    for (const auto& e : in.events)
        if (auto marker = marker_from(e)) t.markers.push_back(std::move(*marker));
    if (!in.has_events) t.markers = markers_from_report(s);
    t.temp_c = thermal_series(in.thermal, [](const ThermalRow& x) { return x.gpu.temp_c; });
    t.power_w = thermal_series(in.thermal, [](const ThermalRow& x) { return x.gpu.power_w; });
    t.power_limit_w = thermal_series(in.thermal, [](const ThermalRow& x) { return x.gpu.power_limit_w; });
    t.pool_used_gb = thermal_series(in.thermal, [](const ThermalRow& x) { return x.pool_used_gb(); });
    t.pool_total_gb = thermal_series(in.thermal, [](const ThermalRow& x) { return x.mem_total_gb; });
    t.step_rate = step_rate(in.steps, std::max(60.0, (t.end - t.start) / 200));
    if (s.telemetry && s.telemetry->cap_w && !s.telemetry->power_cap_message.empty()) t.cap_w = s.telemetry->cap_w;
    t.estimate_gb = s.memory.estimate_gb;
    if (t.temp_c.empty() || t.power_w.empty()) t.thermal_note = thermal_note(in);
    if (t.pool_used_gb.empty())
        t.memory_note = in.has_thermal ? "no memory readings in thermal.csv" : "no thermal.csv: each attempt's peak from report.json";
    if (t.step_rate.empty())
        t.steps_note = in.has_train_log ? "no training step recognised in train.log" : "no train.log in this run directory";
    return t;
}

}  // namespace sg
