#include "accounting/platform.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "oom/memory_guard.hpp"
#include "util/errors.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg::accounting {
namespace {

namespace fs = std::filesystem;
constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;

double non_negative(const fs::path& file, const toml::table& table, const char* key, double fallback) {
    const toml::node* node = table.get(key);
    if (!node) return fallback;
    auto value = node->value<double>();
    if (!value || *value < 0 || !std::isfinite(*value))
        throw UsageError(where(file, *node), std::string("'") + key + "' must be a non-negative number");
    return *value;
}

bool close_to(double a, double b) { return a > 0 && b > 0 && std::abs(a - b) <= 0.1 * b; }

std::optional<double> gpu_total_gb(const MachineState& m) {
    if (m.gpus.gpus.empty() || !m.gpus.gpus[0].memory_total_mib) return std::nullopt;
    return *m.gpus.gpus[0].memory_total_mib * kMiB / kGB;
}

bool gpu_named(const PlatformProfile& p, const MachineState& m) {
    if (m.gpus.gpus.empty()) return false;
    const std::string name = to_lower(m.gpus.gpus[0].name);
    return std::any_of(p.gpu_names.begin(), p.gpu_names.end(),
                       [&](const std::string& n) { return name.find(to_lower(n)) != std::string::npos; });
}

Budget unified_budget(const PlatformProfile& p, const MachineState& m) {
    const bool this_machine = m.meminfo && (p.memory_gb == 0 || gpu_named(p, m) || close_to(m.meminfo->total / kGB, p.memory_gb));
    Budget b;
    b.guard_floor_gb = *oom::resolve_floor(std::nullopt, true, this_machine ? m.meminfo->total : p.memory_gb * kGB) / kGB;
    if (!this_machine) {
        b.budget_gb = p.memory_gb - p.reserve_gb;
        b.source = p.name + " profile: " + fixed(p.memory_gb, 0) + " GB pool - " + fixed(p.reserve_gb, 1) + " GB OS/driver reserve";
        return b;
    }
    b.budget_gb = m.meminfo->available / kGB - p.reserve_gb;
    b.page_cache_gb = m.meminfo->reclaimable_cache() / kGB;
    b.free_gb = m.meminfo->free / kGB - p.reserve_gb;
    b.source = "/proc/meminfo MemAvailable " + fixed(m.meminfo->available / kGB, 1) + " GB - " + fixed(p.reserve_gb, 1) +
               " GB OS/driver reserve";
    return b;
}

Budget discrete_budget(const PlatformProfile& p, const MachineState& m) {
    Budget b;
    const auto total = gpu_total_gb(m);
    const bool this_machine = total && (p.memory_gb == 0 || close_to(*total, p.memory_gb));
    if (!this_machine) {
        b.budget_gb = p.memory_gb - p.reserve_gb;
        b.source = p.name + " profile: " + fixed(p.memory_gb, 0) + " GB card - " + fixed(p.reserve_gb, 1) + " GB reserve";
        return b;
    }
    const auto& gpu = m.gpus.gpus[0];
    const double used = gpu.memory_used_mib.value_or(0) * kMiB / kGB;
    b.budget_gb = *total - used - p.reserve_gb;
    b.source = "nvidia-smi GPU " + std::to_string(gpu.index) + " (" + gpu.name + "): " + fixed(*total, 1) + " GB - " +
               fixed(used, 1) + " GB held by other processes - " + fixed(p.reserve_gb, 1) + " GB reserve";
    return b;
}

}  // namespace

PlatformProfile load_platform(const fs::path& file) {
    const toml::table t = parse_toml_file(file);
    reject_unknown_keys(file, t, {"description", "unified", "memory_gb", "reserve_gb", "tight_margin", "gpu_names",
                                  "cuda_context_gb", "host_process_gb", "fragmentation"});
    PlatformProfile p;
    p.name = file.stem().string();
    p.file = file;
    p.description = t["description"].value_or(std::string());
    const toml::node* unified = t.get("unified");
    if (!unified || !unified->is_boolean()) throw UsageError(file.string(), "'unified = true|false' is required");
    p.unified = unified->value_or(false);
    p.memory_gb = non_negative(file, t, "memory_gb", 0);
    p.reserve_gb = non_negative(file, t, "reserve_gb", 0);
    p.tight_margin = non_negative(file, t, "tight_margin", 0.10);
    p.traits.unified = p.unified;
    p.traits.cuda_context_gb = non_negative(file, t, "cuda_context_gb", p.traits.cuda_context_gb);
    p.traits.host_process_gb = non_negative(file, t, "host_process_gb", 0);
    p.traits.fragmentation = non_negative(file, t, "fragmentation", p.traits.fragmentation);
    if (p.tight_margin >= 1) throw UsageError(where(file, *t.get("tight_margin")), "'tight_margin' is a fraction below 1");
    if (const auto* names = t["gpu_names"].as_array())
        for (const auto& n : *names)
            if (auto s = n.value<std::string>()) p.gpu_names.push_back(*s);
    return p;
}

std::vector<PlatformProfile> load_platforms() {
    std::map<std::string, PlatformProfile> by_name;
    for (const auto& dir : profile_dirs()) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir / "platforms", ec))
            if (entry.path().extension() == ".toml" && !by_name.count(entry.path().stem().string()))
                by_name.emplace(entry.path().stem().string(), load_platform(entry.path()));
    }
    std::vector<PlatformProfile> out;
    for (auto& [name, profile] : by_name) out.push_back(std::move(profile));
    return out;
}

PlatformProfile find_platform(const std::vector<PlatformProfile>& profiles, const std::string& name) {
    std::vector<std::string> names;
    for (const auto& p : profiles) {
        if (p.name == to_lower(name)) return p;
        names.push_back(p.name);
    }
    throw UsageError("--platform", "unknown platform '" + name + "' (known: " + join(names, ", ") + ")");
}

PlatformProfile detect_platform(const std::vector<PlatformProfile>& profiles, const MachineState& machine) {
    for (const auto& p : profiles)
        if (gpu_named(p, machine)) return p;
    const PlatformProfile* best = nullptr;
    if (const auto total = gpu_total_gb(machine))
        for (const auto& p : profiles)
            if (!p.unified && p.memory_gb > 0 && (!best || std::abs(p.memory_gb - *total) < std::abs(best->memory_gb - *total)))
                best = &p;
    if (best && close_to(*gpu_total_gb(machine), best->memory_gb)) return *best;
    const std::string fallback = machine.gpus.gpus.empty() ? "host" : "gpu";
    return find_platform(profiles, fallback);
}

MachineState read_machine() {
    MachineState m;
    if (auto info = read_meminfo()) m.meminfo = *info;
    m.gpus = probe_gpus();
    return m;
}

Budget compute_budget(const PlatformProfile& profile, const MachineState& machine) {
    return profile.unified ? unified_budget(profile, machine) : discrete_budget(profile, machine);
}

}  // namespace sg::accounting
