#include "accounting/architecture.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

namespace sg::accounting {
namespace {

using nlohmann::json;

// Families whose MLP is up/down with a plain activation instead of a gated (SwiGLU/GeGLU) one.
constexpr std::array kUngatedFamilies = {"gpt2", "gpt_neox", "gptj", "opt", "falcon", "bloom", "phi", "starcoder2"};

const json* find_field(const json& config, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        auto it = config.find(name);
        if (it != config.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

// Reads a positive integer field under any of its spellings; absent gives `fallback` (0 = required).
Result<long long> integer_field(const json& config, std::initializer_list<const char*> names,
                                const std::string& source, long long fallback = 0) {
    const json* value = find_field(config, names);
    const std::string field = *names.begin();
    if (!value) {
        if (fallback > 0) return fallback;
        return make_error(source + ": field '" + field + "' is missing");
    }
    if (value->is_number_integer() && value->get<long long>() > 0) return value->get<long long>();
    if (value->is_number_float() && value->get<double>() > 0 && std::floor(value->get<double>()) == value->get<double>())
        return static_cast<long long>(value->get<double>());
    return make_error(source + ": field '" + field + "' must be a positive integer, got " + value->dump());
}

// Multimodal checkpoints (Gemma 3, Llama 3.2 Vision, Mistral 3) keep the decoder in text_config.
json text_part(const json& config) {
    auto text = config.find("text_config");
    if (text == config.end() || !text->is_object() || config.contains("hidden_size")) return config;
    json merged = *text;
    for (const char* key : {"tie_word_embeddings", "model_type"})
        if (!merged.contains(key) && config.contains(key)) merged[key] = config[key];
    return merged;
}

Status read_moe_fields(const json& config, const std::string& source, Architecture& arch) {
    const json* experts = find_field(config, {"num_local_experts", "num_experts", "n_routed_experts"});
    if (!experts) return Ok{};
    auto count = integer_field(config, {"num_local_experts", "num_experts", "n_routed_experts"}, source);
    if (!count) return count.error();
    auto active = integer_field(config, {"num_experts_per_tok", "experts_per_token", "num_experts_per_token"}, source);
    if (!active) return active.error();
    auto width = integer_field(config, {"moe_intermediate_size", "intermediate_size"}, source);
    if (!width) return width.error();
    arch.experts = *count;
    arch.experts_per_token = *active;
    arch.expert_intermediate = *width;
    return Ok{};
}

}  // namespace

std::vector<LinearModule> block_linears(const Architecture& a) {
    const long long q = a.heads * a.head_dim, kv = a.kv_heads * a.head_dim;
    std::vector<LinearModule> out = {
        {"q_proj", a.hidden, q}, {"k_proj", a.hidden, kv}, {"v_proj", a.hidden, kv}, {"o_proj", q, a.hidden}};
    const long long width = a.is_moe() ? a.expert_intermediate : a.intermediate;
    const long long copies = a.is_moe() ? a.experts : 1;
    if (a.gated_mlp) out.push_back({"gate_proj", a.hidden, width, copies, a.is_moe()});
    out.push_back({"up_proj", a.hidden, width, copies, a.is_moe()});
    out.push_back({"down_proj", width, a.hidden, copies, a.is_moe()});
    if (a.is_moe()) out.push_back({"router", a.hidden, a.experts});
    return out;
}

double embedding_params(const Architecture& a) {
    return static_cast<double>(a.vocab) * static_cast<double>(a.hidden) * (a.tied_embeddings ? 1 : 2);
}

double linear_params(const Architecture& a) {
    double per_block = 0;
    for (const auto& m : block_linears(a))
        per_block += static_cast<double>(m.in) * static_cast<double>(m.out) * static_cast<double>(m.copies);
    return per_block * static_cast<double>(a.layers);
}

double total_params(const Architecture& a) {
    const double norms = static_cast<double>(a.hidden) * static_cast<double>(2 * a.layers + 1);
    return embedding_params(a) + linear_params(a) + norms;
}

double active_params(const Architecture& a) {
    if (!a.is_moe()) return total_params(a);
    const double mlp_matrices = a.gated_mlp ? 3 : 2;
    const double idle_experts = static_cast<double>(a.experts - a.experts_per_token);
    const double idle = idle_experts * mlp_matrices * static_cast<double>(a.hidden) *
                        static_cast<double>(a.expert_intermediate) * static_cast<double>(a.layers);
    return total_params(a) - idle;
}

Status check_architecture(const Architecture& a) {
    struct Field { const char* name; long long value; };
    for (auto [name, value] : {Field{"hidden_size", a.hidden}, Field{"num_hidden_layers", a.layers},
                               Field{"num_attention_heads", a.heads}, Field{"num_key_value_heads", a.kv_heads},
                               Field{"head_dim", a.head_dim}, Field{"vocab_size", a.vocab},
                               Field{"intermediate_size", a.is_moe() ? a.expert_intermediate : a.intermediate}})
        if (value <= 0) return make_error(std::string("field '") + name + "' must be positive");
    if (a.heads % a.kv_heads != 0)
        return make_error("num_attention_heads (" + std::to_string(a.heads) +
                          ") is not a multiple of num_key_value_heads (" + std::to_string(a.kv_heads) + ")");
    if (a.is_moe() && (a.experts_per_token <= 0 || a.experts_per_token > a.experts))
        return make_error("num_experts_per_tok must be between 1 and the expert count");
    return Ok{};
}

Result<Architecture> architecture_from_hf_config(const json& raw, const std::string& source) {
    if (!raw.is_object()) return make_error(source + ": not a JSON object");
    const json config = text_part(raw);
    Architecture a;
    a.family = config.value("model_type", std::string("unknown"));
    auto hidden = integer_field(config, {"hidden_size", "n_embd", "d_model"}, source);
    if (!hidden) return hidden.error();
    a.hidden = *hidden;
    auto layers = integer_field(config, {"num_hidden_layers", "n_layer", "num_layers"}, source);
    if (!layers) return layers.error();
    a.layers = *layers;
    auto heads = integer_field(config, {"num_attention_heads", "n_head"}, source);
    if (!heads) return heads.error();
    a.heads = *heads;
    auto kv = integer_field(config, {"num_key_value_heads"}, source, a.heads);
    if (!kv) return kv.error();
    a.kv_heads = *kv;
    auto head_dim = integer_field(config, {"head_dim"}, source, std::max<long long>(1, a.hidden / a.heads));
    if (!head_dim) return head_dim.error();
    a.head_dim = *head_dim;
    auto vocab = integer_field(config, {"vocab_size"}, source);
    if (!vocab) return vocab.error();
    a.vocab = *vocab;
    if (Status moe = read_moe_fields(config, source, a); !moe) return moe.error();
    auto width = integer_field(config, {"intermediate_size", "n_inner", "ffn_dim"}, source,
                               a.is_moe() ? a.expert_intermediate : 0);
    if (!width) return width.error();
    a.intermediate = *width;
    // The original Qwen (v1) states the sum of its two MLP input matrices.
    if (a.family == "qwen") a.intermediate /= 2;
    a.gated_mlp = std::find(kUngatedFamilies.begin(), kUngatedFamilies.end(), a.family) == kUngatedFamilies.end();
    // PretrainedConfig ties the embeddings unless a model says otherwise.
    const json* tied = find_field(config, {"tie_word_embeddings"});
    a.tied_embeddings = tied ? tied->is_boolean() && tied->get<bool>() : true;
    if (find_field(config, {"max_position_embeddings", "n_positions"})) {
        auto positions = integer_field(config, {"max_position_embeddings", "n_positions"}, source);
        if (!positions) return positions.error();
        a.max_positions = *positions;
    }
    if (Status valid = check_architecture(a); !valid) return make_error(source + ": " + valid.error().message);
    return a;
}

Architecture generic_architecture(double params) {
    // Llama 3 proportions: 128-wide heads, depth = hidden/128, SwiGLU at 3.5x, GQA 4:1.
    auto shape = [](long long hidden) {
        Architecture a;
        a.family = "generic";
        a.hidden = hidden;
        a.layers = std::max<long long>(2, hidden / 128);
        a.heads = std::max<long long>(1, hidden / 128);
        a.kv_heads = std::max<long long>(1, a.heads / 4);
        while (a.heads % a.kv_heads) --a.kv_heads;
        a.head_dim = 128;
        a.intermediate = (hidden * 7 / 2 + 255) / 256 * 256;
        a.vocab = 128256;
        a.tied_embeddings = false;
        return a;
    };
    long long hidden = 512;
    while (hidden < 65536 && total_params(shape(hidden + 64)) <= params) hidden += 64;
    return shape(hidden);
}

}  // namespace sg::accounting
