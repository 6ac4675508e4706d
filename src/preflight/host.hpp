#pragma once
// Readings of this machine for preflight that are not GPU telemetry: the trainer's PyTorch (G1),
// container or bare metal and the container's memory limit (G9), and free disk where checkpoints
// go. Each reader has a pure half that tests feed with text.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sg::preflight {

// --- G1: the trainer's Python and its PyTorch -----------------------------------------------

// The interpreter the trainer runs: argv[0] when it is a python, else the python named by the
// script's "#!" line (torchrun, accelerate and other console scripts), else "python3".
std::string trainer_python(const std::vector<std::string>& command, std::string_view shebang_line);
// Reads argv[0]'s "#!" line (found along PATH) and applies trainer_python.
std::string find_trainer_python(const std::vector<std::string>& command);

struct TorchReading {
    std::string python;                       // the interpreter asked
    std::optional<std::string> problem;       // python could not run, or no torch: why
    std::optional<std::string> python_path;   // sys.executable
    std::optional<std::string> torch_version;
    std::optional<std::string> cuda;          // torch.version.cuda; empty for a CPU-only build
    std::vector<std::string> arch_list;       // torch.cuda.get_arch_list(): "sm_90", "compute_90"
    std::optional<bool> cuda_available;
};

// The probe's one JSON line (the last line of its stdout).
TorchReading parse_torch_probe(std::string_view output, std::string python);
// Runs the probe with `python`; never throws.
TorchReading probe_torch(const std::string& python, double timeout_seconds = 120);
// The probe's command line, for a caller that runs it itself (beside the trainer, in `run`).
std::vector<std::string> torch_probe_argv(const std::string& python);

// --- G9: container or bare metal -----------------------------------------------------------

struct ContainerEvidence {
    bool dockerenv = false;         // /.dockerenv
    bool containerenv = false;      // /run/.containerenv (podman)
    std::string pid1_cgroup;        // /proc/1/cgroup
    std::string pid1_environ;       // /proc/1/environ, NUL-separated ("container=lxc")
    std::string cgroup_v2_max;      // /sys/fs/cgroup/memory.max
    std::string cgroup_v1_limit;    // /sys/fs/cgroup/memory/memory.limit_in_bytes
};

struct ContainerInfo {
    bool container = false;
    std::string kind;                       // "docker", "podman", "kubernetes", "lxc", "containerd", ...
    std::string evidence;                   // what said so
    std::optional<double> memory_limit_gb;  // the cgroup's limit, when there is one
};

ContainerInfo judge_container(const ContainerEvidence& evidence);
ContainerEvidence read_container_evidence();

// --- disk space where checkpoints go ---------------------------------------------------------

struct DiskReading {
    std::string path;            // the directory checkpoints go to
    std::string from;            // how it was found: "--output_dir in the command", "the current directory"
    std::string measured_at;     // the nearest existing directory, where free space was measured
    std::optional<double> free_gb;
    std::string problem;
};

// The output directory the trainer's profile reads from the command, else the current directory.
DiskReading read_checkpoint_disk(const std::vector<std::string>& command);

// --- /dev/shm ----------------------------------------------------------------------------------

// How large /dev/shm may grow, in bytes; nullopt when it is not mounted.
std::optional<double> read_shm_size();

}  // namespace sg::preflight
