#pragma once
// The OOM ladder as a state machine (DESIGN.md section 4). Pure: facts come in, a move comes out.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ladder/train_config.hpp"

namespace sg {

enum class Rung { drop_caches, shorter_packing, smaller_batch, bf16_lora };

std::string_view to_string(Rung rung);
std::optional<Rung> parse_rung(std::string_view text);
// "drop-caches,shorter-packing" → rungs; UsageError naming an unknown or repeated rung.
std::vector<Rung> parse_ladder(std::string_view list);

struct LadderSettings {
    std::vector<Rung> order = {Rung::drop_caches, Rung::shorter_packing, Rung::smaller_batch, Rung::bf16_lora};
    long min_seq = 512;      // shorter-packing stops here
    long seq_multiple = 64;  // packing lengths stay multiples of this
};

// What the ladder needs to know about the machine and the trainer to decide whether a rung applies.
struct LadderFacts {
    bool can_drop_caches = false;  // root, /proc/sys/vm/drop_caches writable
    std::string drop_caches_why_not;
    std::optional<std::string> last_oom_kind;  // the death the next rung answers ("cgroup-oom-kill", ...)
    // Why a change of each knob would not reach the trainer (TrainerCommand::unreachable); empty: it would.
    std::string seq_unreachable = "no packing-length knob";
    std::string batch_unreachable = "no batch-size knob";
    std::string grad_accum_unreachable = "no gradient-accumulation knob";
    std::string method_unreachable;
    // bf16-lora: the model is pre-quantised (*-bnb-4bit) and the bf16 original to swap in, if known.
    bool model_prequantized = false;
    std::optional<std::string> bf16_model;
    // bf16-lora: the estimator's proof that bf16 weights alone exceed the budget, if it has one.
    std::optional<std::string> bf16_weights_exceed_budget;
};

struct SkippedRung {
    Rung rung;
    std::string why;
};

struct LadderMove {
    Rung rung;
    TrainConfig config;
    std::vector<SkippedRung> skipped;
    std::string change;  // "seq_len 2048 -> 1024", for people
};

struct LadderExhausted {
    std::vector<SkippedRung> skipped;
};

class Ladder {
public:
    explicit Ladder(LadderSettings settings, size_t position = 0)
        : settings_(std::move(settings)), position_(position) {}

    // The next rung to apply after an OOM with `current`. Repeating rungs (shorter packing,
    // smaller batch) stay current until they reach their floor; drop-caches is taken once.
    std::variant<LadderMove, LadderExhausted> next(const TrainConfig& current, const LadderFacts& facts);

    size_t position() const { return position_; }
    const LadderSettings& settings() const { return settings_; }

private:
    LadderSettings settings_;
    size_t position_;  // index in settings_.order of the rung to try first
};

// Halving that keeps batch × accumulation exactly: the largest batch ≤ half that divides it.
TrainConfig halve_batch(const TrainConfig& config);
// Half the length, rounded down to the multiple, never below the floor.
long shorter_length(long seq, long floor, long multiple);

}  // namespace sg
