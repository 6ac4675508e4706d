#pragma once
// The options of `sparkguard run`, as the command line gave them and as state.json keeps them.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "accounting/plan.hpp"
#include "ladder/ladder.hpp"
#include "ladder/train_config.hpp"
#include "oom/memory_guard.hpp"
#include "supervise/notifier.hpp"

namespace sg {

struct RunOptions {
    std::vector<std::string> command;
    std::optional<std::string> profile;            // trainer profile name; detected when absent
    std::optional<std::filesystem::path> run_dir;  // default runs/<date>-<slug>/
    bool overwrite = false;                        // --overwrite: move an earlier run in run_dir aside
    LadderSettings ladder;
    int max_attempts = 10;
    double grace_seconds = 30;
    double stall_timeout = 30 * 60;  // no output and no new step for this long is a stall; 0: never
    bool relaunch_on_hang = false;   // --on-hang relaunch: resume once more instead of stopping
    double tick_seconds = 1;
    bool quiet = false;  // no status line, only warnings and errors
    double thermal_interval = 30;  // seconds between thermal.csv rows
    std::optional<oom::FloorSpec> memory_floor;  // --memory-floor; absent: the platform's default
    NotifySettings notify;                       // --notify, --notify-on, --notify-timeout and config.toml
    // Starting values: they override the command and give placeholders their values.
    std::optional<long> batch_size;
    std::optional<long> grad_accum;
    std::optional<long> seq_len;
    std::optional<Method> method;
    std::optional<std::string> model;
    std::optional<std::string> output_dir;  // where checkpoints go, when the profile can't see it
    std::optional<std::string> bf16_model;  // the bf16 original for a pre-quantised model
    // The pre-launch estimate (not kept for --resume-run: it ran before the first launch).
    std::optional<accounting::PlanRequest> workload;  // run's workload flags
    bool workload_named_model = false;  // the flags or --workload named the model themselves
    bool force = false;                 // launch even when the estimate says it does not fit
    bool fit = false;                   // start from the largest configuration that fits
};

// state.json's "options": what --resume-run continues with.
nlohmann::json to_json(const RunOptions& options);
RunOptions run_options_from_json(const nlohmann::json& json);

}  // namespace sg
