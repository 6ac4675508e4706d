#include "report/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "telemetry/telemetry_summary.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

using nlohmann::json;

std::optional<double> epoch_of(const std::string& rfc3339) {
    auto parsed = parse_rfc3339(rfc3339);
    return parsed ? std::optional(parsed->epoch_s) : std::nullopt;
}

void keep_max(std::optional<double>& peak, std::optional<double> value) {
    if (value && (!peak || *value > *peak)) peak = value;
}

// The newest time any file speaks of: where a run without a recorded end stopped.
std::optional<double> last_sign_of_life(const RunInputs& in) {
    std::optional<double> last;
    if (!in.events.empty()) keep_max(last, in.events.back().time.epoch_s);
    if (!in.thermal.empty()) keep_max(last, in.thermal.back().time->epoch_s);
    if (in.log_last) keep_max(last, in.log_last->epoch_s);
    return last;
}

const RunEvent* find_event(const RunInputs& in, std::string_view name, int attempt) {
    for (const auto& e : in.events)
        if (e.name == name && e.fields.value("attempt", -1) == attempt) return &e;
    return nullptr;
}

std::optional<std::string> stall_details(const RunInputs& in, int n) {
    const std::string name = "stall-" + std::to_string(n) + ".txt";
    if (std::find(in.stall_files.begin(), in.stall_files.end(), name) != in.stall_files.end()) return name;
    return std::nullopt;
}

std::vector<AttemptSummary> attempts_of(const RunInputs& in) {
    std::vector<AttemptSummary> out;
    const auto& records = in.report.attempts;
    for (size_t i = 0; i < records.size(); ++i) {
        AttemptSummary a{records[i], epoch_of(records[i].started), epoch_of(records[i].ended), false, std::nullopt,
                         stall_details(in, records[i].n)};
        a.end_recorded = a.end.has_value();
        if (!a.end) a.end = i + 1 < records.size() ? epoch_of(records[i + 1].started) : last_sign_of_life(in);
        if (const RunEvent* resume = find_event(in, "resume", a.record.n); resume && resume->fields.contains("step") &&
                                                                            resume->fields["step"].is_number_integer())
            a.resumed_at = resume->fields["step"].get<long long>();
        out.push_back(std::move(a));
    }
    return out;
}

MemorySummary memory_of(const RunInputs& in) {
    MemorySummary m;
    for (const auto& a : in.report.attempts) {
        const auto used = json_number(a.measured, "peak_pool_used_gb");
        if (used && (!m.peak_used_gb || *used > *m.peak_used_gb)) m.peak_attempt = a.n;
        keep_max(m.peak_used_gb, used);
        keep_max(m.peak_rss_gb, json_number(a.measured, "peak_trainer_rss_gb"));
    }
    for (const auto& row : in.thermal) {
        const auto used = row.pool_used_gb();
        if (used && (!m.peak_used_gb || *used > *m.peak_used_gb))
            m.peak_attempt = row.attempt > 0 ? std::optional(row.attempt) : std::nullopt;
        keep_max(m.peak_used_gb, used);
        keep_max(m.peak_rss_gb, row.trainer_rss_gb);
        keep_max(m.pool_total_gb, row.mem_total_gb);
    }
    const json& plan = in.report.plan;
    m.estimate_gb = json_number(plan, "peak_gb");
    m.train_estimate_gb = json_number(plan, "train_peak_gb");
    m.budget_gb = json_number(plan, "budget_gb");
    if (plan.is_object() && plan.contains("verdict") && plan["verdict"].is_string()) m.verdict = plan["verdict"].get<std::string>();
    return m;
}

std::string power_cap_message(const RunInputs& in) {
    for (const auto& e : in.events)
        if (e.name == "power-cap" && e.fields.contains("message") && e.fields["message"].is_string())
            return e.fields["message"].get<std::string>();
    return "";
}

long long count_events(const RunInputs& in, std::string_view name) {
    return std::count_if(in.events.begin(), in.events.end(), [&](const RunEvent& e) { return e.name == name; });
}

// A telemetry::TelemetrySummary as JSON: the sampler's own in report.json, or one computed here;
// its fields are optional, read when they are numbers.
TelemetrySummary telemetry_from_json(const json& t, std::string source) {
    TelemetrySummary s;
    s.source = std::move(source);
    s.rows = static_cast<long long>(json_number(t, "rows").value_or(0));
    s.gpu_rows = static_cast<long long>(json_number(t, "gpu_rows").value_or(0));
    s.peak_temp_c = json_number(t, "peak_temp_c");
    if (t.contains("peak_temp_at") && t["peak_temp_at"].is_string()) s.peak_temp_at = epoch_of(t["peak_temp_at"].get<std::string>());
    s.mean_power_w = json_number(t, "mean_power_w");
    s.max_power_w = json_number(t, "max_power_w");
    s.cap_w = json_number(t, "cap_w");
    s.seconds_at_cap = json_number(t, "seconds_at_cap");
    s.throttle_episodes = static_cast<long long>(json_number(t, "throttle_episodes").value_or(0));
    s.seconds_throttled = json_number(t, "seconds_throttled");
    return s;
}

// Whose power-cap rules thermal.csv is judged by: env-report.json's platform, else the one the
// power-cap event names, else "host" (the driver's enforced limit).
std::string platform_of(const RunInputs& in) {
    if (!in.platform.empty()) return in.platform;
    for (const auto& e : in.events)
        if (e.name == "power-cap" && e.fields.contains("platform") && e.fields["platform"].is_string())
            return e.fields["platform"].get<std::string>();
    return "host";
}

// Without the sampler's summary: the same summary, from thermal.csv replayed through the detector
// `sparkguard run` uses live. The throttle events events.jsonl recorded count when they are more
// (a thermal.csv cut short, or one from a sampler that saw no training steps).
TelemetrySummary telemetry_from_rows(const RunInputs& in) {
    TelemetrySummary s = telemetry_from_json(telemetry::summarize_rows(in.thermal, platform_of(in)), "thermal.csv");
    s.throttle_episodes = std::max(s.throttle_episodes, count_events(in, "throttle"));
    return s;
}

std::vector<NodeSummary> nodes_of(const RunInputs& in) {
    std::vector<NodeSummary> nodes;
    for (const auto& [host, rows] : in.node_thermal) {
        const json t = telemetry::summarize_rows(rows, platform_of(in));
        nodes.push_back({host, json_number(t, "peak_pool_used_gb"), json_number(t, "peak_trainer_rss_gb"),
                         telemetry_from_json(t, "nodes/" + host + "/thermal.csv")});
    }
    return nodes;
}

std::optional<TelemetrySummary> telemetry_of(const RunInputs& in) {
    std::optional<TelemetrySummary> s;
    if (in.telemetry.is_object()) s = telemetry_from_json(in.telemetry, "report.json");
    else if (!in.thermal.empty()) s = telemetry_from_rows(in);
    if (!s) return s;
    s->power_cap_message = power_cap_message(in);
    const auto cap = std::find_if(in.events.begin(), in.events.end(), [](const RunEvent& e) { return e.name == "power-cap"; });
    if (cap != in.events.end() && (!s->cap_w || s->source == "thermal.csv"))  // the cap held beats the driver's limit
        if (auto held = json_number(cap->fields, "cap_w")) s->cap_w = held;
    return s;
}

std::vector<std::string> files_of(const RunInputs& in) {
    std::vector<std::string> files;
    if (in.has_train_log) files.push_back("train.log");
    if (in.has_events) files.push_back("events.jsonl");
    if (in.has_thermal) files.push_back("thermal.csv");
    files.insert(files.end(), in.stall_files.begin(), in.stall_files.end());
    return files;
}

std::vector<std::string> missing_of(const RunInputs& in) {
    std::vector<std::string> missing;
    const bool gpu = std::any_of(in.thermal.begin(), in.thermal.end(),
                                 [](const telemetry::ThermalRow& row) { return row.gpu.temp_c || row.gpu.power_w; });
    if (!in.has_thermal)
        missing.push_back("thermal.csv: absent (a run from before the sampler, or it never started): no temperature, power or memory over time");
    else if (in.thermal.empty())
        missing.push_back("thermal.csv: no samples: no temperature, power or memory over time");
    else if (!gpu)
        missing.push_back("thermal.csv: no GPU readings (no GPU, or the driver answered [N/A]): no temperature or power");
    if (!in.has_events) missing.push_back("events.jsonl: absent: the timeline's markers come from report.json alone");
    if (!in.has_train_log) missing.push_back("train.log: absent: no step rate");
    else if (in.steps.empty()) missing.push_back("train.log: no training step recognised: no step rate");
    if (in.report.plan.is_null()) missing.push_back("no pre-launch estimate (report.json has no plan): peak memory has nothing to compare with");
    return missing;
}

int offset_of(const RunInputs& in) {
    if (auto t = parse_rfc3339(in.report.started)) return t->utc_offset_minutes;
    if (!in.events.empty()) return in.events.front().time.utc_offset_minutes;
    if (!in.thermal.empty()) return in.thermal.front().time->utc_offset_minutes;
    return in.log_first ? in.log_first->utc_offset_minutes : 0;
}

json optional_number(const std::optional<double>& value, int decimals) {
    if (!value) return json();
    const double scale = std::pow(10.0, decimals);
    return std::round(*value * scale) / scale;
}

json local_time_json(const std::optional<double>& epoch, int offset) {
    return epoch ? json(format_local(*epoch, offset)) : json();
}

json attempt_json(const AttemptSummary& a, int offset) {
    json out = to_json(a.record);
    out.erase("argv");
    out.erase("env");
    out["duration_s"] = optional_number(a.duration_s(), 1);
    out["end_recorded"] = a.end_recorded;
    out["ended_local"] = local_time_json(a.end, offset);
    out["started_local"] = local_time_json(a.start, offset);
    out["resumed_at_step"] = a.resumed_at ? json(*a.resumed_at) : json();
    out["details"] = a.details ? json(*a.details) : json();
    out["config_text"] = describe(a.record.config);
    return out;
}

json memory_json(const MemorySummary& m) {
    return {{"peak_pool_used_gb", optional_number(m.peak_used_gb, 3)},
            {"peak_attempt", m.peak_attempt ? json(*m.peak_attempt) : json()},
            {"peak_trainer_rss_gb", optional_number(m.peak_rss_gb, 3)},
            {"pool_total_gb", optional_number(m.pool_total_gb, 3)},
            {"estimate_peak_gb", optional_number(m.estimate_gb, 3)},
            {"estimate_train_peak_gb", optional_number(m.train_estimate_gb, 3)},
            {"budget_gb", optional_number(m.budget_gb, 3)},
            {"plan_verdict", m.verdict.empty() ? json() : json(m.verdict)}};
}

json telemetry_json(const std::optional<TelemetrySummary>& t, int offset) {
    if (!t) return json();
    return {{"source", t->source},
            {"rows", t->rows},
            {"gpu_rows", t->gpu_rows},
            {"peak_temp_c", optional_number(t->peak_temp_c, 1)},
            {"peak_temp_at", local_time_json(t->peak_temp_at, offset)},
            {"mean_power_w", optional_number(t->mean_power_w, 1)},
            {"max_power_w", optional_number(t->max_power_w, 1)},
            {"cap_w", optional_number(t->cap_w, 1)},
            {"seconds_at_cap", optional_number(t->seconds_at_cap, 1)},
            {"throttle_episodes", t->throttle_episodes},
            {"seconds_throttled", optional_number(t->seconds_throttled, 1)},
            {"power_cap_message", t->power_cap_message.empty() ? json() : json(t->power_cap_message)}};
}

}  // namespace

std::optional<double> json_number(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
    return object[key].get<double>();
}

std::optional<double> AttemptSummary::duration_s() const {
    if (!start || !end) return std::nullopt;
    return std::max(0.0, *end - *start);
}

std::optional<double> RunSummary::duration_s() const {
    if (!start || !end) return std::nullopt;
    return std::max(0.0, *end - *start);
}

RunSummary summarize(const RunInputs& in) {
    RunSummary s;
    s.run_dir = in.run_dir;
    s.outcome = in.report.outcome;
    s.exit_code = in.report.exit_code;
    s.summary = in.report.summary;
    s.start = epoch_of(in.report.started);
    if (!s.start && in.log_first) s.start = in.log_first->epoch_s;
    s.end = epoch_of(in.report.ended);
    s.end_recorded = s.end.has_value() && s.outcome != "running";
    if (!s.end_recorded) s.end = last_sign_of_life(in);
    s.utc_offset_minutes = offset_of(in);
    s.attempts = attempts_of(in);
    s.skipped_at_end = in.report.skipped_at_end;
    s.final_config = in.report.final_config;
    s.reproduce = in.report.reproduce;
    s.memory = memory_of(in);
    s.telemetry = telemetry_of(in);
    s.nodes = nodes_of(in);
    s.files = files_of(in);
    s.missing = missing_of(in);
    s.warnings = in.warnings;
    return s;
}

json to_json(const RunSummary& s) {
    json attempts = json::array();
    for (const auto& a : s.attempts) attempts.push_back(attempt_json(a, s.utc_offset_minutes));
    json nodes = json::array();
    for (const auto& n : s.nodes)
        nodes.push_back({{"host", n.host},
                         {"peak_pool_used_gb", optional_number(n.peak_pool_used_gb, 3)},
                         {"peak_trainer_rss_gb", optional_number(n.peak_rss_gb, 3)},
                         {"telemetry", telemetry_json(n.telemetry, s.utc_offset_minutes)}});
    json skipped = json::array();
    for (const auto& k : s.skipped_at_end) skipped.push_back({{"rung", to_string(k.rung)}, {"why", k.why}});
    return {{"run_dir", s.run_dir},
            {"outcome", s.outcome},
            {"exit_code", s.exit_code ? json(*s.exit_code) : json()},
            {"summary", s.summary},
            {"started", local_time_json(s.start, s.utc_offset_minutes)},
            {"ended", local_time_json(s.end, s.utc_offset_minutes)},
            {"utc_offset", format_utc_offset(s.utc_offset_minutes)},
            {"end_recorded", s.end_recorded},
            {"duration_s", optional_number(s.duration_s(), 1)},
            {"attempts", attempts},
            {"skipped_at_end", skipped},
            {"final_config", s.final_config ? to_json(*s.final_config) : json()},
            {"final_config_text", s.final_config ? json(describe(*s.final_config)) : json()},
            {"reproduce", s.reproduce},
            {"memory", memory_json(s.memory)},
            {"telemetry", telemetry_json(s.telemetry, s.utc_offset_minutes)},
            {"nodes", nodes},
            {"files", s.files},
            {"missing", s.missing},
            {"warnings", s.warnings}};
}

std::string format_local(double epoch_s, int utc_offset_minutes, bool with_date) {
    const std::time_t local = static_cast<std::time_t>(std::floor(epoch_s)) + utc_offset_minutes * 60;
    std::tm tm{};
    gmtime_r(&local, &tm);
    char out[32];
    std::strftime(out, sizeof out, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
    return out;
}

std::string format_utc_offset(int utc_offset_minutes) {
    const int magnitude = std::abs(utc_offset_minutes);
    char out[16];
    std::snprintf(out, sizeof out, "UTC%c%02d:%02d", utc_offset_minutes < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
    return out;
}

}  // namespace sg
