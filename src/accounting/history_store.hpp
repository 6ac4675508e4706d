#pragma once
// Where the history of measured runs lives, and its one reader and one writer. Lines are appended
// with one write(2) on an O_APPEND descriptor, so concurrent runs never interleave within a line.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "accounting/history.hpp"

namespace sg::accounting {

// $XDG_STATE_HOME/sparkguard/history.jsonl, else ~/.local/state/sparkguard/history.jsonl.
std::filesystem::path history_path();

// The file read; a missing file is an empty history, an unreadable one a warning.
HistoryFile read_history(const std::filesystem::path& file);

// Appends one line; the error in words when it could not.
std::optional<std::string> append_history(const std::filesystem::path& file, const nlohmann::json& entry);

// Records one attempt run under `plan` (at that attempt's configuration) in history_path().
std::optional<std::string> record_attempt(const Plan& plan, const nlohmann::json& measured, bool oom,
                                          std::optional<long> last_step, const std::string& profile);

}  // namespace sg::accounting
