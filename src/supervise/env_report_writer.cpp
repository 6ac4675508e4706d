#include "supervise/env_report_writer.hpp"

#include "preflight/host.hpp"
#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/strings.hpp"

namespace sg {

EnvReportWriter::EnvReportWriter(Session& session, const RunDir& dir, const EventLog& events,
                                 preflight::PreflightRequest request)
    : dir_(dir), events_(events) {
    request.defer_torch = true;
    readings_ = preflight::read_preflight(request);
    platform_ = readings_.hardware.platform;
    write(false);
    const std::string python = readings_.torch.python;
    auto started = session.start_helper(
        preflight::torch_probe_argv(python), [this](std::string_view line) { (probe_output_ += line) += '\n'; },
        [this, python](int code) {
            if (final_) return;
            if (code == 0) {
                readings_.torch = preflight::parse_torch_probe(probe_output_, python);
            } else {
                readings_.torch.problem = python + " exited " + std::to_string(code) + " (" +
                                          std::string(trim(probe_output_)).substr(0, 200) + ")";
            }
            write(true);
        });
    if (!started) {
        readings_.torch.problem = "cannot run " + python + ": " + started.error().message;
        write(true);
    }
}

void EnvReportWriter::settle() {
    if (final_) return;
    readings_.torch.problem = "the PyTorch probe of " + readings_.torch.python + " had not answered when the run ended";
    write(true);
}

void EnvReportWriter::write(bool final) {
    nlohmann::json env = preflight::build_env_report(readings_);
    env["time"] = rfc3339_now();
    if (!final) env["pending"] = {"G1"};
    if (auto written = write_file_atomic(dir_.env_report(), env.dump(2) + "\n"); !written)
        spdlog::error("{}", written.error().message);
    if (!final) return;
    final_ = true;
    events_.write("preflight", {{"verdict", env["verdict"]}, {"checks", env["checks"]}});
    std::vector<std::string> concerns;
    for (const auto& [check, value] : env["checks"].items()) {
        const std::string text = value.get<std::string>();
        if (text.rfind("fail", 0) == 0 || text.rfind("warn", 0) == 0) concerns.push_back(check + " " + text);
    }
    if (!concerns.empty()) spdlog::warn("preflight: {}", join(concerns, "; "));
}

}  // namespace sg
