#pragma once
// The telemetry of a run (or of `sparkguard thermal` alone): GPU readings from NVML, else from a
// long-lived nvidia-smi child on the session's event loop, plus /proc/meminfo and the trainer's
// RSS, written to thermal.csv every interval, with power-cap and throttle events as they happen.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "supervise/session.hpp"
#include "telemetry/gpu_source.hpp"
#include "telemetry/meminfo.hpp"
#include "telemetry/telemetry_summary.hpp"
#include "telemetry/thermal_csv.hpp"
#include "telemetry/throttle_detector.hpp"

namespace sg {

// What the supervisor knows that a row records.
struct TelemetryContext {
    int attempt = 0;
    std::string rung;
    std::optional<long long> step;
    std::optional<double> trainer_rss_gb;
};

class TelemetryRecorder {
public:
    // Probes the GPU once and opens thermal.csv for appending; throws Failure naming the file
    // when it cannot. `platform` picks the power-cap rules ("dgx-spark": ~100 W sustained).
    // elapsed_s counts from `run_started` (seconds since the epoch: the run's start, across
    // --resume-run), and rows already in the file (a resumed run's) count in the summary.
    TelemetryRecorder(Session& session, const std::filesystem::path& csv, double interval_seconds, std::string platform,
                      double run_started);

    // Called every tick: writes a row once `interval_seconds` have passed since the last one and
    // returns the events the row raised (power-cap, throttle, throttle-end).
    std::vector<telemetry::TelemetryEvent> tick(const TelemetryContext& context, const std::optional<MemInfo>& meminfo);

    // The latest GPU reading (for the status line); empty without a GPU.
    telemetry::GpuAggregate latest_gpu() const;
    // report.json's telemetry section, with where the GPU readings came from.
    nlohmann::json summary() const;

private:
    telemetry::GpuSource gpu_;
    telemetry::LatestGpuSamples smi_latest_;
    std::optional<telemetry::ThermalCsvWriter> csv_;
    telemetry::ThrottleDetector detector_;
    telemetry::TelemetrySummary summary_;
    double interval_;
    double run_started_;  // seconds since the epoch
    std::optional<double> last_row_;
    bool write_failed_ = false;
};

}  // namespace sg
