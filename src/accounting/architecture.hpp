#pragma once
// A decoder-only transformer's shape, read from a Hugging Face config.json or the catalog, and
// the parameter counts derived from it. Pure: no file access here.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/result.hpp"

namespace sg::accounting {

struct Architecture {
    std::string family;            // model_type from config.json ("llama", "qwen3_moe", ...)
    long long hidden = 0;          // hidden_size
    long long layers = 0;          // num_hidden_layers
    long long heads = 0;           // num_attention_heads
    long long kv_heads = 0;        // num_key_value_heads (= heads without GQA)
    long long head_dim = 0;        // head_dim (= hidden / heads when absent)
    long long intermediate = 0;    // dense MLP width per matrix
    long long vocab = 0;
    bool tied_embeddings = false;  // lm_head shares the embedding matrix
    bool gated_mlp = true;         // SwiGLU/GeGLU: gate, up and down matrices; else up and down
    long long experts = 0;         // 0 for a dense model
    long long experts_per_token = 0;
    long long expert_intermediate = 0;  // width of one expert's MLP
    long long max_positions = 0;   // max_position_embeddings, 0 when unknown

    bool is_moe() const { return experts > 0; }
};

// One kind of linear layer in a decoder block: its PEFT module name, shape, and how many copies
// one block holds (the expert count for MoE expert matrices).
struct LinearModule {
    std::string name;  // canonical: q_proj k_proj v_proj o_proj gate_proj up_proj down_proj router
    long long in = 0;
    long long out = 0;
    long long copies = 1;
    bool expert = false;
};

// The linear layers of one decoder block.
std::vector<LinearModule> block_linears(const Architecture& arch);

double embedding_params(const Architecture& arch);  // input embedding + untied lm_head
double linear_params(const Architecture& arch);     // all block linears: what 4-bit quantisation touches
double total_params(const Architecture& arch);      // embeddings + blocks + norms
double active_params(const Architecture& arch);     // per token: only experts_per_token experts

// Validates the shape (positive sizes, heads dividing evenly); the error names the field.
Status check_architecture(const Architecture& arch);

// Reads the fields of a Hugging Face config.json (nested text_config for multimodal models).
// `source` names the file in error messages: "FILE: field 'hidden_size' is missing".
Result<Architecture> architecture_from_hf_config(const nlohmann::json& config, const std::string& source);

// A generic dense architecture of about `params` parameters (Llama-like proportions), for --params.
Architecture generic_architecture(double params);

}  // namespace sg::accounting
