#include "ladder/train_config.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"

namespace sg {

std::optional<long> TrainConfig::effective_batch() const {
    if (!batch_size) return std::nullopt;
    return *batch_size * grad_accum.value_or(1);
}

std::string describe(const TrainConfig& c) {
    std::vector<std::string> parts;
    if (c.batch_size) parts.push_back("batch " + std::to_string(*c.batch_size) +
                                      (c.grad_accum && *c.grad_accum > 1 ? "\xC3\x97" + std::to_string(*c.grad_accum) : ""));
    if (c.seq_len) parts.push_back("seq " + std::to_string(*c.seq_len));
    if (c.method) parts.emplace_back(accounting::name(*c.method));
    if (c.drop_caches) parts.emplace_back("drop-caches");
    return parts.empty() ? "as given" : join(parts, ", ");
}

nlohmann::json to_json(const TrainConfig& config) {
    auto optional_number = [](const std::optional<long>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    nlohmann::json json = {
        {"batch_size", optional_number(config.batch_size)},
        {"grad_accum", optional_number(config.grad_accum)},
        {"seq_len", optional_number(config.seq_len)},
        {"method", config.method ? nlohmann::json(accounting::name(*config.method)) : nlohmann::json()},
        {"drop_caches", config.drop_caches},
    };
    if (config.model) json["model"] = *config.model;
    return json;
}

TrainConfig train_config_from_json(const nlohmann::json& json) {
    TrainConfig config;
    auto number = [&](const char* key) -> std::optional<long> {
        if (!json.contains(key) || json[key].is_null()) return std::nullopt;
        return json[key].get<long>();
    };
    config.batch_size = number("batch_size");
    config.grad_accum = number("grad_accum");
    config.seq_len = number("seq_len");
    if (json.contains("method") && json["method"].is_string())
        config.method = accounting::parse_method(json["method"].get<std::string>());
    if (json.contains("model") && json["model"].is_string()) config.model = json["model"].get<std::string>();
    config.drop_caches = json.value("drop_caches", false);
    return config;
}

}  // namespace sg
