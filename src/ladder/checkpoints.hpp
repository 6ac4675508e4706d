#pragma once
// Hugging Face style checkpoints (OUTPUT_DIR/checkpoint-N/trainer_state.json): finding the newest
// complete one, and making a resume honour the ladder's new batch.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace sg {

struct Checkpoint {
    std::filesystem::path path;
    long step = 0;
};

// The checkpoint-N with the highest N whose trainer_state.json is present and parses. Newer ones
// that are incomplete (cut short by the crash) are passed over, each with a note saying why.
std::optional<Checkpoint> newest_complete_checkpoint(const std::filesystem::path& output_dir,
                                                     std::vector<std::string>* notes = nullptr);

// Values the relaunch runs with. Since late 2023 the Hugging Face Trainer restores these from
// trainer_state.json over the command line, so a smaller-batch resume would silently keep the
// old batch unless the file says the new one.
struct TrainerStateOverrides {
    std::optional<long> train_batch_size;
    std::optional<long> save_steps;
    std::optional<long> logging_steps;
    std::optional<long> eval_steps;
};

// Rewrites the fields that differ (atomically), keeping the first original beside it as
// trainer_state.json.sparkguard-orig. Returns "field old -> new" for each change.
Result<std::vector<std::string>> rewrite_trainer_state(const std::filesystem::path& checkpoint,
                                                       const TrainerStateOverrides& overrides);

}  // namespace sg
