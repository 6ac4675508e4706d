#include "util/paths.hpp"

#include <cstdlib>

#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

fs::path executable_path() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : self;
}

fs::path user_config_dir() {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return fs::path(xdg) / "sparkguard";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "sparkguard";
    return {};
}

fs::path user_state_dir() {
    const char* state = std::getenv("XDG_STATE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path base = state && *state ? fs::path(state) : fs::path(home && *home ? home : ".") / ".local" / "state";
    return base / "sparkguard";
}

std::vector<fs::path> profile_dirs() {
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("SPARKGUARD_PROFILES"); env && *env)
        for (const auto& part : split(env, ':'))
            if (!part.empty()) dirs.emplace_back(part);
    if (fs::path user = user_config_dir(); !user.empty()) dirs.push_back(user / "profiles");
    if (fs::path self = executable_path(); !self.empty())
        dirs.push_back(self.parent_path().parent_path() / SPARKGUARD_INSTALL_DATADIR / "sparkguard" / "profiles");
    dirs.emplace_back(SPARKGUARD_SOURCE_PROFILES);
    return dirs;
}

std::optional<fs::path> find_profile_file(const fs::path& relative) {
    for (const auto& dir : profile_dirs()) {
        std::error_code ec;
        if (fs::is_regular_file(dir / relative, ec)) return dir / relative;
    }
    return std::nullopt;
}

}  // namespace sg
