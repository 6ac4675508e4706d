// Every real config and command in tests/data/trainers/manifest.json (collected from the trainers'
// own repositories, cited there) read as the trainer itself resolves it.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "ladder/knobs.hpp"
#include "ladder/trainer_profile.hpp"

using namespace sg;
using nlohmann::json;

namespace {

const std::string kData = std::string(SPARKGUARD_TEST_DATA) + "/trainers/";

json manifest() {
    std::ifstream in(kData + "manifest.json");
    return json::parse(in);
}

std::vector<std::string> argv_of(const json& c, const std::string& config_path) {
    std::vector<std::string> argv;
    for (const auto& word : c["command"]) {
        std::string arg = word.get<std::string>();
        if (auto at = arg.find("{config}"); at != std::string::npos) arg.replace(at, 8, config_path);
        argv.push_back(arg);
    }
    return argv;
}

// The profiles that may read each trainer's commands.
const std::map<std::string, std::vector<std::string>> kProfiles = {
    {"axolotl", {"axolotl"}},       {"llamafactory", {"llamafactory"}}, {"torchtune", {"torchtune"}},
    {"trl", {"trl", "trl-0.7", "hf"}}, {"unsloth", {"unsloth-cli", "unsloth"}}, {"hf", {"hf"}},
};

int unknown = 0;  // values the trainer resolves from defaults sparkguard does not know

void check_case(const json& c, const std::vector<std::string>& argv) {
    const auto profiles = load_trainer_profiles();
    const TrainerProfile& profile = detect_trainer_profile(profiles, argv);
    INFO("case " << c["id"].get<std::string>() << " (" << c["source"].get<std::string>() << "), profile " << profile.name);
    const auto& allowed = kProfiles.at(c["trainer"].get<std::string>());
    const bool right_profile = std::find(allowed.begin(), allowed.end(), profile.name) != allowed.end();
    CHECK(right_profile);
    if (!right_profile) return;
    const CommandKnobs knobs = read_command_knobs(profile, argv);
    if (c.contains("launch_fails")) return;  // a documented command the trainer itself rejects (why: its text)
    const json& expect = c["expect"];
    const json defaults = c.value("defaults_used", json::object());
    // sparkguard may know less than the trainer (a default buried in a dataset builder), never
    // something else: an unknown value must be one the trainer takes from its own defaults.
    auto same = [&](const char* field, const std::optional<long>& got) {
        INFO(field);
        if (!got && !expect[field].is_null()) {
            CHECK(defaults.contains(field));
            ++unknown;
        } else if (expect[field].is_null()) {
            CHECK_FALSE(got);
        } else {
            CHECK(got == expect[field].get<long>());
        }
    };
    same("batch_size", knobs.config.batch_size);
    same("grad_accum", knobs.config.grad_accum);
    same("seq_len", knobs.config.seq_len);
    if (knobs.config.method) CHECK(knobs.config.method == accounting::parse_method(expect["method"].get<std::string>()));
    else ++unknown;
    if (!expect["output_dir"].is_null()) CHECK(knobs.output_dir == expect["output_dir"].get<std::string>());
    if (knobs.packing && !expect["packing"].is_null()) CHECK(*knobs.packing == expect["packing"].get<bool>());
    const std::string resume = expect["resume"].get<std::string>();
    if (resume == "ignored") CHECK_FALSE((profile.resume.supported && profile.name != "hf"));
    if (resume == "explicit-path") CHECK(knobs.resume);
}

}  // namespace

TEST_CASE("real trainer configs and commands read as the trainer resolves them", "[knobs][trainers]") {
    const json cases = manifest();
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        const std::string config = c["config"].is_null() ? "" : kData + c["config"].get<std::string>();
        std::vector<std::string> argv = argv_of(c, config);
        const bool named_by_file = std::any_of(c["command"].begin(), c["command"].end(),
                                               [](const json& w) { return w.get<std::string>().find("{config}") != std::string::npos; });
        if (!config.empty() && !named_by_file) {
            // A built-in config name (torchtune): sparkguard says it cannot read it; `tune cp` to a
            // file is the fix, and then the values are read.
            const auto profiles = load_trainer_profiles();
            const CommandKnobs unread = read_command_knobs(detect_trainer_profile(profiles, argv), argv);
            INFO("case " << c["id"].get<std::string>());
            CHECK_FALSE(unread.notes.empty());
            auto flag = std::find(argv.begin(), argv.end(), "--config");
            REQUIRE(flag != argv.end());
            *(flag + 1) = config;
        }
        check_case(c, argv);
    }
    WARN(unknown << " values across " << cases.size() << " cases are trainer defaults sparkguard does not know");
    CHECK(unknown <= 10);
}
