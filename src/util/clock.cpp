#include "util/clock.hpp"

#include <cctype>
#include <ctime>
#include <optional>

namespace sg {
namespace {

// Reads `width` digits at text[pos]; -1 when they are not all digits.
int digits(std::string_view text, size_t pos, size_t width) {
    if (pos + width > text.size()) return -1;
    int value = 0;
    for (size_t i = pos; i < pos + width; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

bool separated(std::string_view text, size_t pos, std::string_view accepted) {
    return pos < text.size() && accepted.find(text[pos]) != std::string_view::npos;
}

// The ".123" after the seconds, advancing `pos` past it; 0 when there is none.
double fraction(std::string_view text, size_t& pos) {
    if (pos >= text.size() || text[pos] != '.') return 0;
    double value = 0;
    double scale = 0.1;
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos, scale /= 10)
        value += (text[pos] - '0') * scale;
    return value;
}

// "Z", "+HH:MM" or "-HH:MM" ending the text; nullopt otherwise.
std::optional<int> offset_minutes(std::string_view zone) {
    if (zone == "Z" || zone == "z") return 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':') return std::nullopt;
    const int hours = digits(zone, 1, 2);
    const int minutes = digits(zone, 4, 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return std::nullopt;
    return (zone[0] == '-' ? -1 : 1) * (hours * 60 + minutes);
}

}  // namespace

Result<Timestamp> parse_rfc3339(std::string_view text) {
    const auto bad = [&] { return make_error("not an RFC 3339 timestamp: '" + std::string(text.substr(0, 40)) + "'"); };
    const int year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
    const int hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
    if (year < 0 || month < 1 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > 60 || !separated(text, 4, "-") || !separated(text, 7, "-") || !separated(text, 10, "Tt ") ||
        !separated(text, 13, ":") || !separated(text, 16, ":"))
        return bad();
    const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                                           std::chrono::day(static_cast<unsigned>(day))};
    if (!date.ok()) return bad();
    size_t pos = 19;
    const double fraction_s = fraction(text, pos);
    const auto offset = offset_minutes(text.substr(pos));
    if (!offset) return bad();
    const double days = static_cast<double>(std::chrono::sys_days(date).time_since_epoch().count());
    const double local_s = days * 86400 + hour * 3600 + minute * 60 + second + fraction_s;
    return Timestamp{local_s - *offset * 60.0, *offset};
}

std::string rfc3339(WallTime t) {
    using namespace std::chrono;
    const auto since_epoch = t.time_since_epoch();
    const std::time_t seconds = duration_cast<std::chrono::seconds>(since_epoch).count();
    const long millis = static_cast<long>(duration_cast<milliseconds>(since_epoch).count() % 1000);
    std::tm local{};
    localtime_r(&seconds, &local);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
    const long offset_minutes = local.tm_gmtoff / 60;
    const char sign = offset_minutes < 0 ? '-' : '+';
    const long magnitude = offset_minutes < 0 ? -offset_minutes : offset_minutes;
    char out[64];
    std::snprintf(out, sizeof out, "%s.%03ld%c%02ld:%02ld", date, millis, sign, magnitude / 60, magnitude % 60);
    return out;
}

double monotonic_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double epoch_seconds() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

}  // namespace sg
