#include "accounting/model_source.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "accounting/catalog.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace sg::accounting {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> hf_cache_dirs() {
    std::vector<fs::path> dirs;
    if (const char* hub = std::getenv("HF_HUB_CACHE"); hub && *hub) dirs.emplace_back(hub);
    if (const char* home = std::getenv("HF_HOME"); home && *home) dirs.push_back(fs::path(home) / "hub");
    if (const char* home = std::getenv("HOME"); home && *home) dirs.push_back(fs::path(home) / ".cache/huggingface/hub");
    return dirs;
}

nlohmann::json read_config(const fs::path& file) {
    auto text = read_file(file);
    if (!text) throw UsageError(file.string(), "cannot read: " + text.error().message);
    nlohmann::json config = nlohmann::json::parse(*text, nullptr, false);
    if (config.is_discarded()) throw UsageError(file.string(), "not valid JSON");
    if (!config.is_object()) throw UsageError(file.string(), "not a JSON object");
    return config;
}

Architecture architecture_of(const nlohmann::json& config, const fs::path& file) {
    auto arch = architecture_from_hf_config(config, file.string());
    if (!arch) throw UsageError(arch.error().message);
    return *arch;
}

std::string quant_method(const nlohmann::json& config) {
    auto q = config.find("quantization_config");
    if (q == config.end() || !q->is_object()) return "";
    return q->value("quant_method", std::string("unknown"));
}

ModelInfo from_catalog(const CatalogEntry& entry, const fs::path& file) {
    ModelInfo info;
    info.name = entry.name;
    info.source = "catalog entry " + entry.name + " (" + entry.hf_id + ") in " + file.string();
    info.shape.arch = entry.arch;
    info.shape.params = total_params(entry.arch) + entry.extra_params;
    return info;
}

std::string unknown_model_message(const std::string& reference, const Catalog& catalog) {
    std::string why = "not a file or directory, not in the local Hugging Face cache, and not in the catalog (" +
                      catalog.file.string() + ")";
    auto near = catalog.near_names(reference);
    if (!near.empty()) why += "; did you mean " + join(near, ", ") + "?";
    return why;
}

bool looks_like_path(const std::string& reference) {
    return reference.starts_with("/") || reference.starts_with("./") || reference.starts_with("../") ||
           reference.starts_with("~") || reference.ends_with(".json");
}

}  // namespace

std::optional<fs::path> find_in_hf_cache(const std::string& repo_id) {
    const auto slash = repo_id.find('/');
    if (slash == std::string::npos || repo_id.find('/', slash + 1) != std::string::npos) return std::nullopt;
    const std::string folder = "models--" + repo_id.substr(0, slash) + "--" + repo_id.substr(slash + 1);
    for (const auto& cache : hf_cache_dirs()) {
        const fs::path repo = cache / folder;
        std::error_code ec;
        if (!fs::is_directory(repo / "snapshots", ec)) continue;
        // refs/main names the snapshot the hub client resolves; otherwise take any complete one.
        if (auto ref = read_file(repo / "refs" / "main"); ref) {
            fs::path snapshot = repo / "snapshots" / std::string(trim(*ref));
            if (fs::is_regular_file(snapshot / "config.json", ec)) return snapshot;
        }
        for (const auto& snapshot : fs::directory_iterator(repo / "snapshots", ec))
            if (fs::is_regular_file(snapshot.path() / "config.json", ec)) return snapshot.path();
    }
    return std::nullopt;
}

ModelInfo model_from_directory(const fs::path& dir, const std::string& name) {
    const fs::path config_file = dir / "config.json";
    std::error_code ec;
    if (!fs::is_regular_file(config_file, ec)) throw UsageError(dir.string(), "no config.json in this directory");
    const nlohmann::json config = read_config(config_file);
    ModelInfo info;
    info.name = name;
    info.shape.arch = architecture_of(config, config_file);
    info.shape.params = total_params(info.shape.arch);
    info.quantization = quant_method(config);
    info.source = "config.json in " + dir.string();
    auto stats = read_checkpoint(dir);
    if (!stats) throw UsageError(stats.error().message);
    if (stats->files > 0 && stats->params > 0) {
        info.shape.params = stats->params;
        info.shape.checkpoint_bytes = stats->bytes;
        info.shape.largest_shard_bytes = stats->largest_shard_bytes;
        info.shape.prequantized = stats->prequantized || !info.quantization.empty();
        info.source += " with " + std::to_string(stats->files) + " safetensors header" + (stats->files > 1 ? "s" : "") +
                       " (" + std::to_string(stats->tensors) + " tensors)";
        info.checkpoint = *stats;
    }
    return info;
}

// "unsloth/Llama-3.2-3B-Instruct-bnb-4bit" -> ("unsloth/Llama-3.2-3B-Instruct", "bitsandbytes 4-bit"):
// the name a pre-quantised checkpoint's base goes by, and how it was quantised.
std::optional<std::pair<std::string, std::string>> prequantized_base(const std::string& reference) {
    static const std::pair<const char*, const char*> kSuffixes[] = {
        {"-unsloth-bnb-4bit", "bitsandbytes 4-bit"}, {"-bnb-4bit", "bitsandbytes 4-bit"},
        {"-gptq-int4", "GPTQ 4-bit"}, {"-gptq", "GPTQ 4-bit"}, {"-awq", "AWQ 4-bit"}, {"-4bit", "4-bit"}};
    const std::string lower = to_lower(reference);
    for (const auto& [suffix, kind] : kSuffixes) {
        const std::string s(suffix);
        if (lower.size() > s.size() && lower.compare(lower.size() - s.size(), s.size(), s) == 0)
            return std::pair(reference.substr(0, reference.size() - s.size()), std::string(kind));
    }
    return std::nullopt;
}

ModelInfo resolve_model(const std::string& reference) {
    if (trim(reference).empty()) throw UsageError("--model", "empty model reference");
    std::error_code ec;
    const fs::path path(reference);
    if (fs::is_directory(path, ec)) return model_from_directory(path, path.filename().string());
    if (fs::is_regular_file(path, ec)) {
        if (path.filename() == "config.json" || path.extension() == ".json") {
            ModelInfo info;
            info.name = path.parent_path().filename().string();
            info.shape.arch = architecture_of(read_config(path), path);
            info.shape.params = total_params(info.shape.arch);
            info.source = path.string();
            return info;
        }
        throw UsageError(reference, "give a model directory or its config.json");
    }
    if (looks_like_path(reference)) throw UsageError(reference, "no such file or directory");
    if (auto snapshot = find_in_hf_cache(reference)) {
        ModelInfo info = model_from_directory(*snapshot, reference);
        info.source = "Hugging Face cache: " + info.source;
        return info;
    }
    const Catalog& catalog = default_catalog();
    if (const CatalogEntry* entry = catalog.find(reference)) return from_catalog(*entry, catalog.file);
    if (auto base = prequantized_base(reference))
        if (const CatalogEntry* entry = catalog.find(base->first)) {
            ModelInfo info = from_catalog(*entry, catalog.file);
            info.name = reference;
            info.quantization = base->second;
            info.shape.prequantized = true;
            info.shape.checkpoint_bytes = info.shape.params * 0.53;  // 4-bit with its scales: what load maps
            info.source = "the base architecture of " + reference + ": " + info.source;
            return info;
        }
    throw UsageError(reference, unknown_model_message(reference, catalog));
}

ModelInfo model_from_params(double params) {
    ModelInfo info;
    info.name = fixed(params / 1e9, 1) + "B parameters";
    info.shape.arch = generic_architecture(params);
    info.shape.params = params;
    const Architecture& a = info.shape.arch;
    info.source = "--params";
    info.notes.push_back("generic dense architecture (no model given): Llama-3-like, hidden " + std::to_string(a.hidden) +
                         ", " + std::to_string(a.layers) + " layers, " + std::to_string(a.heads) + " heads / " +
                         std::to_string(a.kv_heads) + " KV heads, SwiGLU " + std::to_string(a.intermediate) +
                         ", vocabulary " + std::to_string(a.vocab));
    return info;
}

}  // namespace sg::accounting
