#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sg {

std::string_view trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string to_lower(std::string_view text);
// Edit distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// Formats a decimal number with `decimals` digits after the point ("12.3").
std::string fixed(double value, int decimals);
// "1h02m", "4m05s", "12s" (negative durations read as 0s).
std::string format_duration(double seconds);
// Quotes an argument for a POSIX shell only when it needs quoting.
std::string shell_quote(std::string_view arg);
// "notify.sh --to 'a b'" -> {"notify.sh", "--to", "a b"}: words split at blanks, with '...' and
// "..." quoting and backslash escapes, and nothing else a shell would do (no variables, no globs).
std::vector<std::string> split_command_words(std::string_view text);

}  // namespace sg
