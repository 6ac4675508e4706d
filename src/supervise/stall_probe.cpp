#include "supervise/stall_probe.hpp"

#include "oom/kernel_evidence.hpp"
#include "supervise/capture.hpp"
#include "supervise/executable.hpp"
#include "supervise/process_tree.hpp"
#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

namespace {

std::string proc_file(pid_t pid, const char* name) {
    auto text = read_file_prefix("/proc/" + std::to_string(pid) + "/" + name, 64 * 1024);
    return text ? *text : std::string();
}

std::optional<double> read_bytes(const fs::path& file) {
    auto text = read_file_prefix(file, 256);
    if (!text) return std::nullopt;
    auto value = parse_double(trim(*text));
    return value ? std::optional(*value) : std::nullopt;  // "max" (v2, no limit) is not a number
}

// The trainer's memory cgroup: usage and limit (none when unlimited).
void read_cgroup(pid_t leader, oom::StallReadings& readings) {
    auto cgroups = read_file("/proc/" + std::to_string(leader) + "/cgroup");
    auto mountinfo = read_file("/proc/self/mountinfo");
    if (!cgroups || !mountinfo) return;
    const oom::ProcCgroups parsed = oom::parse_proc_cgroup(*cgroups);
    auto counter = oom::oom_counter_file(parsed, oom::parse_cgroup_mounts(*mountinfo));
    if (counter) read_cgroup_memory(*counter, readings);
}

}  // namespace

void read_cgroup_memory(const fs::path& counter, oom::StallReadings& readings) {
    const fs::path dir = counter.parent_path();
    const bool v1 = counter.filename() == "memory.oom_control";
    readings.cgroup_usage = read_bytes(dir / (v1 ? "memory.usage_in_bytes" : "memory.current"));
    auto limit = read_bytes(dir / (v1 ? "memory.limit_in_bytes" : "memory.max"));
    if (limit && *limit < 1e18) readings.cgroup_limit = limit;  // v1 writes "unlimited" as ~2^63
}

oom::StallReadings read_stall(const std::vector<pid_t>& tree, pid_t leader) {
    oom::StallReadings readings;
    for (pid_t pid : tree) {
        auto stat = read_proc_stat(pid);
        if (!stat) continue;
        oom::StalledProcess p;
        p.pid = pid;
        p.comm = stat->comm;
        p.state = stat->state;
        p.cpu_seconds = stat->cpu_seconds;
        p.wchan = std::string(trim(proc_file(pid, "wchan")));
        const std::string status = proc_file(pid, "status");
        p.vm_size = oom::parse_status_bytes(status, "VmSize").value_or(0);
        p.rss = oom::parse_status_bytes(status, "VmRSS").value_or(0);
        p.as_limit = oom::parse_address_space_limit(proc_file(pid, "limits"));
        readings.processes.push_back(std::move(p));
    }
    if (auto pressure = read_file_prefix("/proc/pressure/memory", 4096)) readings.psi_full_avg10 = oom::parse_psi_full_avg10(*pressure);
    read_cgroup(leader, readings);
    return readings;
}

std::string format_stall_report(int attempt, const oom::StallJudgement& judgement, const oom::StallReadings& readings,
                                const std::vector<std::string>& last_lines, const std::string& py_spy) {
    constexpr double kGB = 1e9;
    std::string text = "attempt " + std::to_string(attempt) + " stalled at " + rfc3339_now() + "\n" +
                       (judgement.memory ? "memory stall: " : "hang: ") + judgement.evidence + "\n\n" +
                       "  PID STATE WCHAN                    CPU_S     VM_GB    RSS_GB  LIMIT_GB COMM\n";
    for (const auto& p : readings.processes) {
        char row[256];
        std::snprintf(row, sizeof row, "%5d %-5c %-24s %7.1f %9.3f %9.3f %9s %s\n", p.pid, p.state,
                      (p.wchan.empty() ? "-" : p.wchan).c_str(), p.cpu_seconds, p.vm_size / kGB, p.rss / kGB,
                      p.as_limit ? fixed(*p.as_limit / kGB, 3).c_str() : "-", p.comm.c_str());
        text += row;
    }
    text += "\nmemory: " + oom::to_json(readings).dump() + "\n\nlast output lines:\n";
    for (const auto& line : last_lines) text += "  " + line + "\n";
    if (!py_spy.empty()) text += "\n" + py_spy;
    return text;
}

std::string py_spy_dumps(const std::vector<oom::StalledProcess>& processes) {
    if (!resolve_executable("py-spy", nullptr)) return "";
    std::string out;
    for (const auto& p : processes) {
        if (p.comm.rfind("python", 0) != 0) continue;
        auto dump = capture_output({"py-spy", "dump", "--pid", std::to_string(p.pid)}, 20);
        out += "py-spy dump --pid " + std::to_string(p.pid) + ":\n";
        out += dump ? dump->out + dump->err : dump.error().message + "\n";
    }
    return out;
}

}  // namespace sg
