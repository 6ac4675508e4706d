#pragma once
// sparkguard preflight: the environment checks of DESIGN.md section 7 plus the workload's
// headroom, as env-report.json:
//
//   {"platform": "dgx-spark" | "generic-nvidia" | "cpu-only",
//    "checks": {"hardware": "info: ...", "G1": "...", "G3": "warn: 14GB page cache", "G4": ...,
//               "G6": ..., "G9": ..., "G10": ..., "disk": ..., "drop-caches": ..., "workload": ...},
//    "headroom_gb": 61.2,
//    "verdict": "ready" | "ready-with-warnings" | "blocked",
//    "details": {CHECK: {the readings behind it, "why" for a fail}, ...}}
//
// `sparkguard run` writes the same report into its run directory before the first launch:
//
//   nlohmann::json report = preflight::run_preflight({options.workload, options.command});
//   write_file_atomic(dir.env_report(), report.dump(2) + "\n");
//   events.write("preflight", {{"verdict", report["verdict"]}, {"checks", report["checks"]}});

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/plan.hpp"
#include "preflight/checks.hpp"

namespace sg::preflight {

struct PreflightRequest {
    // The workload flags. A plan is made when they name a model (--model) or a size (--params);
    // otherwise headroom_gb is the budget itself and there is no "workload" check.
    std::optional<accounting::PlanRequest> workload;
    std::vector<std::string> command;  // the trainer command (after "--"), may be empty
    // Leave the PyTorch probe (seconds: it imports torch) to the caller: G1 says it is pending.
    bool defer_torch = false;
};

// Everything preflight reads from this machine, once.
struct PreflightReadings {
    accounting::MachineState machine;
    accounting::PlatformProfile profile;
    Hardware hardware;
    std::vector<telemetry::GpuSample> gpus_now;
    std::string gpu_telemetry;          // "nvml", "nvidia-smi" or "none"
    std::string gpu_telemetry_problem;  // why there is none
    TorchReading torch;
    std::vector<Tenant> tenants;
    std::string tenants_problem;
    ContainerInfo container;
    ClusterSettings cluster;
    DiskReading disk;
    std::string drop_caches_blocker;
    std::optional<double> shm_size;     // bytes /dev/shm may grow to
    std::optional<accounting::Plan> plan;
    accounting::Budget budget;          // the plan's, or the platform's without one
};

// Reads the machine (meminfo, nvidia-smi or NVML, /proc, the trainer's Python). Throws
// UsageError only for a bad workload (a model that cannot be resolved: exit 2).
PreflightReadings read_preflight(const PreflightRequest& request);

// The checks and the report, from readings alone.
std::map<std::string, Check> run_checks(const PreflightReadings& readings);
nlohmann::json build_env_report(const PreflightReadings& readings);

// The config files the command names (config_file_arguments), each read up to 1 MiB; files that
// are not there or not readable are left out.
std::vector<ConfigText> read_config_files(const std::vector<std::string>& command);

// read_preflight then build_env_report.
nlohmann::json run_preflight(const PreflightRequest& request);

// 0 for ready and ready-with-warnings, 3 for blocked.
int preflight_exit_code(const nlohmann::json& report);

// The report as a table for people.
std::string format_env_report(const nlohmann::json& report);

// "dgx-spark" for the unified GB10 platform, "generic-nvidia" for other GPUs, "cpu-only" for none.
std::string platform_name(const accounting::PlatformProfile& profile, const accounting::MachineState& machine);
// Whether env-report.json's platform (platform_name's) is a unified-memory one.
bool is_unified_platform(std::string_view platform);

}  // namespace sg::preflight
