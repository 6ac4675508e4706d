#pragma once
// Runs a short helper command (nvidia-smi, a Python probe) to completion and captures its output.

#include <string>
#include <vector>

#include "util/result.hpp"

namespace sg {

struct CapturedOutput {
    int exit_code = 0;      // 128+N when killed by signal N
    std::string out;
    std::string err;
    bool timed_out = false; // killed after the timeout
};

// Errors only when the command could not be started (not found, not executable).
// Output beyond `limit` bytes per stream is dropped.
Result<CapturedOutput> capture_output(const std::vector<std::string>& argv, double timeout_seconds,
                                      size_t limit = 4 << 20);

}  // namespace sg
