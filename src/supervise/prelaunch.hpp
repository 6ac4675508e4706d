#pragma once
// The pre-launch budget check of `sparkguard run`: the plan estimate for the first attempt, from
// the user's workload flags and what the trainer's command says.

#include <optional>
#include <string>

#include "accounting/plan.hpp"
#include "ladder/train_config.hpp"

namespace sg {

// The user's workload flags completed by the trainer's knobs (model, method, batch, length,
// accumulation): what the estimate is made for.
accounting::PlanRequest request_for(accounting::PlanRequest user, const TrainConfig& config);

// A plan's workload with a ladder configuration's knobs: the estimate for one attempt.
accounting::Workload workload_for(accounting::Workload base, const TrainConfig& config);

struct PrelaunchPlan {
    std::optional<accounting::Plan> plan;
    std::optional<accounting::PlanRequest> request;  // the request that made it
    std::string skipped_because;                     // set when there is no plan
};

// `user_named_model` says whether the flags (or --workload) named the model, in which case a bad
// model is the user's error (UsageError); a model taken from the trainer's command that cannot
// be resolved only means there is no estimate.
PrelaunchPlan plan_first_attempt(const accounting::PlanRequest& user, bool user_named_model, const TrainConfig& config);

// The configuration --fit starts from: the largest packing length, then batch, that fits,
// keeping the effective batch. nullopt when nothing fits.
std::optional<TrainConfig> fitted_config(const accounting::Plan& plan, const TrainConfig& config);

}  // namespace sg
