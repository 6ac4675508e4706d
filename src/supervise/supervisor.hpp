#pragma once
// `sparkguard run`: launch, watch, judge each death, walk the ladder, write the run directory.

#include <filesystem>

#include "supervise/run_options.hpp"

namespace sg {

// Runs the whole ladder; returns sparkguard's exit code (DESIGN.md section 2).
int run_supervised(const RunOptions& options);

// Continues a run whose sparkguard was killed, from RUN_DIR/state.json.
int resume_supervised(const std::filesystem::path& run_dir);

}  // namespace sg
