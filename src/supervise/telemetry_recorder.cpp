#include "supervise/telemetry_recorder.hpp"

#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace sg {

TelemetryRecorder::TelemetryRecorder(Session& session, const std::filesystem::path& csv, double interval_seconds,
                                     std::string platform, double run_started)
    : gpu_(telemetry::probe_gpu_source()),
      detector_(telemetry::detector_settings(platform)),
      interval_(interval_seconds),
      run_started_(run_started) {
    if (auto text = read_file(csv); text && !text->empty())  // a resumed run: its rows so far count too
        if (auto earlier = telemetry::parse_thermal_csv(*text, csv.string()))
            for (const auto& row : earlier->rows) summary_.add(row, detector_.feed(telemetry::point_from(row)));
    auto writer = telemetry::ThermalCsvWriter::open(csv);
    if (!writer) throw Failure("thermal.csv", writer.error().message);
    csv_.emplace(std::move(*writer));
    for (const auto& note : gpu_.notes) spdlog::debug("GPU telemetry: {}", note);
    if (!gpu_.any()) {
        spdlog::info("no GPU telemetry ({}); thermal.csv keeps the memory columns", gpu_.reason);
        return;
    }
    if (gpu_.nvml) return;
    // nvidia-smi: one child for the whole run, sampling at our interval (1 s at least).
    const int interval_ms = static_cast<int>(std::max(1.0, interval_seconds) * 1000);
    auto started = session.start_helper(
        telemetry::smi_loop_argv(*gpu_.smi, interval_ms),
        [this](std::string_view line) {
            if (auto sample = telemetry::parse_smi_line(*gpu_.smi, line)) smi_latest_.update(*sample);
        },
        [this](int code) {
            smi_latest_.clear();
            spdlog::warn("the GPU sampler (nvidia-smi) exited ({}); thermal.csv goes on without GPU readings", code);
        });
    if (!started) spdlog::warn("cannot start the GPU sampler: {}", started.error().message);
}

telemetry::GpuAggregate TelemetryRecorder::latest_gpu() const {
    if (gpu_.nvml) return telemetry::aggregate(gpu_.nvml->sample());
    return telemetry::aggregate(smi_latest_.current());
}

std::vector<telemetry::TelemetryEvent> TelemetryRecorder::tick(const TelemetryContext& context,
                                                               const std::optional<MemInfo>& meminfo) {
    const double now = monotonic_seconds();
    if (last_row_ && now - *last_row_ < interval_) return {};
    last_row_ = now;
    telemetry::ThermalRow row;
    row.timestamp = rfc3339_now();
    row.elapsed_s = epoch_seconds() - run_started_;
    row.attempt = context.attempt;
    row.rung = context.rung;
    row.step = context.step;
    row.gpu = latest_gpu();
    if (meminfo) row.set_memory(*meminfo);
    row.trainer_rss_gb = context.trainer_rss_gb;
    if (auto written = csv_->write(row); !written && !write_failed_) {
        write_failed_ = true;  // a full disk must not stop the training; say so once
        spdlog::error("{}; the run goes on", written.error().message);
    }
    telemetry::Assessment assessment = detector_.feed(telemetry::point_from(row));
    summary_.add(row, assessment);
    return assessment.events;
}

nlohmann::json TelemetryRecorder::summary() const {
    nlohmann::json out = summary_.to_json();
    out["gpu_source"] = std::string(gpu_.kind());
    if (!gpu_.any()) out["gpu_missing_because"] = gpu_.reason;
    return out;
}

}  // namespace sg
