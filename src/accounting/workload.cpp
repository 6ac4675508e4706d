#include "accounting/workload.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg::accounting {
namespace {

template <class E>
struct Spelling {
    E value;
    std::string_view text;
};

constexpr std::array kMethods = {Spelling<Method>{Method::full, "full"}, Spelling<Method>{Method::lora, "lora"},
                                 Spelling<Method>{Method::qlora, "qlora"}};
constexpr std::array kDTypes = {
    Spelling<DType>{DType::fp32, "fp32"}, Spelling<DType>{DType::bf16, "bf16"}, Spelling<DType>{DType::fp16, "fp16"},
    Spelling<DType>{DType::int8, "int8"}, Spelling<DType>{DType::fp8, "fp8"},   Spelling<DType>{DType::int4, "int4"},
    Spelling<DType>{DType::nf4, "nf4"},   Spelling<DType>{DType::mxfp4, "mxfp4"}, Spelling<DType>{DType::nvfp4, "nvfp4"}};
constexpr std::array kOptimizers = {
    Spelling<Optimizer>{Optimizer::adamw, "adamw"},
    Spelling<Optimizer>{Optimizer::adamw_bf16, "adamw-bf16"},
    Spelling<Optimizer>{Optimizer::adamw_8bit, "adamw-8bit"},
    Spelling<Optimizer>{Optimizer::paged_adamw_8bit, "paged-adamw-8bit"},
    Spelling<Optimizer>{Optimizer::sgd, "sgd"},
    Spelling<Optimizer>{Optimizer::sgd_momentum, "sgd-momentum"},
    Spelling<Optimizer>{Optimizer::adafactor, "adafactor"}};
constexpr std::array kLosses = {Spelling<LossKind>{LossKind::full, "full"},
                                Spelling<LossKind>{LossKind::chunked, "chunked"},
                                Spelling<LossKind>{LossKind::fused, "fused"}};

template <class E, size_t N>
std::string_view spell(const std::array<Spelling<E>, N>& table, E value) {
    for (const auto& s : table)
        if (s.value == value) return s.text;
    return "?";
}

template <class E, size_t N>
std::optional<E> lookup(const std::array<Spelling<E>, N>& table, std::string_view text) {
    const std::string lower = to_lower(text);
    for (const auto& s : table)
        if (s.text == lower) return s.value;
    return std::nullopt;
}

template <class E, size_t N>
std::string choices(const std::array<Spelling<E>, N>& table) {
    std::vector<std::string> names;
    for (const auto& s : table) names.emplace_back(s.text);
    return join(names, "|");
}

// PEFT module names of other families, mapped onto the Llama-style names plan counts.
const std::vector<std::pair<std::string, std::vector<std::string>>> kAliases = {
    {"qkv_proj", {"q_proj", "k_proj", "v_proj"}}, {"c_attn", {"q_proj", "k_proj", "v_proj"}},
    {"gate_up_proj", {"gate_proj", "up_proj"}},   {"w1", {"gate_proj"}},
    {"w3", {"up_proj"}},                          {"w2", {"down_proj"}},
    {"c_proj", {"o_proj"}},                       {"dense", {"o_proj"}},
    {"fc1", {"up_proj"}},                         {"fc2", {"down_proj"}},
    {"all-linear", {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}},
};

}  // namespace

std::string_view name(Method value) { return spell(kMethods, value); }
std::string_view name(DType value) { return spell(kDTypes, value); }
std::string_view name(Optimizer value) { return spell(kOptimizers, value); }
std::string_view name(LossKind value) { return spell(kLosses, value); }
std::optional<Method> parse_method(std::string_view text) { return lookup(kMethods, text); }
std::optional<DType> parse_dtype(std::string_view text) { return lookup(kDTypes, text); }
std::optional<Optimizer> parse_optimizer(std::string_view text) { return lookup(kOptimizers, text); }
std::optional<LossKind> parse_loss(std::string_view text) { return lookup(kLosses, text); }
std::string choices_of_method() { return choices(kMethods); }
std::string choices_of_dtype() { return choices(kDTypes); }
std::string choices_of_optimizer() { return choices(kOptimizers); }
std::string choices_of_loss() { return choices(kLosses); }

double weight_bytes_per_param(DType dtype) {
    switch (dtype) {
        case DType::fp32: return 4;
        case DType::bf16: case DType::fp16: return 2;
        case DType::int8: case DType::fp8: return 1;
        case DType::int4: return 0.5 + 2.5 / 128;  // GPTQ/AWQ: fp16 scale and 4-bit zero per 128
        case DType::nf4: return 0.5 + 1.0 / 64 + 4.0 / (64 * 256);  // double-quant: 8-bit absmax per 64, fp32 per 256 blocks
        case DType::mxfp4: return 0.5 + 1.0 / 32;  // one E8M0 scale per 32 values
        case DType::nvfp4: return 0.5 + 1.0 / 16;  // one FP8 scale per 16 values
    }
    return 2;
}

bool is_quantized(DType dtype) { return weight_bytes_per_param(dtype) < 2; }

const std::vector<std::string>& known_lora_targets() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
        for (const auto& [alias, expansion] : kAliases) out.push_back(alias);
        return out;
    }();
    return names;
}

std::optional<std::vector<std::string>> canonical_lora_targets(const std::vector<std::string>& names,
                                                               std::string* unknown) {
    const auto& canonical = known_lora_targets();
    std::vector<std::string> out;
    auto add = [&](const std::string& n) {
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    };
    for (const auto& raw : names) {
        const std::string n = to_lower(trim(raw));
        auto alias = std::find_if(kAliases.begin(), kAliases.end(), [&](const auto& a) { return a.first == n; });
        if (alias != kAliases.end()) {
            for (const auto& e : alias->second) add(e);
        } else if (std::find(canonical.begin(), canonical.begin() + 7, n) != canonical.begin() + 7) {
            add(n);
        } else {
            if (unknown) *unknown = raw;
            return std::nullopt;
        }
    }
    return out;
}

Workload resolve_workload(const WorkloadSpec& spec, std::vector<std::string>& assumptions) {
    Workload w;
    auto take = [&](auto& field, const auto& given, const std::string& note) {
        if (given) field = *given;
        else assumptions.push_back(note);
    };
    take(w.method, spec.method, "method lora (bf16 base, the common single-GPU recipe)");
    const DType default_dtype = w.method == Method::qlora ? DType::nf4 : DType::bf16;
    w.weight_dtype = default_dtype;
    take(w.weight_dtype, spec.weight_dtype,
         std::string("weights ") + std::string(name(default_dtype)) +
             (w.method == Method::qlora ? " (bitsandbytes QLoRA with double quantisation)" : ""));
    if (w.method == Method::qlora && !is_quantized(w.weight_dtype))
        throw UsageError("--weight-dtype", "qlora trains on quantised weights; " + std::string(name(w.weight_dtype)) +
                                               " is not (use --method lora, or nf4/int4/int8/fp8/mxfp4/nvfp4)");
    if (w.method == Method::full && is_quantized(w.weight_dtype))
        throw UsageError("--weight-dtype", "a full fine-tune updates every weight; it cannot train " +
                                               std::string(name(w.weight_dtype)) + " weights");
    take(w.optimizer, spec.optimizer, "optimizer adamw with fp32 states (PyTorch AdamW, foreach)");
    take(w.batch, spec.batch, "batch 1 per device");
    take(w.seq, spec.seq, "sequence/packing length 2048");
    take(w.grad_accum, spec.grad_accum, "gradient accumulation 1");
    take(w.grad_ckpt, spec.grad_ckpt, "gradient checkpointing on");
    take(w.flash_attn, spec.flash_attn, "flash attention (or SDPA memory-efficient kernels) on");
    take(w.loss, spec.loss, "loss over full fp32 logits (Hugging Face Trainer/TRL)");
    if (!w.uses_lora()) {
        if (spec.lora_r || spec.lora_targets || spec.lora_dropout)
            throw UsageError("--lora-r", "LoRA options need --method lora or qlora");
        return w;
    }
    take(w.lora_r, spec.lora_r, "LoRA rank 16");
    take(w.lora_targets, spec.lora_targets, "LoRA on attention projections q_proj,k_proj,v_proj,o_proj");
    take(w.lora_dropout, spec.lora_dropout, "LoRA dropout 0.05");
    return w;
}

}  // namespace sg::accounting
