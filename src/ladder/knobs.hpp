#pragma once
// Reading a trainer's knobs the way the trainer resolves them (its defaults, then its config file,
// then the command line's flags or key=value overrides, the last one winning), and writing a
// configuration back: in place where the command sets a knob, into a changed copy of the config
// file (RUN_DIR/attempt-N/) where the file does, as a new flag or override only where the profile
// says the trainer's parser takes one. The user's files are never modified, and rendering always
// starts from the user's original command, so relaunches never accumulate edits.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ladder/command_line.hpp"
#include "ladder/config_file.hpp"
#include "ladder/train_config.hpp"
#include "ladder/trainer_profile.hpp"

namespace sg {

// What the command says, as the trainer would resolve it.
struct CommandKnobs {
    TrainConfig config;  // batch, accumulation, length, method, model
    std::optional<std::string> output_dir;
    std::optional<long> save_steps;
    std::optional<long> logging_steps;
    std::optional<long> eval_steps;
    std::optional<bool> packing;
    std::optional<std::string> resume;       // what the user's own command resumes from
    std::optional<std::string> config_file;  // the config file the trainer reads
    std::map<std::string, std::string> from; // knob -> where its value came from ("cfg.yml: micro_batch_size")
    std::vector<std::string> notes;          // what sparkguard could not read, for the console and report
};

struct LaunchCommand {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // set on top of sparkguard's environment
    std::optional<std::filesystem::path> config_copy;      // the changed copy of the config, if any
};

struct RenderRequest {
    TrainConfig config;
    std::optional<std::string> resume_from;  // checkpoint directory to resume from
    std::optional<std::string> output_dir;   // for placeholder/environment knobs
    std::filesystem::path config_dir;        // where a changed copy of the config file goes (empty: not written)
};

class TrainerCommand {
public:
    // Throws UsageError naming the file (and line) for a config file that does not parse, and
    // the flag or key for a numeric knob that is not a number.
    TrainerCommand(const TrainerProfile& profile, std::vector<std::string> argv);

    const CommandKnobs& knobs() const { return knobs_; }
    const TrainerInvocation& trainer() const { return trainer_; }
    // Why a change of `knob` would not reach the trainer; empty when it would.
    std::string unreachable(Knob knob) const;
    // The command for one attempt (writes the config copy into request.config_dir when one is
    // needed). Throws UsageError when the command uses a placeholder whose value is unknown.
    LaunchCommand render(const RenderRequest& request) const;

private:
    struct Found {
        std::string value;
        bool null = false;
        bool in_argv = false;
        std::string where;  // "--micro-batch-size", "cfg.yml: micro_batch_size"
    };
    std::optional<Found> lookup(const std::vector<std::string>& keys, const std::vector<std::string>& flags) const;
    std::optional<Found> lookup_knob(Knob knob) const;
    std::optional<Found> lookup_argv(const std::vector<std::string>& keys, const std::vector<std::string>& flags) const;
    bool holds(const Condition& condition) const;
    std::optional<accounting::Method> method() const;
    std::string resolve(std::string text) const;
    void read_config();
    void read_knobs();

    TrainerProfile profile_;
    std::vector<std::string> argv_;
    TrainerInvocation trainer_;
    std::optional<size_t> config_arg_;      // argv index of the config file's path
    bool config_inline_ = false;            // written "--config=PATH"
    std::optional<ConfigFile> config_;
    bool total_batch_ = false;  // accumulation derives from a total batch the command sets
    CommandKnobs knobs_;
};

// Shorthands for callers that need one answer.
CommandKnobs read_command_knobs(const TrainerProfile& profile, const std::vector<std::string>& argv);
LaunchCommand render_command(const TrainerProfile& profile, const std::vector<std::string>& original_argv,
                             const RenderRequest& request);

}  // namespace sg
