#pragma once
// The workload flags `plan`, `preflight` and `run` share, and their translation into a
// PlanRequest. A --workload FILE.toml holds the same keys as the flags (without the dashes in
// front: `batch = 4`, `lora-targets = ["q_proj", "v_proj"]`, `grad-ckpt = false`); flags given
// on the command line override the file.

#include <filesystem>
#include <vector>

#include "accounting/plan.hpp"
#include "util/options.hpp"

namespace sg::cli {

// The option table: --model, --params, --method, --weight-dtype, --optimizer, --batch, --seq,
// --grad-accum, --[no-]grad-ckpt, --[no-]flash-attn, --lora-r, --lora-targets, --lora-dropout,
// --loss, --platform, --budget-gb, --no-history, --workload.
const std::vector<OptionSpec>& workload_options();

// Builds the request from parsed flags (and the --workload file they name). Throws UsageError
// naming the flag, or FILE:LINE:COLUMN for a bad key or value in the file.
accounting::PlanRequest plan_request_from_args(const ParsedArgs& args);

// Reads a workload file alone.
accounting::PlanRequest plan_request_from_file(const std::filesystem::path& file);

}  // namespace sg::cli
