#include "ladder/config_file.hpp"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "util/files.hpp"
#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

namespace {

bool is_json(const fs::path& path) { return to_lower(path.extension().string()) == ".json"; }

// YAML 1.1 plain scalars that PyYAML (and so every Python trainer) reads as null.
bool yaml_null(const YAML::Node& node) {
    if (node.IsNull()) return true;
    if (!node.IsScalar() || node.Tag() == "!") return false;
    const std::string& s = node.Scalar();
    return s == "~" || s == "null" || s == "Null" || s == "NULL" || s.empty();
}

// yaml-cpp's operator[] on a const node never creates; on a non-const one it does: copies keep
// us from adding empty keys while only looking.
std::optional<YAML::Node> yaml_find(const YAML::Node& root, const std::vector<std::string>& keys) {
    YAML::Node node = YAML::Clone(root);
    node.reset(root);
    for (const auto& key : keys) {
        if (!node.IsMap()) return std::nullopt;
        const YAML::Node& current = node;
        YAML::Node child = current[key];
        if (!child.IsDefined()) return std::nullopt;
        node.reset(child);
    }
    return node;
}

const nlohmann::json* json_find(const nlohmann::json& root, const std::vector<std::string>& keys) {
    const nlohmann::json* node = &root;
    for (const auto& key : keys) {
        if (!node->is_object()) return nullptr;
        auto it = node->find(key);
        if (it == node->end()) return nullptr;
        node = &*it;
    }
    return node;
}

nlohmann::json json_value(const ConfigScalar& value) {
    if (value.null) return nullptr;
    if (!value.quoted) {
        if (value.text == "true" || value.text == "false") return value.text == "true";
        if (auto parsed = nlohmann::json::parse(value.text, nullptr, false); !parsed.is_discarded() && parsed.is_number())
            return parsed;
    }
    return value.text;
}

// yaml-cpp's own emitter writes a quoted "4" back as 4, a string turned into a number; this one
// keeps each scalar's quoting and each collection's flow or block style.
void emit(YAML::Emitter& out, const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Map:
            if (node.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
            out << YAML::BeginMap;
            for (const auto& entry : node) {
                out << YAML::Key;
                emit(out, entry.first);
                out << YAML::Value;
                emit(out, entry.second);
            }
            out << YAML::EndMap;
            break;
        case YAML::NodeType::Sequence:
            if (node.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
            out << YAML::BeginSeq;
            for (const auto& element : node) emit(out, element);
            out << YAML::EndSeq;
            break;
        case YAML::NodeType::Scalar:
            if (node.Tag() == "!") out << YAML::DoubleQuoted;
            out << node.Scalar();
            break;
        default:
            out << YAML::Null;
    }
}

}  // namespace

struct ConfigFile::Tree {
    bool json = false;
    YAML::Node yaml;
    nlohmann::json doc;
};

ConfigFile::ConfigFile(fs::path path, std::unique_ptr<Tree> tree) : path_(std::move(path)), tree_(std::move(tree)) {}
ConfigFile::~ConfigFile() = default;
ConfigFile::ConfigFile(ConfigFile&&) noexcept = default;
ConfigFile& ConfigFile::operator=(ConfigFile&&) noexcept = default;
ConfigFile::ConfigFile(const ConfigFile& other) : path_(other.path_), tree_(std::make_unique<Tree>()) {
    tree_->json = other.tree_->json;
    tree_->yaml = YAML::Clone(other.tree_->yaml);
    tree_->doc = other.tree_->doc;
}

Result<ConfigFile> ConfigFile::load(const fs::path& path) {
    auto text = read_file(path);
    if (!text) return text.error();
    auto tree = std::make_unique<Tree>();
    tree->json = is_json(path);
    if (tree->json) {
        try {
            tree->doc = nlohmann::json::parse(*text);
        } catch (const nlohmann::json::parse_error& e) {
            return make_error(path.string() + ": not valid JSON: " + e.what());
        }
        if (!tree->doc.is_object()) return make_error(path.string() + ": expected a JSON object of arguments");
    } else {
        try {
            tree->yaml = YAML::Load(*text);
        } catch (const YAML::Exception& e) {
            return make_error(path.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                              ": not valid YAML: " + e.msg);
        }
        if (tree->yaml.IsNull()) tree->yaml = YAML::Node(YAML::NodeType::Map);
        if (!tree->yaml.IsMap()) return make_error(path.string() + ": expected a YAML mapping of keys at the top level");
    }
    return ConfigFile(path, std::move(tree));
}

std::optional<ConfigScalar> ConfigFile::get(std::string_view dotted) const {
    const auto keys = split(dotted, '.');
    if (tree_->json) {
        const nlohmann::json* node = json_find(tree_->doc, keys);
        if (!node || node->is_object() || node->is_array()) return std::nullopt;
        if (node->is_null()) return ConfigScalar{"", true, false};
        if (node->is_string()) return ConfigScalar{node->get<std::string>(), false, true};
        return ConfigScalar{node->dump(), false, false};
    }
    auto node = yaml_find(tree_->yaml, keys);
    if (!node) return std::nullopt;
    if (yaml_null(*node)) return ConfigScalar{"", true, false};
    if (!node->IsScalar()) return std::nullopt;
    return ConfigScalar{node->Scalar(), false, node->Tag() == "!"};
}

bool ConfigFile::contains(std::string_view dotted) const {
    const auto keys = split(dotted, '.');
    return tree_->json ? json_find(tree_->doc, keys) != nullptr : yaml_find(tree_->yaml, keys).has_value();
}

void ConfigFile::set(std::string_view dotted, const ConfigScalar& value) {
    const auto keys = split(dotted, '.');
    if (tree_->json) {
        nlohmann::json* node = &tree_->doc;
        for (size_t i = 0; i + 1 < keys.size(); ++i) {
            if (!(*node)[keys[i]].is_object()) (*node)[keys[i]] = nlohmann::json::object();
            node = &(*node)[keys[i]];
        }
        (*node)[keys.back()] = json_value(value);
        return;
    }
    YAML::Node node = tree_->yaml;
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
        YAML::Node child = node[keys[i]];
        if (!child.IsMap()) child = YAML::Node(YAML::NodeType::Map);
        node[keys[i]] = child;
        node.reset(child);
    }
    if (value.null) {
        node[keys.back()] = YAML::Node(YAML::NodeType::Null);
    } else {
        YAML::Node scalar(value.text);
        if (value.quoted) scalar.SetTag("!");
        node[keys.back()] = scalar;
    }
}

void ConfigFile::remove(std::string_view dotted) {
    const auto keys = split(dotted, '.');
    if (tree_->json) {
        nlohmann::json* node = &tree_->doc;
        for (size_t i = 0; i + 1 < keys.size(); ++i) {
            if (!node->is_object() || !node->contains(keys[i])) return;
            node = &(*node)[keys[i]];
        }
        if (node->is_object()) node->erase(keys.back());
        return;
    }
    auto parent = keys.size() == 1 ? std::optional(tree_->yaml)
                                   : yaml_find(tree_->yaml, std::vector<std::string>(keys.begin(), keys.end() - 1));
    if (parent && parent->IsMap()) parent->remove(keys.back());
}

std::string ConfigFile::dump() const {
    if (tree_->json) return tree_->doc.dump(2) + "\n";
    YAML::Emitter out;
    emit(out, tree_->yaml);
    return std::string(out.c_str()) + "\n";
}

}  // namespace sg
