#include "preflight/checks.hpp"

#include <algorithm>
#include <cmath>

#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::preflight {
namespace {

using nlohmann::json;

constexpr double kGB = 1e9;
constexpr double kShmShareWarn = 0.25;     // /dev/shm allowed more than this share of a unified pool
constexpr double kPageCacheWarnGB = 5;     // on one pool, this much page cache may stand between a run and its memory
constexpr double kHotC = 85;               // already this hot before training: it will throttle soon
constexpr double kBusyUtilPct = 50;        // someone else is computing on the GPU
constexpr double kNearCap = 0.9;           // as the throttle detector judges the cap
constexpr double kDiskFloorGB = 10;        // logs, tokenizer caches and a few small checkpoints
constexpr int kCheckpointsKept = 3;        // warn unless a few checkpoints fit (HF keeps all unless told)

Check pass(json details = json::object()) { return {"pass", std::move(details)}; }
Check warn(const std::string& detail, json details = json::object()) { return {"warn: " + detail, std::move(details)}; }
Check skip(const std::string& reason, json details = json::object()) { return {"skip: " + reason, std::move(details)}; }
Check info(const std::string& reading, json details = json::object()) { return {"info: " + reading, std::move(details)}; }
Check fail(const std::string& why, json details = json::object()) {
    details["why"] = why;
    return {"fail", std::move(details)};
}

json optional_json(const std::optional<double>& v, int decimals = 2) {
    if (!v) return json();
    const double scale = std::pow(10.0, decimals);
    return std::round(*v * scale) / scale;
}
json optional_json(const std::optional<std::string>& v) { return v ? json(*v) : json(); }

std::string gb(double value) { return fixed(value, 1) + " GB"; }

struct Version {
    long long major = 0;
    long long minor = 0;
};

std::optional<Version> parse_version(std::string_view text) {
    auto parts = split(text, '.');
    if (parts.size() < 2) return std::nullopt;
    auto major = parse_int(parts[0]);
    auto minor = parse_int(parts[1]);
    if (!major || !minor) return std::nullopt;
    return Version{*major, *minor};
}

// "sm_121" -> (12, 1, ""), "compute_90" -> (9, 0, ""), "sm_90a" -> (9, 0, "a").
struct ArchEntry {
    bool ptx = false;
    long long major = 0;
    long long minor = 0;
    std::string suffix;
};

std::optional<ArchEntry> parse_arch(std::string_view entry) {
    ArchEntry arch;
    if (entry.rfind("sm_", 0) == 0) entry.remove_prefix(3);
    else if (entry.rfind("compute_", 0) == 0) entry.remove_prefix(8), arch.ptx = true;
    else return std::nullopt;
    size_t digits = 0;
    while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits]))) ++digits;
    auto number = parse_int(entry.substr(0, digits));
    if (!number || *number < 10) return std::nullopt;
    arch.major = *number / 10;
    arch.minor = *number % 10;
    arch.suffix = std::string(entry.substr(digits));
    return arch;
}

json gpu_json(const GpuInfo& gpu) {
    return {{"index", gpu.index},
            {"name", gpu.name},
            {"compute_cap", optional_json(gpu.compute_cap)},
            {"architecture", gpu.compute_cap ? json(gpu_architecture(*gpu.compute_cap)) : json()},
            {"driver", optional_json(gpu.driver_version)},
            {"memory_total_mib", optional_json(gpu.memory_total_mib, 0)}};
}

// Why a GB10 does not look like a DGX Spark's, or "" when it does.
std::string spark_mismatch(const Hardware& hw) {
    const GpuInfo& gpu = hw.gpus.front();
    std::vector<std::string> odd;
    if (hw.cpu_arch != "aarch64") odd.push_back("the CPU is " + hw.cpu_arch + ", not aarch64");
    if (gpu.compute_cap && *gpu.compute_cap != "12.1") odd.push_back("compute capability " + *gpu.compute_cap + ", not 12.1");
    return join(odd, "; ");
}

std::string meminfo_detail(const MemInfo& m) {
    return gb(m.available / kGB) + " available of " + gb(m.total / kGB);
}

json tenant_json(const Tenant& t) {
    return {{"pid", t.pid},
            {"kind", t.kind},
            {"command", t.command},
            {"rss_gb", optional_json(t.rss_gb, 3)},
            {"gpu_memory_gb", optional_json(t.gpu_memory_gb, 3)},
            {"memory_fraction", optional_json(t.memory_fraction)},
            {"on_gpu", t.on_gpu}};
}

std::string tenant_text(const Tenant& t) {
    std::vector<std::string> held;
    if (t.gpu_memory_gb) held.push_back(gb(*t.gpu_memory_gb) + " on the GPU");
    if (t.rss_gb) held.push_back(gb(*t.rss_gb) + " resident");
    if (t.memory_fraction) held.push_back("capped at " + fixed(*t.memory_fraction * 100, 0) + "% of GPU memory");
    return t.kind + " (pid " + std::to_string(t.pid) + (held.empty() ? "" : ", " + join(held, ", ")) + ")";
}

}  // namespace

std::string gpu_architecture(std::string_view compute_cap) {
    auto version = parse_version(compute_cap);
    if (!version) return "";
    switch (version->major) {
        case 12: case 11: case 10: return "Blackwell";
        case 9: return "Hopper";
        case 8: return version->minor == 9 ? "Ada Lovelace" : "Ampere";
        case 7: return version->minor == 5 ? "Turing" : "Volta";
        case 6: return "Pascal";
        case 5: return "Maxwell";
        default: return "";
    }
}

bool has_kernels_for(const std::vector<std::string>& arch_list, std::string_view compute_cap) {
    auto device = parse_version(compute_cap);
    if (!device) return true;  // nothing to judge against
    const long long device_number = device->major * 10 + device->minor;
    return std::any_of(arch_list.begin(), arch_list.end(), [&](const std::string& entry) {
        auto arch = parse_arch(entry);
        if (!arch) return false;
        const long long number = arch->major * 10 + arch->minor;
        if (arch->suffix == "a") return number == device_number;  // arch-specific: that chip only
        if (arch->ptx) return number <= device_number;              // PTX is compiled for newer chips at load
        return arch->major == device->major && arch->minor <= device->minor;
    });
}

Check check_hardware(const Hardware& hw) {
    json details = {{"platform", hw.platform}, {"platform_profile", hw.platform_profile},
                    {"cpu_architecture", hw.cpu_arch}, {"cuda_version", optional_json(hw.cuda_version)},
                    {"gpus", json::array()}};
    for (const auto& gpu : hw.gpus) details["gpus"].push_back(gpu_json(gpu));
    if (hw.gpus.empty()) {
        details["problem"] = hw.gpu_problem;
        return skip("no NVIDIA GPU (" + hw.gpu_problem + ")", details);
    }
    const GpuInfo& gpu = hw.gpus.front();
    std::string reading = gpu.name;
    if (hw.gpus.size() > 1) reading = std::to_string(hw.gpus.size()) + " x " + reading;
    if (gpu.compute_cap) reading += " (compute " + *gpu.compute_cap + ", " + gpu_architecture(*gpu.compute_cap) + ")";
    if (gpu.driver_version) reading += ", driver " + *gpu.driver_version;
    if (hw.cuda_version) reading += ", CUDA " + *hw.cuda_version;
    reading += ", " + hw.cpu_arch;
    if (gpu.name.find("GB10") != std::string::npos) {
        if (std::string odd = spark_mismatch(hw); !odd.empty()) return warn("a GB10, but " + odd + ": not a DGX Spark as known", details);
    }
    return info(reading, details);
}

Check check_cuda_abi(const TorchReading& torch, const Hardware& hw) {
    const bool gpu = !hw.gpus.empty();
    const std::optional<std::string> cap = gpu ? hw.gpus.front().compute_cap : std::nullopt;
    json details = {{"python", torch.python_path.value_or(torch.python)},
                    {"torch", optional_json(torch.torch_version)},
                    {"torch_cuda", optional_json(torch.cuda)},
                    {"driver_cuda", optional_json(hw.cuda_version)},
                    {"arch_list", torch.arch_list},
                    {"cuda_available", torch.cuda_available ? json(*torch.cuda_available) : json()}};
    if (torch.problem) return skip(*torch.problem, details);
    const std::string version = "PyTorch " + torch.torch_version.value_or("?");
    if (!torch.cuda) {
        if (gpu) return fail(version + " is a CPU-only build (torch.version.cuda is None): the trainer would not use the GPU", details);
        return info(version + ", a CPU-only build (torch.version.cuda is None), and no GPU here", details);
    }
    if (!gpu) return warn(version + " is built for CUDA " + *torch.cuda + " but there is no GPU here", details);
    auto built = parse_version(*torch.cuda);
    auto driver = hw.cuda_version ? parse_version(*hw.cuda_version) : std::nullopt;
    if (!built || !driver)
        return warn(version + " is built for CUDA " + *torch.cuda + "; the driver's CUDA version is unknown", details);
    const std::string pair = "CUDA " + *torch.cuda + " (" + version + ") on a driver for CUDA " + *hw.cuda_version;
    if (built->major > driver->major) return fail(pair + ": the driver is too old for this build", details);
    if (cap && !torch.arch_list.empty() && !has_kernels_for(torch.arch_list, *cap))
        return fail(version + " has no kernels for compute capability " + *cap + " (built for " + join(torch.arch_list, " ") +
                        "): \"no kernel image is available for execution on the device\"",
                    details);
    if (built->major == driver->major && built->minor > driver->minor)
        return warn(pair + ": runs by minor-version compatibility, without PTX JIT", details);
    if (torch.cuda_available && !*torch.cuda_available) return fail(pair + ", but torch.cuda.is_available() is False", details);
    return pass(details);
}

Check check_memory(const std::optional<MemInfo>& mem, bool unified, std::optional<double> shm_size, bool gpu_in_pool) {
    if (!mem) return skip("/proc/meminfo could not be read");
    const MemInfo& m = *mem;
    json details = {{"total_gb", m.total / kGB},          {"available_gb", m.available / kGB},
                    {"free_gb", m.free / kGB},            {"page_cache_gb", m.reclaimable_cache() / kGB},
                    {"shmem_gb", m.shmem / kGB},          {"hugepages_total_gb", m.hugepages_total / kGB},
                    {"hugepages_free_gb", m.hugepages_free / kGB}, {"swap_total_gb", m.swap_total / kGB},
                    {"source", "/proc/meminfo (nvidia-smi's memory numbers leave out page cache on unified memory)"}};
    std::vector<std::string> concerns;
    const double cache_gb = m.reclaimable_cache() / kGB;
    if (unified && cache_gb >= kPageCacheWarnGB)
        concerns.push_back(fixed(cache_gb, 0) + "GB page cache (the GPU may not reclaim it: sync; echo 3 > /proc/sys/vm/drop_caches)");
    if (m.hugepages_total > 0)
        concerns.push_back(fixed(m.hugepages_total / kGB, 1) + "GB reserved as huge pages (" + fixed(m.hugepages_free / kGB, 1) + "GB of them free)");
    if (shm_size) details["dev_shm_gb"] = *shm_size / kGB;
    if (gpu_in_pool && shm_size && m.total > 0 && *shm_size > kShmShareWarn * m.total)
        concerns.push_back("/dev/shm may grow to " + fixed(*shm_size / kGB, 0) + "GB (" + fixed(100 * *shm_size / m.total, 0) +
                           "% of the pool), carved from the same unified memory the GPU uses");
    if (gpu_in_pool && m.swap_total > 0)
        concerns.push_back(fixed(m.swap_total / kGB, 1) + "GB of swap on unified memory (the GPU's allocations cannot swap; "
                           "swapping the rest stalls the host before the pool reads as exhausted)");
    if (concerns.empty()) return pass(details);
    details["reading"] = meminfo_detail(m);
    return warn(join(concerns, "; "), details);
}

Check check_gpu_now(const std::vector<telemetry::GpuSample>& gpus, const std::string& problem,
                    std::optional<double> platform_cap_w) {
    if (gpus.empty()) return skip("no GPU telemetry (" + problem + ")");
    const telemetry::GpuAggregate now = telemetry::aggregate(gpus);
    const std::optional<double> cap = platform_cap_w ? platform_cap_w : now.power_limit_w;
    json details = {{"temp_c", optional_json(now.temp_c, 1)},      {"power_w", optional_json(now.power_w)},
                    {"power_limit_w", optional_json(now.power_limit_w)}, {"cap_w", optional_json(cap)},
                    {"sm_clock_mhz", optional_json(now.sm_clock_mhz, 0)}, {"util_pct", optional_json(now.util_pct, 1)},
                    {"throttle", telemetry::throttle_text(now.throttle)}};
    std::vector<std::string> concerns;
    if (now.temp_c && *now.temp_c >= kHotC) concerns.push_back("already " + fixed(*now.temp_c, 0) + " C before training");
    if (now.util_pct && *now.util_pct >= kBusyUtilPct) concerns.push_back("already " + fixed(*now.util_pct, 0) + "% busy");
    if (now.power_w && cap && *now.power_w >= kNearCap * *cap)
        concerns.push_back("already drawing " + fixed(*now.power_w, 0) + " W of a " + fixed(*cap, 0) + " W cap");
    const std::uint64_t held = now.throttle.value_or(0) &
                               (telemetry::kThrottlePowerBits | telemetry::kThrottleThermalBits | telemetry::kThrottleHwSlowdown);
    if (held) concerns.push_back("clocks held down now: " + telemetry::throttle_text(held));
    if (!concerns.empty()) return warn(join(concerns, "; "), details);
    std::vector<std::string> reading;
    if (now.temp_c) reading.push_back(fixed(*now.temp_c, 0) + " C");
    if (now.power_w) reading.push_back(fixed(*now.power_w, 1) + " W" + (cap ? " of a " + fixed(*cap, 0) + " W cap" : ""));
    if (now.util_pct) reading.push_back(fixed(*now.util_pct, 0) + "% busy");
    return info(reading.empty() ? "no value reported" : join(reading, ", "), details);
}

Check check_tenants(const std::vector<Tenant>& tenants, const std::string& problem) {
    json details = {{"tenants", json::array()}};
    if (!problem.empty()) details["problem"] = problem;
    std::vector<std::string> names;
    for (const auto& t : tenants) {
        details["tenants"].push_back(tenant_json(t));
        names.push_back(tenant_text(t));
    }
    if (tenants.empty()) return pass(details);
    return warn(std::to_string(tenants.size()) + " other tenant" + (tenants.size() > 1 ? "s" : "") + ": " + join(names, ", "), details);
}

Check check_container(const ContainerInfo& c, const std::optional<MemInfo>& mem) {
    json details = {{"container", c.container}, {"kind", c.kind}, {"evidence", c.evidence},
                    {"memory_limit_gb", optional_json(c.memory_limit_gb)}};
    if (c.memory_limit_gb && mem && *c.memory_limit_gb * kGB < mem->total)
        return warn("a " + c.kind + (c.container ? " container" : "cgroup") + " limited to " + gb(*c.memory_limit_gb) + " of the " +
                        gb(mem->total / kGB) + " pool: /proc/meminfo overstates what the trainer may use",
                    details);
    return info(c.container ? "container (" + c.kind + ": " + c.evidence + ")" : "bare metal", details);
}

Check check_cluster(const ClusterSettings& s, int local_gpus) {
    const long long nodes = machines(s, local_gpus);
    const long long gpus_here = std::max(local_gpus, 1);
    json details = {{"machines", nodes},
                    {"world_size", s.world_size ? json(*s.world_size) : json()},
                    {"local_world_size", s.local_world_size ? json(*s.local_world_size) : json()},
                    {"tensor_parallel", s.tensor_parallel ? json(*s.tensor_parallel) : json()},
                    {"gpus_here", local_gpus},
                    {"evidence", s.evidence}};
    const long long tp = s.tensor_parallel.value_or(1);
    if (tp > gpus_here && nodes > 1)
        return fail("tensor parallelism across machines (tensor parallel size " + std::to_string(tp) + ", " +
                        std::to_string(nodes) + " machines with " + std::to_string(gpus_here) + " GPU" +
                        (gpus_here > 1 ? "s" : "") + " each): use DDP or FSDP across machines and keep tensor parallelism within one",
                    details);
    if (tp > gpus_here)
        return fail("tensor parallel size " + std::to_string(tp) + " needs " + std::to_string(tp) + " GPUs; this machine has " +
                        std::to_string(local_gpus),
                    details);
    if (nodes > 1) return info(std::to_string(nodes) + " machines, data parallel (" + join(s.evidence, ", ") + ")", details);
    return pass(details);
}

Check check_disk(const DiskReading& disk, std::optional<double> checkpoint) {
    json details = {{"path", disk.path}, {"from", disk.from}, {"measured_at", disk.measured_at},
                    {"free_gb", optional_json(disk.free_gb)}, {"checkpoint_gb", optional_json(checkpoint)}};
    if (!disk.problem.empty()) details["problem"] = disk.problem;
    if (!disk.free_gb) return skip("free space unknown (" + disk.problem + ")", details);
    const double free = *disk.free_gb;
    const std::string where = gb(free) + " free at " + disk.measured_at;
    if (checkpoint && free < *checkpoint) return fail(where + ": less than one checkpoint (" + gb(*checkpoint) + ")", details);
    if (checkpoint && free < kCheckpointsKept * *checkpoint)
        return warn(where + ": room for fewer than " + std::to_string(kCheckpointsKept) + " checkpoints of " + gb(*checkpoint) +
                        " (limit them with save_total_limit)",
                    details);
    if (free < kDiskFloorGB) return warn(where, details);
    return pass(details);
}

Check check_drop_caches(const std::string& blocker, bool unified) {
    json details = {{"root", blocker.rfind("not root", 0) != 0}, {"writable", blocker.empty()}};
    if (blocker.empty()) return pass(details);
    const std::string why = blocker + ": the OOM ladder's drop-caches rung will be skipped";
    return unified ? warn(why, details) : info(why, details);
}

Check check_workload(const accounting::Plan& plan) {
    json details = {{"verdict", std::string(accounting::name(plan.verdict))}, {"peak_gb", plan.estimate.peak_gb},
                    {"budget_gb", plan.budget.budget_gb},   {"headroom_gb", plan.headroom_gb},
                    {"warnings", plan.warnings}};
    const std::string numbers = gb(plan.estimate.peak_gb) + " peak against a " + gb(plan.budget.budget_gb) + " budget";
    switch (plan.verdict) {
        case accounting::Verdict::does_not_fit: return fail("the workload does not fit: " + numbers, details);
        case accounting::Verdict::tight: return warn("tight: " + numbers + ", " + gb(plan.headroom_gb) + " headroom", details);
        case accounting::Verdict::fits: break;
    }
    return pass(details);
}

double checkpoint_gb(const accounting::Plan& plan) {
    const double weights = plan.workload.method == accounting::Method::full ? plan.estimate.weights_gb : plan.estimate.adapter_gb;
    return weights + plan.estimate.optimizer_gb;
}

std::string verdict(const std::map<std::string, Check>& checks, bool workload_fits) {
    bool warned = false;
    for (const auto& [name, check] : checks) {
        if (check.value == "fail") return "blocked";
        warned |= check.value.rfind("warn", 0) == 0 || check.value.rfind("skip", 0) == 0;
    }
    if (!workload_fits) return "blocked";
    return warned ? "ready-with-warnings" : "ready";
}

}  // namespace sg::preflight
