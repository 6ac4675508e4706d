#include "accounting/estimator.hpp"

#include <algorithm>
#include <cmath>

namespace sg::accounting {
namespace {

constexpr double kGB = 1e9;
constexpr double kDefaultShardBytes = 5e9;  // transformers' save_pretrained max_shard_size

double d(long long value) { return static_cast<double>(value); }

bool targeted(const Workload& w, const LinearModule& m) {
    return w.uses_lora() && std::find(w.lora_targets.begin(), w.lora_targets.end(), m.name) != w.lora_targets.end();
}

// Compute dtype: activations and gradients of the base model.
double compute_bytes(const Workload& w) { return w.weight_dtype == DType::fp32 ? 4 : 2; }

// PEFT creates adapters in fp32 unless the whole run is pure bf16.
double adapter_bytes(const Workload& w) {
    return w.optimizer == Optimizer::adamw_bf16 && w.weight_dtype != DType::fp32 ? 2 : 4;
}

// Block linears scaled so that embeddings + linears + norms match the (possibly exact) count.
double scaled_linear_params(const ModelShape& m) {
    const double from_arch = total_params(m.arch);
    return from_arch > 0 ? linear_params(m.arch) * m.params / from_arch : 0;
}

// Whether PEFT's prepare_model_for_kbit_training upcasts the weights left unquantised to fp32.
// The Hugging Face Trainer/TRL stack (the full loss) calls it for a bitsandbytes 4-bit model; it
// casts every fp16/bf16 parameter that is not a Params4bit (embeddings, lm_head, norms) to fp32,
// and skips GPTQ, AQLM, EETQ, HQQ and torchao models. torchtune and LitGPT (chunked loss) and
// Unsloth (fused) keep them in 16-bit.
bool kbit_upcast(const Workload& w) { return w.weight_dtype == DType::nf4 && w.loss == LossKind::full; }

// The weights as loaded, before any upcast: embeddings, lm_head and norms stay in the compute
// dtype (bitsandbytes, GPTQ, MXFP4 alike).
double loaded_weights_bytes(const ModelShape& m, const Workload& w) {
    if (!is_quantized(w.weight_dtype)) return m.params * weight_bytes_per_param(w.weight_dtype);
    const double linear = scaled_linear_params(m);
    return linear * weight_bytes_per_param(w.weight_dtype) + (m.params - linear) * 2;
}

// The weights while training: the unquantised part at 4 bytes where PEFT upcasts it.
double weights_bytes(const ModelShape& m, const Workload& w) {
    const double loaded = loaded_weights_bytes(m, w);
    return kbit_upcast(w) ? loaded + (m.params - scaled_linear_params(m)) * 2 : loaded;
}

double lora_params(const ModelShape& m, const Workload& w) {
    double per_block = 0;
    for (const auto& module : block_linears(m.arch))
        if (targeted(w, module)) per_block += d(w.lora_r) * d(module.in + module.out) * d(module.copies);
    return per_block * d(m.arch.layers);
}

// The largest single block weight: what 4-bit kernels dequantise at once.
double largest_linear(const Architecture& a) {
    double largest = 0;
    for (const auto& module : block_linears(a)) largest = std::max(largest, d(module.in) * d(module.out));
    return largest;
}

// One vocab x hidden table: the embedding, or lm_head.
double vocab_table(const Architecture& a) { return d(a.vocab) * d(a.hidden); }

double largest_matrix(const Architecture& a) { return std::max(largest_linear(a), vocab_table(a)); }

// Adafactor keeps a row and a column vector per matrix instead of two full moments.
double adafactor_bytes(const ModelShape& m, const Workload& w) {
    const Architecture& a = m.arch;
    double per_block = 0;
    for (const auto& module : block_linears(a)) {
        if (w.method == Method::full) per_block += d(module.in + module.out) * d(module.copies);
        else if (targeted(w, module)) per_block += (d(module.in + module.out) + 2 * d(w.lora_r)) * d(module.copies);
    }
    double total = per_block * d(a.layers);
    if (w.method == Method::full) total += d(a.vocab + a.hidden) * (a.tied_embeddings ? 1 : 2) + d(a.hidden * (2 * a.layers + 1));
    return total * 4;
}

double optimizer_bytes(const ModelShape& m, const Workload& w, double trainable) {
    const bool master = w.method == Method::full && compute_bytes(w) == 2;
    switch (w.optimizer) {
        case Optimizer::adamw: return trainable * (8 + (master ? 4 : 0));
        case Optimizer::adamw_bf16: return trainable * 4;
        case Optimizer::adamw_8bit: case Optimizer::paged_adamw_8bit: return trainable * 2;
        case Optimizer::sgd: return 0;
        case Optimizer::sgd_momentum: return trainable * (w.method == Method::full ? compute_bytes(w) : adapter_bytes(w));
        case Optimizer::adafactor: return adafactor_bytes(m, w);
    }
    return 0;
}

// PyTorch's foreach AdamW materialises sqrt(v) for a whole parameter group at once.
double step_transient_bytes(const ModelShape& m, const Workload& w, double trainable) {
    switch (w.optimizer) {
        case Optimizer::adamw: return trainable * 4;
        case Optimizer::adamw_bf16: return trainable * 2;
        case Optimizer::adafactor: return (w.method == Method::full ? largest_matrix(m.arch) : 0) * 8;
        default: return 0;
    }
}

// Extra tensors a LoRA-wrapped linear saves per token: the input cast to the adapter dtype or its
// dropout (with the mask), and the rank-r intermediate.
double lora_saved_per_token(const Workload& w, const LinearModule& m) {
    const double a = adapter_bytes(w), c = compute_bytes(w);
    const bool cast = a != c, dropout = w.lora_dropout > 0;
    double input = 0;
    if (cast) input = a + (dropout ? 1 : 0);
    else if (dropout) input = c + 1;
    return input * d(m.in) + a * d(w.lora_r);
}

// Whether the input of a block linear stays saved for backward. Autograd keeps a matmul's input
// only for the weight's gradient (derivatives are guarded by should_compute_output), so a frozen
// 16-bit weight keeps none; a full fine-tune does, a 4-bit base's matmul (bitsandbytes'
// MatMul4Bit) keeps its input whatever it needs, and a LoRA adapter reading the input directly
// (no dropout, no cast to the adapter dtype) keeps that same tensor.
bool input_saved(const Workload& w, const Architecture& a, std::initializer_list<const char*> readers) {
    if (w.method == Method::full || is_quantized(w.weight_dtype)) return true;
    const bool reads_directly = adapter_bytes(w) == compute_bytes(w) && w.lora_dropout <= 0;
    if (!reads_directly) return false;
    for (const auto& module : block_linears(a))
        for (const char* reader : readers)
            if (module.name == reader && targeted(w, module)) return true;
    return false;
}

// Bytes one decoder block saves for backward, per token, with flash attention.
// RMSNorm upcasts its input to fp32 (saved); its normalised output is saved only where the linears
// reading it need their input (input_saved), as is the MLP's down-projection input.
double block_saved_per_token(const Architecture& a, const Workload& w) {
    const double c = compute_bytes(w), h = d(a.hidden);
    const double q = d(a.heads * a.head_dim), kv = d(a.kv_heads * a.head_dim);
    const double norm_weight_grad = w.method == Method::full ? c * h : 0;
    const double attention_input = input_saved(w, a, {"q_proj", "k_proj", "v_proj"}) ? c * h : 0;
    const double mlp_input = input_saved(w, a, {"gate_proj", "up_proj"}) ? c * h : 0;
    const double norms = 2 * (4 * h + norm_weight_grad) + attention_input + mlp_input;
    const double attention = c * (q + 2 * kv) + c * q + 4 * d(a.heads);
    const double eager = w.flash_attn ? 0 : d(a.heads) * d(w.seq) * (c + 4 + c);  // scores, fp32 softmax, its cast
    // Gated: the gate's output, its activation, the up output, and their product (down's input);
    // plain: the up output and its activation (down's input). MoE experts are left as they were.
    const double down_input = a.is_moe() || input_saved(w, a, {"down_proj"}) ? 1 : 0;
    const double matrices = (a.gated_mlp ? 3 : 1) + down_input;
    double mlp = matrices * c * d(a.intermediate);
    if (a.is_moe())
        mlp = d(a.experts_per_token) * (matrices * c * d(a.expert_intermediate) + 2 * c * h) + 8 * d(a.experts);
    double lora = 0;
    for (const auto& module : block_linears(a))
        if (targeted(w, module)) lora += lora_saved_per_token(w, module) * (module.expert ? d(a.experts_per_token) : 1);
    return norms + attention + eager + mlp + lora;
}

// Gradient buffers alive at once inside one block's backward: three MLP-width tensors.
double block_backward_per_token(const Architecture& a, const Workload& w) {
    const double c = compute_bytes(w);
    const double width = a.is_moe() ? d(a.experts_per_token * a.expert_intermediate) : d(a.intermediate);
    return std::max(3 * c * width, 2 * c * d((a.heads + 2 * a.kv_heads) * a.head_dim));
}

// Logits bytes per token at the loss's peak. Transformers' own models keep the bf16 logits (2),
// upcast them all to fp32 (4), copy the shifted fp32 logits (4) and save the log-softmax (4): 14.
// Qwen v1's remote code shifts the bf16 logits and autocast upcasts inside cross_entropy: 12.
double logits_per_token(const Architecture& a, const Workload& w) {
    switch (w.loss) {
        case LossKind::full: return (a.family == "qwen" ? 12 : 14) * d(a.vocab);
        case LossKind::chunked: return 6.5 * d(a.vocab);
        case LossKind::fused: return 0;
    }
    return 0;
}

struct Activations {
    double total = 0;
    double logits = 0;
    double largest_block = 0;  // the largest single tensor: the fp32 logits with the full loss
    double logits_at_peak = 0; // the logits when the loss is the activation peak, else 0
};

// Checkpointing keeps one input per block; the peak is then either the loss (all checkpoints
// plus logits) or one block recomputed during backward, whichever is larger.
Activations activation_bytes(const ModelShape& m, const Workload& w) {
    const Architecture& a = m.arch;
    const double tokens = d(w.batch) * d(w.seq), c = compute_bytes(w), h = d(a.hidden);
    const double head = (4 + 2 * c) * h * tokens;  // final norm's fp32 input and output
    const double logits = logits_per_token(a, w) * tokens;
    // Only where fp32 logits of two lengths (the full L rows and the shifted L-1) alternate.
    const double fp32_logits = w.loss == LossKind::full && a.family != "qwen" ? 4 * d(a.vocab) * tokens : 0;
    const double block = block_saved_per_token(a, w) * tokens;
    const double backward = block_backward_per_token(a, w) * tokens +
                            (w.method == Method::qlora ? 2 * c * largest_linear(a) : 0);  // dequantised weight
    if (w.grad_ckpt) {
        const double checkpoints = d(a.layers) * c * h * tokens;
        const bool loss_peak = head + logits >= block + backward;
        return {checkpoints + std::max(head + logits, block + backward), logits, fp32_logits, loss_peak ? logits : 0};
    }
    return {d(a.layers) * block + head + std::max(logits, backward), logits, fp32_logits, logits >= backward ? logits : 0};
}

double load_peak_bytes(const ModelShape& m, const Workload& w, const PlatformTraits& t) {
    const double checkpoint = m.checkpoint_bytes > 0 ? m.checkpoint_bytes : m.params * 2;
    const double shard = m.largest_shard_bytes > 0 ? m.largest_shard_bytes : std::min(kDefaultShardBytes, checkpoint);
    // Quantising at load copies each tensor to the device in bf16 first.
    const double quantise = is_quantized(w.weight_dtype) && !m.prequantized ? 2 * largest_linear(m.arch) : 0;
    // On unified memory the mmap'd pages of the shard being read share the pool with the copy.
    const double mapped = t.unified ? shard : 0;
    // PEFT's upcast, after loading, holds the 16-bit original of the tensor it is casting beside
    // the fp32 copies made so far; the embedding table (lm_head the same size) is the largest.
    // Loading is over by then: no shard is mapped.
    const double upcast = kbit_upcast(w) ? weights_bytes(m, w) + 2 * vocab_table(m.arch) : 0;
    return std::max(loaded_weights_bytes(m, w) + quantise + mapped, upcast);
}

}  // namespace

double trainable_params(const ModelShape& model, const Workload& workload) {
    return workload.method == Method::full ? model.params : lora_params(model, workload);
}

Estimate estimate(const ModelShape& m, const Workload& w, const PlatformTraits& t) {
    Estimate e;
    const double trainable = trainable_params(m, w);
    const double weights = weights_bytes(m, w);
    const double adapter = w.uses_lora() ? trainable * adapter_bytes(w) : 0;
    const double gradients = trainable * (w.uses_lora() ? adapter_bytes(w) : compute_bytes(w));
    const double optimizer = optimizer_bytes(m, w, trainable);
    const Activations act = activation_bytes(m, w);
    // Sharded (FSDP, ZeRO-3): each rank keeps its share of the states, and gathers a layer's whole
    // weights to compute it, the next one prefetched: two layers' weights beside the activations.
    const double share = 1.0 / d(std::max<long long>(w.shards, 1));
    const double gathered = w.shards > 1 ? 2 * weights / d(std::max<long long>(m.arch.layers, 1)) : 0;
    const double step = step_transient_bytes(m, w, trainable) * share;
    const double resident = (weights + adapter + optimizer + gradients) * share;
    const double backward_peak = resident + gathered + act.total, step_peak = resident + step;
    const double tensors = std::max(backward_peak, step_peak);
    const double fixed = (t.cuda_context_gb + (t.unified ? t.host_process_gb : 0)) * kGB;

    e.params_b = m.params / 1e9;
    e.trainable_params = trainable;
    e.weights_gb = weights * share / kGB;
    e.adapter_gb = adapter * share / kGB;
    e.optimizer_gb = optimizer * share / kGB;
    e.gradients_gb = gradients * share / kGB;
    e.activations_gb = act.total / kGB;
    e.logits_gb = act.logits / kGB;
    e.step_transient_gb = step / kGB;
    e.tensors_peak_gb = tensors / kGB;
    // The caching allocator cannot serve the full-length fp32 logits from the freed block of the
    // shifted ones (one row shorter), so one more block of the largest size stays reserved.
    // Qwen v1 upcasts only the shifted logits (autocast in cross_entropy): one size, no extra block.
    e.allocator_block_gb = act.largest_block / kGB;
    // The proportional slack is the small blocks' rounding and splitting; the logits are a few
    // exact-size blocks, whose cost is that extra block, not a percentage.
    const double slack_base = backward_peak >= step_peak ? tensors - act.logits_at_peak : tensors;
    e.overhead_gb = (slack_base * t.fragmentation + act.largest_block + fixed) / kGB;
    e.train_peak_gb = e.tensors_peak_gb + e.overhead_gb;
    e.train_peak_phase = step_peak > backward_peak ? "optimizer step" : "backward";
    e.load_peak_gb = (load_peak_bytes(m, w, t) + fixed) / kGB;
    e.peak_gb = std::max(e.train_peak_gb, e.load_peak_gb);
    e.peak_phase = e.load_peak_gb > e.train_peak_gb ? "load" : "training";
    e.bf16_weights_gb = m.params * 2 / kGB;
    return e;
}

}  // namespace sg::accounting
