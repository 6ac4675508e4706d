#include "supervise/run_options.hpp"

#include <nlohmann/json.hpp>

namespace sg {

using nlohmann::json;

json to_json(const RunOptions& o) {
    std::vector<std::string> rungs;
    for (Rung r : o.ladder.order) rungs.emplace_back(to_string(r));
    auto opt = [](const auto& v) { return v ? json(*v) : json(); };
    return {{"command", o.command},
            {"profile", opt(o.profile)},
            {"run_dir", o.run_dir ? json(o.run_dir->string()) : json()},
            {"ladder", rungs},
            {"min_seq", o.ladder.min_seq},
            {"max_attempts", o.max_attempts},
            {"grace_seconds", o.grace_seconds},
            {"stall_timeout", o.stall_timeout},
            {"relaunch_on_hang", o.relaunch_on_hang},
            {"thermal_interval", o.thermal_interval},
            {"memory_floor", o.memory_floor ? json(o.memory_floor->text()) : json()},
            {"tick_seconds", o.tick_seconds},
            {"batch_size", opt(o.batch_size)},
            {"grad_accum", opt(o.grad_accum)},
            {"seq_len", opt(o.seq_len)},
            {"method", o.method ? json(accounting::name(*o.method)) : json()},
            {"model", opt(o.model)},
            {"output_dir", opt(o.output_dir)},
            {"bf16_model", opt(o.bf16_model)},
            {"notify", {{"commands", o.notify.commands},
                        {"on", std::vector<std::string>(o.notify.events.begin(), o.notify.events.end())},
                        {"timeout_seconds", o.notify.timeout_seconds}}}};
}

RunOptions run_options_from_json(const json& j) {
    RunOptions o;
    auto str = [&](const char* key) -> std::optional<std::string> {
        return j.contains(key) && j[key].is_string() ? std::optional(j[key].get<std::string>()) : std::nullopt;
    };
    auto num = [&](const char* key) -> std::optional<long> {
        return j.contains(key) && j[key].is_number_integer() ? std::optional(j[key].get<long>()) : std::nullopt;
    };
    o.command = j.at("command").get<std::vector<std::string>>();
    o.profile = str("profile");
    if (auto dir = str("run_dir")) o.run_dir = *dir;
    o.ladder.order.clear();
    for (const auto& r : j.at("ladder"))
        if (auto rung = parse_rung(r.get<std::string>())) o.ladder.order.push_back(*rung);
    o.ladder.min_seq = j.at("min_seq").get<long>();
    o.max_attempts = j.at("max_attempts").get<int>();
    o.grace_seconds = j.at("grace_seconds").get<double>();
    o.stall_timeout = j.value("stall_timeout", o.stall_timeout);
    o.relaunch_on_hang = j.value("relaunch_on_hang", false);
    o.thermal_interval = j.value("thermal_interval", o.thermal_interval);
    o.tick_seconds = j.value("tick_seconds", 1.0);
    if (auto floor = str("memory_floor"))
        if (auto spec = oom::parse_floor(*floor)) o.memory_floor = *spec;
    o.batch_size = num("batch_size");
    o.grad_accum = num("grad_accum");
    o.seq_len = num("seq_len");
    if (auto method = str("method")) o.method = accounting::parse_method(*method);
    o.model = str("model");
    o.output_dir = str("output_dir");
    o.bf16_model = str("bf16_model");
    if (j.contains("notify") && j["notify"].is_object()) {
        const json& n = j["notify"];
        o.notify.commands = n.value("commands", std::vector<std::vector<std::string>>{});
        const auto on = n.value("on", std::vector<std::string>{});
        o.notify.events = std::set<std::string>(on.begin(), on.end());
        o.notify.timeout_seconds = n.value("timeout_seconds", o.notify.timeout_seconds);
    }
    return o;
}

}  // namespace sg
