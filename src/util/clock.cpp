#include "util/clock.hpp"

#include <ctime>

namespace sg {

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

}  // namespace sg
