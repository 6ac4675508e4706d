#pragma once
// Platform profiles (profiles/platforms/*.toml) and the memory budget they imply: on unified
// memory the pool /proc/meminfo shows, on a discrete card the GPU's memory.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accounting/estimator.hpp"
#include "telemetry/gpu_inventory.hpp"
#include "telemetry/meminfo.hpp"

namespace sg::accounting {

struct PlatformProfile {
    std::string name;                    // file stem: "dgx-spark", "gpu-24gb"
    std::string description;
    bool unified = false;                // one pool for CPU and GPU
    double memory_gb = 0;                // the pool or card; 0 = read it from this machine
    double reserve_gb = 0;               // kept back for the OS and driver (unified) or display/driver (discrete)
    double tight_margin = 0.10;          // headroom below this fraction of the budget is "tight"
    std::vector<std::string> gpu_names;  // nvidia-smi names that identify the platform ("GB10")
    PlatformTraits traits;
    std::filesystem::path file;
};

// What was read from this machine; empty members mean "could not read".
struct MachineState {
    std::optional<MemInfo> meminfo;
    GpuInventory gpus;
};

struct Budget {
    double budget_gb = 0;
    std::string source;                  // how it was computed, in words
    double page_cache_gb = 0;            // reclaimable page cache inside the budget (unified, read from meminfo)
    double free_gb = 0;                  // memory free without dropping caches (unified)
    double guard_floor_gb = 0;           // the memory guard's default floor (unified): headroom a plan must keep
};

// Parses one profile; unknown keys and bad values throw UsageError with FILE:LINE:COLUMN.
PlatformProfile load_platform(const std::filesystem::path& file);
// Every profile in the profile directories' platforms/ folders (the first of a name wins).
std::vector<PlatformProfile> load_platforms();
// By name; an unknown name throws UsageError listing the known ones.
PlatformProfile find_platform(const std::vector<PlatformProfile>& profiles, const std::string& name);

// The profile describing this machine: a GPU named in gpu_names, else the discrete profile
// whose size is nearest the card's, else "host" (no GPU: plan against this machine's memory).
PlatformProfile detect_platform(const std::vector<PlatformProfile>& profiles, const MachineState& machine);

// Reads /proc/meminfo and nvidia-smi once.
MachineState read_machine();

// The budget for `profile`. The machine's readings are used only when they describe this profile
// (a detected GPU, or a memory size within 10% of the profile's); otherwise the profile's nominal size.
Budget compute_budget(const PlatformProfile& profile, const MachineState& machine);

}  // namespace sg::accounting
