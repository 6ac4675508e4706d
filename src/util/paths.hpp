#pragma once
// Where profiles (trainer bindings, platforms, the model catalog, anchors) are found at run time.

#include <filesystem>
#include <optional>
#include <vector>

namespace sg {

// Search order, first match wins: $SPARKGUARD_PROFILES (a ':'-separated list),
// $XDG_CONFIG_HOME/sparkguard/profiles (default ~/.config/sparkguard/profiles),
// BINDIR/../share/sparkguard/profiles (the installed data), then the source tree's profiles/.
std::vector<std::filesystem::path> profile_dirs();

// The first existing file `relative` (e.g. "trainers/hf.toml") in the profile directories.
std::optional<std::filesystem::path> find_profile_file(const std::filesystem::path& relative);

std::filesystem::path executable_path();

// $XDG_CONFIG_HOME/sparkguard, else ~/.config/sparkguard (empty when neither is set).
std::filesystem::path user_config_dir();

// $XDG_STATE_HOME/sparkguard, else ~/.local/state/sparkguard (./.local/state/sparkguard without HOME).
std::filesystem::path user_state_dir();

}  // namespace sg
