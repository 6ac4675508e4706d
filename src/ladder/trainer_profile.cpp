#include "ladder/trainer_profile.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "ladder/command_line.hpp"
#include "telemetry/step_tracker.hpp"
#include "util/errors.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg {

namespace fs = std::filesystem;

std::string_view to_string(Knob knob) {
    switch (knob) {
        case Knob::batch_size: return "batch_size";
        case Knob::grad_accum: return "grad_accum";
        case Knob::seq_len: return "seq_len";
        case Knob::packing: return "packing";
        case Knob::method: return "method";
        case Knob::model: return "model";
        case Knob::output_dir: return "output_dir";
        case Knob::resume: return "resume";
        case Knob::save_steps: return "save_steps";
        case Knob::logging_steps: return "logging_steps";
        case Knob::eval_steps: return "eval_steps";
    }
    return "?";
}

bool is_integer_knob(Knob knob) {
    return knob == Knob::batch_size || knob == Knob::grad_accum || knob == Knob::seq_len ||
           knob == Knob::save_steps || knob == Knob::logging_steps || knob == Knob::eval_steps;
}

std::vector<std::string> TrainerProfile::flags_for_key(const std::string& key) const {
    std::vector<std::string> out;
    auto add = [&](std::string flag) {
        if (std::find(out.begin(), out.end(), flag) == out.end()) out.push_back(std::move(flag));
    };
    if (key.rfind("-", 0) == 0) return {key};  // a flag written among the keys
    std::string underscores = key, dashes = key;
    std::replace(underscores.begin(), underscores.end(), '-', '_');
    std::replace(dashes.begin(), dashes.end(), '_', '-');
    for (const auto& spelling : syntax.flag_spellings) add("--" + (spelling == "dashes" ? dashes : underscores));
    return out;
}

std::vector<std::string> TrainerProfile::flags_for_keys(const std::vector<std::string>& keys,
                                                        const std::vector<std::string>& flags) const {
    std::vector<std::string> out = flags;
    for (const auto& key : keys)
        for (auto& flag : flags_for_key(key))
            if (std::find(out.begin(), out.end(), flag) == out.end()) out.push_back(std::move(flag));
    return out;
}

std::vector<std::string> TrainerProfile::flags_for(Knob k) const { return flags_for_keys(knob(k).keys, knob(k).flags); }

namespace {

class ProfileReader {
public:
    explicit ProfileReader(fs::path path) : path_(std::move(path)), root_(parse_toml_file(path_)) {}

    TrainerProfile read() {
        reject_unknown_keys(path_, root_,
                            {"name", "description", "priority", "detect", "syntax", "knobs", "method", "resume", "progress"});
        TrainerProfile profile;
        profile.source = path_;
        profile.name = required_string(root_, "name");
        profile.description = optional_string(root_, "description").value_or("");
        profile.priority = static_cast<int>(optional_integer(root_, "priority").value_or(0));
        if (const toml::table* detect = subtable(root_, "detect")) {
            reject_unknown_keys(path_, *detect, {"programs", "modules", "flags", "flags_all", "commands"}, "[detect]");
            profile.detect_flags_all = strings(*detect, "flags_all");
            profile.detect_programs = strings(*detect, "programs");
            profile.detect_modules = strings(*detect, "modules");
            profile.detect_flags = strings(*detect, "flags");
            for (const auto& words : strings(*detect, "commands")) profile.detect_commands.push_back(split(words, ' '));
        }
        if (const toml::table* syntax = subtable(root_, "syntax")) read_syntax(*syntax, profile.syntax);
        if (const toml::table* knobs = subtable(root_, "knobs")) read_knobs(*knobs, profile);
        if (const toml::table* method = subtable(root_, "method")) read_method(*method, profile.method);
        if (const toml::table* resume = subtable(root_, "resume")) read_resume(*resume, profile.resume);
        if (const toml::table* progress = subtable(root_, "progress")) {
            reject_unknown_keys(path_, *progress, {"patterns"}, "[progress]");
            profile.progress_patterns = strings(*progress, "patterns");
            if (const toml::node* patterns = progress->get("patterns")) check_patterns(*patterns->as_array());
        }
        return profile;
    }

private:
    void read_syntax(const toml::table& table, Syntax& syntax) {
        reject_unknown_keys(path_, table, {"config", "config_flag", "overrides", "flags_from_keys", "bool_switches"}, "[syntax]");
        if (auto config = optional_string(table, "config")) {
            if (*config == "positional") syntax.config = ConfigLocation::positional;
            else if (*config == "flag") syntax.config = ConfigLocation::flag;
            else if (*config == "json-arg") syntax.config = ConfigLocation::json_arg;
            else throw UsageError(where(path_, *table.get("config")), "[syntax] config: expected positional, flag or json-arg");
        }
        syntax.config_flag = optional_string(table, "config_flag").value_or("");
        if (syntax.config == ConfigLocation::flag && syntax.config_flag.empty())
            throw UsageError(path_.string(), "[syntax] config = \"flag\" needs config_flag (\"--config\")");
        if (auto overrides = optional_string(table, "overrides")) {
            if (*overrides == "flags") syntax.overrides = OverrideSyntax::flags;
            else if (*overrides == "dotlist") syntax.overrides = OverrideSyntax::dotlist;
            else throw UsageError(where(path_, *table.get("overrides")), "[syntax] overrides: expected flags or dotlist");
        }
        for (const auto& spelling : strings(table, "flags_from_keys")) {
            if (spelling == "underscores" || spelling == "dashes") syntax.flag_spellings.push_back(spelling);
            else throw UsageError(where(path_, *table.get("flags_from_keys")), "[syntax] flags_from_keys: expected \"underscores\" and/or \"dashes\"");
        }
        syntax.bool_switches = optional_bool(table, "bool_switches").value_or(false);
    }

    void read_knobs(const toml::table& knobs, TrainerProfile& profile) {
        for (const auto& [key, node] : knobs) {
            auto knob = std::find_if(kAllKnobs.begin(), kAllKnobs.end(), [&](Knob k) { return to_string(k) == key.str(); });
            if (knob == kAllKnobs.end()) {
                std::vector<std::string_view> names;
                for (Knob k : kAllKnobs) names.push_back(to_string(k));
                throw UsageError(where(path_, node), "unknown knob '" + std::string(key.str()) + "' (knobs: " +
                                                         join({names.begin(), names.end()}, ", ") + ")");
            }
            const toml::table* table = node.as_table();
            if (!table) throw UsageError(where(path_, node), "[knobs." + std::string(key.str()) + "] must be a table");
            const std::string context = "[knobs." + std::string(key.str()) + "]";
            reject_unknown_keys(path_, *table, {"keys", "flags", "placeholder", "env", "default", "add", "locked_when", "from_total"},
                                context);
            KnobBinding& binding = profile.knob(*knob);
            binding.keys = strings(*table, "keys");
            binding.flags = strings(*table, "flags");
            binding.placeholder = optional_string(*table, "placeholder");
            binding.env = optional_string(*table, "env");
            binding.add = optional_bool(*table, "add").value_or(false);
            binding.from_total = strings(*table, "from_total");
            binding.locked_when = conditions(*table, "locked_when", context);
            if (const toml::node* value = table->get("default")) {
                binding.default_value = scalar_text(*value, context + " default");
                if (is_integer_knob(*knob) && !value->is_integer())
                    throw UsageError(where(path_, *value), context + ": default must be an integer");
            }
            for (const auto& flag : binding.flags)
                if (flag.rfind("-", 0) != 0)
                    throw UsageError(where(path_, *table->get("flags")), context + ": flag '" + flag + "' must start with '-'");
        }
    }

    void read_method(const toml::table& table, MethodRules& method) {
        reject_unknown_keys(path_, table, {"qlora", "lora", "full", "otherwise", "to_lora"}, "[method]");
        method.qlora = conditions(table, "qlora", "[method] qlora");
        method.lora = conditions(table, "lora", "[method] lora");
        method.full = conditions(table, "full", "[method] full");
        if (auto otherwise = optional_string(table, "otherwise")) {
            method.otherwise = accounting::parse_method(*otherwise);
            if (!method.otherwise) throw UsageError(where(path_, *table.get("otherwise")), "[method] otherwise: expected full, lora or qlora");
        }
        method.to_lora = edits(table, "to_lora", "[method] to_lora");
    }

    void read_resume(const toml::table& table, ResumeRules& resume) {
        reject_unknown_keys(path_, table, {"supported", "note", "layout", "keys", "boolean", "also", "epoch_pattern"},
                            "[resume]");
        resume.supported = optional_bool(table, "supported").value_or(true);
        resume.note = optional_string(table, "note").value_or("");
        if (auto layout = optional_string(table, "layout")) {
            if (*layout == "hf") resume.layout = CheckpointLayout::hf;
            else if (*layout == "torchtune") resume.layout = CheckpointLayout::torchtune;
            else throw UsageError(where(path_, *table.get("layout")), "[resume] layout: expected hf or torchtune");
        }
        resume.keys = strings(table, "keys");
        resume.boolean = optional_bool(table, "boolean").value_or(false);
        resume.also = edits(table, "also", "[resume] also");
        resume.epoch_pattern = optional_string(table, "epoch_pattern").value_or("");
        if (!resume.epoch_pattern.empty()) {
            try {
                std::regex check(resume.epoch_pattern);
                if (check.mark_count() < 1) throw std::regex_error(std::regex_constants::error_badbrace);
            } catch (const std::regex_error&) {
                throw UsageError(where(path_, *table.get("epoch_pattern")), "[resume] epoch_pattern: not a regex with a group for the epoch");
            }
        }
    }

    std::vector<Condition> conditions(const toml::table& table, std::string_view key, const std::string& context) {
        std::vector<Condition> out;
        for (const toml::table* entry : tables(table, key)) {
            reject_unknown_keys(path_, *entry, {"keys", "equals", "contains", "absent"}, context);
            Condition c;
            c.keys = strings(*entry, "keys");
            if (c.keys.empty()) throw UsageError(where(path_, *entry), context + ": each condition needs keys");
            if (const toml::node* v = entry->get("equals")) c.equals = scalar_text(*v, context);
            c.contains = optional_string(*entry, "contains");
            c.absent = optional_bool(*entry, "absent").value_or(false);
            out.push_back(std::move(c));
        }
        return out;
    }

    std::vector<KnobEdit> edits(const toml::table& table, std::string_view key, const std::string& context) {
        std::vector<KnobEdit> out;
        for (const toml::table* entry : tables(table, key)) {
            reject_unknown_keys(path_, *entry, {"keys", "set", "remove", "replace"}, context);
            KnobEdit e;
            e.keys = strings(*entry, "keys");
            if (e.keys.empty()) throw UsageError(where(path_, *entry), context + ": each edit needs keys");
            if (const toml::node* v = entry->get("set")) {
                e.op = KnobEdit::Op::set;
                e.value = scalar_text(*v, context);
            } else if (optional_bool(*entry, "remove").value_or(false)) {
                e.op = KnobEdit::Op::remove;
            } else if (auto pair = strings(*entry, "replace"); pair.size() == 2) {
                e.op = KnobEdit::Op::replace;
                e.from = pair[0];
                e.to = pair[1];
            } else {
                throw UsageError(where(path_, *entry), context + ": each edit needs set = VALUE, remove = true or replace = [FROM, TO]");
            }
            out.push_back(std::move(e));
        }
        return out;
    }

    std::vector<const toml::table*> tables(const toml::table& table, std::string_view key) {
        std::vector<const toml::table*> out;
        const toml::node* node = table.get(key);
        if (!node) return out;
        const toml::array* array = node->as_array();
        if (!array) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be an array of tables");
        for (const auto& element : *array) {
            if (!element.is_table()) throw UsageError(where(path_, element), "'" + std::string(key) + "' must hold only tables");
            out.push_back(element.as_table());
        }
        return out;
    }

    // An integer, boolean or string as the text a trainer would read.
    std::string scalar_text(const toml::node& node, const std::string& context) {
        if (node.is_string()) return *node.value<std::string>();
        if (node.is_integer()) return std::to_string(*node.value<int64_t>());
        if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
        throw UsageError(where(path_, node), context + ": expected a string, an integer or true/false");
    }

    // A pattern that would not compile is the profile's error, not a crash later.
    void check_patterns(const toml::array& patterns) {
        for (const auto& node : patterns) {
            try {
                telemetry::StepTracker({telemetry::StepPattern{*node.value<std::string>(), {}}});
            } catch (const std::exception& e) {
                throw UsageError(where(path_, node), std::string("[progress] pattern: ") + e.what());
            }
        }
    }

    const toml::table* subtable(const toml::table& table, std::string_view key) {
        const toml::node* node = table.get(key);
        if (!node) return nullptr;
        if (!node->is_table()) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be a table");
        return node->as_table();
    }

    std::string required_string(const toml::table& table, std::string_view key) {
        auto value = optional_string(table, key);
        if (!value) throw UsageError(path_.string(), "missing required key '" + std::string(key) + "'");
        return *value;
    }

    std::optional<std::string> optional_string(const toml::table& table, std::string_view key) {
        const toml::node* node = table.get(key);
        if (!node) return std::nullopt;
        if (!node->is_string()) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be a string");
        return node->value<std::string>();
    }

    std::optional<long> optional_integer(const toml::table& table, std::string_view key) {
        const toml::node* node = table.get(key);
        if (!node) return std::nullopt;
        if (!node->is_integer()) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be an integer");
        return static_cast<long>(*node->value<int64_t>());
    }

    std::optional<bool> optional_bool(const toml::table& table, std::string_view key) {
        const toml::node* node = table.get(key);
        if (!node) return std::nullopt;
        if (!node->is_boolean()) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be true or false");
        return node->value<bool>();
    }

    std::vector<std::string> strings(const toml::table& table, std::string_view key) {
        const toml::node* node = table.get(key);
        if (!node) return {};
        const toml::array* array = node->as_array();
        if (!array) throw UsageError(where(path_, *node), "'" + std::string(key) + "' must be an array of strings");
        std::vector<std::string> out;
        for (const auto& element : *array) {
            if (!element.is_string())
                throw UsageError(where(path_, element), "'" + std::string(key) + "' must hold only strings");
            out.push_back(*element.value<std::string>());
        }
        return out;
    }

    fs::path path_;
    toml::table root_;
};

bool contains_words(const std::vector<std::string>& argv, const std::vector<std::string>& words) {
    if (words.empty() || words.size() > argv.size()) return false;
    for (size_t i = 0; i + words.size() <= argv.size(); ++i) {
        bool match = true;
        for (size_t j = 0; j < words.size() && match; ++j)
            match = fs::path(argv[i + j]).filename() == words[j];
        if (match) return true;
    }
    return false;
}

bool mentions_flag(const std::vector<std::string>& args, const std::string& flag) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
        return arg == flag || arg.rfind(flag + "=", 0) == 0;
    });
}

}  // namespace

TrainerProfile load_trainer_profile(const fs::path& path) { return ProfileReader(path).read(); }

std::vector<TrainerProfile> load_trainer_profiles() {
    std::vector<TrainerProfile> profiles;
    std::set<std::string> seen_files;
    for (const auto& dir : profile_dirs()) {
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& entry : fs::directory_iterator(dir / "trainers", ec))
            if (entry.path().extension() == ".toml") files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const auto& file : files)
            if (seen_files.insert(file.filename().string()).second) profiles.push_back(load_trainer_profile(file));
    }
    return profiles;
}

TrainerProfile find_trainer_profile(std::string_view name) {
    std::vector<std::string> names;
    for (auto& profile : load_trainer_profiles()) {
        if (profile.name == name) return profile;
        names.push_back(profile.name);
    }
    throw UsageError("--profile " + std::string(name),
                     "no such trainer profile (available: " + (names.empty() ? "none found" : join(names, ", ")) + ")");
}

const TrainerProfile& detect_trainer_profile(const std::vector<TrainerProfile>& profiles,
                                             const std::vector<std::string>& argv) {
    const TrainerInvocation trainer = locate_trainer(argv);
    const std::vector<std::string> args = trainer_args(argv, trainer);
    const std::string program = trainer.name();
    auto listed = [](const std::vector<std::string>& names, const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    const TrainerProfile* best = nullptr;
    const TrainerProfile* generic = nullptr;
    for (const auto& profile : profiles) {
        if (profile.name == "generic") generic = &profile;
        bool matches = (trainer.module ? listed(profile.detect_modules, program) : listed(profile.detect_programs, program)) ||
                       std::any_of(profile.detect_commands.begin(), profile.detect_commands.end(),
                                   [&](const auto& words) { return contains_words(argv, words); }) ||
                       std::any_of(profile.detect_flags.begin(), profile.detect_flags.end(),
                                   [&](const auto& flag) { return mentions_flag(args, flag); }) ||
                       (!profile.detect_flags_all.empty() &&
                        std::all_of(profile.detect_flags_all.begin(), profile.detect_flags_all.end(),
                                    [&](const auto& flag) { return mentions_flag(args, flag); }));
        if (matches && (!best || profile.priority > best->priority)) best = &profile;
    }
    if (best) return *best;
    if (generic) return *generic;
    throw UsageError("trainer profiles", "no 'generic' trainer profile found in " + join([] {
        std::vector<std::string> dirs;
        for (const auto& d : profile_dirs()) dirs.push_back(d.string());
        return dirs;
    }(), ", "));
}

}  // namespace sg
