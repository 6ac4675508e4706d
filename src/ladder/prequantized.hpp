#pragma once
// Pre-quantised checkpoints (*-bnb-4bit) stay 4-bit whatever the flags say; the bf16-lora rung
// must point the trainer at the bf16 original instead.

#include <optional>
#include <string>

namespace sg {

// True for a name with "bnb-4bit" in it, or a local model directory whose config.json has a
// bitsandbytes 4-bit quantization_config.
bool is_prequantized(const std::string& model);

// The bf16 original named in profiles/prequantized.toml, if any.
std::optional<std::string> known_bf16_original(const std::string& model);

}  // namespace sg
