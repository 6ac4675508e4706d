#pragma once
// /proc/meminfo: the truth about the memory pool (on a DGX Spark, the GPU's memory too).

#include <optional>
#include <string_view>

#include "util/result.hpp"

namespace sg {

struct MemInfo {
    // Bytes.
    double total = 0;
    double free = 0;
    double available = 0;
    double cached = 0;        // Cached: page cache (includes shmem)
    double buffers = 0;
    double shmem = 0;         // cannot be dropped
    double swap_total = 0;
    double swap_free = 0;
    double hugepages_total = 0;  // HugePages_Total × Hugepagesize: reserved, not available to others
    double hugepages_free = 0;

    // Page cache a drop_caches would give back: Cached + Buffers − Shmem.
    double reclaimable_cache() const;
};

// Parses /proc/meminfo text; MemTotal and MemFree are required, the rest default to 0
// (MemAvailable falls back to MemFree + Cached + Buffers on kernels without it).
Result<MemInfo> parse_meminfo(std::string_view text);
Result<MemInfo> read_meminfo(const char* path = "/proc/meminfo");

}  // namespace sg
