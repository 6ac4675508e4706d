#include "ladder/checkpoints.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "util/files.hpp"
#include "util/parse.hpp"

namespace sg {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "trainer_state.json";
constexpr const char* kOriginalSuffix = ".sparkguard-orig";

Result<nlohmann::json> read_state(const fs::path& checkpoint) {
    auto text = read_file(checkpoint / kStateFile);
    if (!text) return text.error();
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) return make_error((checkpoint / kStateFile).string() + ": not a JSON object");
    return json;
}

bool same_path(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec);
}

// Written by this run (or named by the user's command)? `marker` is the file whose time counts.
bool allowed(const Checkpoint& checkpoint, const fs::path& marker, const CheckpointFilter& filter,
             std::vector<std::string>* notes) {
    if (!filter.written_since || (filter.also && same_path(checkpoint.path, *filter.also))) return true;
    std::error_code ec;
    const auto written = fs::last_write_time(marker, ec);
    if (!ec && written >= *filter.written_since) return true;
    if (notes) notes->push_back(checkpoint.path.string() + " was written before this run started: not a resume point");
    return false;
}

// OUTPUT_DIR/PREFIX<N>/ directories, highest N first.
std::vector<std::pair<fs::path, long>> numbered_dirs(const fs::path& output_dir, const std::string& prefix) {
    std::vector<std::pair<fs::path, long>> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || name.rfind(prefix, 0) != 0) continue;
        if (auto n = parse_int(name.substr(prefix.size())); n && *n >= 0) found.emplace_back(entry.path(), static_cast<long>(*n));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return found;
}

}  // namespace

std::optional<Checkpoint> newest_torchtune_checkpoint(const fs::path& output_dir, std::vector<std::string>* notes,
                                                      const CheckpointFilter& filter) {
    const fs::path state = output_dir / "recipe_state" / "recipe_state.pt";
    for (const auto& [path, epoch] : numbered_dirs(output_dir, "epoch_")) {
        const Checkpoint checkpoint{path, 0, epoch + 1};
        std::error_code e1, e2;
        const auto state_time = fs::last_write_time(state, e1);
        const auto epoch_time = fs::last_write_time(checkpoint.path, e2);
        if (e1 || e2 || state_time < epoch_time) {
            if (notes) notes->push_back(checkpoint.path.string() + " is incomplete (no recipe_state.pt written after it)");
            continue;
        }
        if (allowed(checkpoint, state, filter, notes)) return checkpoint;
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<Checkpoint> newest_complete_checkpoint(const fs::path& output_dir, std::vector<std::string>* notes,
                                                     const CheckpointFilter& filter) {
    for (const auto& [path, step] : numbered_dirs(output_dir, "checkpoint-")) {
        const Checkpoint checkpoint{path, step, std::nullopt};
        auto state = read_state(checkpoint.path);
        if (state && allowed(checkpoint, checkpoint.path / kStateFile, filter, notes)) return checkpoint;
        if (state) continue;
        if (notes) notes->push_back(checkpoint.path.string() + " is incomplete (" + state.error().message + "); taking an older one");
    }
    return std::nullopt;
}

Result<std::vector<std::string>> rewrite_trainer_state(const fs::path& checkpoint, const TrainerStateOverrides& overrides) {
    auto state = read_state(checkpoint);
    if (!state) return state.error();
    std::vector<std::string> changes;
    auto apply = [&](const char* field, const std::optional<long>& value) {
        if (!value) return;
        auto& json = *state;
        if (json.contains(field) && json[field].is_number_integer() && json[field].get<long>() == *value) return;
        std::string old = json.contains(field) ? json[field].dump() : "absent";
        json[field] = *value;
        changes.push_back(std::string(field) + " " + old + " -> " + std::to_string(*value));
    };
    apply("train_batch_size", overrides.train_batch_size);
    apply("save_steps", overrides.save_steps);
    apply("logging_steps", overrides.logging_steps);
    apply("eval_steps", overrides.eval_steps);
    if (changes.empty()) return changes;

    const fs::path file = checkpoint / kStateFile;
    const fs::path original = fs::path(file.string() + kOriginalSuffix);
    std::error_code ec;
    if (!fs::exists(original, ec)) {
        auto text = read_file(file);
        if (!text) return text.error();
        if (auto kept = write_file_atomic(original, *text); !kept) return kept.error();
    }
    if (auto written = write_file_atomic(file, state->dump(2) + "\n"); !written) return written.error();
    return changes;
}

}  // namespace sg
