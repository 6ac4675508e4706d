#pragma once
// Reading a trainer's knobs from its command line, and writing a configuration back into it.
// Rendering always starts from the user's original command, so relaunches never accumulate edits.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ladder/train_config.hpp"
#include "ladder/trainer_profile.hpp"

namespace sg {

// What the command line says (flags only; placeholders and environment knobs carry no value).
struct CommandKnobs {
    TrainConfig config;  // batch, accumulation, length (flag or profile default), method, model
    std::optional<std::string> output_dir;
    std::optional<long> save_steps;
    std::optional<long> logging_steps;
    std::optional<long> eval_steps;
};

// Throws UsageError for a knob flag given twice or a non-numeric value of a numeric knob.
CommandKnobs read_command_knobs(const TrainerProfile& profile, const std::vector<std::string>& argv);

struct LaunchCommand {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // set on top of sparkguard's environment
};

struct RenderRequest {
    TrainConfig config;
    std::optional<std::string> resume_from;  // checkpoint directory to resume from
    std::optional<std::string> output_dir;   // for placeholder/environment knobs
};

// The command for one attempt. Throws UsageError when the command uses a placeholder whose
// value is unknown ("{seq_len}" without --seq).
LaunchCommand render_command(const TrainerProfile& profile, const std::vector<std::string>& original_argv,
                             const RenderRequest& request);

// Does the knob have a way into this trainer (a flag, a placeholder the command uses, or an env var)?
bool knob_reaches_trainer(const TrainerProfile& profile, Knob knob, const std::vector<std::string>& argv);

}  // namespace sg
