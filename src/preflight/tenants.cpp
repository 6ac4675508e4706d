#include "preflight/tenants.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "supervise/capture.hpp"
#include "supervise/process_tree.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::preflight {
namespace {

constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr size_t kCommandShown = 160;

std::string basename_of(std::string_view path) { return std::filesystem::path(path).filename().string(); }

bool contains(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

// Launchers and trainers whose presence means another training job holds the pool.
bool is_trainer(const std::vector<std::string>& argv, const std::string& line) {
    static const std::vector<std::string_view> kLaunchers = {"torchrun", "accelerate", "deepspeed", "llamafactory-cli",
                                                             "axolotl", "tune", "trl"};
    static const std::vector<std::string_view> kModules = {"torch.distributed.run", "trl", "axolotl", "llamafactory",
                                                           "torchtune", "accelerate", "deepspeed", "unsloth"};
    const std::string program = argv.empty() ? "" : basename_of(argv[0]);
    if (std::find(kLaunchers.begin(), kLaunchers.end(), program) != kLaunchers.end()) return true;
    if (program.rfind("python", 0) != 0) return false;
    if (contains(line, "unsloth")) return true;
    for (size_t i = 1; i < argv.size(); ++i) {
        if (argv[i] == "-m" && i + 1 < argv.size())
            return std::find(kModules.begin(), kModules.end(), argv[i + 1]) != kModules.end();
        if (argv[i].rfind("-", 0) == 0) continue;
        const std::string script = to_lower(basename_of(argv[i]));
        return script.size() > 3 && script.compare(script.size() - 3, 3, ".py") == 0 &&
               (contains(script, "train") || contains(script, "finetune") || contains(script, "sft"));
    }
    return false;
}

std::vector<std::string> read_cmdline(pid_t pid) {
    auto text = read_file_prefix("/proc/" + std::to_string(pid) + "/cmdline", 64 * 1024);
    if (!text || text->empty()) return {};
    if (text->back() == '\0') text->pop_back();
    return split(*text, '\0');
}

std::set<pid_t> self_and_ancestors() {
    std::set<pid_t> out;
    for (pid_t pid = ::getpid(); pid > 1 && out.insert(pid).second;) {
        auto stat = read_proc_stat(pid);
        if (!stat) break;
        pid = stat->ppid;
    }
    return out;
}

std::string shortened(const std::vector<std::string>& argv) {
    std::string line = join(argv, " ");
    return line.size() > kCommandShown ? line.substr(0, kCommandShown) + "..." : line;
}

std::vector<ComputeApp> query_compute_apps(std::string* problem) {
    auto run = capture_output({"nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"}, 10);
    if (!run || run->timed_out || run->exit_code != 0) {
        *problem = run ? "nvidia-smi --query-compute-apps exited " + std::to_string(run->exit_code) : "nvidia-smi: " + run.error().message;
        return {};
    }
    auto apps = parse_compute_apps(run->out);
    if (!apps) *problem = apps.error().message;
    return apps ? *apps : std::vector<ComputeApp>{};
}

}  // namespace

Result<std::vector<ComputeApp>> parse_compute_apps(std::string_view csv) {
    std::vector<ComputeApp> apps;
    for (const auto& line : split(csv, '\n')) {
        if (trim(line).empty()) continue;
        auto cells = split(line, ',');
        if (cells.size() < 3) return make_error("nvidia-smi --query-compute-apps: expected 3 fields in '" + line + "'");
        auto pid = parse_int(trim(cells[0]));
        if (!pid) return make_error("nvidia-smi --query-compute-apps: bad pid in '" + line + "'");
        // A process name may itself hold commas: everything between the pid and the last field.
        std::vector<std::string> name_parts(cells.begin() + 1, cells.end() - 1);
        apps.push_back({static_cast<pid_t>(*pid), std::string(trim(join(name_parts, ","))), telemetry::smi_number(cells.back())});
    }
    return apps;
}

std::optional<std::string> tenant_kind(std::string_view comm, const std::vector<std::string>& argv) {
    const std::string name = to_lower(comm);
    const std::string line = to_lower(join(argv, " "));
    if (contains(name, "vllm") || contains(line, "vllm.entrypoints") || contains(line, "vllm serve")) return "vllm";
    if (contains(name, "ollama")) return "ollama";
    if (contains(line, "sglang.launch_server") || contains(name, "sglang")) return "sglang";
    if (contains(name, "text-generation") || contains(line, "text-generation-launcher")) return "tgi";
    if (contains(name, "tritonserver") || contains(line, "trtllm-serve")) return "triton";
    if (contains(name, "llama-server") || contains(name, "llama_server")) return "llama.cpp";
    if (is_trainer(argv, line)) return "trainer";
    return std::nullopt;
}

std::optional<double> memory_fraction(const std::vector<std::string>& argv) {
    static const std::vector<std::string> kFlags = {"--gpu-memory-utilization", "--gpu_memory_utilization",
                                                    "--mem-fraction-static", "--mem_fraction_static"};
    for (size_t i = 0; i < argv.size(); ++i)
        for (const auto& flag : kFlags) {
            std::string text;
            if (argv[i] == flag && i + 1 < argv.size()) text = argv[i + 1];
            else if (argv[i].rfind(flag + "=", 0) == 0) text = argv[i].substr(flag.size() + 1);
            else continue;
            if (auto value = parse_double(text)) return *value;
        }
    return std::nullopt;
}

std::vector<Tenant> find_tenants(bool query_gpu, std::string* problem) {
    const std::set<pid_t> ours = self_and_ancestors();
    std::vector<ComputeApp> apps = query_gpu ? query_compute_apps(problem) : std::vector<ComputeApp>{};
    std::vector<Tenant> tenants;
    for (const auto& stat : list_processes()) {
        if (ours.count(stat.pid) || stat.state == 'Z') continue;
        auto app = std::find_if(apps.begin(), apps.end(), [&](const ComputeApp& a) { return a.pid == stat.pid; });
        const std::vector<std::string> argv = read_cmdline(stat.pid);
        if (argv.empty() && app == apps.end()) continue;  // kernel threads
        auto kind = tenant_kind(stat.comm, argv);
        if (!kind && app == apps.end()) continue;
        Tenant t;
        t.pid = stat.pid;
        t.kind = kind ? *kind : "gpu process";
        t.command = argv.empty() ? app->name : shortened(argv);
        t.rss_gb = rss_bytes(stat.pid) / kGB;
        t.memory_fraction = memory_fraction(argv);
        if (app != apps.end()) {
            t.on_gpu = true;
            if (app->used_mib) t.gpu_memory_gb = *app->used_mib * kMiB / kGB;
        }
        tenants.push_back(std::move(t));
    }
    for (const auto& app : apps)  // a process of another PID namespace: only the driver knows it
        if (std::none_of(tenants.begin(), tenants.end(), [&](const Tenant& t) { return t.pid == app.pid; })) {
            Tenant t;
            t.pid = app.pid;
            t.kind = "gpu process";
            t.command = app.name;
            t.on_gpu = true;
            if (app.used_mib) t.gpu_memory_gb = *app.used_mib * kMiB / kGB;
            tenants.push_back(std::move(t));
        }
    return tenants;
}

}  // namespace sg::preflight
