#pragma once
// A trainer's configuration file (YAML or JSON) as a tree of dotted keys ("tokenizer.max_seq_len"),
// read with a real parser and written back as a changed copy; the user's file is never modified.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace sg {

// A scalar as the file spells it. Null is YAML's `~`/`null`/empty value and JSON's null.
struct ConfigScalar {
    std::string text;
    bool null = false;
    bool quoted = false;  // a string the writer must keep a string ("4" stays "4", not 4)
};

class ConfigFile {
public:
    // Parses YAML (.yml/.yaml and anything else) or JSON (.json); errors name file:line:column.
    static Result<ConfigFile> load(const std::filesystem::path& path);
    ~ConfigFile();
    ConfigFile(ConfigFile&&) noexcept;
    ConfigFile& operator=(ConfigFile&&) noexcept;
    ConfigFile(const ConfigFile&);

    const std::filesystem::path& path() const { return path_; }
    // The scalar at a dotted key; nullopt when absent or not a scalar.
    std::optional<ConfigScalar> get(std::string_view dotted) const;
    bool contains(std::string_view dotted) const;
    // Creates the maps on the way; replaces whatever was there.
    void set(std::string_view dotted, const ConfigScalar& value);
    void remove(std::string_view dotted);
    // The whole document in its own format.
    std::string dump() const;

private:
    struct Tree;
    ConfigFile(std::filesystem::path path, std::unique_ptr<Tree> tree);
    std::filesystem::path path_;
    std::unique_ptr<Tree> tree_;
};

}  // namespace sg
