#include <catch2/catch.hpp>

#include "accounting/history.hpp"
#include "accounting/plan.hpp"

using namespace sg::accounting;

namespace {

Plan plan_of(const std::string& model, Method method, long long batch, long long seq) {
    PlanRequest r;
    r.model = model;
    r.workload.method = method;
    r.workload.batch = batch;
    r.workload.seq = seq;
    r.platform = "gpu-24gb";
    return make_plan(r, MachineState{});
}

// A run measured on this machine, as `plan` would have recorded it.
HistoryRun measured(const Plan& plan, double measured_gb, bool oom = false, std::string time = "2026-11-30T10:00:00Z") {
    HistoryRun r;
    r.time = std::move(time);
    r.model = plan.model.name;
    r.family = plan.model.shape.arch.family;
    r.platform = plan.platform.name;
    r.method = name(plan.workload.method);
    r.weight_dtype = name(plan.workload.weight_dtype);
    r.optimizer = name(plan.workload.optimizer);
    r.batch = plan.workload.batch;
    r.seq = plan.workload.seq;
    r.grad_ckpt = plan.workload.grad_ckpt;
    r.estimated_peak_gb = plan.estimate.peak_gb;
    r.measured_peak_gb = oom ? 0 : measured_gb;
    r.oom = oom;
    return r;
}

}  // namespace

TEST_CASE("a measured run moves the same plan to its measured peak, and says so", "[history]") {
    const Plan plan = plan_of("llama-3.1-8b", Method::qlora, 1, 2048);
    const double target = plan.estimate.peak_gb * 1.08;
    const Plan corrected = with_history(plan, {measured(plan, target)});
    REQUIRE(corrected.correction);
    CHECK(corrected.correction->runs == 1);
    CHECK(corrected.estimate.peak_gb == Approx(target));
    CHECK(describe(*corrected.correction).starts_with("corrected by 1 run on this machine: +8% (nearest: 2026-11-30"));
    CHECK(format_plan(corrected).find("corrected by 1 run on this machine: +8%") != std::string::npos);
    // replan (the fit search, the ladder) keeps the correction
    Workload longer = plan.workload;
    longer.seq = 4096;
    CHECK(replan(corrected, longer).estimate.peak_gb == Approx(replan(plan, longer).estimate.peak_gb * 1.08));
}

TEST_CASE("the nearest runs of the same family and method correct; other families never do", "[history]") {
    const Plan llama = plan_of("llama-3.1-8b", Method::qlora, 1, 2048);
    const Plan llama_lora = plan_of("llama-3.1-8b", Method::lora, 1, 2048);
    const Plan qwen = plan_of("qwen2.5-7b", Method::qlora, 1, 2048);
    const std::vector<HistoryRun> runs = {measured(qwen, qwen.estimate.peak_gb * 1.5),
                                          measured(llama_lora, llama_lora.estimate.peak_gb * 0.5),
                                          measured(llama, llama.estimate.peak_gb * 1.1)};
    const auto c = correction_for(llama, runs);
    REQUIRE(c);
    CHECK(c->runs == 1);  // the same-method run only: LoRA and Qwen are left out
    CHECK(c->ratio == Approx(1.1));
    const Plan mistral = plan_of("mistral-7b", Method::qlora, 1, 2048);
    CHECK_FALSE(correction_for(mistral, runs));
    CHECK(with_history(mistral, runs).estimate.peak_gb == Approx(mistral.estimate.peak_gb));
    // without a same-method run, the family's other method is the next best
    const auto other = correction_for(llama, {runs[0], runs[1]});
    REQUIRE(other);
    CHECK(other->ratio == Approx(0.5));
}

TEST_CASE("an OOM measured at a smaller configuration makes a larger one does-not-fit", "[history]") {
    const Plan small = plan_of("llama-3.1-8b", Method::qlora, 1, 1024);
    const Plan large = plan_of("llama-3.1-8b", Method::qlora, 2, 2048);
    REQUIRE(large.verdict == Verdict::fits);
    const std::vector<HistoryRun> runs = {measured(small, 0, true)};
    const Plan judged = with_history(large, runs);
    CHECK(judged.verdict == Verdict::does_not_fit);
    REQUIRE(judged.correction->oom);
    CHECK(describe(*judged.correction).find("ran out of memory on this machine at batch 1 x seq 1024") != std::string::npos);
    CHECK(with_history(plan_of("llama-3.1-8b", Method::qlora, 1, 512), runs).verdict == Verdict::fits);  // smaller still
    // another family, larger than what ran out (2 x 1024: at 2 x 2048 the fp32 embeddings and lm_head
    // that PEFT keeps for bitsandbytes QLoRA make it tight on its own)
    CHECK(with_history(plan_of("qwen2.5-7b", Method::qlora, 2, 1024), runs).verdict == Verdict::fits);
    const FitResult fit = fit_search(judged, 4096);  // the fit search stays below what ran out
    CHECK((!fit.found || fit.seq < 1024 || fit.batch < 2));
}

TEST_CASE("history lines: torn ones are warnings, the rest are read", "[history]") {
    const Plan plan = plan_of("llama-3.1-8b", Method::qlora, 1, 2048);
    nlohmann::json measured_json = {{"peak_pool_used_gb", 9.5}, {"peak_trainer_rss_gb", 2.0}};
    const std::string line = history_entry(plan, measured_json, false, 40, "hf", "2026-11-30T10:00:00Z").dump();
    const std::string text = line + "\n" + line.substr(0, 50) + line + "\n" + line + "\n" + line.substr(0, 30);
    const HistoryFile file = parse_history(text, "history.jsonl");
    CHECK(file.runs.size() == 3);  // the record appended into the torn line 2 is read
    REQUIRE(file.warnings.size() == 2);
    CHECK(file.warnings[0].starts_with("history.jsonl:2: torn line"));
    CHECK(file.warnings[1].starts_with("history.jsonl:4: torn line"));
    const HistoryRun& r = file.runs[0];
    CHECK(r.measured_peak_gb == 9.5);  // a GPU platform: the pool
    CHECK(r.estimated_peak_gb == Approx(plan.estimate.peak_gb).epsilon(1e-3));
    CHECK((r.family == "llama" && r.method == "qlora" && r.batch == 1 && r.seq == 2048));
}
