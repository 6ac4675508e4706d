#include <catch2/catch.hpp>

#include <fstream>

#include "accounting/plan.hpp"
#include "util/errors.hpp"

using namespace sg::accounting;

namespace {

PlanRequest request(const std::string& model, Method method, const std::string& platform) {
    PlanRequest r;
    r.model = model;
    r.workload.method = method;
    r.platform = platform;
    return r;
}

const MachineState kNoMachine{};

// A DGX Spark's readings: /proc/meminfo in bytes and nvidia-smi's GB10 with [N/A] memory.
MachineState spark_machine(double available, double free, double cached) {
    MachineState spark;
    spark.meminfo = sg::MemInfo{};
    spark.meminfo->total = 128.5e9;
    spark.meminfo->available = available;
    spark.meminfo->free = free;
    spark.meminfo->cached = cached;
    spark.gpus.gpus.push_back({0, "NVIDIA GB10", {}, {}, {}, "12.1", "580.95.05"});
    return spark;
}

}  // namespace

TEST_CASE("DGX Spark anchors: 70B QLoRA about 40 GB, 70B bf16 LoRA does not fit", "[plan][anchors]") {
    PlanRequest qlora = request("llama-3.3-70b", Method::qlora, "dgx-spark");
    qlora.workload.loss = LossKind::fused;  // Unsloth, the Spark QLoRA recipe
    const Plan q = make_plan(qlora, kNoMachine);
    CHECK(q.verdict == Verdict::fits);
    CHECK(q.estimate.weights_gb == Approx(39.5).margin(1.0));
    REQUIRE(q.anchor.anchor);
    CHECK(q.anchor.anchor->name == "spark-70b-qlora");
    // Live tensors; the anchor's settings are not published, so the check is loose.
    CHECK(q.estimate.tensors_peak_gb == Approx(40).epsilon(0.2));
    const Plan bf16 = make_plan(request("llama-3.3-70b", Method::lora, "dgx-spark"), kNoMachine);
    CHECK(bf16.verdict == Verdict::does_not_fit);
    CHECK(bf16.bf16_weights_exceed_budget());
    CHECK(bf16.anchor.anchor->name == "spark-70b-bf16-lora");
}

TEST_CASE("DGX Spark anchors: 27B LoRA at packing 1024 and 9B full with 8-bit AdamW fit", "[plan][anchors]") {
    PlanRequest lora27 = request("gemma-3-27b", Method::lora, "dgx-spark");
    lora27.workload.seq = 1024;
    CHECK(make_plan(lora27, kNoMachine).verdict == Verdict::fits);
    PlanRequest full9 = request("gemma-2-9b", Method::full, "dgx-spark");
    full9.workload.optimizer = Optimizer::adamw_8bit;
    const Plan plan = make_plan(full9, kNoMachine);
    CHECK(plan.verdict == Verdict::fits);
    CHECK(plan.anchor.anchor->name == "spark-9b-full");
    full9.workload.optimizer = Optimizer::adamw;  // fp32 states and master weights: 16 B/param
    CHECK(make_plan(full9, kNoMachine).verdict == Verdict::does_not_fit);
}

TEST_CASE("each term follows the workload knob it depends on", "[estimator]") {
    PlanRequest r = request("llama-3.1-8b", Method::lora, "gpu-80gb");
    const Plan base = make_plan(r, kNoMachine);
    auto with = [&](auto change) {
        Workload w = base.workload;
        change(w);
        return replan(base, w).estimate;
    };
    const Estimate e = base.estimate;
    CHECK(e.weights_gb == Approx(16.06).margin(0.05));
    CHECK(e.adapter_gb == Approx(e.trainable_params * 4 / 1e9));
    CHECK(e.optimizer_gb == Approx(e.trainable_params * 8 / 1e9));
    CHECK(with([](Workload& w) { w.seq = 4096; }).activations_gb == Approx(2 * e.activations_gb).epsilon(0.05));
    CHECK(with([](Workload& w) { w.loss = LossKind::fused; }).logits_gb == 0);
    CHECK(with([](Workload& w) { w.flash_attn = false; w.grad_ckpt = false; }).activations_gb >
          with([](Workload& w) { w.grad_ckpt = false; }).activations_gb + 10);
    CHECK(with([](Workload& w) { w.grad_ckpt = false; }).activations_gb > 3 * e.activations_gb);
    CHECK(with([](Workload& w) { w.lora_r = 64; }).adapter_gb == Approx(4 * e.adapter_gb));
    // 4-bit linears; under the Hugging Face stack PEFT keeps the embeddings and lm_head in fp32 (+2.1 GB)
    CHECK(with([](Workload& w) { w.weight_dtype = DType::nf4; w.method = Method::qlora; }).weights_gb == Approx(7.8).margin(0.1));
    CHECK(with([](Workload& w) { w.weight_dtype = DType::nf4; w.method = Method::qlora; w.loss = LossKind::fused; }).weights_gb < 6.5);
    const Estimate full = with([](Workload& w) { w.method = Method::full; w.optimizer = Optimizer::adamw_bf16; });
    CHECK(full.gradients_gb == Approx(e.weights_gb));
    CHECK(full.optimizer_gb == Approx(2 * e.weights_gb));
    CHECK(full.step_transient_gb == Approx(e.weights_gb));
}

TEST_CASE("sharded over N ranks (FSDP, ZeRO-3), each rank keeps 1/N of the states and gathers two layers", "[estimator]") {
    PlanRequest r = request("llama-3.1-8b", Method::full, "gpu-80gb");
    const Plan replica = make_plan(r, kNoMachine);
    Workload w = replica.workload;
    w.shards = 4;
    const Estimate sharded = replan(replica, w).estimate;
    const Estimate& e = replica.estimate;
    CHECK(sharded.weights_gb == Approx(e.weights_gb / 4));
    CHECK(sharded.optimizer_gb == Approx(e.optimizer_gb / 4));
    CHECK(sharded.gradients_gb == Approx(e.gradients_gb / 4));
    CHECK(sharded.activations_gb == Approx(e.activations_gb));  // each rank's own batch
    CHECK(sharded.step_transient_gb == Approx(e.step_transient_gb / 4));
    // LoRA: the peak is in the backward, where the two gathered layers add to the rank's share
    w = replica.workload;
    w.method = Method::lora;
    const Estimate lora = replan(replica, w).estimate;
    w.shards = 4;
    const Estimate lora_sharded = replan(replica, w).estimate;
    const double states = lora.weights_gb + lora.adapter_gb + lora.optimizer_gb + lora.gradients_gb;
    const double two_layers = 2 * lora.weights_gb / 32;  // Llama 3.1 8B: 32 decoder layers
    CHECK(lora_sharded.tensors_peak_gb == Approx(lora.tensors_peak_gb - 0.75 * states + two_layers));
    w.shards = 1;
    CHECK(replan(replica, w).estimate.peak_gb == Approx(lora.peak_gb));
}

TEST_CASE("MoE activations follow the active experts, weights all of them", "[estimator]") {
    const Plan moe = make_plan(request("qwen3-30b-a3b", Method::lora, "gpu-80gb"), kNoMachine);
    const Plan dense = make_plan(request("qwen3-4b", Method::lora, "gpu-80gb"), kNoMachine);
    CHECK(moe.estimate.weights_gb > 55);
    CHECK(moe.estimate.activations_gb < 2 * dense.estimate.activations_gb);
}

TEST_CASE("the budget comes from the machine only when it is that machine", "[platform]") {
    const auto profiles = load_platforms();
    const MachineState spark = spark_machine(100e9, 40e9, 61e9);
    const PlatformProfile detected = detect_platform(profiles, spark);
    CHECK(detected.name == "dgx-spark");
    CHECK(compute_budget(detected, spark).budget_gb == Approx(94));
    MachineState card;
    card.gpus.gpus.push_back({0, "NVIDIA GeForce RTX 4090", {}, 24564.0, 1024.0, "8.9", "550"});
    const PlatformProfile gpu24 = detect_platform(profiles, card);
    CHECK(gpu24.name == "gpu-24gb");
    CHECK(compute_budget(gpu24, card).budget_gb == Approx(25.757 - 1.074 - 0.5).margin(0.01));
    CHECK(compute_budget(find_platform(profiles, "gpu-80gb"), card).budget_gb == Approx(79.5));
    CHECK(compute_budget(find_platform(profiles, "dgx-spark"), MachineState{}).budget_gb == Approx(122));
    CHECK_THROWS_AS(find_platform(profiles, "tpu"), sg::UsageError);
}

TEST_CASE("page cache inside the plan is a warning on unified memory", "[platform]") {
    const MachineState spark = spark_machine(110e9, 20e9, 90e9);
    PlanRequest r = request("llama-3.1-8b", Method::lora, "dgx-spark");
    const Plan plan = make_plan(r, spark);
    REQUIRE_FALSE(plan.warnings.empty());
    CHECK_THAT(plan.warnings.front(), Catch::Contains("page cache") && Catch::Contains("drop_caches"));
}

TEST_CASE("fit search: longest packing first, then batch with accumulation", "[plan][fit]") {
    PlanRequest r = request("llama-3.1-8b", Method::lora, "gpu-24gb");
    r.workload.batch = 8;
    r.workload.seq = 8192;
    const Plan plan = make_plan(r, kNoMachine);
    CHECK(plan.verdict == Verdict::does_not_fit);
    const FitResult fit = fit_search(plan, 8192);
    REQUIRE(fit.found);
    CHECK(fit.seq % 64 == 0);
    CHECK(fit.plan.verdict == Verdict::fits);
    CHECK(fit.batch * fit.grad_accum == 8);  // the effective batch kept exactly
    CHECK(fit.plan.workload.batch * fit.plan.workload.grad_accum == 8);
    Workload longer = fit.plan.workload;
    longer.seq += 64;
    longer.batch = 1;
    CHECK(replan(plan, longer).verdict != Verdict::fits);
    PlanRequest huge = request("llama-3.1-405b", Method::lora, "gpu-24gb");
    CHECK_FALSE(fit_search(make_plan(huge, kNoMachine), 2048).found);
}

TEST_CASE("bad requests are usage errors", "[plan]") {
    PlanRequest none;
    CHECK_THROWS_AS(make_plan(none, kNoMachine), sg::UsageError);
    PlanRequest contradiction = request("llama-3.1-8b", Method::qlora, "gpu-24gb");
    contradiction.workload.weight_dtype = DType::bf16;
    CHECK_THROWS_AS(make_plan(contradiction, kNoMachine), sg::UsageError);
    PlanRequest unknown = request("llama-3.1-7b", Method::lora, "gpu-24gb");
    CHECK_THROWS_WITH(make_plan(unknown, kNoMachine), Catch::Contains("did you mean llama-3.1-"));
    PlanRequest zero = request("llama-3.1-8b", Method::lora, "gpu-24gb");
    zero.workload.batch = 0;
    CHECK_THROWS_AS(make_plan(zero, kNoMachine), sg::UsageError);
}

TEST_CASE("to_json carries every key the run and preflight commands read", "[plan]") {
    const auto json = to_json(make_plan(request("qwen2.5-7b", Method::qlora, "gpu-24gb"), kNoMachine));
    for (const char* key : {"params_b", "weights_gb", "optimizer_gb", "gradients_gb", "activations_gb", "adapter_gb",
                            "overhead_gb", "train_peak_gb", "load_peak_gb", "peak_gb", "budget_gb", "headroom_gb",
                            "verdict", "nearest_anchor", "assumptions"})
        CHECK(json.contains(key));
    CHECK(json["verdict"] == "fits");
}

namespace {

Anchor anchor_of(const std::string& name, double params_b, bool moe, Method method, double observed_gb) {
    Anchor a;
    a.name = name;
    a.params_b = params_b;
    a.moe = moe;
    a.method = method;
    a.observed_gb = observed_gb;
    return a;
}

Estimate estimate_of(double weights, double activations) {
    Estimate e;
    e.weights_gb = weights;
    e.activations_gb = activations;
    e.peak_gb = weights + activations;
    return e;
}

}  // namespace

TEST_CASE("anchors compare like with like, and say nothing when none is comparable", "[plan][anchors]") {
    const std::vector<Anchor> anchors = {anchor_of("dense-qlora-70b", 70, false, Method::qlora, 40),
                                         anchor_of("dense-full-8b", 8, false, Method::full, 60)};
    const Estimate e = estimate_of(30, 10);
    CHECK(nearest_anchor(anchors, 70, false, Method::qlora, e).anchor->name == "dense-qlora-70b");
    CHECK_FALSE(nearest_anchor(anchors, 70, true, Method::qlora, e).anchor);   // MoE against dense
    CHECK_FALSE(nearest_anchor(anchors, 8, false, Method::qlora, e).anchor);   // QLoRA against full
    CHECK_FALSE(nearest_anchor(anchors, 70, false, Method::full, e).anchor);   // 70B against 8B
    CHECK_FALSE(nearest_anchor(anchors, 8, false, Method::lora, e).anchor);    // no LoRA anchor at all
}

TEST_CASE("an anchor over 20% away names the terms that make the difference", "[plan][anchors]") {
    Anchor a = anchor_of("card", 7, false, Method::lora, 30);
    a.terms = {{"weights", 15}, {"activations", 12}, {"overhead", 3}};
    const std::vector<Anchor> anchors = {a};
    const AnchorMatch close = nearest_anchor(anchors, 7, false, Method::lora, estimate_of(15, 13));
    CHECK_FALSE(close.far_off());
    CHECK(close.differences.empty());
    const AnchorMatch far = nearest_anchor(anchors, 7, false, Method::lora, estimate_of(15.5, 24));
    REQUIRE(far.far_off());
    REQUIRE(far.differences.size() == 3);
    CHECK(far.differences[0].term == "activations");
    CHECK(far.differences[0].delta_gb() == Approx(12));
    CHECK(far.differences[1].term == "overhead");  // 0 here, 3 observed
    CHECK(far.differences[2].term == "weights");
}

TEST_CASE("the Qwen-7B anchor on a 32 GB card says which terms a larger batch grows", "[plan][anchors]") {
    PlanRequest r = request("qwen2.5-7b", Method::lora, "gpu-32gb");
    r.workload.batch = 8;
    r.workload.seq = 4096;
    const Plan plan = make_plan(r, kNoMachine);
    REQUIRE(plan.anchor.anchor);
    CHECK(plan.anchor.anchor->name == "card32-qwen7b-lora");
    REQUIRE(plan.anchor.far_off());
    REQUIRE_FALSE(plan.anchor.differences.empty());
    CHECK(plan.anchor.differences[0].term == "activations");
    CHECK(format_plan(plan).find("the difference is in activations") != std::string::npos);
}

TEST_CASE("on unified memory the memory guard's floor is headroom a plan must keep", "[plan][platform]") {
    const PlanRequest r = request("llama-3.1-8b", Method::lora, "dgx-spark");
    const double peak = make_plan(r, spark_machine(120e9, 110e9, 5e9)).estimate.peak_gb;
    // Headroom 5 GB: above the 10% margin of a ~20 GB budget, under the 6.4 GB floor (5% of 128.5 GB).
    const Plan plan = make_plan(r, spark_machine((peak + 6 + 5) * 1e9, 100e9, 1e9));
    CHECK(plan.budget.guard_floor_gb == Approx(6.425));
    CHECK(plan.headroom_gb == Approx(5).margin(0.01));
    REQUIRE(plan.headroom_gb > plan.platform.tight_margin * plan.budget.budget_gb);
    CHECK(plan.verdict == Verdict::tight);
    CHECK(std::any_of(plan.warnings.begin(), plan.warnings.end(),
                      [](const std::string& w) { return w.find("eating the memory guard's floor") != std::string::npos; }));
    CHECK(make_plan(r, spark_machine((peak + 6 + 8) * 1e9, 100e9, 1e9)).verdict == Verdict::fits);
}
