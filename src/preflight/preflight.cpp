#include "preflight/preflight.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <sstream>

#include "supervise/drop_caches.hpp"
#include "telemetry/gpu_source.hpp"
#include "telemetry/throttle_detector.hpp"
#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace sg::preflight {
namespace {

using nlohmann::json;

constexpr size_t kConfigLimit = 1 << 20;
// The order people read the checks in: the machine, then the G-numbers, then the rest.
const std::vector<std::string> kCheckOrder = {"hardware", "G1", "G3", "G4", "G6", "G9", "G10", "disk", "drop-caches", "workload"};

std::string cpu_architecture() {
    struct utsname name {};
    return ::uname(&name) == 0 ? name.machine : "unknown";
}

std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> env;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string_view text(*entry);
        auto eq = text.find('=');
        if (eq != std::string_view::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
    }
    return env;
}

bool names_a_workload(const std::optional<accounting::PlanRequest>& workload) {
    return workload && (workload->model || workload->params);
}

Hardware read_hardware(const accounting::MachineState& machine, const accounting::PlatformProfile& profile,
                       const telemetry::GpuSource& gpu) {
    Hardware hw;
    hw.gpus = machine.gpus.gpus;
    hw.gpu_problem = machine.gpus.problem;
    if (gpu.nvml) hw.cuda_version = gpu.nvml->cuda_version();
    if (!hw.gpus.empty() && !hw.cuda_version)
        if (auto cuda = probe_cuda_version()) hw.cuda_version = *cuda;
    hw.cpu_arch = cpu_architecture();
    hw.platform = platform_name(profile, machine);
    hw.platform_profile = profile.name;
    return hw;
}

std::string indent_why(const json& details) {
    return details.contains("why") ? "\n      why: " + details["why"].get<std::string>() : "";
}

}  // namespace

std::string platform_name(const accounting::PlatformProfile& profile, const accounting::MachineState& machine) {
    if (machine.gpus.gpus.empty()) return "cpu-only";
    return profile.unified ? profile.name : "generic-nvidia";
}

bool is_unified_platform(std::string_view platform) {
    return !platform.empty() && platform != "cpu-only" && platform != "generic-nvidia";
}

std::vector<ConfigText> read_config_files(const std::vector<std::string>& command) {
    std::vector<ConfigText> configs;
    for (const auto& path : config_file_arguments(command)) {
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) continue;
        if (auto text = read_file_prefix(path, kConfigLimit)) configs.emplace_back(path, std::move(*text));
    }
    return configs;
}

PreflightReadings read_preflight(const PreflightRequest& request) {
    PreflightReadings r;
    r.machine = accounting::read_machine();
    r.profile = accounting::detect_platform(accounting::load_platforms(), r.machine);
    telemetry::GpuSource gpu = telemetry::probe_gpu_source();
    r.hardware = read_hardware(r.machine, r.profile, gpu);
    r.gpus_now = gpu.first;
    r.gpu_telemetry = std::string(gpu.kind());
    r.gpu_telemetry_problem = gpu.reason;
    if (request.defer_torch) {
        r.torch.python = find_trainer_python(request.command);
        r.torch.problem = "the PyTorch probe of " + r.torch.python + " has not answered yet";
    } else {
        r.torch = probe_torch(find_trainer_python(request.command));
    }
    r.tenants = find_tenants(!r.machine.gpus.gpus.empty(), &r.tenants_problem);
    r.container = judge_container(read_container_evidence());
    r.cluster = read_cluster_settings(request.command, environment(), read_config_files(request.command));
    r.disk = read_checkpoint_disk(request.command);
    r.drop_caches_blocker = sg::drop_caches_blocker();
    r.shm_size = read_shm_size();
    if (names_a_workload(request.workload)) {
        r.plan = accounting::make_plan(*request.workload, r.machine);
        r.budget = r.plan->budget;
    } else {
        r.budget = accounting::compute_budget(r.profile, r.machine);
    }
    return r;
}

std::map<std::string, Check> run_checks(const PreflightReadings& r) {
    const bool unified = r.profile.unified;
    const int local_gpus = static_cast<int>(r.hardware.gpus.size());
    std::map<std::string, Check> checks;
    checks["hardware"] = check_hardware(r.hardware);
    checks["hardware"].details["gpu_telemetry"] = r.gpu_telemetry;
    checks["G1"] = check_cuda_abi(r.torch, r.hardware);
    checks["G3"] = check_memory(r.machine.meminfo, unified, r.shm_size, unified && local_gpus > 0);
    checks["G4"] = check_gpu_now(r.gpus_now, r.gpu_telemetry_problem,
                                 telemetry::detector_settings(r.profile.name).platform_cap_w);
    checks["G6"] = check_tenants(r.tenants, r.tenants_problem);
    checks["G9"] = check_container(r.container, r.machine.meminfo);
    checks["G10"] = check_cluster(r.cluster, local_gpus);
    checks["disk"] = check_disk(r.disk, r.plan ? std::optional<double>(checkpoint_gb(*r.plan)) : std::nullopt);
    checks["drop-caches"] = check_drop_caches(r.drop_caches_blocker, unified);
    if (r.plan) checks["workload"] = check_workload(*r.plan);
    return checks;
}

json build_env_report(const PreflightReadings& r) {
    const auto checks = run_checks(r);
    const bool fits = !r.plan || r.plan->verdict != accounting::Verdict::does_not_fit;
    json report = {{"platform", r.hardware.platform},
                   {"checks", json::object()},
                   {"headroom_gb", r.plan ? r.plan->headroom_gb : r.budget.budget_gb},
                   {"verdict", verdict(checks, fits)},
                   {"details", json::object()}};
    for (const auto& [name, check] : checks) {
        report["checks"][name] = check.value;
        report["details"][name] = check.details;
    }
    report["details"]["headroom"] = {{"budget_gb", r.budget.budget_gb},
                                     {"budget_source", r.budget.source},
                                     {"from", r.plan ? "the workload's plan: budget minus its peak" : "no workload given: the whole budget"}};
    if (r.plan) report["plan"] = accounting::to_json(*r.plan);
    return report;
}

json run_preflight(const PreflightRequest& request) {
    json report = build_env_report(read_preflight(request));
    report["time"] = rfc3339_now();
    return report;
}

int preflight_exit_code(const json& report) { return report.value("verdict", "") == "blocked" ? kExitBlocked : kExitOk; }

std::string format_env_report(const json& report) {
    std::ostringstream out;
    out << "platform: " << report.value("platform", "") << "\n";
    for (const auto& name : kCheckOrder) {
        if (!report["checks"].contains(name)) continue;
        out << "  " << name << std::string(14 - name.size(), ' ') << report["checks"][name].get<std::string>()
            << indent_why(report["details"][name]) << "\n";
    }
    out << "headroom: " << fixed(report.value("headroom_gb", 0.0), 1) << " GB ("
        << report["details"]["headroom"].value("from", "") << ")\n"
        << "verdict: " << report.value("verdict", "") << "\n";
    return out.str();
}

}  // namespace sg::preflight
