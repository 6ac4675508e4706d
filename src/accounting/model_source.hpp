#pragma once
// Turns what the user named (--model PATH|ORG/NAME|catalog name, or --params N) into a ModelShape:
// config.json for the architecture, safetensors headers for exact counts and stored dtypes.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accounting/estimator.hpp"
#include "accounting/safetensors.hpp"

namespace sg::accounting {

struct ModelInfo {
    std::string name;                      // what to call it in output
    std::string source;                    // where the numbers came from, in words
    ModelShape shape;
    std::optional<CheckpointStats> checkpoint;
    std::string quantization;              // quantization_config.quant_method of a prequantized checkpoint
    std::vector<std::string> notes;        // assumptions the model reference forced (generic architecture, ...)
};

// Resolves, in order: an existing directory (config.json, *.safetensors / index) or config.json
// file; ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub,
// ~/.cache/huggingface/hub); a catalog name, alias or Hugging Face id. Throws UsageError naming
// the file and field on bad input, and suggesting near catalog names for an unknown one.
// A pre-quantised checkpoint's name (*-bnb-4bit, *-GPTQ, *-AWQ) resolves to its base
// architecture, marked pre-quantised (and so planned as QLoRA).
ModelInfo resolve_model(const std::string& reference);
std::optional<std::pair<std::string, std::string>> prequantized_base(const std::string& reference);

// A bare parameter count with a generic Llama-like architecture (stated in notes).
ModelInfo model_from_params(double params);

// The snapshot directory of ORG/NAME in the local Hugging Face cache, if downloaded.
std::optional<std::filesystem::path> find_in_hf_cache(const std::string& repo_id);

// Reads a model directory (config.json plus optional safetensors).
ModelInfo model_from_directory(const std::filesystem::path& dir, const std::string& name);

}  // namespace sg::accounting
