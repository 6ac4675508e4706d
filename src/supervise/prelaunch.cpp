#include "supervise/prelaunch.hpp"

#include "util/errors.hpp"

namespace sg {

accounting::PlanRequest request_for(accounting::PlanRequest user, const TrainConfig& config) {
    if (!user.model && !user.params) user.model = config.model;
    auto& w = user.workload;
    if (!w.method) w.method = config.method;
    if (config.batch_size) w.batch = *config.batch_size;
    if (config.seq_len) w.seq = *config.seq_len;
    if (config.grad_accum) w.grad_accum = *config.grad_accum;
    return user;
}

accounting::Workload workload_for(accounting::Workload base, const TrainConfig& config) {
    if (config.method) base.method = *config.method;
    if (config.batch_size) base.batch = *config.batch_size;
    if (config.seq_len) base.seq = *config.seq_len;
    if (config.grad_accum) base.grad_accum = *config.grad_accum;
    return base;
}

PrelaunchPlan plan_first_attempt(const accounting::PlanRequest& user, bool user_named_model, const TrainConfig& config) {
    accounting::PlanRequest request = request_for(user, config);
    if (!request.model && !request.params)
        return {std::nullopt, std::nullopt, "the command names no model (give --model or --params for a pre-launch estimate)"};
    try {
        return {accounting::make_plan(request), request, ""};
    } catch (const UsageError& e) {
        if (user_named_model) throw;
        return {std::nullopt, std::nullopt, std::string("cannot estimate the trainer's model: ") + e.what()};
    }
}

std::optional<TrainConfig> fitted_config(const accounting::Plan& plan, const TrainConfig& config) {
    const accounting::FitResult fit = accounting::fit_search(plan, accounting::default_fit_ceiling(plan, config.seq_len.has_value()));
    if (!fit.found) return std::nullopt;
    TrainConfig fitted = config;
    fitted.seq_len = fit.seq;
    fitted.batch_size = fit.batch;
    fitted.grad_accum = fit.grad_accum;
    return fitted;
}

}  // namespace sg
