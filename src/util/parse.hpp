#pragma once
// Strict number parsing: the whole text must be consumed, or the error says what was wrong.

#include <string_view>

#include "util/result.hpp"

namespace sg {

Result<long long> parse_int(std::string_view text);
Result<double> parse_double(std::string_view text);
// A count with an optional scale suffix: "70e9", "70B", "7.6b", "405M", "1.5T", "8K", "1200".
Result<double> parse_count(std::string_view text);
// A duration in seconds: "90", "90s", "15m", "2h", "1.5h", "0".
Result<double> parse_duration(std::string_view text);

}  // namespace sg
