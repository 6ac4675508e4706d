#pragma once
// What `sparkguard report` reads from a run directory, parsed: the thin shell
// (run_dir_reader.hpp) fills it, the pure core (run_summary.hpp, timeline.hpp) reads it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_events.hpp"
#include "report/run_report.hpp"
#include "report/train_log_steps.hpp"
#include "telemetry/thermal_csv.hpp"

namespace sg {

struct RunInputs {
    std::string run_dir;
    RunReport report;
    nlohmann::json telemetry;  // report.json's "telemetry" section; null when it has none
    std::string platform;      // env-report.json's "platform" ("dgx-spark"); empty without one
    std::vector<RunEvent> events;
    std::vector<telemetry::ThermalRow> thermal;  // read with Timestamps::rfc3339: every row has its time
    // Under srun, each node's sparkguard node's RUN_DIR/nodes/<host>/thermal.csv, by host.
    std::map<std::string, std::vector<telemetry::ThermalRow>> node_thermal;
    std::vector<StepPoint> steps;
    std::optional<Timestamp> log_first, log_last;  // train.log's first and last lines
    bool has_events = false, has_thermal = false, has_train_log = false;
    std::vector<std::string> stall_files;  // "stall-2.txt"
    std::vector<std::string> warnings;     // torn lines, files that could not be read
};

}  // namespace sg
