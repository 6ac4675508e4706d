#include <catch2/catch.hpp>

#include "ladder/ladder.hpp"
#include "util/errors.hpp"

using namespace sg;

namespace {

LadderFacts all_knobs() {
    LadderFacts facts;
    facts.can_drop_caches = true;
    facts.seq_unreachable = facts.batch_unreachable = facts.grad_accum_unreachable = "";
    return facts;
}

TrainConfig qlora(long batch, long accum, long seq) {
    TrainConfig config;
    config.batch_size = batch;
    config.grad_accum = accum;
    config.seq_len = seq;
    config.method = Method::qlora;
    return config;
}

}  // namespace

TEST_CASE("the ladder walks its rungs in order, repeating the halving rungs to their floors", "[ladder]") {
    Ladder ladder(LadderSettings{});
    const LadderFacts facts = all_knobs();
    TrainConfig config = qlora(8, 2, 2048);
    std::vector<std::string> walk;
    while (true) {
        auto step = ladder.next(config, facts);
        if (std::holds_alternative<LadderExhausted>(step)) break;
        auto move = std::get<LadderMove>(step);
        CHECK(move.config.effective_batch() == 16);
        config = move.config;
        walk.push_back(std::string(to_string(move.rung)) + " " + std::to_string(*config.seq_len) + "x" +
                       std::to_string(*config.batch_size) + "x" + std::to_string(*config.grad_accum));
    }
    CHECK(walk == std::vector<std::string>{
                      "drop-caches 2048x8x2", "shorter-packing 1024x8x2", "shorter-packing 512x8x2",
                      "smaller-batch 512x4x4", "smaller-batch 512x2x8", "smaller-batch 512x1x16", "bf16-lora 512x1x16"});
    CHECK(config.method == Method::lora);
    CHECK(config.drop_caches);
}

TEST_CASE("after a death at a cgroup's or a scheduler's limit the ladder skips drop-caches", "[ladder]") {
    for (const std::string kind : {"cgroup-oom-kill", "monitor-kill"}) {
        Ladder ladder(LadderSettings{});
        LadderFacts facts = all_knobs();
        facts.last_oom_kind = kind;
        auto step = ladder.next(qlora(8, 1, 1024), facts);
        REQUIRE(std::holds_alternative<LadderMove>(step));
        const auto& move = std::get<LadderMove>(step);
        CHECK(move.rung == Rung::shorter_packing);
        REQUIRE(move.skipped.size() == 1);
        CHECK(move.skipped[0].rung == Rung::drop_caches);
        CHECK_THAT(move.skipped[0].why, Catch::Contains("cgroup's memory limit (" + kind + ")"));
    }
    LadderFacts global = all_knobs();
    global.last_oom_kind = "kernel-oom-kill";  // the host's pool ran out: its page cache is worth dropping
    CHECK(std::get<LadderMove>(Ladder(LadderSettings{}).next(qlora(8, 1, 1024), global)).rung == Rung::drop_caches);
}

TEST_CASE("rungs that cannot apply are skipped with their reason", "[ladder]") {
    Ladder ladder(LadderSettings{});
    LadderFacts facts = all_knobs();
    facts.can_drop_caches = false;
    facts.drop_caches_why_not = "not root";
    facts.seq_unreachable = "trainer profile 'hf' has no packing-length knob";
    TrainConfig config = qlora(1, 4, 1024);
    config.method = Method::lora;
    auto step = ladder.next(config, facts);
    REQUIRE(std::holds_alternative<LadderExhausted>(step));
    auto skipped = std::get<LadderExhausted>(step).skipped;
    REQUIRE(skipped.size() == 4);
    CHECK(skipped[0].why == "not root");
    CHECK_THAT(skipped[1].why, Catch::Contains("no packing-length knob"));
    CHECK_THAT(skipped[2].why, Catch::Contains("batch 1"));
    CHECK_THAT(skipped[3].why, Catch::Contains("not a QLoRA run"));
}

TEST_CASE("bf16-lora needs the bf16 original of a pre-quantised model and room for its weights", "[ladder]") {
    LadderFacts facts = all_knobs();
    facts.model_prequantized = true;
    TrainConfig config = qlora(1, 8, 512);
    config.model = "unsloth/llama-3-8b-bnb-4bit";
    LadderSettings only_bf16;
    only_bf16.order = {Rung::bf16_lora};

    auto no_original = Ladder(only_bf16).next(config, facts);
    REQUIRE(std::holds_alternative<LadderExhausted>(no_original));
    CHECK_THAT(std::get<LadderExhausted>(no_original).skipped[0].why, Catch::Contains("--bf16-model"));

    facts.bf16_model = "unsloth/llama-3-8b";
    auto swapped = Ladder(only_bf16).next(config, facts);
    REQUIRE(std::holds_alternative<LadderMove>(swapped));
    CHECK(std::get<LadderMove>(swapped).config.model == "unsloth/llama-3-8b");

    facts.bf16_weights_exceed_budget = "bf16 weights 140.0 GB exceed the budget 119.0 GB";
    auto too_big = Ladder(only_bf16).next(config, facts);
    REQUIRE(std::holds_alternative<LadderExhausted>(too_big));
    CHECK_THAT(std::get<LadderExhausted>(too_big).skipped[0].why, Catch::Contains("140.0 GB"));
}

TEST_CASE("smaller batch keeps the effective batch exactly, also for odd batches", "[ladder]") {
    TrainConfig config;
    config.batch_size = 6;
    config.grad_accum = 1;
    auto halved = halve_batch(config);
    CHECK(halved.batch_size == 3);
    CHECK(halved.grad_accum == 2);
    auto again = halve_batch(halved);
    CHECK(again.batch_size == 1);
    CHECK(again.grad_accum == 6);
    config.batch_size = 5;
    config.grad_accum = 3;
    CHECK(halve_batch(config).batch_size == 1);
    CHECK(halve_batch(config).grad_accum == 15);
}

TEST_CASE("shorter packing stays a multiple of 64 above the floor", "[ladder]") {
    CHECK(shorter_length(4096, 512, 64) == 2048);
    CHECK(shorter_length(1000, 256, 64) == 448);
    CHECK(shorter_length(1000, 512, 64) == 512);
}

TEST_CASE("ladder lists parse and reject unknown or repeated rungs", "[ladder]") {
    CHECK(parse_ladder("smaller-batch, drop-caches") == std::vector<Rung>{Rung::smaller_batch, Rung::drop_caches});
    CHECK_THROWS_WITH(parse_ladder("drop-caches,smaller-bach"), Catch::Contains("smaller-bach"));
    CHECK_THROWS_WITH(parse_ladder("drop-caches,drop-caches"), Catch::Contains("twice"));
}

TEST_CASE("a resumed ladder continues from its position", "[ladder]") {
    Ladder ladder(LadderSettings{}, 2);
    auto step = ladder.next(qlora(4, 1, 512), all_knobs());
    REQUIRE(std::holds_alternative<LadderMove>(step));
    CHECK(std::get<LadderMove>(step).rung == Rung::smaller_batch);
}
