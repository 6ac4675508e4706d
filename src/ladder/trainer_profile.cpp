#include "ladder/trainer_profile.hpp"

#include <algorithm>
#include <set>

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

namespace {

class ProfileReader {
public:
    explicit ProfileReader(fs::path path) : path_(std::move(path)), root_(parse_toml_file(path_)) {}

    TrainerProfile read() {
        reject_unknown_keys(path_, root_,
                            {"name", "description", "priority", "resume", "resume_note", "detect", "knobs",
                             "quantization", "lora", "progress"});
        TrainerProfile profile;
        profile.source = path_;
        profile.name = required_string(root_, "name");
        profile.description = optional_string(root_, "description").value_or("");
        profile.priority = static_cast<int>(optional_integer(root_, "priority").value_or(0));
        profile.can_resume = optional_bool(root_, "resume").value_or(true);
        profile.resume_note = optional_string(root_, "resume_note").value_or("");
        if (const toml::table* detect = subtable(root_, "detect")) {
            reject_unknown_keys(path_, *detect, {"flags", "commands"}, "[detect]");
            profile.detect_flags = strings(*detect, "flags");
            for (const auto& words : strings(*detect, "commands")) profile.detect_commands.push_back(split(words, ' '));
        }
        if (const toml::table* knobs = subtable(root_, "knobs")) read_knobs(*knobs, profile);
        if (const toml::table* quant = subtable(root_, "quantization")) {
            reject_unknown_keys(path_, *quant, {"switches", "valued"}, "[quantization]");
            profile.quant_switches = strings(*quant, "switches");
            profile.quant_valued = strings(*quant, "valued");
        }
        if (const toml::table* lora = subtable(root_, "lora")) {
            reject_unknown_keys(path_, *lora, {"switches"}, "[lora]");
            profile.lora_switches = strings(*lora, "switches");
        }
        if (const toml::table* progress = subtable(root_, "progress")) {
            reject_unknown_keys(path_, *progress, {"patterns"}, "[progress]");
            profile.progress_patterns = strings(*progress, "patterns");
            if (const toml::node* patterns = progress->get("patterns")) check_patterns(*patterns->as_array());
        }
        return profile;
    }

private:
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
            reject_unknown_keys(path_, *table, {"flags", "placeholder", "env", "default"}, context);
            KnobBinding& binding = profile.knob(*knob);
            binding.flags = strings(*table, "flags");
            binding.placeholder = optional_string(*table, "placeholder");
            binding.env = optional_string(*table, "env");
            binding.default_value = optional_integer(*table, "default");
            if (binding.default_value && !is_integer_knob(*knob))
                throw UsageError(where(path_, *table->get("default")), context + ": only numeric knobs take a default");
            for (const auto& flag : binding.flags)
                if (flag.rfind("-", 0) != 0)
                    throw UsageError(where(path_, *table->get("flags")), context + ": flag '" + flag + "' must start with '-'");
        }
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

bool mentions_flag(const std::vector<std::string>& argv, const std::string& flag) {
    return std::any_of(argv.begin(), argv.end(), [&](const std::string& arg) {
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
    const TrainerProfile* best = nullptr;
    const TrainerProfile* generic = nullptr;
    for (const auto& profile : profiles) {
        if (profile.name == "generic") generic = &profile;
        bool matches = std::any_of(profile.detect_commands.begin(), profile.detect_commands.end(),
                                   [&](const auto& words) { return contains_words(argv, words); }) ||
                       std::any_of(profile.detect_flags.begin(), profile.detect_flags.end(),
                                   [&](const auto& flag) { return mentions_flag(argv, flag); });
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
