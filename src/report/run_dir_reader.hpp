#pragma once
// The thin shell of `sparkguard report`: reads a run directory's files into RunInputs.

#include <filesystem>

#include "report/run_inputs.hpp"

namespace sg {

// Throws UsageError (exit 2) naming the file: a missing or unreadable directory, no report.json
// or one that is not JSON or not a report, and a malformed line of events.jsonl, thermal.csv or
// train.log (with the line and the field). Torn lines (util/record_lines.hpp) become warnings; an
// absent events.jsonl, thermal.csv or train.log is noted, not an error (an older or blocked run).
// env-report.json gives the platform (a warning when it has none).
RunInputs read_run_dir(const std::filesystem::path& dir);

// RUN_DIR/nodes/<host>/thermal.csv by host (sparkguard node under srun). A node's file that cannot
// be read or parsed is left out with a warning naming it: one node's torn file hides no other's.
std::map<std::string, std::vector<telemetry::ThermalRow>> read_node_thermal(const std::filesystem::path& dir,
                                                                            std::vector<std::string>& warnings);

}  // namespace sg
