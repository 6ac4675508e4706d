// Reading and writing knobs where each trainer keeps them: launchers seen through, config files
// copied and changed (never the user's), overrides rewritten in place, QLoRA switched off the way
// each trainer spells it, and honest answers when a change cannot reach the trainer.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ladder/command_line.hpp"
#include "ladder/config_file.hpp"
#include "ladder/knobs.hpp"
#include "ladder/trainer_profile.hpp"
#include "util/files.hpp"

using namespace sg;
namespace fs = std::filesystem;
using Args = std::vector<std::string>;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("sg-trainer-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    static inline int counter = 0;
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return (path / name).string();
    }
};

std::string slurp(const fs::path& path) { return read_file(path).value(); }

ConfigFile config_at(const fs::path& path) { return ConfigFile::load(path).value(); }

RenderRequest request_for(const TrainerCommand& command, const fs::path& dir) {
    return RenderRequest{command.knobs().config, std::nullopt, std::nullopt, dir};
}

}  // namespace

TEST_CASE("the trainer is found behind launchers and wrappers", "[knobs][launchers]") {
    auto at = [](Args argv) {
        auto where = locate_trainer(argv);
        return where.name() + (where.module ? " (module)" : "") + " @" + std::to_string(where.args_begin);
    };
    CHECK(at({"python", "train.py", "--x"}) == "train.py @2");
    CHECK(at({"/usr/bin/python3.11", "-u", "train.py"}) == "train.py @3");
    CHECK(at({"python3", "-m", "axolotl.cli.train", "cfg.yml"}) == "axolotl.cli.train (module) @3");
    CHECK(at({"env", "A=1", "B=2", "nice", "-n", "5", "nohup", "prlimit", "--as=1000", "axolotl", "train", "c.yml"}) ==
          "axolotl @10");
    CHECK(at({"taskset", "-c", "0-3", "numactl", "--membind=0", "tune", "run", "r"}) == "tune @6");
    CHECK(at({"accelerate", "launch", "--num_processes", "2", "--gradient_accumulation_steps", "2", "-m",
              "axolotl.cli.train", "c.yml"}) == "axolotl.cli.train (module) @8");
    CHECK(at({"accelerate", "launch", "--config_file", "fsdp.yaml", "trl/scripts/sft.py", "--a"}) == "sft.py @5");
    CHECK(at({"torchrun", "--nproc_per_node", "2", "train.py"}) == "train.py @4");
    CHECK(at({"deepspeed", "--num_gpus", "2", "run_clm.py", "--deepspeed", "ds.json"}) == "run_clm.py @4");
    CHECK(at({"python", "-m", "torch.distributed.launch", "--nproc_per_node", "8", "run_glue.py"}) == "run_glue.py @6");
    CHECK(at({"uv", "run", "--with", "trl", "train.py"}) == "train.py @5");
    CHECK(at({"timeout", "10h", "bash", "-x", "train.sh", "a"}) == "train.sh @5");
    CHECK(at({"bash", "-c", "python train.py"}) == "bash @1");
}

TEST_CASE("a launcher's own flags are never the trainer's", "[knobs][launchers]") {
    auto hf = find_trainer_profile("hf");
    Args argv = {"accelerate", "launch", "--gradient_accumulation_steps", "2", "train.py",
                 "--per_device_train_batch_size", "8", "--output_dir", "o"};
    TrainerCommand command(hf, argv);
    CHECK(command.knobs().config.grad_accum == 1);  // the trainer's default, not accelerate's 2
    RenderRequest request = request_for(command, {});
    request.config.batch_size = 4;
    request.config.grad_accum = 2;
    CHECK(command.render(request).argv ==
          Args{"accelerate", "launch", "--gradient_accumulation_steps", "2", "train.py", "--per_device_train_batch_size",
               "4", "--output_dir", "o", "--gradient_accumulation_steps", "2"});
}

TEST_CASE("axolotl: the YAML is read, a changed copy is written, overrides win and are rewritten", "[knobs][axolotl]") {
    TempDir tmp;
    const std::string yaml =
        "base_model: NousResearch/Llama-3.2-1B\nadapter: qlora\nload_in_4bit: true\nsequence_len: 2048\n"
        "sample_packing: true\nmicro_batch_size: 4\ngradient_accumulation_steps: 2\noutput_dir: ./outputs/q\n"
        "resume_from_checkpoint:\nlora_target_modules:\n  - q_proj\n  - v_proj\nspecial_tokens:\n  pad_token: \"<|end|>\"\n"
        "seed: \"42\"\n";
    const std::string cfg = tmp.write("qlora.yml", yaml);
    auto axolotl = find_trainer_profile("axolotl");
    Args argv = {"axolotl", "train", cfg, "--micro-batch-size", "8"};
    TrainerCommand command(axolotl, argv);
    const auto& knobs = command.knobs();
    CHECK(knobs.config.batch_size == 8);  // the override wins over the file's 4
    CHECK(knobs.config.grad_accum == 2);
    CHECK(knobs.config.seq_len == 2048);
    CHECK(knobs.config.method == Method::qlora);
    CHECK(knobs.packing == true);
    CHECK(knobs.output_dir == "./outputs/q");
    CHECK(knobs.config.model == "NousResearch/Llama-3.2-1B");
    CHECK_FALSE(knobs.resume);  // `resume_from_checkpoint:` is empty

    RenderRequest request = request_for(command, tmp.path / "attempt-2");
    request.config.batch_size = 4;
    request.config.grad_accum = 4;
    request.config.seq_len = 1024;
    request.config.method = Method::lora;
    request.resume_from = "./outputs/q/checkpoint-6";
    LaunchCommand launch = command.render(request);
    const fs::path copy = tmp.path / "attempt-2" / "qlora.yml";
    CHECK(launch.argv == Args{"axolotl", "train", copy.string(), "--micro-batch-size", "4"});
    CHECK(launch.config_copy == copy);
    CHECK(slurp(cfg) == yaml);  // the user's file is untouched
    ConfigFile changed = config_at(copy);
    CHECK(changed.get("gradient_accumulation_steps")->text == "4");
    CHECK(changed.get("sequence_len")->text == "1024");
    CHECK(changed.get("adapter")->text == "lora");
    CHECK(changed.get("load_in_4bit")->text == "false");
    CHECK(changed.get("resume_from_checkpoint")->text == "./outputs/q/checkpoint-6");
    CHECK(changed.get("micro_batch_size")->text == "4");  // untouched in the file: the override carries it
    CHECK(changed.get("special_tokens.pad_token")->text == "<|end|>");
    CHECK(changed.get("seed")->quoted);  // a quoted "42" stays a string
    CHECK(changed.contains("lora_target_modules"));
}

TEST_CASE("axolotl: with a total batch_size, halving the micro batch doubles accumulation by itself", "[knobs][axolotl]") {
    TempDir tmp;
    const std::string cfg = tmp.write("full.yml", "base_model: x\nmicro_batch_size: 4\nbatch_size: 16\nsequence_len: 512\n");
    TrainerCommand command(find_trainer_profile("axolotl"), {"axolotl", "train", cfg});
    CHECK(command.knobs().config.grad_accum == 4);
    REQUIRE(command.knobs().notes.size() == 1);  // said before the launch: versions disagree on it
    CHECK_THAT(command.knobs().notes[0], Catch::Contains("batch_size is a total batch") && Catch::Contains("gradient_accumulation_steps instead"));
    CHECK(command.unreachable(Knob::grad_accum).empty());
    RenderRequest request = request_for(command, tmp.path / "a");
    request.config.batch_size = 2;
    request.config.grad_accum = 8;
    command.render(request);
    ConfigFile changed = config_at(tmp.path / "a" / "full.yml");
    CHECK(changed.get("micro_batch_size")->text == "2");
    CHECK(changed.get("batch_size")->text == "16");
    CHECK_FALSE(changed.contains("gradient_accumulation_steps"));  // axolotl refuses both together
}

TEST_CASE("llamafactory: dotlist overrides, quantization_bit null, an explicit resume", "[knobs][llamafactory]") {
    TempDir tmp;
    const std::string cfg = tmp.write("q.yaml",
                                      "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: lora\n"
                                      "quantization_bit: 4\nquantization_method: bnb\ncutoff_len: 2048\n"
                                      "per_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"
                                      "output_dir: saves/q\noverwrite_output_dir: true\n");
    auto lf = find_trainer_profile("llamafactory");
    Args argv = {"llamafactory-cli", "train", cfg, "per_device_train_batch_size=4", "learning_rate=1e-5"};
    TrainerCommand command(lf, argv);
    CHECK(command.knobs().config.batch_size == 4);
    CHECK(command.knobs().config.method == Method::qlora);
    CHECK(command.knobs().config.seq_len == 2048);
    RenderRequest request = request_for(command, tmp.path / "a");
    request.config.batch_size = 2;
    request.config.grad_accum = 16;
    request.config.method = Method::lora;
    request.resume_from = "saves/q/checkpoint-10";
    LaunchCommand launch = command.render(request);
    const fs::path copy = tmp.path / "a" / "q.yaml";
    CHECK(launch.argv == Args{"llamafactory-cli", "train", copy.string(), "per_device_train_batch_size=2", "learning_rate=1e-5"});
    ConfigFile changed = config_at(copy);
    CHECK(changed.get("quantization_bit")->null);
    CHECK(changed.get("gradient_accumulation_steps")->text == "16");
    CHECK(changed.get("resume_from_checkpoint")->text == "saves/q/checkpoint-10");
    CHECK(changed.get("overwrite_output_dir")->text == "false");  // true deletes trainer_log.jsonl
    CHECK(TrainerCommand(lf, {"llamafactory-cli", "train", cfg, "finetuning_type=full"}).knobs().config.method == Method::full);
}

TEST_CASE("torchtune: components, optimizer_in_bwd, built-in configs, a boolean resume", "[knobs][torchtune]") {
    TempDir tmp;
    const std::string cfg = tmp.write(
        "q.yaml",
        "output_dir: /tmp/tt\nmodel:\n  _component_: torchtune.models.llama3_2.qlora_llama3_2_3b\n  lora_rank: 8\n"
        "tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 4096\n"
        "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n  output_dir: ${output_dir}\n"
        "batch_size: 4\ngradient_accumulation_steps: 2\nresume_from_checkpoint: False\ndataset:\n  packed: True\n");
    auto tune = find_trainer_profile("torchtune");
    Args argv = {"tune", "run", "lora_finetune_single_device", "--config", cfg, "batch_size=8"};
    TrainerCommand command(tune, argv);
    CHECK(command.knobs().config.batch_size == 8);
    CHECK(command.knobs().config.seq_len == 4096);
    CHECK(command.knobs().config.method == Method::qlora);
    CHECK(command.knobs().output_dir == "/tmp/tt");  // through ${output_dir}
    CHECK(command.knobs().packing == true);
    RenderRequest request = request_for(command, tmp.path / "a");
    request.config.method = Method::lora;
    request.config.batch_size = 4;
    request.config.grad_accum = 4;
    request.resume_from = "/tmp/tt/epoch_0";
    LaunchCommand launch = command.render(request);
    CHECK(launch.argv == Args{"tune", "run", "lora_finetune_single_device", "--config", (tmp.path / "a" / "q.yaml").string(),
                              "batch_size=4"});
    ConfigFile changed = config_at(tmp.path / "a" / "q.yaml");
    CHECK(changed.get("model._component_")->text == "torchtune.models.llama3_2.lora_llama3_2_3b");
    CHECK(changed.get("gradient_accumulation_steps")->text == "4");
    CHECK(changed.get("resume_from_checkpoint")->text == "true");

    const std::string full = tmp.write("f.yaml", "batch_size: 4\noptimizer_in_bwd: True\ngradient_accumulation_steps: 1\n");
    TrainerCommand locked(tune, {"tune", "run", "full_finetune_single_device", "--config", full});
    CHECK_THAT(locked.unreachable(Knob::grad_accum), Catch::Contains("optimizer_in_bwd") && Catch::Contains("refuses"));
    TrainerCommand unlocked(tune, {"tune", "run", "full_finetune_single_device", "--config", full, "optimizer_in_bwd=False"});
    CHECK(unlocked.unreachable(Knob::grad_accum).empty());

    TrainerCommand builtin(tune, {"tune", "run", "lora_finetune_single_device", "--config", "llama3_1/8B_lora_single_device"});
    CHECK_FALSE(builtin.knobs().config.batch_size);
    REQUIRE(builtin.knobs().notes.size() == 1);
    CHECK_THAT(builtin.knobs().notes[0], Catch::Contains("tune cp"));
}

TEST_CASE("trl: bf16 LoRA drops 4-bit loading and says bfloat16; no resume", "[knobs][trl]") {
    auto trl = find_trainer_profile("trl");
    CHECK_FALSE(trl.resume.supported);
    Args argv = {"trl", "sft", "--model_name_or_path", "m", "--use_peft", "--load_in_4bit", "--max_length", "2048"};
    TrainerCommand command(trl, argv);
    CHECK(command.knobs().config.method == Method::qlora);
    CHECK(command.knobs().config.batch_size == 8);
    RenderRequest request = request_for(command, {});
    request.config.method = Method::lora;
    CHECK(command.render(request).argv ==
          Args{"trl", "sft", "--model_name_or_path", "m", "--use_peft", "--max_length", "2048", "--dtype", "bfloat16"});
}

TEST_CASE("unsloth train: flags under other names than the YAML's keys, 4-bit on by default", "[knobs][unsloth]") {
    TempDir tmp;
    const std::string cfg = tmp.write("u.yaml", "model: unsloth/Qwen2.5-0.5B\ntraining:\n  batch_size: 2\n  max_seq_length: 2048\n");
    auto unsloth = find_trainer_profile("unsloth");
    TrainerCommand command(unsloth, {"unsloth", "train", "--config", cfg, "--batch-size", "4"});
    CHECK(command.knobs().config.batch_size == 4);
    CHECK(command.knobs().config.grad_accum == 4);
    CHECK(command.knobs().config.method == Method::qlora);
    RenderRequest request = request_for(command, tmp.path / "a");
    request.config.method = Method::lora;
    request.config.batch_size = 2;
    request.config.grad_accum = 8;
    LaunchCommand launch = command.render(request);
    CHECK(launch.argv == Args{"unsloth", "train", "--config", (tmp.path / "a" / "u.yaml").string(), "--batch-size", "2"});
    ConfigFile changed = config_at(tmp.path / "a" / "u.yaml");
    CHECK(changed.get("training.load_in_4bit")->text == "false");
    CHECK(changed.get("training.gradient_accumulation_steps")->text == "8");
}

TEST_CASE("honest rungs: a change that cannot reach the trainer says why", "[knobs][honest]") {
    TempDir tmp;
    // hf: the length is the script's own flag, never added where the command lacks it.
    TrainerCommand plain(find_trainer_profile("hf"), {"python", "train.py", "--output_dir", "o"});
    CHECK(plain.unreachable(Knob::batch_size).empty());
    CHECK_THAT(plain.unreachable(Knob::seq_len), Catch::Contains("--max_seq_length in the command"));

    // generic: an environment variable counts only when the script reads it.
    auto generic = find_trainer_profile("generic");
    const std::string reads = tmp.write("reads.py", "import os\nbs = int(os.environ['SPARKGUARD_BATCH_SIZE'])\n");
    const std::string ignores = tmp.write("ignores.sh", "#!/bin/sh\npython train.py --per_device_train_batch_size 8\n");
    CHECK(TrainerCommand(generic, {"python", reads}).unreachable(Knob::batch_size).empty());
    CHECK_THAT(TrainerCommand(generic, {"bash", ignores}).unreachable(Knob::batch_size),
               Catch::Contains("$SPARKGUARD_BATCH_SIZE") && Catch::Contains("ignores.sh has none"));
    CHECK(TrainerCommand(generic, {"python", ignores, "--bs", "{batch_size}"}).unreachable(Knob::batch_size).empty());
}

TEST_CASE("a broken trainer config is an error naming the file and line", "[knobs][config]") {
    TempDir tmp;
    const std::string cfg = tmp.write("bad.yml", "micro_batch_size: 2\nsequence_len: [1024\n");
    CHECK_THROWS_WITH(TrainerCommand(find_trainer_profile("axolotl"), {"axolotl", "train", cfg}),
                      Catch::Contains("bad.yml:3:") && Catch::Contains("not valid YAML"));
    const std::string nan = tmp.write("nan.yml", "micro_batch_size: two\n");
    CHECK_THROWS_WITH(TrainerCommand(find_trainer_profile("axolotl"), {"axolotl", "train", nan}),
                      Catch::Contains("nan.yml: micro_batch_size") && Catch::Contains("'two'"));
    const std::string json = tmp.write("args.json", "{\"per_device_train_batch_size\": 4, \"output_dir\": \"o\"");
    CHECK_THROWS_WITH(TrainerCommand(find_trainer_profile("hf"), {"python", "run_clm.py", json}),
                      Catch::Contains("args.json") && Catch::Contains("not valid JSON"));
}

TEST_CASE("hf: one JSON file of arguments is read and copied", "[knobs][hf]") {
    TempDir tmp;
    const std::string json = tmp.write("args.json", "{\"per_device_train_batch_size\": 8, \"block_size\": 1024, \"output_dir\": \"o\"}");
    TrainerCommand command(find_trainer_profile("hf"), {"python", "run_clm.py", json});
    CHECK(command.knobs().config.batch_size == 8);
    CHECK(command.knobs().config.seq_len == 1024);
    RenderRequest request = request_for(command, tmp.path / "a");
    request.config.batch_size = 4;
    request.config.grad_accum = 2;
    request.resume_from = "o/checkpoint-2";
    LaunchCommand launch = command.render(request);
    CHECK(launch.argv == Args{"python", "run_clm.py", (tmp.path / "a" / "args.json").string()});
    ConfigFile changed = config_at(tmp.path / "a" / "args.json");
    CHECK(changed.get("per_device_train_batch_size")->text == "4");
    CHECK(changed.get("gradient_accumulation_steps")->text == "2");
    CHECK(changed.get("resume_from_checkpoint")->text == "o/checkpoint-2");
}
