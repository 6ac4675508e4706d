#include "ladder/ladder.hpp"

#include <algorithm>

#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg {

std::string_view to_string(Rung rung) {
    switch (rung) {
        case Rung::drop_caches: return "drop-caches";
        case Rung::shorter_packing: return "shorter-packing";
        case Rung::smaller_batch: return "smaller-batch";
        case Rung::bf16_lora: return "bf16-lora";
    }
    return "?";
}

std::optional<Rung> parse_rung(std::string_view text) {
    for (Rung r : {Rung::drop_caches, Rung::shorter_packing, Rung::smaller_batch, Rung::bf16_lora})
        if (text == to_string(r)) return r;
    return std::nullopt;
}

std::vector<Rung> parse_ladder(std::string_view list) {
    std::vector<Rung> rungs;
    for (const auto& word : split(list, ',')) {
        auto name = trim(word);
        if (name.empty()) continue;
        auto rung = parse_rung(name);
        if (!rung)
            throw UsageError("--ladder", "unknown rung '" + std::string(name) +
                                             "' (rungs: drop-caches, shorter-packing, smaller-batch, bf16-lora)");
        if (std::find(rungs.begin(), rungs.end(), *rung) != rungs.end())
            throw UsageError("--ladder", "rung '" + std::string(name) + "' is listed twice");
        rungs.push_back(*rung);
    }
    return rungs;
}

long shorter_length(long seq, long floor, long multiple) {
    long half = seq / 2 / multiple * multiple;
    return std::max(half, floor);
}

TrainConfig halve_batch(const TrainConfig& config) {
    TrainConfig out = config;
    const long batch = config.batch_size.value_or(1);
    const long effective = batch * config.grad_accum.value_or(1);
    long smaller = batch / 2;
    while (smaller > 1 && effective % smaller != 0) --smaller;
    smaller = std::max(smaller, 1L);
    out.batch_size = smaller;
    out.grad_accum = effective / smaller;
    return out;
}

namespace {

using Outcome = std::variant<TrainConfig, std::string>;  // the new config, or why the rung can't apply

Outcome try_drop_caches(const TrainConfig& current, const LadderFacts& facts) {
    if (!facts.can_drop_caches) return facts.drop_caches_why_not.empty() ? std::string("cannot drop caches") : facts.drop_caches_why_not;
    // A cgroup's or a scheduler's memory limit: the kernel reclaimed that cgroup's page cache before it
    // killed, and the host's cache is not what ran out.
    if (const auto& kind = facts.last_oom_kind; kind && (*kind == "cgroup-oom-kill" || *kind == "monitor-kill"))
        return "the trainer died at its cgroup's memory limit (" + *kind +
               "): the kernel reclaims the cgroup's page cache before it kills, so dropping the host's does not help";
    TrainConfig next = current;
    next.drop_caches = true;
    return next;
}

Outcome try_shorter_packing(const TrainConfig& current, const LadderFacts& facts, const LadderSettings& settings) {
    if (!facts.seq_unreachable.empty()) return facts.seq_unreachable;
    if (!current.seq_len) return std::string("the command sets no packing length (give --seq to sparkguard or the trainer's flag)");
    if (*current.seq_len <= settings.min_seq)
        return "already at the floor (seq_len " + std::to_string(*current.seq_len) + ", --min-seq " +
               std::to_string(settings.min_seq) + ")";
    TrainConfig next = current;
    next.seq_len = shorter_length(*current.seq_len, settings.min_seq, settings.seq_multiple);
    return next;
}

Outcome try_smaller_batch(const TrainConfig& current, const LadderFacts& facts) {
    if (!facts.batch_unreachable.empty()) return facts.batch_unreachable;
    if (!facts.grad_accum_unreachable.empty())
        return facts.grad_accum_unreachable + ": a smaller batch would change the effective batch";
    if (!current.batch_size) return std::string("the command sets no batch size");
    if (*current.batch_size <= 1) return std::string("already at the floor (batch 1)");
    return halve_batch(current);
}

Outcome try_bf16_lora(const TrainConfig& current, const LadderFacts& facts) {
    if (current.method != Method::qlora)
        return current.method ? "not a QLoRA run (method " + std::string(accounting::name(*current.method)) + ")"
                              : std::string("not a QLoRA run (no 4-bit loading in the command)");
    if (!facts.method_unreachable.empty()) return facts.method_unreachable;
    if (facts.model_prequantized && !facts.bf16_model)
        return "the model is pre-quantised (" + current.model.value_or("?") +
               ") and no bf16 original is known: name one with --bf16-model";
    if (facts.bf16_weights_exceed_budget) return *facts.bf16_weights_exceed_budget;
    TrainConfig next = current;
    next.method = Method::lora;
    if (facts.model_prequantized) next.model = facts.bf16_model;
    return next;
}

std::string describe_change(const TrainConfig& from, const TrainConfig& to) {
    std::vector<std::string> parts;
    auto number = [&](const char* name, const std::optional<long>& a, const std::optional<long>& b) {
        if (a != b) parts.push_back(std::string(name) + " " + (a ? std::to_string(*a) : "?") + " -> " + (b ? std::to_string(*b) : "?"));
    };
    number("seq_len", from.seq_len, to.seq_len);
    number("batch_size", from.batch_size, to.batch_size);
    number("grad_accum", from.grad_accum, to.grad_accum);
    if (from.method != to.method)
        parts.push_back("method " + std::string(from.method ? accounting::name(*from.method) : "?") + " -> " +
                        std::string(to.method ? accounting::name(*to.method) : "?"));
    if (from.model != to.model) parts.push_back("model " + from.model.value_or("?") + " -> " + to.model.value_or("?"));
    if (from.drop_caches != to.drop_caches) parts.push_back("drop page caches before each launch");
    return join(parts, ", ");
}

}  // namespace

std::variant<LadderMove, LadderExhausted> Ladder::next(const TrainConfig& current, const LadderFacts& facts) {
    std::vector<SkippedRung> skipped;
    for (; position_ < settings_.order.size(); ++position_) {
        const Rung rung = settings_.order[position_];
        Outcome outcome = [&]() -> Outcome {
            switch (rung) {
                case Rung::drop_caches:
                    if (current.drop_caches) return std::string("already dropping caches before each launch");
                    return try_drop_caches(current, facts);
                case Rung::shorter_packing: return try_shorter_packing(current, facts, settings_);
                case Rung::smaller_batch: return try_smaller_batch(current, facts);
                case Rung::bf16_lora: return try_bf16_lora(current, facts);
            }
            return std::string("unknown rung");
        }();
        if (auto* why = std::get_if<std::string>(&outcome)) {
            skipped.push_back({rung, *why});
            continue;
        }
        TrainConfig next = std::get<TrainConfig>(outcome);
        if (rung == Rung::drop_caches || rung == Rung::bf16_lora) ++position_;  // one-shot rungs
        return LadderMove{rung, next, std::move(skipped), describe_change(current, next)};
    }
    return LadderExhausted{std::move(skipped)};
}

}  // namespace sg
