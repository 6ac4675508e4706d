// What one telemetry sample costs sparkguard's own process, timed over an hour of 1 s samples
// (3600) and compared with reading /proc/meminfo alone in the same run. Built by
// scripts/bench/telemetry_sample.sh; prints medians of 5 runs.
//
//   bench_telemetry_sample FAKE_NVML_LIBRARY OUT_DIR
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvml.hpp"
#include "telemetry/thermal_csv.hpp"
#include "util/clock.hpp"

using namespace sg;
using namespace sg::telemetry;

namespace {

constexpr int kSamples = 3600;  // one hour at the shortest interval, 1 s
constexpr int kRuns = 5;

struct Cost {
    double cpu_s = 0;
    double wall_s = 0;
};

double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Cost time_it(const std::function<void()>& sample) {
    const double cpu = cpu_now(), wall = monotonic_seconds();
    for (int i = 0; i < kSamples; ++i) sample();
    return {cpu_now() - cpu, monotonic_seconds() - wall};
}

Cost median(std::vector<Cost> costs) {
    std::sort(costs.begin(), costs.end(), [](const Cost& a, const Cost& b) { return a.cpu_s < b.cpu_s; });
    return costs[costs.size() / 2];
}

ThermalRow row_from(const std::vector<GpuSample>& gpus, const MemInfo& mem, int i) {
    ThermalRow row;
    row.timestamp = rfc3339_now();
    row.elapsed_s = i;
    row.attempt = 1;
    row.step = i;
    row.gpu = aggregate(gpus);
    row.set_memory(mem);
    row.trainer_rss_gb = 42.0;
    return row;
}

void report(const char* name, Cost cost, Cost baseline) {
    const double per_sample_us = cost.cpu_s / kSamples * 1e6;
    std::printf("%-34s %8.1f us CPU/sample  %6.3f%% of a core at 1 s  wall %8.1f us/sample  %5.1fx meminfo alone\n", name,
                per_sample_us, per_sample_us / 1e6 * 100, cost.wall_s / kSamples * 1e6, cost.cpu_s / baseline.cpu_s);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s FAKE_NVML_LIBRARY OUT_DIR\n", argv[0]);
        return 2;
    }
    auto nvml = Nvml::open(argv[1]);
    if (!nvml) {
        std::fprintf(stderr, "%s\n", nvml.error().message.c_str());
        return 1;
    }
    const std::filesystem::path out = argv[2];
    const SmiQuery query{{"index", "temp", "power", "power_limit", "sm_clock", "util", "throttle"},
                         {"index", "temperature.gpu", "power.draw", "enforced.power.limit", "clocks.sm", "utilization.gpu",
                          "clocks_event_reasons.active"}};
    const std::string line = "0, 71, 98.42, [N/A], 2405, 97, 0x0000000000000004";

    std::vector<Cost> baseline, via_nvml, via_smi;
    for (int run = 0; run < kRuns; ++run) {
        std::filesystem::remove(out / "nvml.csv");
        std::filesystem::remove(out / "smi.csv");
        auto nvml_csv = ThermalCsvWriter::open(out / "nvml.csv");
        auto smi_csv = ThermalCsvWriter::open(out / "smi.csv");
        if (!nvml_csv || !smi_csv) return 1;
        int i = 0;
        baseline.push_back(time_it([&] { (void)read_meminfo(); }));
        via_nvml.push_back(time_it([&] {
            (void)nvml_csv->write(row_from((*nvml)->sample(), *read_meminfo(), i++));
        }));
        via_smi.push_back(time_it([&] {
            (void)smi_csv->write(row_from({*parse_smi_line(query, line)}, *read_meminfo(), i++));
        }));
    }
    const Cost base = median(baseline);
    std::printf("%d samples, median of %d runs\n", kSamples, kRuns);
    report("/proc/meminfo alone (baseline)", base, base);
    report("NVML (fake) + meminfo + CSV row", median(via_nvml), base);
    report("nvidia-smi line + meminfo + CSV row", median(via_smi), base);
    return 0;
}
