#include "util/parse.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace sg {
namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

Result<long long> parse_int(std::string_view text) {
    long long value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
        return make_error("not an integer: " + quoted(text));
    if (ec == std::errc::result_out_of_range) return make_error("integer out of range: " + quoted(text));
    return value;
}

Result<double> parse_double(std::string_view text) {
    double value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value))
        return make_error("not a number: " + quoted(text));
    return value;
}

Result<double> parse_count(std::string_view text) {
    if (text.empty()) return make_error("empty count");
    double scale = 1;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
        case 'K': scale = 1e3; break;
        case 'M': scale = 1e6; break;
        case 'B': case 'G': scale = 1e9; break;
        case 'T': scale = 1e12; break;
        default: break;
    }
    std::string_view digits = scale == 1 ? text : text.substr(0, text.size() - 1);
    auto value = parse_double(digits);
    if (!value || *value <= 0) return make_error("not a positive count: " + quoted(text) + " (e.g. 70e9 or 70B)");
    return *value * scale;
}

Result<double> parse_duration(std::string_view text) {
    if (text.empty()) return make_error("empty duration");
    double scale = 1;
    switch (text.back()) {
        case 's': scale = 1; break;
        case 'm': scale = 60; break;
        case 'h': scale = 3600; break;
        case 'd': scale = 86400; break;
        default: scale = 0; break;
    }
    std::string_view digits = scale == 0 ? text : text.substr(0, text.size() - 1);
    auto value = parse_double(digits);
    if (!value || *value < 0)
        return make_error("not a duration: " + quoted(text) + " (e.g. 90s, 15m, 2h)");
    return *value * (scale == 0 ? 1 : scale);
}

}  // namespace sg
