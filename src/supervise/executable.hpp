#pragma once

#include <filesystem>
#include <string>

#include "util/result.hpp"

namespace sg {

// Finds argv[0] as a shell would: a path when it has a '/', else along $PATH. On error,
// *exit_code_on_error says 127 (not found) or 126 (found but not executable).
Result<std::filesystem::path> resolve_executable(const std::string& name, int* exit_code_on_error);

}  // namespace sg
