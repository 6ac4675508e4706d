#pragma once
// The preflight checks as pure judgements: readings in, a check value and the readings behind it
// out. Values are env-report.json's: "pass", "fail", "warn: DETAIL", "skip: REASON",
// "info: READING". A fail says why in details["why"].

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/plan.hpp"
#include "preflight/cluster.hpp"
#include "preflight/host.hpp"
#include "preflight/tenants.hpp"
#include "telemetry/gpu_inventory.hpp"
#include "telemetry/gpu_sample.hpp"
#include "telemetry/meminfo.hpp"

namespace sg::preflight {

struct Check {
    std::string value;
    nlohmann::json details = nlohmann::json::object();
};

// "Blackwell" for 12.1, "Hopper" for 9.0, ...; empty when unknown.
std::string gpu_architecture(std::string_view compute_cap);
// Whether PyTorch's arch list has kernels that run on `compute_cap`: a cubin of the same major
// and a minor at most the device's (not the arch-specific "a" ones), or PTX it can JIT.
bool has_kernels_for(const std::vector<std::string>& arch_list, std::string_view compute_cap);

struct Hardware {
    std::vector<GpuInfo> gpus;
    std::string gpu_problem;                  // why there are none
    std::optional<std::string> cuda_version;  // the driver's
    std::string cpu_arch;                     // uname -m
    std::string platform;                     // dgx-spark | generic-nvidia | cpu-only
    std::string platform_profile;             // the profile it implies: dgx-spark, gpu-24gb, host
};

Check check_hardware(const Hardware& hw);
Check check_cuda_abi(const TorchReading& torch, const Hardware& hw);                 // G1
// G3. `gpu_in_pool`: a GPU allocates from this pool too (a DGX Spark), so swap and a large
// /dev/shm (how large it may grow: `shm_size`) are warned about.
Check check_memory(const std::optional<MemInfo>& mem, bool unified, std::optional<double> shm_size = std::nullopt,
                   bool gpu_in_pool = false);
Check check_gpu_now(const std::vector<telemetry::GpuSample>& gpus, const std::string& problem,
                    std::optional<double> platform_cap_w);                        // G4
Check check_tenants(const std::vector<Tenant>& tenants, const std::string& problem);  // G6
Check check_container(const ContainerInfo& container, const std::optional<MemInfo>& mem);  // G9
Check check_cluster(const ClusterSettings& cluster, int local_gpus);               // G10
Check check_disk(const DiskReading& disk, std::optional<double> checkpoint_gb);
Check check_drop_caches(const std::string& blocker, bool unified);
Check check_workload(const accounting::Plan& plan);

// What one checkpoint of the plan's run takes on disk: the trainable weights (all of them for a
// full fine-tune, the adapter otherwise) and the optimizer state.
double checkpoint_gb(const accounting::Plan& plan);

// "blocked" when a check fails or the workload does not fit; "ready-with-warnings" when a
// warning or a skip remains; else "ready".
std::string verdict(const std::map<std::string, Check>& checks, bool workload_fits);

}  // namespace sg::preflight
