#include "telemetry/nvidia_smi.hpp"

#include <algorithm>
#include <cstdlib>

#include "supervise/capture.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::telemetry {
namespace {

std::string first_line(std::string_view text) {
    text = trim(text);
    return std::string(text.substr(0, text.find('\n')));
}

std::string query_argument(const std::vector<std::string>& names) { return "--query-gpu=" + join(names, ","); }

std::vector<std::string> chosen_names(const std::vector<SmiFieldChoice>& choices) {
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.field->names[c.name]);
    return names;
}

SmiAnswer answer_from(const std::vector<SmiFieldChoice>& choices, std::string csv, std::vector<std::string> refused) {
    SmiAnswer answer;
    for (const auto& c : choices) answer.keys.push_back(c.field->key);
    answer.names = chosen_names(choices);
    answer.csv = std::move(csv);
    answer.refused = std::move(refused);
    return answer;
}

void set_field(GpuSample& sample, const std::string& key, std::string_view cell) {
    if (key == "temp") sample.temp_c = smi_number(cell);
    else if (key == "power") sample.power_w = smi_number(cell);
    else if (key == "power_limit") sample.power_limit_w = smi_number(cell);
    else if (key == "sm_clock") sample.sm_clock_mhz = smi_number(cell);
    else if (key == "util") sample.util_pct = smi_number(cell);
    else if (key == "throttle") sample.throttle = smi_bitmask(cell);
}

bool reported(const GpuSample& s, const std::string& key) {
    if (key == "temp") return s.temp_c.has_value();
    if (key == "power") return s.power_w.has_value();
    if (key == "power_limit") return s.power_limit_w.has_value();
    if (key == "sm_clock") return s.sm_clock_mhz.has_value();
    if (key == "util") return s.util_pct.has_value();
    if (key == "throttle") return s.throttle.has_value();
    return true;
}

}  // namespace

std::optional<std::string> smi_text(std::string_view cell) {
    std::string_view value = trim(cell);
    if (value.empty() || value == "N/A" || (value.front() == '[' && value.back() == ']')) return std::nullopt;
    return std::string(value);
}

std::optional<double> smi_number(std::string_view cell) {
    auto text = smi_text(cell);
    if (!text) return std::nullopt;
    std::string_view number = *text;
    if (auto space = number.find(' '); space != std::string_view::npos) number = number.substr(0, space);
    auto value = parse_double(number);
    return value ? std::optional<double>(*value) : std::nullopt;
}

std::optional<std::uint64_t> smi_bitmask(std::string_view cell) {
    auto text = smi_text(cell);
    if (!text || text->rfind("0x", 0) != 0 || text->size() == 2) return std::nullopt;
    char* end = nullptr;
    unsigned long long bits = std::strtoull(text->c_str() + 2, &end, 16);
    if (*end != '\0') return std::nullopt;
    return bits;
}

std::optional<std::string> refused_field(std::string_view output) {
    constexpr std::string_view kPrefix = "Field \"";
    constexpr std::string_view kSuffix = "\" is not a valid field to query";
    size_t start = output.find(kPrefix);
    if (start == std::string_view::npos) return std::nullopt;
    start += kPrefix.size();
    size_t end = output.find(kSuffix, start);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(output.substr(start, end - start));
}

Status skip_refused(std::vector<SmiFieldChoice>& choices, const std::string& refused) {
    auto it = std::find_if(choices.begin(), choices.end(),
                           [&](const SmiFieldChoice& c) { return c.field->names[c.name] == refused; });
    if (it == choices.end()) return make_error("nvidia-smi refused \"" + refused + "\", which was not asked for");
    if (it->name + 1 < it->field->names.size()) {
        ++it->name;
        return Ok{};
    }
    if (it->field->required)
        return make_error("nvidia-smi: this driver does not know the field \"" + refused + "\"");
    choices.erase(it);
    return Ok{};
}

Result<SmiAnswer> query_gpus(const std::vector<SmiField>& fields, double timeout_seconds) {
    std::vector<SmiFieldChoice> choices;
    for (const auto& field : fields) choices.push_back({&field, 0});
    std::vector<std::string> refused;
    while (!choices.empty()) {
        auto run = capture_output({"nvidia-smi", query_argument(chosen_names(choices)), "--format=csv,noheader,nounits"},
                                  timeout_seconds);
        if (!run) return make_error("nvidia-smi: " + run.error().message);
        if (run->timed_out) return make_error("nvidia-smi did not answer within " + fixed(timeout_seconds, 0) + " s");
        if (run->exit_code == 0) return answer_from(choices, std::move(run->out), std::move(refused));
        auto field = refused_field(run->out + run->err);
        if (!field)
            return make_error("nvidia-smi exited " + std::to_string(run->exit_code) + ": " +
                              first_line(run->out.empty() ? run->err : run->out));
        if (auto skipped = skip_refused(choices, *field); !skipped) return skipped.error();
        refused.push_back(*field);
    }
    return make_error("nvidia-smi refused every field asked for");
}

const std::vector<SmiField>& sample_fields() {
    static const std::vector<SmiField> fields = {
        {"index", {"index"}, true},
        {"temp", {"temperature.gpu"}},
        {"power", {"power.draw", "power.draw.instant"}},
        {"power_limit", {"enforced.power.limit", "power.limit"}},
        {"sm_clock", {"clocks.sm"}},
        {"util", {"utilization.gpu"}},
        // Renamed in the R535 drivers; the newest drivers know only the new name, old ones only the old.
        {"throttle", {"clocks_event_reasons.active", "clocks_throttle_reasons.active"}},
    };
    return fields;
}

SmiProbe smi_probe_from_answer(const SmiAnswer& answer) {
    SmiProbe probe;
    for (const auto& name : answer.refused) probe.notes.push_back("nvidia-smi does not know " + name);
    const SmiQuery asked{answer.keys, answer.names};
    for (const auto& line : split(answer.csv, '\n')) {
        if (trim(line).empty()) continue;
        auto sample = parse_smi_line(asked, line);
        if (!sample) probe.notes.push_back(sample.error().message);
        else probe.first.push_back(*sample);
    }
    if (probe.first.empty()) {
        probe.problem = "nvidia-smi listed no GPU";
        return probe;
    }
    SmiQuery kept;
    for (size_t i = 0; i < asked.keys.size(); ++i) {
        const auto& key = asked.keys[i];
        bool any = std::any_of(probe.first.begin(), probe.first.end(), [&](const GpuSample& s) { return reported(s, key); });
        if (!any) {
            probe.notes.push_back(asked.names[i] + " is [N/A] on every GPU: not sampled");
            continue;
        }
        kept.keys.push_back(key);
        kept.names.push_back(asked.names[i]);
    }
    if (kept.keys.size() == 1) probe.problem = "nvidia-smi reports no temperature, power, clock or utilisation";
    else probe.query = std::move(kept);
    return probe;
}

SmiProbe probe_smi_sampling(double timeout_seconds) {
    auto answer = query_gpus(sample_fields(), timeout_seconds);
    if (!answer) {
        SmiProbe probe;
        probe.problem = answer.error().message;
        return probe;
    }
    return smi_probe_from_answer(*answer);
}

std::vector<std::string> smi_loop_argv(const SmiQuery& query, int interval_ms) {
    return {"nvidia-smi", query_argument(query.names), "--format=csv,noheader,nounits", "-lms", std::to_string(interval_ms)};
}

Result<GpuSample> parse_smi_line(const SmiQuery& query, std::string_view line) {
    auto cells = split(trim(line), ',');
    if (cells.size() != query.keys.size())
        return make_error("nvidia-smi: expected " + std::to_string(query.keys.size()) + " fields (" + join(query.names, ",") +
                          "), got " + std::to_string(cells.size()) + " in '" + std::string(trim(line)) + "'");
    GpuSample sample;
    for (size_t i = 0; i < cells.size(); ++i) {
        if (query.keys[i] != "index") {
            set_field(sample, query.keys[i], cells[i]);
            continue;
        }
        auto index = parse_int(trim(cells[i]));
        if (!index) return make_error("nvidia-smi: field index: " + index.error().message + " in '" + std::string(trim(line)) + "'");
        sample.index = static_cast<int>(*index);
    }
    return sample;
}

std::vector<GpuSample> LatestGpuSamples::current() const {
    std::vector<GpuSample> out;
    for (const auto& [index, sample] : by_index_) out.push_back(sample);
    return out;
}

}  // namespace sg::telemetry
