#pragma once
// What this machine measured: one record per supervised attempt that had a plan (its inputs, the
// formula's estimate per term, the measured peaks, whether it died of OOM). A plan is corrected by
// the nearest measured runs of the same model family (same method first), and an OOM measured at a
// smaller configuration of the same model makes it does-not-fit. Pure: text in, values out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sg::accounting {

struct Plan;

struct HistoryRun {
    std::string time;
    std::string model;
    std::string family;
    std::string platform;
    std::string method;
    std::string weight_dtype;
    std::string optimizer;
    long long batch = 0;
    long long seq = 0;
    bool grad_ckpt = true;
    double estimated_peak_gb = 0;  // the formula's, uncorrected
    double measured_peak_gb = 0;   // 0 = nothing measured
    bool oom = false;
    std::optional<long> oom_step;
};

struct HistoryCorrection {
    int runs = 0;
    double ratio = 1;              // measured / estimated, averaged over the runs used
    HistoryRun nearest;
    std::optional<HistoryRun> oom;  // an OOM at a smaller configuration of this model
};

// One history line for an attempt run under `plan` (its configuration at that attempt).
// `measured` is the attempt's report.json "measured" object.
nlohmann::json history_entry(const Plan& plan, const nlohmann::json& measured, bool oom, std::optional<long> last_step,
                             const std::string& profile, const std::string& time);

struct HistoryFile {
    std::vector<nlohmann::json> entries;  // as written
    std::vector<HistoryRun> runs;         // the same, read
    std::vector<std::string> warnings;    // torn or malformed lines, skipped
};

// Reads history.jsonl text; a torn or malformed line is a warning and is skipped.
HistoryFile parse_history(std::string_view text, std::string_view file_name);

// The correction the runs give this plan; nullopt when none is comparable.
std::optional<HistoryCorrection> correction_for(const Plan& plan, const std::vector<HistoryRun>& runs);

// "corrected by 3 runs on this machine: +8% (nearest: 2026-12-01, llama qlora batch 1 x seq 2048, measured peak 9.1 GB)".
std::string describe(const HistoryCorrection& correction);

}  // namespace sg::accounting
