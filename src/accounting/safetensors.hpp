#pragma once
// Safetensors headers: an 8-byte little-endian length, then a JSON table of tensor names, dtypes
// and shapes. Only the headers are read, never the tensor data, so a 405B checkpoint costs
// a few kilobytes of I/O.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace sg::accounting {

struct TensorInfo {
    std::string name;
    std::string dtype;          // "BF16", "F32", "U8", ...
    std::vector<long long> shape;
    double elements = 0;
    double bytes = 0;
};

struct CheckpointStats {
    double params = 0;              // parameters, with packed 4-bit tensors counted per value
    double bytes = 0;               // tensor bytes as stored (what loading maps)
    double largest_shard_bytes = 0;
    double largest_tensor_params = 0;
    int files = 0;
    int tensors = 0;
    bool prequantized = false;      // packed 4-bit or 8-bit tensors with their scales
    std::map<std::string, double> params_by_dtype;  // "BF16" -> count
};

// Reads one file's header. Errors name the file and what is wrong: a length that runs past the
// end of the file, a header that is not JSON, a tensor without dtype/shape, an unknown dtype.
Result<std::vector<TensorInfo>> read_safetensors_header(const std::filesystem::path& file);

// Adds one file's tensors to the running totals.
void accumulate(CheckpointStats& stats, const std::vector<TensorInfo>& tensors, double file_bytes);

// The safetensors files of a model directory: the shards named by model.safetensors.index.json
// when present (a missing shard is an error), else every *.safetensors file. Empty when none.
Result<std::vector<std::filesystem::path>> checkpoint_files(const std::filesystem::path& dir);

// Reads every header of the checkpoint in `dir`. Result holds nothing-found as files == 0.
Result<CheckpointStats> read_checkpoint(const std::filesystem::path& dir);

}  // namespace sg::accounting
