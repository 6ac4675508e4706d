#include "accounting/catalog.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "util/errors.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg::accounting {
namespace {

namespace fs = std::filesystem;

// Keys spelled as in config.json, so an entry can be checked against the real file by eye.
const std::initializer_list<std::string_view> kKeys = {
    "name", "hf_id", "aliases", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "intermediate_size", "moe_intermediate_size", "vocab_size",
    "tie_word_embeddings", "max_position_embeddings", "num_local_experts", "num_experts",
    "num_experts_per_tok", "extra_params"};

std::string lower_key(std::string_view text) { return to_lower(trim(text)); }

}  // namespace

nlohmann::json config_json_from_toml(const toml::table& entry) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, node] : entry) {
        const std::string k(key.str());
        if (auto i = node.value<long long>(); i && node.is_integer()) out[k] = *i;
        else if (auto f = node.value<double>(); f && node.is_floating_point()) out[k] = *f;
        else if (auto b = node.value<bool>()) out[k] = *b;
        else if (auto s = node.value<std::string>()) out[k] = *s;
    }
    return out;
}

namespace {

std::string required_string(const fs::path& file, const toml::table& entry, const toml::node& at, const char* key) {
    auto value = entry[key].value<std::string>();
    if (!value || value->empty()) throw UsageError(where(file, at), std::string("catalog entry needs a string '") + key + "'");
    return *value;
}

CatalogEntry parse_entry(const fs::path& file, const toml::table& entry) {
    reject_unknown_keys(file, entry, kKeys, "a [[model]] entry");
    CatalogEntry out;
    out.name = lower_key(required_string(file, entry, entry, "name"));
    out.hf_id = required_string(file, entry, entry, "hf_id");
    if (const auto* aliases = entry["aliases"].as_array())
        for (const auto& alias : *aliases)
            if (auto text = alias.value<std::string>()) out.aliases.push_back(lower_key(*text));
    out.extra_params = entry["extra_params"].value_or(0.0);
    auto arch = architecture_from_hf_config(config_json_from_toml(entry), where(file, entry) + " (model '" + out.name + "')");
    if (!arch) throw UsageError(arch.error().message);
    out.arch = *arch;
    return out;
}

}  // namespace

const CatalogEntry* Catalog::find(std::string_view reference) const {
    const std::string key = lower_key(reference);
    const std::string key_tail = key.substr(key.rfind('/') + 1);  // "Qwen/Qwen2.5-7B-Instruct": another org's copy
    auto named = [&](const CatalogEntry& e, const std::string& k) {
        return e.name == k || std::find(e.aliases.begin(), e.aliases.end(), k) != e.aliases.end();
    };
    for (const auto& e : entries) {
        const std::string id = to_lower(e.hf_id);
        const std::string tail = id.substr(id.rfind('/') + 1);
        if (id == key || named(e, key)) return &e;
    }
    for (const auto& e : entries) {
        const std::string id = to_lower(e.hf_id);
        if (id.substr(id.rfind('/') + 1) == key_tail || named(e, key_tail)) return &e;
    }
    return nullptr;
}

std::vector<std::string> Catalog::near_names(std::string_view reference) const {
    const std::string key = lower_key(reference.substr(reference.rfind('/') + 1));
    std::vector<std::pair<size_t, std::string>> scored;
    for (const auto& e : entries) {
        size_t distance = edit_distance(key, e.name);
        if (e.name.find(key) != std::string::npos || key.find(e.name) != std::string::npos) distance = std::min<size_t>(distance, 1);
        if (distance <= std::max<size_t>(3, key.size() / 3)) scored.emplace_back(distance, e.name);
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> names;
    for (size_t i = 0; i < scored.size() && i < 3; ++i) names.push_back(scored[i].second);
    return names;
}

Catalog load_catalog(const fs::path& file) {
    const toml::table root = parse_toml_file(file);
    reject_unknown_keys(file, root, {"model"});
    const auto* models = root["model"].as_array();
    if (!models) throw UsageError(file.string(), "no [[model]] entries");
    Catalog catalog{file, {}};
    std::map<std::string, std::string> seen;  // name/alias -> where first defined
    for (const auto& node : *models) {
        const auto* table = node.as_table();
        if (!table) throw UsageError(where(file, node), "[[model]] must be a table");
        CatalogEntry entry = parse_entry(file, *table);
        std::vector<std::string> names = entry.aliases;
        names.push_back(entry.name);
        for (const auto& n : names)
            if (!seen.emplace(n, where(file, *table)).second)
                throw UsageError(where(file, *table), "model name '" + n + "' is already used at " + seen[n]);
        catalog.entries.push_back(std::move(entry));
    }
    return catalog;
}

const Catalog& default_catalog() {
    static const Catalog catalog = [] {
        auto file = find_profile_file("models.toml");
        if (!file) throw UsageError("models.toml", "the model catalog was not found in any profile directory");
        return load_catalog(*file);
    }();
    return catalog;
}

}  // namespace sg::accounting
