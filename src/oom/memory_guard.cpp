#include "oom/memory_guard.hpp"

#include <algorithm>
#include <charconv>

#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::oom {

namespace {

constexpr double kGB = 1e9;
constexpr double kRateWindow = 0.5;  // seconds of readings the fall rate is measured over

std::string gb(double bytes) { return fixed(bytes / kGB, 3) + " GB"; }

}  // namespace

std::string FloorSpec::text() const {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, ec == std::errc() ? end : buffer) + (percent ? "%" : "");
}

double FloorSpec::bytes(double mem_total) const { return percent ? mem_total * value / 100 : value * kGB; }

Result<FloorSpec> parse_floor(std::string_view text) {
    FloorSpec spec;
    std::string_view number = trim(text);
    if (!number.empty() && number.back() == '%') {
        spec.percent = true;
        number.remove_suffix(1);
    }
    auto value = parse_double(number);
    if (!value || *value < 0 || (spec.percent && *value >= 100))
        return make_error("expected decimal GB (6, 6.5), a share of MemTotal (5%) or 0 (off), got '" + std::string(text) + "'");
    spec.value = *value;
    return spec;
}

std::optional<double> resolve_floor(const std::optional<FloorSpec>& given, bool unified, double mem_total) {
    if (given) return given->off() ? std::nullopt : std::optional(given->bytes(mem_total));
    if (!unified || mem_total <= 0) return std::nullopt;
    return FloorSpec{5, true}.bytes(mem_total);
}

GuardSettings guard_settings(double floor_bytes) {
    GuardSettings s;
    s.floor = floor_bytes;
    s.warning = 2 * floor_bytes;
    return s;
}

// From the oldest reading of the last half second (readings milliseconds apart say little).
double MemoryGuard::fall_rate(const GuardReading& now) const {
    const GuardReading* from = nullptr;
    for (size_t i = 1; i <= std::min(count_, recent_.size()); ++i) {
        const GuardReading& r = recent_[(count_ - i) % recent_.size()];
        if (now.time - r.time > kRateWindow && from) break;
        from = &r;
    }
    if (!from || now.time <= from->time) return 0;
    return std::max(0.0, (from->available - now.available) / (now.time - from->time));
}

GuardDecision MemoryGuard::feed(const GuardReading& r, const std::optional<std::string>& nvrm) {
    GuardDecision d;
    d.fall_rate = fall_rate(r);
    recent_[count_++ % recent_.size()] = r;
    lowest_ = std::min(lowest_.value_or(r.available), r.available);
    under_ = r.available < settings_.floor ? under_ + 1 : 0;
    if (under_ >= 2 || (under_ == 1 && nvrm)) {
        d.kill = true;
        d.evidence = "MemAvailable " + gb(r.available) + ", " + gb(settings_.floor - r.available) + " under the floor " +
                     gb(settings_.floor) + " of a " + gb(r.total) +
                     " pool" + (under_ >= 2 ? " on " + std::to_string(under_) + " readings in a row" : "") +
                     ", falling " + fixed(d.fall_rate / kGB, 2) + " GB/s" + (nvrm ? "; the driver: " + *nvrm : "");
    }
    if (r.available < settings_.warning && (!last_event_ || r.time - *last_event_ >= settings_.event_interval)) {
        d.memory_low = true;
        last_event_ = r.time;
    }
    d.next_reading_in = interval(r.available, d.fall_rate);
    return d;
}

// The time the pool would take to reach the floor at the fastest plausible fill rate (or twice
// the rate just seen, if faster), looked at a few times on the way.
double MemoryGuard::interval(double available, double fall_rate) const {
    const double headroom = available - settings_.floor;
    if (headroom <= 0) return settings_.min_interval;
    const double rate = std::max(settings_.assumed_fill_rate, 2 * fall_rate);
    return std::clamp(headroom / rate / 2, settings_.min_interval, settings_.max_interval);
}

}  // namespace sg::oom
