#include "oom/stall.hpp"

#include <nlohmann/json.hpp>

#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::oom {
namespace {

std::string gb(double bytes) { return fixed(bytes / 1e9, 2) + " GB"; }

std::optional<std::string> address_space_evidence(const StallReadings& r, const StallThresholds& t) {
    for (const auto& p : r.processes)
        if (p.as_limit && *p.as_limit > 0 && p.vm_size >= t.near_limit * *p.as_limit)
            return "process " + std::to_string(p.pid) + " (" + p.comm + ") uses " + gb(p.vm_size) +
                   " of its " + gb(*p.as_limit) + " address-space limit (RLIMIT_AS)";
    return std::nullopt;
}

}  // namespace

StallJudgement judge_stall(const StallReadings& r, const StallThresholds& t) {
    if (auto evidence = address_space_evidence(r, t)) return {true, *evidence};
    if (r.cgroup_usage && r.cgroup_limit && *r.cgroup_limit > 0 && *r.cgroup_usage >= t.near_limit * *r.cgroup_limit)
        return {true, "the trainer's memory cgroup is at its limit (" + gb(*r.cgroup_usage) + " of " + gb(*r.cgroup_limit) + ")"};
    if (r.min_available_fraction && *r.min_available_fraction < t.available_fraction)
        return {true, "MemAvailable fell to " + fixed(*r.min_available_fraction * 100, 1) + "% of the memory pool"};
    if (r.psi_full_avg10 && *r.psi_full_avg10 >= t.psi_full)
        return {true, "memory pressure: /proc/pressure/memory full avg10=" + fixed(*r.psi_full_avg10, 2)};
    return {false, "no output and no training step for " + fixed(r.quiet_seconds, 0) + " s, with no sign of memory exhaustion"};
}

std::optional<double> parse_address_space_limit(std::string_view limits) {
    for (const auto& line : split(limits, '\n')) {
        if (line.rfind("Max address space", 0) != 0) continue;
        std::string_view rest = trim(std::string_view(line).substr(17));
        auto soft = rest.substr(0, rest.find(' '));
        if (soft == "unlimited") return std::nullopt;
        if (auto value = parse_double(soft)) return *value;
    }
    return std::nullopt;
}

std::optional<double> parse_psi_full_avg10(std::string_view pressure) {
    for (const auto& line : split(pressure, '\n')) {
        if (line.rfind("full ", 0) != 0) continue;
        auto at = line.find("avg10=");
        if (at == std::string::npos) return std::nullopt;
        std::string_view value = std::string_view(line).substr(at + 6);
        if (auto parsed = parse_double(value.substr(0, value.find(' ')))) return *parsed;
    }
    return std::nullopt;
}

std::optional<double> parse_status_bytes(std::string_view status, std::string_view key) {
    for (const auto& line : split(status, '\n')) {
        if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 || line[key.size()] != ':') continue;
        std::string_view rest = trim(std::string_view(line).substr(key.size() + 1));
        if (rest.ends_with(" kB")) rest.remove_suffix(3);
        if (auto value = parse_double(trim(rest))) return *value * 1024;
    }
    return std::nullopt;
}

nlohmann::json to_json(const StallReadings& r) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    nlohmann::json processes = nlohmann::json::array();
    for (const auto& p : r.processes)
        processes.push_back({{"pid", p.pid}, {"comm", p.comm}, {"state", std::string(1, p.state)}, {"wchan", p.wchan},
                             {"cpu_seconds", p.cpu_seconds}, {"vm_size_gb", p.vm_size / 1e9}, {"rss_gb", p.rss / 1e9},
                             {"as_limit_gb", p.as_limit ? nlohmann::json(*p.as_limit / 1e9) : nlohmann::json()}});
    return {{"quiet_seconds", r.quiet_seconds},
            {"processes", processes},
            {"min_available_fraction", opt(r.min_available_fraction)},
            {"psi_full_avg10", opt(r.psi_full_avg10)},
            {"cgroup_usage_gb", r.cgroup_usage ? nlohmann::json(*r.cgroup_usage / 1e9) : nlohmann::json()},
            {"cgroup_limit_gb", r.cgroup_limit ? nlohmann::json(*r.cgroup_limit / 1e9) : nlohmann::json()}};
}

}  // namespace sg::oom
