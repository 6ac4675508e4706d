#include "accounting/safetensors.hpp"

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "util/files.hpp"

namespace sg::accounting {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The format's own ceiling on the header; anything larger is a corrupt or hostile file.
constexpr unsigned long long kMaxHeaderBytes = 100ull << 20;

double dtype_bytes(const std::string& dtype) {
    static const std::map<std::string, double> kBytes = {
        {"F64", 8}, {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4}, {"U32", 4},
        {"F16", 2}, {"BF16", 2}, {"I16", 2}, {"U16", 2}, {"I8", 1}, {"U8", 1}, {"BOOL", 1},
        {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"F4", 0.5}, {"F6_E2M3", 0.75}, {"F6_E3M2", 0.75}};
    auto it = kBytes.find(dtype);
    return it == kBytes.end() ? 0 : it->second;
}

bool is_float(const std::string& dtype) { return dtype[0] == 'F' || dtype == "BF16"; }

bool ends_with(const std::string& text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<TensorInfo> parse_tensor(const std::string& name, const json& entry, double data_bytes) {
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string())
        return make_error(where + " has no dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array()) return make_error(where + " has no shape");
    TensorInfo t{name, entry["dtype"].get<std::string>(), {}, 1, 0};
    const double width = dtype_bytes(t.dtype);
    if (width == 0) return make_error(where + " has unknown dtype '" + t.dtype + "'");
    for (const auto& dim : entry["shape"]) {
        if (!dim.is_number_integer() || dim.get<long long>() < 0) return make_error(where + " has a bad shape");
        t.shape.push_back(dim.get<long long>());
        t.elements *= static_cast<double>(t.shape.back());
    }
    t.bytes = t.elements * width;
    const json* offsets = entry.contains("data_offsets") ? &entry["data_offsets"] : nullptr;
    if (offsets && offsets->is_array() && offsets->size() == 2 && (*offsets)[1].is_number() &&
        (*offsets)[1].get<double>() > data_bytes)
        return make_error(where + " ends past the end of the file");
    return t;
}

// Parameters a stored tensor stands for: packed 4-bit formats hold two values per byte
// (bitsandbytes NF4 weights, MXFP4 "_blocks") or eight per int32 (GPTQ/AWQ "qweight").
bool is_quantisation_constant(const std::string& name) {
    return name.find(".weight.") != std::string::npos || ends_with(name, "_scales") || ends_with(name, ".scales") ||
           ends_with(name, ".SCB") || ends_with(name, ".qzeros") || ends_with(name, ".g_idx");
}

double params_of(const TensorInfo& t, const std::set<std::string>& quant_state_owners) {
    if (is_quantisation_constant(t.name)) return 0;
    if (is_float(t.dtype)) return t.elements;
    if (t.dtype == "U8" && (ends_with(t.name, "_blocks") || quant_state_owners.count(t.name))) return t.elements * 2;
    if (t.dtype == "I32" && ends_with(t.name, ".qweight")) return t.elements * 8;
    if (t.dtype == "I8" && ends_with(t.name, ".weight")) return t.elements;
    return 0;  // scales, zero points, absmax, index tables
}

}  // namespace

Result<std::vector<TensorInfo>> read_safetensors_header(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return make_error(file.string() + ": " + errno_text(errno));
    std::error_code ec;
    const auto file_size = fs::file_size(file, ec);
    if (ec) return make_error(file.string() + ": " + ec.message());
    unsigned char prefix[8] = {};
    if (!in.read(reinterpret_cast<char*>(prefix), 8))
        return make_error(file.string() + ": not a safetensors file: shorter than its 8-byte header length");
    unsigned long long length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | prefix[i];
    if (length > kMaxHeaderBytes || length > file_size - 8)
        return make_error(file.string() + ": safetensors header claims " + std::to_string(length) +
                          " bytes but the file has " + std::to_string(file_size - 8) + " after the length");
    std::string header(length, '\0');
    if (!in.read(header.data(), static_cast<std::streamsize>(length)))
        return make_error(file.string() + ": header cut short");
    json parsed = json::parse(header, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
        return make_error(file.string() + ": safetensors header is not a JSON object");
    const double data_bytes = static_cast<double>(file_size - 8 - length);
    std::vector<TensorInfo> tensors;
    for (const auto& [name, entry] : parsed.items()) {
        if (name == "__metadata__") continue;
        auto tensor = parse_tensor(name, entry, data_bytes);
        if (!tensor) return make_error(file.string() + ": " + tensor.error().message);
        tensors.push_back(std::move(*tensor));
    }
    return tensors;
}

void accumulate(CheckpointStats& stats, const std::vector<TensorInfo>& tensors, double file_bytes) {
    std::set<std::string> quant_state_owners;  // bitsandbytes keeps "W.weight.absmax" beside packed "W.weight"
    for (const auto& t : tensors)
        if (auto at = t.name.find(".weight."); at != std::string::npos) quant_state_owners.insert(t.name.substr(0, at + 7));
    for (const auto& t : tensors) {
        const double params = params_of(t, quant_state_owners);
        stats.params += params;
        stats.bytes += t.bytes;
        stats.largest_tensor_params = std::max(stats.largest_tensor_params, params);
        if (params > 0) stats.params_by_dtype[is_float(t.dtype) ? t.dtype : "packed"] += params;
        if (params > 0 && !is_float(t.dtype)) stats.prequantized = true;
    }
    stats.largest_shard_bytes = std::max(stats.largest_shard_bytes, file_bytes);
    stats.tensors += static_cast<int>(tensors.size());
    stats.files += 1;
}

Result<std::vector<fs::path>> checkpoint_files(const fs::path& dir) {
    std::vector<fs::path> files;
    const fs::path index = dir / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::is_regular_file(index, ec)) {
        auto text = read_file(index);
        if (!text) return text.error();
        json parsed = json::parse(*text, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("weight_map") || !parsed["weight_map"].is_object())
            return make_error(index.string() + ": not a safetensors index (no 'weight_map' object)");
        std::set<std::string> shards;
        for (const auto& [tensor, shard] : parsed["weight_map"].items())
            if (shard.is_string()) shards.insert(shard.get<std::string>());
        for (const auto& shard : shards) {
            if (!fs::is_regular_file(dir / shard, ec))
                return make_error(index.string() + ": shard '" + shard + "' is missing");
            files.push_back(dir / shard);
        }
        return files;
    }
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    // Mistral repositories ship the same weights twice: consolidated.safetensors and HF shards.
    const bool has_hf_shards = std::any_of(files.begin(), files.end(), [](const fs::path& p) {
        return p.filename().string().rfind("consolidated", 0) != 0;
    });
    if (has_hf_shards)
        std::erase_if(files, [](const fs::path& p) { return p.filename().string().rfind("consolidated", 0) == 0; });
    return files;
}

Result<CheckpointStats> read_checkpoint(const fs::path& dir) {
    auto files = checkpoint_files(dir);
    if (!files) return files.error();
    CheckpointStats stats;
    for (const auto& file : *files) {
        auto tensors = read_safetensors_header(file);
        if (!tensors) return tensors.error();
        std::error_code ec;
        accumulate(stats, *tensors, static_cast<double>(fs::file_size(file, ec)));
    }
    return stats;
}

}  // namespace sg::accounting
