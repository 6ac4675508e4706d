#pragma once
// report.json: what happened to a run, attempt by attempt, and how to reproduce where it ended.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/ladder.hpp"
#include "ladder/train_config.hpp"

namespace sg {

struct AttemptRecord {
    int n = 0;
    std::optional<Rung> rung;  // the rung that produced this attempt's configuration
    TrainConfig config;
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // SPARKGUARD_* and other additions
    std::string outcome = "running";  // running | succeeded | oom | failed | interrupted | stalled
    std::optional<int> exit_code;
    std::optional<std::string> oom_kind;
    std::optional<std::string> phase;       // load | train
    std::optional<std::string> evidence;    // the deciding line
    std::optional<std::string> confidence;  // certain | probable
    std::optional<std::string> node;        // under srun: the node whose task ended first
    std::optional<std::string> rank;        // and that task's number(s), as srun gave them ("1", "0-1")
    std::string started;
    std::string ended;
    std::optional<std::string> resumed_from;      // the checkpoint it resumed from (checked against its first step)
    std::optional<std::string> resume_requested;  // pointed at a checkpoint, but it restarted instead
    std::optional<long> last_step;
    std::vector<SkippedRung> skipped_rungs;  // passed over on the way to this attempt's rung
    std::vector<std::string> notes;          // resume notes, trainer_state rewrites, ...
    nlohmann::json measured = nlohmann::json::object();  // peak memory and other readings
};

struct RunReport {
    std::string outcome = "running";  // running | succeeded | failed | oom-exhausted | blocked | interrupted | stalled
    std::optional<int> exit_code;
    std::string profile;
    std::vector<std::string> command;  // as the user gave it
    std::map<std::string, std::string> config_sources;  // knob -> where its starting value came from
    std::string started;
    std::string ended;
    std::vector<AttemptRecord> attempts;
    std::vector<SkippedRung> skipped_at_end;  // why the ladder had nothing left, when it ran out
    std::optional<TrainConfig> final_config;
    std::string reproduce;  // a shell command line that runs the final configuration directly
    std::string summary;    // one sentence: what happened and, when it failed, what is left
    nlohmann::json plan;    // the pre-launch estimate, when there was one
    nlohmann::json telemetry;  // thermal.csv summed up: peak temperature, power, time at the cap
    nlohmann::json nodes;      // under srun: {host: its nodes/<host>/thermal.csv summed up}; null otherwise
};

nlohmann::json to_json(const AttemptRecord& attempt);
nlohmann::json to_json(const RunReport& report);
// Throws UsageError naming the field when the JSON does not have the shape to_json writes.
RunReport report_from_json(const nlohmann::json& json);

// "SPARKGUARD_BATCH_SIZE=4 python train.py --per_device_train_batch_size 4", quoted for sh.
std::string reproduce_line(const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace sg
