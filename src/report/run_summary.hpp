#pragma once
// "A picture of the night": what a run directory says, reduced to what a person reads in ten
// seconds. Pure: built from RunInputs, printed by summary_text.hpp or as JSON.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_inputs.hpp"

namespace sg {

struct AttemptSummary {
    AttemptRecord record;
    std::optional<double> start, end;     // epoch seconds; end is the last sign of life when none was recorded
    bool end_recorded = false;
    std::optional<long long> resumed_at;  // the checkpoint's step this attempt resumed from
    std::optional<std::string> details;   // "stall-2.txt"
    std::optional<double> duration_s() const;
};

struct MemorySummary {
    std::optional<double> peak_used_gb;  // the pool in use (total - available) at its highest
    std::optional<int> peak_attempt;
    std::optional<double> peak_rss_gb;   // the trainer tree's resident memory at its highest
    std::optional<double> pool_total_gb;
    std::optional<double> estimate_gb;   // the pre-launch plan's peak (load or train, whichever is higher)
    std::optional<double> train_estimate_gb;
    std::optional<double> budget_gb;
    std::string verdict;                 // the plan's: fits | tight | does-not-fit; empty without a plan
};

struct TelemetrySummary {
    std::string source;  // "report.json" (the sampler's own summary) or "thermal.csv" (read back here)
    long long rows = 0;
    long long gpu_rows = 0;
    std::optional<double> peak_temp_c;
    std::optional<double> peak_temp_at;  // epoch seconds
    std::optional<double> mean_power_w, max_power_w;
    std::optional<double> cap_w;         // the power cap or the driver's limit
    std::optional<double> seconds_at_cap;
    long long throttle_episodes = 0;
    std::optional<double> seconds_throttled;
    std::string power_cap_message;       // the power-cap event's own words
};

// Under srun: one node's share, from its sparkguard node's thermal.csv.
struct NodeSummary {
    std::string host;
    std::optional<double> peak_pool_used_gb;
    std::optional<double> peak_rss_gb;  // the rank's tree on that node
    TelemetrySummary telemetry;
};

struct RunSummary {
    std::string run_dir;
    std::string outcome;
    std::optional<int> exit_code;
    std::string summary;  // report.json's sentence
    std::optional<double> start, end;
    bool end_recorded = false;
    int utc_offset_minutes = 0;  // the run's local time, from its own timestamps
    std::vector<AttemptSummary> attempts;
    std::vector<SkippedRung> skipped_at_end;
    std::optional<TrainConfig> final_config;
    std::string reproduce;
    MemorySummary memory;
    std::optional<TelemetrySummary> telemetry;
    std::vector<NodeSummary> nodes;
    std::vector<std::string> files;    // what is there to read next: train.log, stall-2.txt, ...
    std::vector<std::string> missing;  // what the report could not show, and why
    std::vector<std::string> warnings;
    std::optional<double> duration_s() const;
};

RunSummary summarize(const RunInputs& inputs);
nlohmann::json to_json(const RunSummary& summary);

// A number in a JSON object; nullopt when absent or of another type (report.json's optional parts).
std::optional<double> json_number(const nlohmann::json& object, const char* key);
// "2025-11-29 22:14:03" in the run's own offset.
std::string format_local(double epoch_s, int utc_offset_minutes, bool with_date = true);
// "UTC+01:00".
std::string format_utc_offset(int utc_offset_minutes);

}  // namespace sg
