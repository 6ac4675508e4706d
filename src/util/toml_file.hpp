#pragma once
// Reading TOML data files (profiles, workloads) with errors that name file:line:column.

#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace sg {

// Parses a TOML file; a syntax error throws UsageError "FILE:LINE:COL: what".
toml::table parse_toml_file(const std::filesystem::path& path);

// "FILE:LINE:COL" of a node, for messages about it.
std::string where(const std::filesystem::path& path, const toml::node& node);

// Rejects keys of `table` that are not in `known`, naming the first one with file:line:column.
void reject_unknown_keys(const std::filesystem::path& path, const toml::table& table,
                         std::initializer_list<std::string_view> known, std::string_view context = {});
// The same for a key list built at run time (from an option table, say).
void reject_unknown_keys(const std::filesystem::path& path, const toml::table& table,
                         std::span<const std::string_view> known, std::string_view context = {});

}  // namespace sg
