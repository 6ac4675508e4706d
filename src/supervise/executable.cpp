#include "supervise/executable.hpp"

#include <unistd.h>

#include <cstdlib>

#include "util/errors.hpp"
#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<fs::path> resolve_executable(const std::string& name, int* exit_code_on_error) {
    auto fail = [&](int code, std::string why) {
        if (exit_code_on_error) *exit_code_on_error = code;
        return make_error(name + ": " + why);
    };
    if (name.empty()) return fail(kExitNotFound, "empty command");
    if (name.find('/') != std::string::npos) {
        std::error_code ec;
        if (!fs::exists(name, ec)) return fail(kExitNotFound, "no such file");
        if (fs::is_directory(name, ec)) return fail(kExitNotExecutable, "is a directory");
        if (!is_executable_file(name)) return fail(kExitNotExecutable, "permission denied (not executable)");
        return fs::absolute(name);
    }
    const char* path_env = std::getenv("PATH");
    bool found_unexecutable = false;
    for (const auto& dir : split(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin", ':')) {
        fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
        if (is_executable_file(candidate)) return candidate;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) found_unexecutable = true;
    }
    if (found_unexecutable) return fail(kExitNotExecutable, "permission denied (not executable)");
    return fail(kExitNotFound, "command not found");
}

}  // namespace sg
