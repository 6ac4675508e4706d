#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "ladder/knobs.hpp"
#include "ladder/trainer_profile.hpp"
#include "util/errors.hpp"

using namespace sg;
using Args = std::vector<std::string>;

namespace {

TrainerProfile profile(const char* name) { return find_trainer_profile(name); }

}  // namespace

TEST_CASE("hf profile reads knobs in both flag forms", "[knobs]") {
    auto hf = profile("hf");
    Args argv = {"python", "train.py", "--per_device_train_batch_size=4", "--gradient_accumulation_steps", "2",
                 "--max_seq_length", "2048", "--load_in_4bit", "--bnb_4bit_quant_type", "nf4",
                 "--output_dir", "out", "--model_name_or_path", "meta-llama/Llama-3.1-8B"};
    auto knobs = read_command_knobs(hf, argv);
    CHECK(knobs.config.batch_size == 4);
    CHECK(knobs.config.grad_accum == 2);
    CHECK(knobs.config.seq_len == 2048);
    CHECK(knobs.config.method == Method::qlora);
    CHECK(knobs.config.model == "meta-llama/Llama-3.1-8B");
    CHECK(knobs.output_dir == "out");
}

TEST_CASE("absent flags take the trainer's defaults; false switches are not QLoRA", "[knobs]") {
    auto knobs = read_command_knobs(profile("hf"), {"python", "t.py", "--load_in_4bit", "False", "--use_peft"});
    CHECK(knobs.config.batch_size == 8);
    CHECK(knobs.config.grad_accum == 1);
    CHECK_FALSE(knobs.config.seq_len);
    CHECK(knobs.config.method == Method::lora);
}

TEST_CASE("a knob flag given twice: the last one wins, as in argparse, and both are rewritten", "[knobs]") {
    Args argv = {"python", "t.py", "--per_device_train_batch_size", "4", "--per-device-train-batch-size=8"};
    auto knobs = read_command_knobs(profile("hf"), argv);
    CHECK(knobs.config.batch_size == 8);
    RenderRequest request{knobs.config, {}, {}, {}};
    request.config.batch_size = 2;
    CHECK(render_command(profile("hf"), argv, request).argv ==
          Args{"python", "t.py", "--per_device_train_batch_size", "2", "--per-device-train-batch-size=2"});
}

TEST_CASE("a knob that is not a number is an error naming its flag", "[knobs]") {
    CHECK_THROWS_WITH(read_command_knobs(profile("hf"), {"python", "t.py", "--max_seq_length", "long"}),
                      Catch::Contains("--max_seq_length") && Catch::Contains("long"));
}

TEST_CASE("rendering rewrites values in place, appends missing flags and drops 4-bit flags", "[knobs]") {
    auto hf = profile("hf");
    Args argv = {"python", "train.py", "--per_device_train_batch_size=4", "--max_seq_length", "2048",
                 "--load_in_4bit", "true", "--bnb_4bit_quant_type=nf4", "--use_bnb_nested_quant", "--output_dir", "out"};
    RenderRequest request;
    request.config = read_command_knobs(hf, argv).config;
    request.config.batch_size = 2;
    request.config.grad_accum = 2;
    request.config.seq_len = 1024;
    request.config.method = Method::lora;
    request.resume_from = "out/checkpoint-40";
    auto command = render_command(hf, argv, request);
    CHECK(command.argv == Args{"python", "train.py", "--per_device_train_batch_size=2", "--max_seq_length", "1024",
                               "--output_dir", "out", "--gradient_accumulation_steps", "2",
                               "--resume_from_checkpoint", "out/checkpoint-40"});
    CHECK(command.env.empty());
}

TEST_CASE("an unchanged configuration renders the command exactly as given", "[knobs]") {
    auto hf = profile("hf");
    Args argv = {"python", "train.py", "--resume_from_checkpoint", "True", "--output_dir", "o"};
    RenderRequest request;
    request.config = read_command_knobs(hf, argv).config;
    CHECK(render_command(hf, argv, request).argv == argv);
    request.resume_from = "o/checkpoint-9";
    CHECK(render_command(hf, argv, request).argv ==
          Args{"python", "train.py", "--resume_from_checkpoint", "o/checkpoint-9", "--output_dir", "o"});
}

TEST_CASE("generic profile fills placeholders and SPARKGUARD_ variables", "[knobs]") {
    auto generic = profile("generic");
    Args argv = {"python", "sft.py", "--bs={batch_size}", "--len", "{seq_len}"};
    RenderRequest request;
    request.config.batch_size = 4;
    request.config.seq_len = 1024;
    request.config.grad_accum = 2;
    request.config.method = Method::qlora;
    auto command = render_command(generic, argv, request);
    CHECK(command.argv == Args{"python", "sft.py", "--bs=4", "--len", "1024"});
    using Env = std::vector<std::pair<std::string, std::string>>;
    CHECK(command.env == Env{{"SPARKGUARD_BATCH_SIZE", "4"}, {"SPARKGUARD_GRAD_ACCUM", "2"},
                             {"SPARKGUARD_SEQ_LEN", "1024"}, {"SPARKGUARD_METHOD", "qlora"}});
    request.config.seq_len.reset();
    CHECK_THROWS_WITH(render_command(generic, argv, request), Catch::Contains("{seq_len}"));
}

TEST_CASE("profiles are detected from the command", "[knobs]") {
    auto profiles = load_trainer_profiles();
    CHECK(detect_trainer_profile(profiles, {"python", "run_clm.py", "--output_dir", "x"}).name == "hf");
    CHECK(detect_trainer_profile(profiles, {"trl", "sft", "--output_dir", "x"}).name == "trl");
    CHECK(detect_trainer_profile(profiles, {"/usr/local/bin/trl", "sft"}).name == "trl");
    CHECK(detect_trainer_profile(profiles, {"python", "my_unsloth.py"}).name == "generic");
}

TEST_CASE("a profile with a typo is rejected with file, line and column", "[knobs]") {
    namespace fs = std::filesystem;
    auto dir = fs::temp_directory_path() / ("sg-profile-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "typo.toml") << "name = \"x\"\n\n[knobs.batch_size]\nflag = [\"--bs\"]\n";
    CHECK_THROWS_WITH(load_trainer_profile(dir / "typo.toml"),
                      Catch::Contains("typo.toml:4:1") && Catch::Contains("unknown key 'flag'") &&
                          Catch::Contains("did you mean 'flags'"));
    std::ofstream(dir / "knob.toml") << "name = \"x\"\n[knobs.batchsize]\nflags = [\"--bs\"]\n";
    CHECK_THROWS_WITH(load_trainer_profile(dir / "knob.toml"), Catch::Contains("unknown knob 'batchsize'"));
    std::ofstream(dir / "regex.toml") << "name = \"x\"\n[progress]\npatterns = [\"iter (?<step>\\\\d+\"]\n";
    CHECK_THROWS_WITH(load_trainer_profile(dir / "regex.toml"),
                      Catch::Contains("regex.toml:3:13") && Catch::Contains("[progress] pattern"));
    std::ofstream(dir / "type.toml") << "name = \"x\"\n[knobs.batch_size]\nflags = \"--bs\"\n";
    CHECK_THROWS_WITH(load_trainer_profile(dir / "type.toml"),
                      Catch::Contains("type.toml:3:") && Catch::Contains("array of strings"));
    fs::remove_all(dir);
    CHECK_THROWS_WITH(find_trainer_profile("hff"), Catch::Contains("available: ") && Catch::Contains("hf"));
}
