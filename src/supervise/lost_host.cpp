#include "supervise/lost_host.hpp"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "telemetry/thermal_csv.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace sg {

namespace {

void note_time(oom::HostLossFacts& facts, double time) { facts.last_seen = std::max(facts.last_seen.value_or(time), time); }

void read_events(const RunDir& dir, int attempt, oom::HostLossFacts& facts) {
    auto text = read_file(dir.events());
    if (!text) return;
    for (const auto& line : split(*text, '\n')) {
        const auto event = nlohmann::json::parse(line, nullptr, false);
        if (!event.is_object() || !event.contains("time") || !event["time"].is_string()) continue;
        auto time = parse_rfc3339(event["time"].get<std::string>());
        if (!time) continue;
        note_time(facts, time->epoch_s);
        if (event.value("event", "") == "memory-low" && event.value("attempt", 0) == attempt && event.contains("available_gb"))
            facts.records.push_back({time->epoch_s, event["available_gb"].get<double>(), "memory-low event"});
    }
}

void read_thermal(const RunDir& dir, int attempt, oom::HostLossFacts& facts) {
    auto text = read_file(dir.thermal());
    if (!text) return;
    auto csv = telemetry::parse_thermal_csv(*text, dir.thermal().string(), telemetry::Timestamps::any_text);
    if (!csv) return;
    for (const auto& row : csv->rows) {
        auto time = parse_rfc3339(row.timestamp);
        if (!time) continue;
        note_time(facts, time->epoch_s);
        if (row.attempt == attempt && row.mem_available_gb)
            facts.records.push_back({time->epoch_s, *row.mem_available_gb, "thermal.csv"});
    }
}

}  // namespace

std::string current_boot_id() {
    const char* override_file = std::getenv("SPARKGUARD_BOOT_ID_FILE");
    auto text = read_file(override_file && *override_file ? override_file : "/proc/sys/kernel/random/boot_id");
    return text ? std::string(trim(*text)) : std::string();
}

oom::HostLossFacts read_host_loss_facts(const RunDir& dir, int attempt) {
    oom::HostLossFacts facts;
    read_events(dir, attempt, facts);
    read_thermal(dir, attempt, facts);
    return facts;
}

}  // namespace sg
