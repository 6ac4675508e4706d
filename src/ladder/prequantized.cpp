#include "ladder/prequantized.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg {

namespace fs = std::filesystem;

bool is_prequantized(const std::string& model) {
    if (to_lower(model).find("bnb-4bit") != std::string::npos) return true;
    std::error_code ec;
    const fs::path config = fs::path(model) / "config.json";
    if (!fs::is_regular_file(config, ec)) return false;
    auto text = read_file(config);
    if (!text) return false;
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.contains("quantization_config")) return false;
    const auto& q = json["quantization_config"];
    return q.value("load_in_4bit", false) || (q.value("quant_method", "") == "bitsandbytes" && !q.value("load_in_8bit", false));
}

std::optional<std::string> known_bf16_original(const std::string& model) {
    auto file = find_profile_file("prequantized.toml");
    if (!file) return std::nullopt;
    toml::table table = parse_toml_file(*file);
    reject_unknown_keys(*file, table, {"originals"});
    const toml::table* originals = table["originals"].as_table();
    if (!originals) return std::nullopt;
    for (const auto& [key, value] : *originals) {
        if (!value.is_string()) throw UsageError(where(*file, value), "originals: values must be model names");
        if (to_lower(key.str()) == to_lower(model) || fs::path(model).filename() == fs::path(std::string(key.str())).filename())
            return value.value<std::string>();
    }
    return std::nullopt;
}

}  // namespace sg
