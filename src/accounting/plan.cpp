#include "accounting/plan.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "accounting/history_store.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg::accounting {
namespace {

double round3(double value) { return std::round(value * 1000) / 1000; }

std::string gb(double value) { return fixed(value, 2) + " GB"; }

ModelInfo resolve(const PlanRequest& request) {
    if (request.model && request.params) throw UsageError("--params", "give --model or --params, not both");
    if (request.model) return resolve_model(*request.model);
    if (request.params) {
        if (!(*request.params >= 1e6 && *request.params <= 1e13))
            throw UsageError("--params", "must be between 1M and 10T parameters");
        return model_from_params(*request.params);
    }
    throw UsageError("plan", "name a model (--model PATH|ORG/NAME|catalog name) or a size (--params 70B)");
}

void check_workload(const Workload& w) {
    if (w.batch < 1) throw UsageError("--batch", "must be at least 1");
    if (w.seq < 1) throw UsageError("--seq", "must be at least 1");
    if (w.grad_accum < 1) throw UsageError("--grad-accum", "must be at least 1");
    if (w.uses_lora() && w.lora_r < 1) throw UsageError("--lora-r", "must be at least 1");
    if (w.uses_lora() && w.lora_targets.empty()) throw UsageError("--lora-targets", "name at least one module");
    if (!(w.lora_dropout >= 0 && w.lora_dropout < 1)) throw UsageError("--lora-dropout", "must be in [0, 1)");
}

PlatformProfile choose_platform(const PlanRequest& request, const MachineState& machine,
                                std::vector<std::string>& assumptions) {
    const auto profiles = load_platforms();
    if (request.platform) return find_platform(profiles, *request.platform);
    PlatformProfile detected = detect_platform(profiles, machine);
    assumptions.push_back("platform " + detected.name + " (detected from this machine)");
    return detected;
}

// Tight: little headroom, or only by eating the memory guard's floor (a run would be stopped).
Verdict judge(double headroom, double budget, double margin, double floor) {
    if (headroom < 0) return Verdict::does_not_fit;
    if (headroom < std::max(margin * budget, floor)) return Verdict::tight;
    return Verdict::fits;
}

void add_warnings(Plan& plan, const MachineState& machine, bool budget_given) {
    const Estimate& e = plan.estimate;
    if (!budget_given && plan.platform.unified && plan.budget.page_cache_gb > 0 && e.peak_gb > plan.budget.free_gb)
        plan.warnings.push_back(fixed(std::min(e.peak_gb - plan.budget.free_gb, plan.budget.page_cache_gb), 1) +
                                " GB of this plan is now page cache, which the GPU side may not reclaim: drop caches "
                                "before launching (sync; echo 3 > /proc/sys/vm/drop_caches, as root)");
    const double floor = plan.budget.guard_floor_gb;
    if (plan.verdict == Verdict::tight && plan.headroom_gb < floor)
        plan.warnings.push_back("fits only by eating the memory guard's floor (" + gb(floor) + " of MemAvailable kept free, "
                                "5% of the pool): sparkguard run would stop it near the peak");
    if (e.load_peak_gb > e.train_peak_gb)
        plan.warnings.push_back("loading is the peak (" + gb(e.load_peak_gb) +
                                "): the mapped checkpoint and the resident copy coexist while the model loads");
    const long long context = plan.model.shape.arch.max_positions;
    if (context > 0 && plan.workload.seq > context)
        plan.warnings.push_back("seq " + std::to_string(plan.workload.seq) + " exceeds the model's context of " +
                                std::to_string(context));
    if (plan.platform.name == "host" && !machine.gpus.problem.empty())
        plan.warnings.push_back("no NVIDIA GPU found (" + machine.gpus.problem +
                                "): the budget is this machine's memory; pass --platform to plan for another");
}

void apply_history(Plan& plan) {
    plan.correction.reset();
    if (!plan.history) return;
    plan.correction = correction_for(plan, *plan.history);
    if (!plan.correction) return;
    Estimate& e = plan.estimate;
    // The ratio is of whole-run peaks (measured, the formula's max of training and load): both scale.
    e.train_peak_gb *= plan.correction->ratio;
    e.load_peak_gb *= plan.correction->ratio;
    e.peak_gb *= plan.correction->ratio;
}

void judge_plan(Plan& plan) {
    apply_history(plan);
    plan.headroom_gb = plan.budget.budget_gb - plan.estimate.peak_gb;
    plan.verdict = judge(plan.headroom_gb, plan.budget.budget_gb, plan.platform.tight_margin, plan.budget.guard_floor_gb);
    if (plan.correction && plan.correction->oom) plan.verdict = Verdict::does_not_fit;
    plan.anchor = nearest_anchor(default_anchors(), plan.estimate.params_b, plan.model.shape.arch.is_moe(),
                                 plan.workload.method, plan.estimate);
}

std::string workload_line(const Workload& w) {
    std::ostringstream out;
    out << name(w.method);
    if (w.uses_lora()) out << " r" << w.lora_r << " on " << join(w.lora_targets, ",");
    out << ", " << name(w.weight_dtype) << " weights, " << name(w.optimizer) << ", batch " << w.batch << " x seq " << w.seq
        << " (accumulation " << w.grad_accum << "), checkpointing " << (w.grad_ckpt ? "on" : "off")
        << ", flash attention " << (w.flash_attn ? "on" : "off") << ", loss " << name(w.loss);
    return out.str();
}

std::string signed_gb(double value) { return (value >= 0 ? "+" : "") + fixed(value, 1) + " GB"; }

std::string differences_text(const AnchorMatch& match) {
    if (!match.far_off()) return "";
    if (match.differences.empty()) return "; the anchor publishes no per-term breakdown to say which terms differ";
    std::vector<std::string> parts;
    for (const auto& d : match.differences)
        parts.push_back(d.term + " " + signed_gb(d.delta_gb()) + " (" + fixed(d.plan_gb, 1) + " here, " +
                        fixed(d.observed_gb, 1) + " observed)");
    return "; the difference is in " + join(parts, ", ");
}

std::string anchor_line(const AnchorMatch& match) {
    const Anchor& a = *match.anchor;
    std::string line = a.name + ": " + a.description + "; observed " + a.observed;
    if (match.delta_gb) {
        const double pct = 100 * *match.delta_gb / *a.observed_gb;
        line += "; this plan is " + std::string(*match.delta_gb >= 0 ? "+" : "") + fixed(*match.delta_gb, 1) + " GB (" +
                (pct >= 0 ? "+" : "") + fixed(pct, 0) + "%) from it" + differences_text(match);
    }
    return line;
}

nlohmann::json anchor_json(const AnchorMatch& match) {
    if (!match.anchor) return nullptr;
    const Anchor& a = *match.anchor;
    nlohmann::json out = {{"name", a.name}, {"description", a.description}, {"platform", a.platform},
                          {"observed", a.observed}, {"fits", a.fits}, {"source", a.source},
                          {"distance", round3(match.distance)}};
    out["observed_gb"] = a.observed_gb ? nlohmann::json(*a.observed_gb) : nlohmann::json(nullptr);
    out["delta_gb"] = match.delta_gb ? nlohmann::json(round3(*match.delta_gb)) : nlohmann::json(nullptr);
    out["differences"] = nlohmann::json::array();
    for (const auto& d : match.differences)
        out["differences"].push_back({{"term", d.term}, {"plan_gb", round3(d.plan_gb)},
                                      {"observed_gb", d.observed_gb}, {"delta_gb", round3(d.delta_gb())}});
    return out;
}

nlohmann::json history_json(const std::optional<HistoryCorrection>& c) {
    if (!c) return nullptr;
    nlohmann::json out = {{"runs", c->runs}, {"ratio", round3(c->ratio)}, {"text", describe(*c)}};
    out["nearest"] = c->runs > 0 ? nlohmann::json{{"time", c->nearest.time}, {"model", c->nearest.model},
                                                  {"method", c->nearest.method}, {"batch", c->nearest.batch},
                                                  {"seq", c->nearest.seq}, {"measured_peak_gb", c->nearest.measured_peak_gb}}
                                 : nlohmann::json(nullptr);
    out["oom"] = c->oom ? nlohmann::json{{"time", c->oom->time}, {"batch", c->oom->batch}, {"seq", c->oom->seq}}
                        : nlohmann::json(nullptr);
    return out;
}

nlohmann::json workload_json(const Workload& w) {
    nlohmann::json out = {{"method", name(w.method)}, {"weight_dtype", name(w.weight_dtype)},
                          {"optimizer", name(w.optimizer)}, {"batch", w.batch}, {"seq", w.seq},
                          {"grad_accum", w.grad_accum}, {"grad_ckpt", w.grad_ckpt}, {"flash_attn", w.flash_attn},
                          {"loss", name(w.loss)}};
    if (w.uses_lora()) {
        out["lora_r"] = w.lora_r;
        out["lora_targets"] = w.lora_targets;
        out["lora_dropout"] = w.lora_dropout;
    }
    return out;
}

bool fits_with(const Plan& base, long long seq, long long batch) {
    Workload w = base.workload;
    w.seq = seq;
    w.batch = batch;
    return replan(base, w).verdict == Verdict::fits;
}

// Largest value in [low, high] (step `step`) for which `ok` holds, given ok(low); monotone.
long long largest(long long low, long long high, long long step, const auto& ok) {
    while (low < high) {
        const long long mid = low + ((high - low) / step + 1) / 2 * step;
        if (ok(mid)) low = mid;
        else high = mid - step;
    }
    return low;
}

}  // namespace

std::string_view name(Verdict verdict) {
    switch (verdict) {
        case Verdict::fits: return "fits";
        case Verdict::tight: return "tight";
        case Verdict::does_not_fit: return "does-not-fit";
    }
    return "?";
}

Plan make_plan(const PlanRequest& request) {
    MachineState machine;
    if (!request.budget_gb) machine = read_machine();
    Plan plan = make_plan(request, machine);
    if (!request.use_history) return plan;
    HistoryFile history = read_history(history_path());
    plan.warnings.insert(plan.warnings.end(), history.warnings.begin(), history.warnings.end());
    return history.runs.empty() ? plan : with_history(plan, std::move(history.runs));
}

Plan with_history(const Plan& plan, std::vector<HistoryRun> runs) {
    Plan corrected = plan;
    corrected.history = std::make_shared<const std::vector<HistoryRun>>(std::move(runs));
    return replan(corrected, plan.workload);
}

Plan make_plan(const PlanRequest& request, const MachineState& machine) {
    Plan plan;
    plan.model = resolve(request);
    plan.assumptions = plan.model.notes;
    WorkloadSpec spec = request.workload;
    if (plan.model.shape.prequantized && spec.method != Method::qlora) {
        // 4-bit weights stay 4-bit whatever the trainer's flags say: that is QLoRA
        plan.assumptions.push_back("qlora: " + plan.model.name + " is a pre-quantised checkpoint (" +
                                   (plan.model.quantization.empty() ? "4-bit" : plan.model.quantization) + ")" +
                                   (spec.method ? ", whatever --method says" : ""));
        spec.method = Method::qlora;
    }
    plan.workload = resolve_workload(spec, plan.assumptions);
    check_workload(plan.workload);
    plan.platform = choose_platform(request, machine, plan.assumptions);
    if (request.budget_gb) {
        if (!(*request.budget_gb > 0)) throw UsageError("--budget-gb", "must be positive");
        plan.budget.budget_gb = *request.budget_gb;
        plan.budget.source = "--budget-gb";
    } else {
        plan.budget = compute_budget(plan.platform, machine);
    }
    plan.estimate = estimate(plan.model.shape, plan.workload, plan.platform.traits);
    judge_plan(plan);
    add_warnings(plan, machine, request.budget_gb.has_value());
    return plan;
}

Plan replan(const Plan& base, const Workload& workload) {
    Plan plan = base;
    plan.workload = workload;
    plan.estimate = estimate(plan.model.shape, workload, plan.platform.traits);
    judge_plan(plan);
    return plan;
}

long long default_fit_ceiling(const Plan& plan, bool seq_given) {
    if (seq_given) return plan.workload.seq;
    const long long context = plan.model.shape.arch.max_positions;
    return context > 0 ? std::min<long long>(context, 131072) : 8192;
}

FitResult fit_search(const Plan& plan, long long max_seq) {
    FitResult fit;
    fit.effective_batch = plan.workload.batch * plan.workload.grad_accum;
    fit.max_seq_searched = std::max<long long>(64, max_seq / 64 * 64);
    fit.plan = plan;
    if (!fits_with(plan, 64, 1)) {
        Workload smallest = plan.workload;
        smallest.seq = 64;
        smallest.batch = 1;
        fit.plan = replan(plan, smallest);
        return fit;
    }
    fit.found = true;
    fit.seq = largest(64, fit.max_seq_searched, 64, [&](long long s) { return fits_with(plan, s, 1); });
    fit.batch = largest(1, fit.effective_batch, 1, [&](long long b) { return fits_with(plan, fit.seq, b); });
    // Accumulation must keep batch x accumulation exactly the effective batch: the largest fitting
    // batch that divides it (3 x 3 in place of 8 would train on another effective batch).
    while (fit.effective_batch % fit.batch != 0) --fit.batch;
    fit.grad_accum = fit.effective_batch / fit.batch;
    Workload w = plan.workload;
    w.seq = fit.seq;
    w.batch = fit.batch;
    w.grad_accum = fit.grad_accum;
    fit.plan = replan(plan, w);
    return fit;
}

nlohmann::json to_json(const Plan& plan) {
    const Estimate& e = plan.estimate;
    nlohmann::json out = {
        {"model", {{"name", plan.model.name}, {"source", plan.model.source}, {"family", plan.model.shape.arch.family},
                   {"moe", plan.model.shape.arch.is_moe()}}},
        {"workload", workload_json(plan.workload)},
        {"platform", plan.platform.name},
        {"budget_source", plan.budget.source},
        {"params", static_cast<long long>(std::llround(plan.model.shape.params))},
        {"params_b", round3(e.params_b)},
        {"trainable_params", std::round(e.trainable_params)},
        {"weights_gb", round3(e.weights_gb)},
        {"adapter_gb", round3(e.adapter_gb)},
        {"optimizer_gb", round3(e.optimizer_gb)},
        {"gradients_gb", round3(e.gradients_gb)},
        {"activations_gb", round3(e.activations_gb)},
        {"logits_gb", round3(e.logits_gb)},
        {"step_transient_gb", round3(e.step_transient_gb)},
        {"overhead_gb", round3(e.overhead_gb)},
        {"train_peak_gb", round3(e.train_peak_gb)},
        {"train_peak_phase", e.train_peak_phase},
        {"load_peak_gb", round3(e.load_peak_gb)},
        {"peak_gb", round3(e.peak_gb)},
        {"peak_phase", e.peak_phase},
        {"bf16_weights_gb", round3(e.bf16_weights_gb)},
        {"budget_gb", round3(plan.budget.budget_gb)},
        {"headroom_gb", round3(plan.headroom_gb)},
        {"verdict", name(plan.verdict)},
        {"nearest_anchor", anchor_json(plan.anchor)},
        {"history", history_json(plan.correction)},
        {"assumptions", plan.assumptions},
        {"warnings", plan.warnings},
    };
    return out;
}

nlohmann::json to_json(const FitResult& fit) {
    nlohmann::json out = {{"found", fit.found}, {"effective_batch", fit.effective_batch},
                          {"max_seq_searched", fit.max_seq_searched}};
    if (fit.found) {
        out["seq"] = fit.seq;
        out["batch"] = fit.batch;
        out["grad_accum"] = fit.grad_accum;
        out["margin_fraction"] = fit.plan.platform.tight_margin;  // of the budget, kept free
    }
    out["plan"] = to_json(fit.plan);
    return out;
}

std::string format_plan(const Plan& plan) {
    const Estimate& e = plan.estimate;
    std::ostringstream out;
    auto row = [&](const std::string& label, double value, const std::string& note = "") {
        out << "  " << label << std::string(label.size() < 26 ? 26 - label.size() : 1, ' ') << std::string(
                   fixed(value, 2).size() < 8 ? 8 - fixed(value, 2).size() : 0, ' ')
            << fixed(value, 2) << (note.empty() ? "" : "   " + note) << "\n";
    };
    out << "model      " << plan.model.name << " (" << fixed(e.params_b, 2) << "B parameters"
        << (plan.model.shape.arch.is_moe() ? ", MoE" : "") << "; " << plan.model.source << ")\n";
    out << "workload   " << workload_line(plan.workload) << "\n";
    out << "platform   " << plan.platform.name << ": " << plan.budget.source << "\n\n";
    out << "  term                            GB\n";
    row("weights", e.weights_gb, name(plan.workload.weight_dtype).data());
    row("LoRA adapter", e.adapter_gb);
    row("optimizer state", e.optimizer_gb, name(plan.workload.optimizer).data());
    row("gradients", e.gradients_gb);
    row("activations", e.activations_gb, "of which logits " + fixed(e.logits_gb, 2));
    row("optimizer-step transient", e.step_transient_gb);
    row("overhead", e.overhead_gb, "allocator slack, CUDA context" + std::string(plan.platform.unified ? ", host process" : ""));
    out << "  " << std::string(34, '-') << "\n";
    row("training peak", e.train_peak_gb, "during the " + e.train_peak_phase);
    row("load peak", e.load_peak_gb);
    row("peak", e.peak_gb, e.peak_phase);
    row("budget", plan.budget.budget_gb);
    row("headroom", plan.headroom_gb,
        plan.budget.budget_gb > 0 ? fixed(100 * plan.headroom_gb / plan.budget.budget_gb, 0) + "% of the budget" : "");
    out << "  verdict                   " << name(plan.verdict) << "\n\n";
    if (plan.correction) out << "history    " << describe(*plan.correction) << "\n";
    if (plan.anchor.anchor) out << "nearest anchor  " << anchor_line(plan.anchor) << "\n";
    if (!plan.assumptions.empty()) {
        out << "assumed\n";
        for (const auto& a : plan.assumptions) out << "  - " << a << "\n";
    }
    if (!plan.warnings.empty()) {
        out << "warnings\n";
        for (const auto& w : plan.warnings) out << "  ! " << w << "\n";
    }
    return out.str();
}

std::string format_fit(const FitResult& fit) {
    std::ostringstream out;
    if (!fit.found) {
        out << "fit: nothing fits, not even seq 64 at batch 1 (peak " << gb(fit.plan.estimate.peak_gb) << ", budget "
            << gb(fit.plan.budget.budget_gb) << ")\n";
        return out.str();
    }
    out << "fit: seq " << fit.seq << ", batch " << fit.batch << ", gradient accumulation " << fit.grad_accum
        << " (effective batch " << fit.batch * fit.grad_accum << "; searched seq up to " << fit.max_seq_searched
        << "): peak " << gb(fit.plan.estimate.peak_gb) << " of " << gb(fit.plan.budget.budget_gb) << ", keeping "
        << fixed(fit.plan.platform.tight_margin * 100, 0) << "% of the budget free as margin\n";
    return out.str();
}

}  // namespace sg::accounting
