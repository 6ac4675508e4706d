#pragma once
// What is being trained and how: method, dtypes, optimizer, batch shape and memory switches.
// WorkloadSpec is what a user said (every field optional); Workload is the spec with the common
// recipes' defaults filled in, and each default it took is recorded as an assumption.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sg::accounting {

enum class Method { full, lora, qlora };
enum class DType { fp32, bf16, fp16, int8, fp8, int4, nf4, mxfp4, nvfp4 };
// adamw keeps fp32 states; adamw_bf16 is "pure bf16" (torchtune, ms-swift); paged variants page to host.
enum class Optimizer { adamw, adamw_bf16, adamw_8bit, paged_adamw_8bit, sgd, sgd_momentum, adafactor };
// How the trainer turns logits into a loss: the whole fp32 log-softmax at once (Hugging Face
// Trainer/TRL), in chunks (torchtune), or fused with the output projection (Liger, Unsloth).
enum class LossKind { full, chunked, fused };

std::string_view name(Method value);
std::string_view name(DType value);
std::string_view name(Optimizer value);
std::string_view name(LossKind value);

// Spelling accepted on the command line and in workload files; nullopt when unknown.
std::optional<Method> parse_method(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Optimizer> parse_optimizer(std::string_view text);
std::optional<LossKind> parse_loss(std::string_view text);
// "q_proj|k_proj|..." style lists for help texts and error messages.
std::string choices_of_method();
std::string choices_of_dtype();
std::string choices_of_optimizer();
std::string choices_of_loss();

// Bytes per parameter of a weight dtype, quantisation constants included.
double weight_bytes_per_param(DType dtype);
bool is_quantized(DType dtype);

// The LoRA target names plan understands (PEFT spellings of the Llama-style modules, plus
// the fused/alternative names Phi-3 and Mixtral use, which map onto them).
const std::vector<std::string>& known_lora_targets();
// Expands "all-linear" and aliases into canonical names; nullopt names the first unknown entry.
std::optional<std::vector<std::string>> canonical_lora_targets(const std::vector<std::string>& names,
                                                               std::string* unknown);

struct WorkloadSpec {
    std::optional<Method> method;
    std::optional<DType> weight_dtype;
    std::optional<Optimizer> optimizer;
    std::optional<long long> batch;
    std::optional<long long> seq;
    std::optional<long long> grad_accum;
    std::optional<bool> grad_ckpt;
    std::optional<bool> flash_attn;
    std::optional<long long> lora_r;
    std::optional<std::vector<std::string>> lora_targets;  // canonical names
    std::optional<double> lora_dropout;
    std::optional<LossKind> loss;
};

struct Workload {
    Method method = Method::lora;
    DType weight_dtype = DType::bf16;
    Optimizer optimizer = Optimizer::adamw;
    long long batch = 1;
    long long seq = 2048;
    long long grad_accum = 1;
    bool grad_ckpt = true;
    bool flash_attn = true;
    long long lora_r = 16;
    std::vector<std::string> lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
    double lora_dropout = 0.05;
    LossKind loss = LossKind::full;
    // Ranks the weights, gradients and optimizer states are sharded over (FSDP full sharding,
    // DeepSpeed ZeRO-3); 1: each rank holds them whole (one process, or DDP's replicas).
    long long shards = 1;

    bool uses_lora() const { return method != Method::full; }
};

// Fills the defaults; every default taken is appended to `assumptions` as a readable line.
// Throws UsageError for contradictions (qlora with a 16-bit weight dtype, lora knobs on full).
Workload resolve_workload(const WorkloadSpec& spec, std::vector<std::string>& assumptions);

}  // namespace sg::accounting
