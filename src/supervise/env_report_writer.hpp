#pragma once
// env-report.json for `run`: the machine's checks are written before the first launch, and the
// PyTorch probe (G1: it imports torch, seconds on a real install) runs beside the trainer as a
// helper process; the report is rewritten, and the preflight event logged, when it answers.

#include <string>

#include "preflight/preflight.hpp"
#include "report/event_log.hpp"
#include "report/run_dir.hpp"
#include "supervise/session.hpp"

namespace sg {

class EnvReportWriter {
public:
    // Reads the machine (UsageError for a workload that cannot be resolved), writes the report
    // with G1 pending and starts the probe on the session's event loop.
    EnvReportWriter(Session& session, const RunDir& dir, const EventLog& events, preflight::PreflightRequest request);
    EnvReportWriter(const EnvReportWriter&) = delete;
    EnvReportWriter& operator=(const EnvReportWriter&) = delete;

    const std::string& platform() const { return platform_; }
    // The run is ending: a probe that has not answered is reported as such. Idempotent.
    void settle();

private:
    void write(bool final);

    const RunDir& dir_;
    const EventLog& events_;
    preflight::PreflightReadings readings_;
    std::string platform_;
    std::string probe_output_;
    bool final_ = false;
};

}  // namespace sg
