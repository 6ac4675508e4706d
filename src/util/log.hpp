#pragma once
// sparkguard's own messages: stderr, "sparkguard: " prefix, "warning: "/"error: " by level.
// Call sites use spdlog directly (spdlog::info, spdlog::warn, ...).

#include <spdlog/spdlog.h>

namespace sg {

enum class Verbosity { quiet, normal, verbose };

void init_logging(Verbosity verbosity = Verbosity::normal);

}  // namespace sg
