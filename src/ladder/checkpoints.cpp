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

}  // namespace

std::optional<Checkpoint> newest_complete_checkpoint(const fs::path& output_dir, std::vector<std::string>* notes) {
    std::vector<Checkpoint> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || name.rfind("checkpoint-", 0) != 0) continue;
        if (auto step = parse_int(name.substr(11)); step && *step >= 0) found.push_back({entry.path(), *step});
    }
    std::sort(found.begin(), found.end(), [](const Checkpoint& a, const Checkpoint& b) { return a.step > b.step; });
    for (const auto& checkpoint : found) {
        auto state = read_state(checkpoint.path);
        if (state) return checkpoint;
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
