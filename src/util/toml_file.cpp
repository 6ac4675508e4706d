#include "util/toml_file.hpp"

#include <algorithm>

#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg {

toml::table parse_toml_file(const std::filesystem::path& path) {
    try {
        return toml::parse_file(path.string());
    } catch (const toml::parse_error& e) {
        const auto& begin = e.source().begin;
        throw UsageError(path.string() + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column),
                         std::string(e.description()));
    }
}

std::string where(const std::filesystem::path& path, const toml::node& node) {
    const auto& begin = node.source().begin;
    return path.string() + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column);
}

void reject_unknown_keys(const std::filesystem::path& path, const toml::table& table,
                         std::initializer_list<std::string_view> known, std::string_view context) {
    reject_unknown_keys(path, table, std::span<const std::string_view>(known.begin(), known.size()), context);
}

void reject_unknown_keys(const std::filesystem::path& path, const toml::table& table,
                         std::span<const std::string_view> known, std::string_view context) {
    for (const auto& [key, node] : table) {
        if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
        std::string why = "unknown key '" + std::string(key.str()) + "'";
        if (!context.empty()) why += " in " + std::string(context);
        std::string_view best;
        size_t best_distance = 3;
        for (auto candidate : known) {
            size_t d = edit_distance(key.str(), candidate);
            if (d < best_distance) best = candidate, best_distance = d;
        }
        if (!best.empty()) why += " (did you mean '" + std::string(best) + "'?)";
        const auto& begin = key.source().begin;
        throw UsageError(path.string() + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column), why);
    }
}

}  // namespace sg
