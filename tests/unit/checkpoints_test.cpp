#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ladder/checkpoints.hpp"
#include "util/files.hpp"

using namespace sg;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("sg-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    static inline int counter = 0;
};

void make_checkpoint(const fs::path& dir, const std::string& state) {
    fs::create_directories(dir);
    if (!state.empty()) std::ofstream(dir / "trainer_state.json") << state;
}

}  // namespace

TEST_CASE("the newest complete checkpoint wins by step number, not by name", "[checkpoints]") {
    TempDir out;
    make_checkpoint(out.path / "checkpoint-9", R"({"global_step": 9})");
    make_checkpoint(out.path / "checkpoint-10", R"({"global_step": 10})");
    make_checkpoint(out.path / "checkpoint-12", "");            // crash before trainer_state.json
    make_checkpoint(out.path / "checkpoint-11", R"({"global_st)"); // torn write
    std::ofstream(out.path / "checkpoint-99") << "a file, not a checkpoint";
    std::vector<std::string> notes;
    auto newest = newest_complete_checkpoint(out.path, &notes);
    REQUIRE(newest);
    CHECK(newest->step == 10);
    CHECK(notes.size() == 2);
    CHECK_FALSE(newest_complete_checkpoint(out.path / "missing"));
}

TEST_CASE("trainer_state.json is rewritten to the relaunch's batch, keeping the original", "[checkpoints]") {
    TempDir out;
    const fs::path ckpt = out.path / "checkpoint-40";
    make_checkpoint(ckpt, R"({"global_step": 40, "train_batch_size": 8, "save_steps": 20, "logging_steps": 5})");
    auto changes = rewrite_trainer_state(ckpt, {4, 20, std::nullopt, std::nullopt});
    REQUIRE(changes);
    CHECK(*changes == std::vector<std::string>{"train_batch_size 8 -> 4"});
    auto state = nlohmann::json::parse(*read_file(ckpt / "trainer_state.json"));
    CHECK(state["train_batch_size"] == 4);
    CHECK(state["global_step"] == 40);
    auto original = nlohmann::json::parse(*read_file(ckpt / "trainer_state.json.sparkguard-orig"));
    CHECK(original["train_batch_size"] == 8);

    REQUIRE(rewrite_trainer_state(ckpt, {2, std::nullopt, std::nullopt, std::nullopt}));
    original = nlohmann::json::parse(*read_file(ckpt / "trainer_state.json.sparkguard-orig"));
    CHECK(original["train_batch_size"] == 8);  // the first original is kept
}
