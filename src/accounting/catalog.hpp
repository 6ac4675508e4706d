#pragma once
// The catalog of popular models shipped in profiles/models.toml: each entry carries the
// architecture fields of the model's config.json, so plan works without a download.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <toml++/toml.h>

#include "accounting/architecture.hpp"

namespace sg::accounting {

struct CatalogEntry {
    std::string name;                  // "llama-3.1-8b"
    std::string hf_id;                 // "meta-llama/Llama-3.1-8B"
    std::vector<std::string> aliases;
    Architecture arch;
    double extra_params = 0;           // parameters outside the decoder (a vision tower), from the checkpoint
};

struct Catalog {
    std::filesystem::path file;
    std::vector<CatalogEntry> entries;

    // Matches the name, an alias or the Hugging Face id, ignoring case; then the last part of
    // ORG/NAME against those (a fine-tune or mirror under another org has the same architecture).
    const CatalogEntry* find(std::string_view reference) const;
    // Up to three names close to `reference` (edit distance or shared prefix), for "did you mean".
    std::vector<std::string> near_names(std::string_view reference) const;
};

// A TOML table of config.json keys as the JSON object architecture_from_hf_config reads.
nlohmann::json config_json_from_toml(const toml::table& table);

// Parses and validates a catalog file; errors (unknown keys, missing or bad fields, duplicate
// names) throw UsageError naming FILE:LINE:COLUMN.
Catalog load_catalog(const std::filesystem::path& file);

// The catalog found through the profile directories (profiles/models.toml); throws when absent.
const Catalog& default_catalog();

}  // namespace sg::accounting
