#pragma once
// A trainer profile: how the ladder's knobs map onto one trainer's command line and environment.
// Profiles are TOML data in profiles/trainers/ (see sparkguard-profile(5)), not code.

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sg {

enum class Knob { batch_size, grad_accum, seq_len, method, model, output_dir, resume, save_steps, logging_steps, eval_steps };
inline constexpr std::array kAllKnobs = {Knob::batch_size, Knob::grad_accum,  Knob::seq_len,    Knob::method,
                                         Knob::model,      Knob::output_dir,  Knob::resume,     Knob::save_steps,
                                         Knob::logging_steps, Knob::eval_steps};
std::string_view to_string(Knob knob);
bool is_integer_knob(Knob knob);

struct KnobBinding {
    std::vector<std::string> flags;          // "--per_device_train_batch_size", as "--f v" or "--f=v"
    std::optional<std::string> placeholder;  // "batch_size" stands for "{batch_size}" inside any argument
    std::optional<std::string> env;          // an environment variable set for the trainer
    std::optional<long> default_value;       // what the trainer uses when the flag is absent
    bool bound() const { return !flags.empty() || placeholder || env; }
};

struct TrainerProfile {
    std::string name;
    std::string description;
    std::filesystem::path source;  // the TOML file it came from
    int priority = 0;              // among profiles whose detection matches, the highest wins
    std::vector<std::string> detect_flags;                 // any of these flags in the command
    std::vector<std::vector<std::string>> detect_commands; // or these words in a row ("trl sft")
    bool can_resume = true;
    std::string resume_note;       // why it cannot, for the report
    std::array<KnobBinding, kAllKnobs.size()> knobs;
    // QLoRA: boolean flags (alone or followed by true/false) and flags with a value; the first
    // switch present and true marks QLoRA, and the bf16-lora rung removes them all.
    std::vector<std::string> quant_switches;
    std::vector<std::string> quant_valued;
    std::vector<std::string> lora_switches;      // flags that mark a LoRA run ("--use_peft")
    std::vector<std::string> progress_patterns;  // regexes for training-step lines; empty: defaults

    const KnobBinding& knob(Knob k) const { return knobs[static_cast<size_t>(k)]; }
    KnobBinding& knob(Knob k) { return knobs[static_cast<size_t>(k)]; }
};

// Loads and validates one profile; unknown keys and wrong types throw UsageError with file:line:column.
TrainerProfile load_trainer_profile(const std::filesystem::path& path);

// Every profile in the profile directories (the first directory that has a name wins).
std::vector<TrainerProfile> load_trainer_profiles();

// The profile called `name`; UsageError listing the available ones when there is none.
TrainerProfile find_trainer_profile(std::string_view name);

// The best match for a command among `profiles`, or the one named "generic".
const TrainerProfile& detect_trainer_profile(const std::vector<TrainerProfile>& profiles,
                                             const std::vector<std::string>& argv);

}  // namespace sg
