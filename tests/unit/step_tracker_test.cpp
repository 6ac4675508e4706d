#include <catch2/catch.hpp>

#include "telemetry/step_tracker.hpp"

using namespace sg::telemetry;

namespace {

StepTracker fed(const std::vector<std::string>& lines) {
    StepTracker t;
    for (const auto& line : lines) t.feed(line);
    return t;
}

StepTracker with(const std::vector<StepPattern>& patterns) { return StepTracker(patterns); }

}  // namespace

TEST_CASE("a Hugging Face training bar gives the step and the total", "[steps]") {
    auto t = fed({"  5%|▌         | 50/1000 [00:10<03:10,  4.98it/s]"});
    CHECK(t.training_started());
    CHECK(t.last_step() == 50);
    CHECK(t.total_steps() == 1000);
    auto slow = fed({" 33%|███▎      | 10/30 [05:02<10:04, 30.21s/it]"});
    CHECK(slow.last_step() == 10);
    auto first = fed({"  0%|          | 0/30 [00:00<?, ?it/s]Traceback (most recent call last):"});
    CHECK(first.training_started());
    CHECK(first.last_step() == 0);
}

TEST_CASE("training bars with a training description count", "[steps]") {
    CHECK(fed({"Epoch 0:   6%|██      | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6]"}).last_step() == 32040);
    CHECK(fed({"steps:   0%|          | 0/1600 [00:00<?, ?it/s]"}).total_steps() == 1600);
    CHECK(fed({"Training Epoch: 1/3, step 10/36 completed (loss: 0.52):  33%|███▎   | 3/9 [03:17<06:31, 65.28s/it]"}).last_step() == 10);
}

TEST_CASE("data-loading bars are load phase, not training", "[steps]") {
    auto t = fed({
        "Loading checkpoint shards:  50%|█████     | 2/4 [00:05<00:05,  2.61s/it]",
        "Loading checkpoint shards: 100%|██████████| 4/4 [00:10<00:00,  2.50s/it]",
        "Map: 100%|██████████| 1000/1000 [00:01<00:00, 900.00 examples/s]",
        "Map (num_proc=16):  10%|█         | 100/1000 [00:00<00:04, 212.40 examples/s]",
        "Downloading shards: 100%|██████████| 30/30 [1:32:34<00:00, 185.16s/it]",
        "Generating train split: 1000 examples [00:00, 9000.12 examples/s]",
        "Fetching 4 files: 100%|██████████| 4/4 [00:00<00:00, 1.23it/s]",
        "  Gradient Accumulation steps = 4",
        "  Total optimization steps = 30",
        "Step 1: loading the tokenizer",
        "    optimizer.step()",
        "warmup_steps: 0.1",
    });
    CHECK_FALSE(t.training_started());
    CHECK_FALSE(t.last_step());
}

TEST_CASE("Hugging Face log dicts mark progress without a step number", "[steps]") {
    StepTracker t;
    t.feed("{'loss': 4.548, 'grad_norm': 6.786200523376465, 'learning_rate': 4e-05, 'epoch': 0.06}", 10.0);
    CHECK(t.training_started());
    CHECK_FALSE(t.last_step());
    CHECK(t.log_records() == 1);
    CHECK(t.last_change_time() == 10.0);
    t.feed("{'eval_loss': 1.2, 'eval_runtime': 3.4, 'epoch': 0.06}", 11.0);
    t.feed("{'train_runtime': 120.5, 'train_samples_per_second': 2.1, 'train_loss': 1.5, 'epoch': 1.0}", 12.0);
    CHECK(t.log_records() == 1);
    t.feed(R"({"loss": 4.41, "grad_norm": 7.09, "learning_rate": 3e-05, "epoch": 0.12})", 13.0);
    CHECK(t.log_records() == 2);
    CHECK(t.last_change_time() == 13.0);
}

TEST_CASE("step N/M, step with a loss, global_step, Epoch [e][n/m] and the training banner", "[steps]") {
    CHECK(fed({"Step 5/100 | loss 2.31 | lr 2e-4"}).total_steps() == 100);
    CHECK(fed({"step: 12, loss: 1.5"}).last_step() == 12);
    CHECK(fed({"train loss 1.93 at step 450"}).last_step() == 450);
    CHECK(fed({"global_step=123 loss=1.0"}).last_step() == 123);
    CHECK_FALSE(fed({"reduced_train_loss=2.590, global_step=3.2e+4"}).last_step());
    CHECK(fed({"Iter 10: Train loss 0.784, Learning Rate 2.913e-07, It/sec 0.037"}).last_step() == 10);
    CHECK(fed({"2021-11-06 09:53:33,805 - mmdet - INFO - Epoch [1][50/29317]\tlr: 1.978e-03"}).last_step() == 50);
    auto banner = fed({"[INFO|trainer.py:2078] 2024-06-01 16:22:16,125 >> ***** Running training *****"});
    CHECK(banner.training_started());
    CHECK_FALSE(banner.last_step());
}

TEST_CASE("a bar with another total (evaluation) does not move the training step", "[steps]") {
    StepTracker t;
    t.feed(" 10%|█         | 100/1000 [01:40<15:00,  1.00it/s]");
    t.feed(" 40%|████      | 20/50 [00:02<00:03, 10.00it/s]");
    CHECK(t.last_step() == 100);
    CHECK(t.total_steps() == 1000);
}

TEST_CASE("the change time moves only when the step changes", "[steps]") {
    StepTracker t;
    t.feed("  5%|▌         | 50/1000 [00:10<03:10,  4.98it/s]", 100.0);
    t.feed("  5%|▌         | 50/1000 [00:11<03:11,  4.90it/s]", 101.0);
    CHECK(t.last_change_time() == 100.0);
    t.feed("  5%|▌         | 51/1000 [00:12<03:10,  4.98it/s]", 102.0);
    CHECK(t.last_change_time() == 102.0);
    CHECK(t.last_step() == 51);
}

TEST_CASE("patterns are data: named groups, first groups, markers", "[steps]") {
    StepTracker named = with({{R"(it (?<total>\d+) of ... (?<step>\d+) done)", {}}});
    named.feed("it 300 of ... 7 done");
    CHECK(named.last_step() == 7);
    CHECK(named.total_steps() == 300);
    StepTracker positional = with({{R"(batch (\d+)/(\d+))", {}}});
    positional.feed("train batch 3/9");
    CHECK(positional.last_step() == 3);
    CHECK(positional.total_steps() == 9);
    StepTracker marker = with({{R"(^=> optimizer step)", {}}});
    marker.feed("=> optimizer step");
    CHECK(marker.training_started());
    CHECK(marker.log_records() == 1);
    StepTracker with_lookahead = with({{R"(step (?=\d)(\d+))", {}}});
    with_lookahead.feed("step 4");
    CHECK(with_lookahead.last_step() == 4);
}

TEST_CASE("the prefilter literal comes from the pattern or is derived from it", "[steps]") {
    // A wrong explicit literal hides every line from the regex: the literal really is the gate.
    StepTracker gated = with({{R"(step (\d+))", {"never-present"}}});
    gated.feed("step 4");
    CHECK_FALSE(gated.last_step());
    // Derived literals must not demand optional text ("s?", groups, alternations).
    StepTracker optional = with({{R"(^tick(?:s)? (\d+))", {}}, {R"((?:epoch|iter) (\d+))", {}}, {R"(xy?z (\d+))", {}}});
    optional.feed("tick 5");
    CHECK(optional.last_step() == 5);
    optional.feed("iter 6");
    CHECK(optional.last_step() == 6);
    optional.feed("xz 7");
    CHECK(optional.last_step() == 7);
}

TEST_CASE("bad patterns are rejected with the pattern named", "[steps]") {
    CHECK_THROWS_WITH(with({{"step (\\d+", {}}}), Catch::Contains("step (\\d+"));
    CHECK_THROWS_WITH(with({{"(?<epoch>\\d+)", {}}}), Catch::Contains("unknown group name 'epoch'"));
    CHECK_THROWS_WITH(with({{"@tqmd", {}}}), Catch::Contains("unknown built-in step pattern '@tqmd'"));
}

TEST_CASE("built-ins can be listed alongside regexes, in any order", "[steps]") {
    StepTracker t = with({{"@hf-log", {}}, {R"(iteration (?<step>\d+))", {}}});
    t.feed("  5%|▌         | 50/1000 [00:10<03:10,  4.98it/s]");
    CHECK_FALSE(t.training_started());  // @tqdm is not in this list
    t.feed("iteration 7 done");
    CHECK(t.last_step() == 7);
    t.feed("{'loss': 1.0, 'learning_rate': 1e-05, 'epoch': 0.1}");
    CHECK(t.log_records() == 1);
}
