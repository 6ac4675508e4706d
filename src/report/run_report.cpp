#include "report/run_report.hpp"

#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg {

using nlohmann::json;

namespace {

template <class T>
json optional_json(const std::optional<T>& value) {
    return value ? json(*value) : json();
}

template <class T>
std::optional<T> optional_field(const json& object, const char* key) {
    if (!object.contains(key) || object[key].is_null()) return std::nullopt;
    return object[key].get<T>();
}

json env_json(const std::vector<std::pair<std::string, std::string>>& env) {
    json out = json::object();
    for (const auto& [key, value] : env) out[key] = value;
    return out;
}

json skipped_json(const std::vector<SkippedRung>& skipped) {
    json out = json::array();
    for (const auto& s : skipped) out.push_back({{"rung", to_string(s.rung)}, {"why", s.why}});
    return out;
}

std::vector<SkippedRung> skipped_from_json(const json& array) {
    std::vector<SkippedRung> out;
    for (const auto& s : array)
        if (auto rung = parse_rung(s.at("rung").get<std::string>())) out.push_back({*rung, s.at("why").get<std::string>()});
    return out;
}

AttemptRecord attempt_from_json(const json& j) {
    AttemptRecord a;
    a.n = j.at("n").get<int>();
    if (auto rung = optional_field<std::string>(j, "rung")) a.rung = parse_rung(*rung);
    a.config = train_config_from_json(j.at("config"));
    a.argv = j.at("argv").get<std::vector<std::string>>();
    if (j.contains("env"))
        for (const auto& [key, value] : j["env"].items()) a.env.emplace_back(key, value.get<std::string>());
    a.outcome = j.at("outcome").get<std::string>();
    a.exit_code = optional_field<int>(j, "exit_code");
    a.oom_kind = optional_field<std::string>(j, "oom_kind");
    a.phase = optional_field<std::string>(j, "phase");
    a.evidence = optional_field<std::string>(j, "evidence");
    a.confidence = optional_field<std::string>(j, "confidence");
    a.node = optional_field<std::string>(j, "node");
    a.rank = optional_field<std::string>(j, "rank");
    a.started = j.value("started", "");
    a.ended = j.value("ended", "");
    a.resumed_from = optional_field<std::string>(j, "resumed_from");
    a.resume_requested = optional_field<std::string>(j, "resume_requested");
    a.last_step = optional_field<long>(j, "last_step");
    a.skipped_rungs = skipped_from_json(j.value("skipped_rungs", json::array()));
    a.notes = j.value("notes", std::vector<std::string>{});
    a.measured = j.value("measured", json::object());
    return a;
}

}  // namespace


json to_json(const AttemptRecord& a) {
    return {
        {"n", a.n},
        {"rung", a.rung ? json(to_string(*a.rung)) : json()},
        {"config", to_json(a.config)},
        {"argv", a.argv},
        {"env", env_json(a.env)},
        {"outcome", a.outcome},
        {"exit_code", optional_json(a.exit_code)},
        {"oom_kind", optional_json(a.oom_kind)},
        {"phase", optional_json(a.phase)},
        {"evidence", optional_json(a.evidence)},
        {"confidence", optional_json(a.confidence)},
        {"node", optional_json(a.node)},
        {"rank", optional_json(a.rank)},
        {"started", a.started},
        {"ended", a.ended},
        {"resumed_from", optional_json(a.resumed_from)},
        {"resume_requested", optional_json(a.resume_requested)},
        {"last_step", optional_json(a.last_step)},
        {"skipped_rungs", skipped_json(a.skipped_rungs)},
        {"notes", a.notes},
        {"measured", a.measured},
    };
}

json to_json(const RunReport& r) {
    json attempts = json::array();
    for (const auto& a : r.attempts) attempts.push_back(to_json(a));
    return {
        {"outcome", r.outcome},
        {"exit_code", optional_json(r.exit_code)},
        {"summary", r.summary},
        {"profile", r.profile},
        {"command", r.command},
        {"config_sources", r.config_sources},
        {"started", r.started},
        {"ended", r.ended},
        {"attempts", attempts},
        {"skipped_at_end", skipped_json(r.skipped_at_end)},
        {"final_config", r.final_config ? to_json(*r.final_config) : json()},
        {"reproduce", r.reproduce},
        {"plan", r.plan},
        {"telemetry", r.telemetry},
        {"nodes", r.nodes},
    };
}

RunReport report_from_json(const json& j) {
    try {
        RunReport r;
        r.outcome = j.at("outcome").get<std::string>();
        r.exit_code = optional_field<int>(j, "exit_code");
        r.summary = j.value("summary", "");
        r.profile = j.value("profile", "");
        r.command = j.at("command").get<std::vector<std::string>>();
        r.config_sources = j.value("config_sources", std::map<std::string, std::string>{});
        r.started = j.value("started", "");
        r.ended = j.value("ended", "");
        for (const auto& a : j.at("attempts")) r.attempts.push_back(attempt_from_json(a));
        r.skipped_at_end = skipped_from_json(j.value("skipped_at_end", json::array()));
        if (j.contains("final_config") && !j["final_config"].is_null()) r.final_config = train_config_from_json(j["final_config"]);
        r.reproduce = j.value("reproduce", "");
        r.plan = j.value("plan", json());
        r.telemetry = j.value("telemetry", json());
        r.nodes = j.value("nodes", json());
        return r;
    } catch (const json::exception& e) {
        throw UsageError("report.json", e.what());
    }
}

std::string reproduce_line(const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> words;
    for (const auto& [key, value] : env) words.push_back(key + "=" + shell_quote(value));
    for (const auto& arg : argv) words.push_back(shell_quote(arg));
    return join(words, " ");
}

}  // namespace sg
