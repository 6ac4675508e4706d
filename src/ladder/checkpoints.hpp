#pragma once
// Checkpoints in a trainer's layout: Hugging Face's OUTPUT_DIR/checkpoint-N/ (complete once its
// trainer_state.json is written) and torchtune's OUTPUT_DIR/epoch_N/ with recipe_state/; finding
// the newest complete one this run may resume from, and making a resume honour the new batch.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace sg {

struct Checkpoint {
    std::filesystem::path path;
    long step = 0;            // checkpoint-N: N; torchtune's epoch_N: 0 (its step is in a pickle)
    std::optional<long> epoch;  // torchtune: the epochs it completed
};

// Which checkpoints a run may resume from: those written since its first launch, and the one
// the user's own command resumed from. A checkpoint-20 left by last week's run is neither.
struct CheckpointFilter {
    std::optional<std::filesystem::file_time_type> written_since;
    std::optional<std::filesystem::path> also;
};

// The checkpoint-N with the highest N whose trainer_state.json is present and parses. Newer ones
// that are incomplete (cut short by the crash) or too old are passed over, each with a note saying why.
std::optional<Checkpoint> newest_complete_checkpoint(const std::filesystem::path& output_dir,
                                                     std::vector<std::string>* notes = nullptr,
                                                     const CheckpointFilter& filter = {});

// torchtune: the highest epoch_N, complete when recipe_state/recipe_state.pt was written after it.
std::optional<Checkpoint> newest_torchtune_checkpoint(const std::filesystem::path& output_dir,
                                                      std::vector<std::string>* notes = nullptr,
                                                      const CheckpointFilter& filter = {});

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
