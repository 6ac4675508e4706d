#pragma once
// The memory worksheet (DESIGN.md section 3) as a pure function: a model's shape and a workload
// in, every term of the training and load peaks out. No files, no processes, no machine state.

#include <string>

#include "accounting/architecture.hpp"
#include "accounting/workload.hpp"

namespace sg::accounting {

// What the estimator needs to know about a model.
struct ModelShape {
    Architecture arch;
    double params = 0;               // exact from safetensors headers, else from the architecture
    double checkpoint_bytes = 0;     // what loading maps; 0 = unknown (bf16 assumed)
    double largest_shard_bytes = 0;  // 0 = unknown (Hugging Face's 5 GB default shard, at most the checkpoint)
    bool prequantized = false;       // the checkpoint already holds 4/8-bit weights
};

// How a platform adds to the tensors: allocator slack, CUDA context, and on unified memory the
// trainer's host process, which lives in the same pool.
struct PlatformTraits {
    bool unified = false;
    double cuda_context_gb = 0.8;
    double host_process_gb = 0;
    double fragmentation = 0.08;     // caching-allocator reserve over live tensors
};

// Every term in decimal GB.
struct Estimate {
    double params_b = 0;             // billions of parameters
    double trainable_params = 0;
    double weights_gb = 0;
    double adapter_gb = 0;
    double optimizer_gb = 0;
    double gradients_gb = 0;
    double activations_gb = 0;       // saved activations and the loss's logits at their peak
    double logits_gb = 0;            // the logits part of activations_gb
    double step_transient_gb = 0;    // optimizer-step temporaries (foreach AdamW's sqrt buffer)
    double tensors_peak_gb = 0;      // live tensors at the training peak (torch max_memory_allocated)
    double overhead_gb = 0;          // allocator slack, CUDA context, host process on unified memory
    double allocator_block_gb = 0;   // part of overhead_gb: one more block of the largest tensor's size
    double train_peak_gb = 0;
    double load_peak_gb = 0;
    double peak_gb = 0;
    double bf16_weights_gb = 0;      // the weights alone in bf16 (the OOM ladder's bf16-LoRA rung asks)
    std::string train_peak_phase;    // "backward" or "optimizer step"
    std::string peak_phase;          // "training" or "load"

    // Reserved memory as PyTorch reports it (max_memory_reserved): tensors plus allocator slack.
    double reserved_gb(const PlatformTraits& traits) const {
        return tensors_peak_gb + (overhead_gb - traits.cuda_context_gb - (traits.unified ? traits.host_process_gb : 0));
    }
};

Estimate estimate(const ModelShape& model, const Workload& workload, const PlatformTraits& traits);

// Trainable parameters: every weight for a full fine-tune, else the LoRA adapters
// (rank r on in -> out adds r*(in + out), once per expert for expert matrices).
double trainable_params(const ModelShape& model, const Workload& workload);

}  // namespace sg::accounting
