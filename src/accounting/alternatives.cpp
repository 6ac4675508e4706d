#include "accounting/alternatives.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "util/strings.hpp"

namespace sg::accounting {
namespace {

struct Change {
    std::string flags;
    Workload workload;
};

bool fits(const Plan& plan) { return plan.verdict == Verdict::fits; }

Workload with_method(Workload w, Method method) {
    w.method = method;
    if (method == Method::qlora) w.weight_dtype = DType::nf4;
    else if (is_quantized(w.weight_dtype)) w.weight_dtype = DType::bf16;
    return w;
}

// Single changes in order of preference, then method changes with checkpointing on.
std::vector<Change> changes_of(const Workload& w) {
    std::vector<Change> out;
    auto add = [&](std::string flags, Workload changed) { out.push_back({std::move(flags), std::move(changed)}); };
    auto optimizer = [&](Optimizer o) { Workload c = w; c.optimizer = o; return c; };
    auto checkpointing = [](Workload c) { c.grad_ckpt = true; return c; };
    if (w.optimizer == Optimizer::adamw || w.optimizer == Optimizer::adamw_bf16)
        add("--optimizer adamw-8bit", optimizer(Optimizer::adamw_8bit));
    if (w.optimizer == Optimizer::adamw) add("--optimizer adamw-bf16", optimizer(Optimizer::adamw_bf16));
    if (w.method == Method::full) add("--method lora", with_method(w, Method::lora));
    if (w.method != Method::qlora) add("--method qlora", with_method(w, Method::qlora));
    if (!w.grad_ckpt) {
        add("--grad-ckpt", checkpointing(w));
        if (w.method == Method::full) add("--method lora --grad-ckpt", checkpointing(with_method(w, Method::lora)));
        if (w.method != Method::qlora) add("--method qlora --grad-ckpt", checkpointing(with_method(w, Method::qlora)));
    }
    return out;
}

// The change at the requested length, else at the longest length (then batch) that fits.
std::optional<Alternative> try_change(const Plan& base, const Change& change) {
    Plan plan = replan(base, change.workload);
    if (fits(plan)) return Alternative{change.flags, plan};
    if (base.workload.seq <= 64) return std::nullopt;
    const FitResult fit = fit_search(plan, base.workload.seq);
    if (!fit.found) return std::nullopt;
    std::vector<std::string> flags;
    if (!change.flags.empty()) flags.push_back(change.flags);
    if (fit.seq != base.workload.seq) flags.push_back("--seq " + std::to_string(fit.seq));
    if (fit.batch != base.workload.batch)
        flags.push_back("--batch " + std::to_string(fit.batch) + " --grad-accum " + std::to_string(fit.grad_accum));
    return Alternative{join(flags, " "), fit.plan};
}

}  // namespace

std::vector<Alternative> what_would_fit(const Plan& plan) {
    if (fits(plan)) return {};
    const auto shortened = try_change(plan, {"", plan.workload});
    const long long plain_seq = shortened ? shortened->plan.workload.seq : 0;
    std::vector<Alternative> same_length, shorter;
    for (const auto& change : changes_of(plan.workload)) {
        auto alternative = try_change(plan, change);
        if (!alternative) continue;
        const long long seq = alternative->plan.workload.seq;
        if (seq == plan.workload.seq) same_length.push_back(*alternative);
        else if (seq > plain_seq) shorter.push_back(*alternative);  // else: no better than just shortening
    }
    if (shortened) shorter.push_back(*shortened);
    std::stable_sort(shorter.begin(), shorter.end(),
                     [](const Alternative& a, const Alternative& b) { return a.plan.workload.seq > b.plan.workload.seq; });
    same_length.insert(same_length.end(), shorter.begin(), shorter.end());
    return same_length;
}

std::string format_alternatives(const std::vector<Alternative>& alternatives) {
    if (alternatives.empty()) return "";
    std::ostringstream out;
    out << "what would fit, best first:\n";
    for (const auto& a : alternatives)
        out << "  " << a.change << std::string(a.change.size() < 44 ? 44 - a.change.size() : 1, ' ') << "peak "
            << fixed(a.plan.estimate.peak_gb, 1) << " GB\n";
    return out.str();
}

std::string alternatives_sentence(const std::vector<Alternative>& alternatives) {
    if (alternatives.empty()) return "; nothing near it fits either";
    std::vector<std::string> parts;
    for (const auto& a : alternatives) parts.push_back(a.change + " (peak " + fixed(a.plan.estimate.peak_gb, 1) + " GB)");
    return "; what would fit, best first: " + join(parts, ", ");
}

nlohmann::json to_json(const std::vector<Alternative>& alternatives) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : alternatives)
        out.push_back({{"change", a.change}, {"method", name(a.plan.workload.method)},
                       {"optimizer", name(a.plan.workload.optimizer)}, {"grad_ckpt", a.plan.workload.grad_ckpt},
                       {"seq", a.plan.workload.seq}, {"batch", a.plan.workload.batch},
                       {"grad_accum", a.plan.workload.grad_accum}, {"peak_gb", std::round(a.plan.estimate.peak_gb * 1000) / 1000}});
    return out;
}

}  // namespace sg::accounting
