#include "telemetry/gpu_sample.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "util/strings.hpp"

namespace sg::telemetry {
namespace {

// nvml.h's nvmlClocksEventReason* bits, named as nvidia-smi names its clocks_event_reasons.* fields.
constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kReasons = {{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};

template <class Pick>
std::optional<double> fold(const std::vector<GpuSample>& gpus, std::optional<double> GpuSample::*field, Pick pick) {
    std::optional<double> out;
    for (const auto& gpu : gpus)
        if (const auto& value = gpu.*field) out = out ? pick(*out, *value) : *value;
    return out;
}

std::optional<double> mean_of(const std::vector<GpuSample>& gpus, std::optional<double> GpuSample::*field) {
    double sum = 0;
    int count = 0;
    for (const auto& gpu : gpus)
        if (const auto& value = gpu.*field) sum += *value, ++count;
    return count ? std::optional<double>(sum / count) : std::nullopt;
}

std::optional<double> summed_limit(const std::vector<GpuSample>& gpus) {
    for (const auto& gpu : gpus)
        if (gpu.power_w && !gpu.power_limit_w) return std::nullopt;
    return fold(gpus, &GpuSample::power_limit_w, [](double a, double b) { return a + b; });
}

}  // namespace

GpuAggregate aggregate(const std::vector<GpuSample>& gpus) {
    GpuAggregate out;
    out.temp_c = fold(gpus, &GpuSample::temp_c, [](double a, double b) { return std::max(a, b); });
    out.power_w = fold(gpus, &GpuSample::power_w, [](double a, double b) { return a + b; });
    out.power_limit_w = summed_limit(gpus);
    out.sm_clock_mhz = fold(gpus, &GpuSample::sm_clock_mhz, [](double a, double b) { return std::min(a, b); });
    out.util_pct = mean_of(gpus, &GpuSample::util_pct);
    for (const auto& gpu : gpus)
        if (gpu.throttle) out.throttle = out.throttle.value_or(0) | *gpu.throttle;
    return out;
}

std::string throttle_text(std::optional<std::uint64_t> mask) {
    if (!mask) return "";
    if (*mask == 0) return "none";
    std::vector<std::string> names;
    std::uint64_t rest = *mask;
    for (const auto& [bit, reason] : kReasons)
        if (rest & bit) names.emplace_back(reason), rest &= ~bit;
    if (rest) {
        char hex[24];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(rest));
        names.emplace_back(hex);
    }
    return join(names, "|");
}

std::optional<std::uint64_t> parse_throttle_text(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text == "none") return 0;
    std::uint64_t mask = 0;
    for (const auto& name : split(text, '|')) {
        auto known = std::find_if(kReasons.begin(), kReasons.end(), [&](const auto& r) { return name == r.second; });
        if (known != kReasons.end()) {
            mask |= known->first;
            continue;
        }
        char* end = nullptr;
        unsigned long long bits = std::strtoull(name.c_str(), &end, 16);
        if (name.rfind("0x", 0) != 0 || end == name.c_str() || *end != '\0') return std::nullopt;
        mask |= bits;
    }
    return mask;
}

}  // namespace sg::telemetry
