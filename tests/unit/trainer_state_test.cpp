#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ladder/checkpoints.hpp"
#include "util/files.hpp"

using namespace sg;
namespace fs = std::filesystem;

namespace {

struct StateDir {
    fs::path path = fs::temp_directory_path() / ("sg-state-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    StateDir() { fs::create_directories(path); }
    ~StateDir() { fs::remove_all(path); }
    static inline int counter = 0;
};

nlohmann::json state_of(const fs::path& file) { return nlohmann::json::parse(*read_file(file)); }

}  // namespace

TEST_CASE("the relaunch's cadence replaces a checkpoint's stale save, logging and eval steps", "[checkpoints]") {
    StateDir dir;
    const fs::path ckpt = dir.path / "checkpoint-30";
    fs::create_directories(ckpt);
    std::ofstream(ckpt / "trainer_state.json")
        << R"({"global_step": 30, "train_batch_size": 8, "save_steps": 10, "logging_steps": 5, "eval_steps": 15})";
    auto changes = rewrite_trainer_state(ckpt, {8, 20, 2, 40});
    REQUIRE(changes);
    CHECK(*changes == std::vector<std::string>{"save_steps 10 -> 20", "logging_steps 5 -> 2", "eval_steps 15 -> 40"});
    const auto state = state_of(ckpt / "trainer_state.json");
    CHECK(state["save_steps"] == 20);
    CHECK(state["logging_steps"] == 2);
    CHECK(state["eval_steps"] == 40);
    CHECK(state["train_batch_size"] == 8);
    CHECK(state["global_step"] == 30);
    const auto original = state_of(ckpt / "trainer_state.json.sparkguard-orig");
    CHECK((original["save_steps"] == 10 && original["logging_steps"] == 5 && original["eval_steps"] == 15));
}

TEST_CASE("a cadence the checkpoint lacks or holds as null is written; one the command lacks is left", "[checkpoints]") {
    StateDir dir;
    const fs::path ckpt = dir.path / "checkpoint-4";
    fs::create_directories(ckpt);
    std::ofstream(ckpt / "trainer_state.json") << R"({"global_step": 4, "save_steps": 4, "eval_steps": null})";
    auto changes = rewrite_trainer_state(ckpt, {std::nullopt, std::nullopt, 2, 8});
    REQUIRE(changes);
    CHECK(*changes == std::vector<std::string>{"logging_steps absent -> 2", "eval_steps null -> 8"});
    const auto state = state_of(ckpt / "trainer_state.json");
    CHECK(state["save_steps"] == 4);
    CHECK(state["logging_steps"] == 2);
    CHECK(state["eval_steps"] == 8);
    CHECK_FALSE(state.contains("train_batch_size"));
}
