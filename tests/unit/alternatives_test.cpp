#include <catch2/catch.hpp>

#include <algorithm>

#include "accounting/alternatives.hpp"

using namespace sg::accounting;

namespace {

Plan plan_of(const std::string& model, Method method, const std::string& platform, void (*change)(WorkloadSpec&) = nullptr) {
    PlanRequest r;
    r.model = model;
    r.workload.method = method;
    r.platform = platform;
    if (change) change(r.workload);
    return make_plan(r, MachineState{});
}

std::vector<std::string> changes(const std::vector<Alternative>& alternatives) {
    std::vector<std::string> out;
    for (const auto& a : alternatives) out.push_back(a.change);
    return out;
}

}  // namespace

TEST_CASE("a plan that fits needs no alternatives", "[plan][alternatives]") {
    CHECK(what_would_fit(plan_of("llama-3.1-8b", Method::qlora, "gpu-24gb")).empty());
}

TEST_CASE("8B full fine-tune on 24 GB: nothing fits at any length, LoRA and QLoRA do", "[plan][alternatives]") {
    const Plan full = plan_of("llama-3.1-8b", Method::full, "gpu-24gb");
    REQUIRE_FALSE(fit_search(full, 8192).found);
    const auto alternatives = what_would_fit(full);
    // QLoRA keeps the 2048 tokens asked for; bf16 LoRA's 16 GB of weights leave room for fewer.
    CHECK(changes(alternatives) == std::vector<std::string>{"--method qlora", "--method lora --seq 1024"});
    for (const auto& a : alternatives) {
        INFO(a.change);
        CHECK(a.plan.verdict == Verdict::fits);
        CHECK(a.plan.estimate.peak_gb < full.budget.budget_gb);
    }
    CHECK(alternatives[0].plan.workload.seq == full.workload.seq);
    CHECK(alternatives[0].plan.workload.weight_dtype == DType::nf4);
    CHECK(format_alternatives(alternatives).find("--method lora") != std::string::npos);
    CHECK(alternatives_sentence(alternatives).find("--method qlora (peak ") != std::string::npos);
}

TEST_CASE("8B full fine-tune on 80 GB: the 8-bit optimizer comes first", "[plan][alternatives]") {
    const Plan full = plan_of("llama-3.1-8b", Method::full, "gpu-80gb");
    REQUIRE(full.verdict == Verdict::does_not_fit);
    const auto alternatives = what_would_fit(full);
    REQUIRE_FALSE(alternatives.empty());
    CHECK(alternatives[0].change == "--optimizer adamw-8bit");
    CHECK(alternatives[0].plan.workload.method == Method::full);
    CHECK(alternatives[0].plan.verdict == Verdict::fits);
}

TEST_CASE("shorter lengths come after same-length changes, longest first", "[plan][alternatives]") {
    const Plan plan = plan_of("llama-3.1-8b", Method::lora, "gpu-24gb", [](WorkloadSpec& w) {
        w.seq = 32768;
        w.grad_ckpt = false;
    });
    const auto alternatives = what_would_fit(plan);
    REQUIRE(alternatives.size() >= 2);
    CHECK(std::is_sorted(alternatives.begin(), alternatives.end(), [](const Alternative& a, const Alternative& b) {
        return a.plan.workload.seq > b.plan.workload.seq;
    }));
    const auto list = changes(alternatives);
    CHECK(std::find(list.begin(), list.end(), "--seq " + std::to_string(alternatives.back().plan.workload.seq)) !=
          list.end());  // the unchanged run, shortened, is listed
    CHECK(std::any_of(list.begin(), list.end(), [](const std::string& c) { return c.starts_with("--grad-ckpt --seq"); }));
    for (const auto& a : alternatives) CHECK(a.plan.verdict == Verdict::fits);
}
