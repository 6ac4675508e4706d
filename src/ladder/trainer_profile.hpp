#pragma once
// A trainer profile: where one trainer keeps each knob the ladder turns (argv flags, key=value
// overrides, keys of its YAML/JSON config file, environment variables, {placeholders}), how it
// resolves them, how it says QLoRA, and how it resumes (DESIGN.md section 11). Profiles are TOML
// data in profiles/trainers/ (see sparkguard-profile(5)), not code.

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/workload.hpp"

namespace sg {

enum class Knob { batch_size, grad_accum, seq_len, packing, method, model, output_dir, resume, save_steps, logging_steps, eval_steps };
inline constexpr std::array kAllKnobs = {Knob::batch_size, Knob::grad_accum,    Knob::seq_len,    Knob::packing,
                                         Knob::method,     Knob::model,         Knob::output_dir, Knob::resume,
                                         Knob::save_steps, Knob::logging_steps, Knob::eval_steps};
std::string_view to_string(Knob knob);
bool is_integer_knob(Knob knob);

// True when the first of `keys` that is set (argv over file) equals / contains the text;
// `absent` also when none is set (the trainer's default).
struct Condition {
    std::vector<std::string> keys;
    std::optional<std::string> equals;  // compared as booleans (true/yes/on/1), integers, else text
    std::optional<std::string> contains;
    bool absent = false;
};

struct KnobBinding {
    std::vector<std::string> keys;           // config-file and override keys, dotted ("tokenizer.max_seq_len"),
                                             // or flags ("--batch-size") where the two are spelled apart
    std::vector<std::string> flags;          // argv flags, as "--f v" or "--f=v" (plus those derived from keys)
    std::vector<std::string> from_total;     // grad_accum: keys of a total batch (accumulation = total / batch)
    std::optional<std::string> placeholder;  // "batch_size" stands for "{batch_size}" inside any argument
    std::optional<std::string> env;          // an environment variable set for the trainer
    std::optional<std::string> default_value;  // what the trainer uses when nothing sets it
    bool add = false;  // the trainer's parser takes the flag or override even when the command lacks it
    std::vector<Condition> locked_when;  // the trainer refuses any change of this knob then
    bool bound() const { return !keys.empty() || !flags.empty() || placeholder || env; }
};

// A value as a trainer file or override writes it; nullopt value means "remove the key".
struct KnobEdit {
    enum class Op { set, remove, replace };
    std::vector<std::string> keys;  // the first one present is edited; `set` adds the first when none is
    Op op = Op::set;
    std::string value;              // set: the text; "null" writes a null
    std::string from, to;           // replace: a substring of the value
};

struct MethodRules {
    std::vector<Condition> full, qlora, lora;  // tried in this order
    std::optional<accounting::Method> otherwise;
    std::vector<KnobEdit> to_lora;             // what the bf16-lora rung changes
};

enum class ConfigLocation { none, positional, flag, json_arg };
enum class OverrideSyntax { flags, dotlist };

struct Syntax {
    ConfigLocation config = ConfigLocation::none;  // where the command names its config file
    std::string config_flag;                       // for ConfigLocation::flag ("--config")
    OverrideSyntax overrides = OverrideSyntax::flags;
    // Every key also reads as a flag spelled "underscores" (--key_name) and/or "dashes"
    // (--key-name); a new flag is written in the first spelling.
    std::vector<std::string> flag_spellings;
    bool bool_switches = false;     // booleans are --flag / --no-flag (click), not --flag VALUE
};

enum class CheckpointLayout { hf, torchtune };

struct ResumeRules {
    bool supported = true;
    std::string note;                // why not, for the report
    CheckpointLayout layout = CheckpointLayout::hf;
    std::vector<std::string> keys;   // where the resume point goes; empty: the resume knob's binding
    bool boolean = false;            // the trainer takes `true` and finds the checkpoint itself
    std::vector<KnobEdit> also;      // e.g. overwrite_output_dir: false (LLaMA-Factory)
    // A resume is checked by the epoch (group 1, counted from 1) of the first line this matches,
    // instead of the first step (torchtune's global step can restart at 0 on resume).
    std::string epoch_pattern;
};

struct TrainerProfile {
    std::string name;
    std::string description;
    std::filesystem::path source;  // the TOML file it came from
    int priority = 0;              // among profiles whose detection matches, the highest wins
    std::vector<std::string> detect_programs;              // the trainer's program name ("axolotl", "sft.py")
    std::vector<std::string> detect_modules;               // python -m MODULE
    std::vector<std::string> detect_flags;                 // any of these flags in the trainer's arguments
    std::vector<std::string> detect_flags_all;             // or all of these
    std::vector<std::vector<std::string>> detect_commands; // or these words in a row ("trl sft")
    Syntax syntax;
    std::array<KnobBinding, kAllKnobs.size()> knobs;
    MethodRules method;
    ResumeRules resume;
    std::vector<std::string> progress_patterns;  // regexes for training-step lines; empty: defaults

    const KnobBinding& knob(Knob k) const { return knobs[static_cast<size_t>(k)]; }
    KnobBinding& knob(Knob k) { return knobs[static_cast<size_t>(k)]; }
    // The argv flags that spell `key` under this profile's syntax.
    std::vector<std::string> flags_for_key(const std::string& key) const;
    // `flags`, then the flags of each of `keys`, without repeats.
    std::vector<std::string> flags_for_keys(const std::vector<std::string>& keys, const std::vector<std::string>& flags) const;
    std::vector<std::string> flags_for(Knob k) const;
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
