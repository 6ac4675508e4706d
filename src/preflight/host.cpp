#include "preflight/host.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "ladder/command_line.hpp"
#include "ladder/knobs.hpp"
#include "ladder/trainer_profile.hpp"
#include "supervise/capture.hpp"
#include "supervise/executable.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::preflight {
namespace {

constexpr double kGB = 1e9;
constexpr double kNoLimitBytes = 1e18;  // cgroup v1 writes "no limit" as a number near 2^63

// Prints one JSON line: what the trainer's PyTorch was built for. Errors are data, not exits.
constexpr const char* kTorchProbe = R"py(
import json, sys
out = {"python": sys.executable}
try:
    import torch
except BaseException as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
else:
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda
    try:
        out["arch_list"] = list(torch.cuda.get_arch_list())
    except BaseException:
        out["arch_list"] = []
    try:
        out["cuda_available"] = bool(torch.cuda.is_available())
    except BaseException:
        pass
print(json.dumps(out))
)py";

std::string basename_of(std::string_view path) { return std::filesystem::path(path).filename().string(); }

bool is_python_name(std::string_view name) {
    if (name.rfind("python", 0) != 0) return false;
    return std::all_of(name.begin() + 6, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

std::string last_line(std::string_view text) {
    text = trim(text);
    auto newline = text.rfind('\n');
    return std::string(newline == std::string_view::npos ? text : text.substr(newline + 1));
}

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
    return j[key].get<std::string>();
}

std::string file_text(const char* path) {
    auto text = read_file_prefix(path, 64 * 1024);
    return text ? *text : "";
}

std::optional<double> limit_bytes(std::string_view text) {
    auto value = parse_double(trim(text));
    if (!value || *value <= 0 || *value >= kNoLimitBytes) return std::nullopt;  // "max", or v1's "no limit"
    return *value;
}

// The output directory the trainer's profile sees in the command, if any.
std::optional<std::string> command_output_dir(const std::vector<std::string>& command) {
    if (command.empty()) return std::nullopt;
    const auto profiles = load_trainer_profiles();
    return read_command_knobs(detect_trainer_profile(profiles, command), command).output_dir;
}

}  // namespace

std::string trainer_python(const std::vector<std::string>& command, std::string_view shebang_line) {
    if (!command.empty() && is_python_name(basename_of(command[0]))) return command[0];
    if (shebang_line.rfind("#!", 0) == 0) {
        auto words = split(trim(shebang_line.substr(2)), ' ');
        if (!words.empty() && basename_of(words[0]) == "env" && words.size() > 1 && is_python_name(words.back()))
            return words.back();
        if (!words.empty() && is_python_name(basename_of(words[0]))) return words[0];
    }
    return "python3";
}

std::string find_trainer_python(const std::vector<std::string>& command) {
    // prlimit, env, nice, nohup, taskset, numactl, ... run the trainer: look past them
    const std::vector<std::string> launched(command.begin() + static_cast<std::ptrdiff_t>(skip_wrappers(command)), command.end());
    if (launched.empty()) return "python3";
    int code = 0;
    auto path = resolve_executable(launched[0], &code);
    std::string head;
    if (path)
        if (auto text = read_file_prefix(*path, 256)) head = text->substr(0, text->find('\n'));
    return trainer_python(launched, head);
}

TorchReading parse_torch_probe(std::string_view output, std::string python) {
    TorchReading reading;
    reading.python = std::move(python);
    nlohmann::json j = nlohmann::json::parse(last_line(output), nullptr, false);
    if (!j.is_object()) {
        reading.problem = "the PyTorch probe printed no JSON: '" + last_line(output) + "'";
        return reading;
    }
    reading.python_path = optional_string(j, "python");
    if (auto error = optional_string(j, "error")) {
        reading.problem = "no PyTorch in " + reading.python_path.value_or(reading.python) + " (" + *error + ")";
        return reading;
    }
    reading.torch_version = optional_string(j, "torch");
    reading.cuda = optional_string(j, "cuda");
    if (j.contains("arch_list") && j["arch_list"].is_array())
        for (const auto& arch : j["arch_list"])
            if (arch.is_string()) reading.arch_list.push_back(arch.get<std::string>());
    if (j.contains("cuda_available") && j["cuda_available"].is_boolean()) reading.cuda_available = j["cuda_available"].get<bool>();
    return reading;
}

std::vector<std::string> torch_probe_argv(const std::string& python) { return {python, "-c", kTorchProbe}; }

TorchReading probe_torch(const std::string& python, double timeout_seconds) {
    auto run = capture_output({python, "-c", kTorchProbe}, timeout_seconds);
    TorchReading failed;
    failed.python = python;
    if (!run) failed.problem = "cannot run " + python + ": " + run.error().message;
    else if (run->timed_out) failed.problem = python + " did not answer within " + fixed(timeout_seconds, 0) + " s";
    else if (run->exit_code != 0) failed.problem = python + " exited " + std::to_string(run->exit_code) + ": " + last_line(run->err);
    else return parse_torch_probe(run->out, python);
    return failed;
}

ContainerInfo judge_container(const ContainerEvidence& e) {
    ContainerInfo info;
    auto found = [&](std::string kind, std::string why) {
        info.container = true;
        info.kind = std::move(kind);
        info.evidence = std::move(why);
    };
    const auto environ_entries = split(e.pid1_environ, '\0');
    auto marker = std::find_if(environ_entries.begin(), environ_entries.end(),
                               [](const std::string& entry) { return entry.rfind("container=", 0) == 0; });
    if (e.dockerenv) found("docker", "/.dockerenv exists");
    else if (e.containerenv) found("podman", "/run/.containerenv exists");
    else if (marker != environ_entries.end()) found(marker->substr(10), "PID 1 has " + *marker);
    else if (e.pid1_cgroup.find("kubepods") != std::string::npos) found("kubernetes", "PID 1's cgroup is under kubepods");
    else if (e.pid1_cgroup.find("docker") != std::string::npos) found("docker", "PID 1's cgroup is a docker one");
    else if (e.pid1_cgroup.find("libpod") != std::string::npos) found("podman", "PID 1's cgroup is a libpod one");
    else if (e.pid1_cgroup.find("/lxc") != std::string::npos) found("lxc", "PID 1's cgroup is an lxc one");
    else if (e.pid1_cgroup.find("containerd") != std::string::npos) found("containerd", "PID 1's cgroup is a containerd one");
    else info.evidence = "no container marker (/.dockerenv, /run/.containerenv, PID 1's environment and cgroup)";
    auto limit = limit_bytes(e.cgroup_v2_max);
    if (!limit) limit = limit_bytes(e.cgroup_v1_limit);
    if (limit) info.memory_limit_gb = *limit / kGB;
    return info;
}

ContainerEvidence read_container_evidence() {
    ContainerEvidence e;
    e.dockerenv = ::access("/.dockerenv", F_OK) == 0;
    e.containerenv = ::access("/run/.containerenv", F_OK) == 0;
    e.pid1_cgroup = file_text("/proc/1/cgroup");
    e.pid1_environ = file_text("/proc/1/environ");
    e.cgroup_v2_max = file_text("/sys/fs/cgroup/memory.max");
    e.cgroup_v1_limit = file_text("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    return e;
}

DiskReading read_checkpoint_disk(const std::vector<std::string>& command) {
    DiskReading disk;
    std::optional<std::string> output_dir;
    try {
        output_dir = command_output_dir(command);
    } catch (const Failure& e) {
        disk.problem = e.what();
    }
    disk.path = output_dir ? *output_dir : fs::current_path().string();
    disk.from = output_dir ? "the trainer's output directory in the command" : "the current directory";
    std::error_code ec;
    fs::path at = fs::absolute(disk.path, ec);
    while (!at.empty() && !fs::is_directory(at, ec) && at != at.parent_path()) at = at.parent_path();
    disk.measured_at = at.string();
    struct statvfs st {};
    if (::statvfs(at.c_str(), &st) != 0) {
        disk.problem = at.string() + ": " + errno_text(errno);
        return disk;
    }
    disk.free_gb = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize) / kGB;
    return disk;
}

std::optional<double> read_shm_size() {
    struct statvfs st {};
    if (::statvfs("/dev/shm", &st) != 0) return std::nullopt;
    return static_cast<double>(st.f_blocks) * static_cast<double>(st.f_frsize);
}

}  // namespace sg::preflight
