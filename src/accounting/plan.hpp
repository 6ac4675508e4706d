#pragma once
// The plan: a model and a workload estimated against a platform's budget, with a verdict and
// the nearest anchor. This is the API `sparkguard plan`, `preflight` and `run` share.
//
//   PlanRequest request;
//   request.model = "llama-3.1-8b";                 // or request.params = 8e9
//   request.workload.method = Method::qlora;        // unset fields take the recipes' defaults
//   Plan plan = make_plan(request);                 // throws UsageError on bad input
//   if (plan.verdict == Verdict::does_not_fit) ...
//   nlohmann::json report = to_json(plan);

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/anchors.hpp"
#include "accounting/estimator.hpp"
#include "accounting/history.hpp"
#include "accounting/model_source.hpp"
#include "accounting/platform.hpp"
#include "accounting/workload.hpp"

namespace sg::accounting {

struct PlanRequest {
    std::optional<std::string> model;     // directory, config.json, ORG/NAME in the HF cache, or catalog name
    std::optional<double> params;         // bare parameter count when there is no model
    WorkloadSpec workload;
    std::optional<std::string> platform;  // profile name; detected from this machine when absent
    std::optional<double> budget_gb;      // overrides the platform's budget
    bool use_history = true;              // correct by this machine's measured runs (--no-history: false)
};

enum class Verdict { fits, tight, does_not_fit };
std::string_view name(Verdict verdict);

struct Plan {
    ModelInfo model;
    Workload workload;
    PlatformProfile platform;
    Budget budget;
    Estimate estimate;
    double headroom_gb = 0;
    Verdict verdict = Verdict::fits;
    AnchorMatch anchor;
    std::vector<std::string> assumptions;  // defaults taken and facts inferred, one readable line each
    std::vector<std::string> warnings;
    std::shared_ptr<const std::vector<HistoryRun>> history;  // this machine's measured runs; null: not used
    std::optional<HistoryCorrection> correction;              // what they changed: peak scaled, OOM verdict

    // The OOM ladder's bf16-LoRA rung is pointless when bf16 weights alone exceed the budget.
    bool bf16_weights_exceed_budget() const { return estimate.bf16_weights_gb > budget.budget_gb; }
};

// Resolves the model, fills defaults, reads this machine when the budget needs it (meminfo,
// nvidia-smi), estimates and judges. Throws UsageError for bad input (exit 2).
Plan make_plan(const PlanRequest& request);
// The same against given machine readings (tests, and callers that already probed); no history.
Plan make_plan(const PlanRequest& request, const MachineState& machine);

// The plan corrected by measured runs (and kept corrected by replan): the peaks scaled by
// the nearest runs' measured/estimated ratio, does-not-fit after an OOM at a smaller configuration.
Plan with_history(const Plan& plan, std::vector<HistoryRun> runs);

// The same model, platform and budget with another workload (the fit search, the OOM ladder).
Plan replan(const Plan& base, const Workload& workload);

struct FitResult {
    bool found = false;
    long long seq = 0;
    long long batch = 0;
    long long grad_accum = 0;
    long long effective_batch = 0;
    long long max_seq_searched = 0;
    Plan plan;                             // the plan at the answer (or the smallest tried)
};

// Largest packing length (a multiple of 64, up to `max_seq`) that fits at batch 1, then the
// largest per-device batch at that length up to the effective batch, with gradient accumulation
// making up the rest. "Fits" means verdict fits, margin kept.
FitResult fit_search(const Plan& plan, long long max_seq);
// The search's upper bound: the requested seq when given, else the model's context (at most 131072).
long long default_fit_ceiling(const Plan& plan, bool seq_given);

nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const FitResult& fit);
std::string format_plan(const Plan& plan);
std::string format_fit(const FitResult& fit);

}  // namespace sg::accounting
