#include "ladder/command_line.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <string_view>

#include "util/parse.hpp"

namespace sg {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string base_name(const std::string& arg) { return std::filesystem::path(arg).filename().string(); }

bool is_python(const std::string& name) {
    static const std::regex python(R"(python(\d+(\.\d+)?)?)");
    return std::regex_match(name, python);
}

// Options of a wrapper that take the next word as their value (when not written --opt=value).
using Valued = std::set<std::string_view>;

// Skips a wrapper's options from `i`; returns the index of its first operand.
size_t skip_options(const std::vector<std::string>& argv, size_t i, const Valued& valued) {
    while (i < argv.size() && starts_with(argv[i], "-") && argv[i] != "-") {
        if (argv[i] == "--") return i + 1;
        const bool takes_next = valued.count(argv[i]) && argv[i].find('=') == std::string::npos;
        i += takes_next ? 2 : 1;
    }
    return i;
}

// A Python launcher's script or module: after `-m`/`--module`, or the first word ending in .py;
// else the first operand after its options.
TrainerInvocation python_target(const std::vector<std::string>& argv, size_t i, const Valued& valued) {
    for (size_t j = i; j < argv.size(); ++j) {
        if (argv[j] == "-m" || argv[j] == "--module") {
            if (j + 1 < argv.size()) return {j + 1, true, j + 2, argv[j + 1]};
            break;
        }
        if (ends_with(argv[j], ".py") && !starts_with(argv[j], "-")) return {j, false, j + 1, argv[j]};
    }
    size_t j = skip_options(argv, i, valued);
    if (j >= argv.size()) return {argv.size(), false, argv.size(), ""};
    return {j, false, j + 1, argv[j]};
}

const Valued kPythonOptions = {"-X", "-W", "-c"};
const Valued kTorchrunOptions = {"--nnodes", "--nproc_per_node", "--nproc-per-node", "--rdzv_backend", "--rdzv-backend",
                                 "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--node_rank",
                                 "--node-rank", "--master_addr", "--master-addr", "--master_port", "--master-port",
                                 "--max_restarts", "--max-restarts", "--log_dir", "--log-dir", "--role", "--local_addr",
                                 "--monitor_interval", "--start_method", "--redirects", "--tee", "-r", "-t",
                                 // accelerate launch
                                 "--config_file", "--num_processes", "--num_machines", "--machine_rank",
                                 "--main_process_ip", "--main_process_port", "--mixed_precision", "--dynamo_backend",
                                 "--gradient_accumulation_steps", "--gpu_ids", "--deepspeed_config_file",
                                 "--zero_stage", "--num_cpu_threads_per_process", "--fsdp_sharding_strategy",
                                 // deepspeed
                                 "--num_gpus", "--num_nodes", "--hostfile", "--include", "--exclude", "--master_port",
                                 "--launcher", "-H", "-i", "-e"};
const Valued kUvOptions = {"--with", "--python", "-p", "--project", "--directory", "--env-file", "--extra", "--group",
                           "--index-url", "--index", "--with-requirements", "--package"};

// srun's options that take the next word (srun(1), Slurm 22.05); -K/--kill-on-bad-exit, --exclusive,
// --nice and the like take a value only as --opt=value or -Kvalue.
const Valued kSrunOptions = {
    "-A", "--account", "-b", "--begin", "-c", "--cpus-per-task", "-C", "--constraint", "-d", "--dependency",
    "-D", "--chdir", "-e", "--error", "-G", "--gpus", "-i", "--input", "-J", "--job-name", "-L", "--licenses",
    "-m", "--distribution", "-M", "--clusters", "-n", "--ntasks", "-N", "--nodes", "-o", "--output", "-p",
    "--partition", "-q", "--qos", "-r", "--relative", "-S", "--core-spec", "-t", "--time", "-T", "--threads",
    "-w", "--nodelist", "-W", "--wait", "-x", "--exclude", "--mem", "--mem-per-cpu", "--mem-per-gpu",
    "--ntasks-per-node", "--ntasks-per-socket", "--ntasks-per-core", "--ntasks-per-gpu", "--gres", "--gres-flags",
    "--export", "--cpu-bind", "--mem-bind", "--gpu-bind", "--mpi", "--signal", "--gpus-per-node",
    "--gpus-per-task", "--gpus-per-socket", "--cpus-per-gpu", "--jobid", "--het-group", "--network",
    "--reservation", "--comment", "--mail-type", "--mail-user", "--sockets-per-node", "--cores-per-socket",
    "--threads-per-core", "--task-epilog", "--task-prolog", "--prolog", "--epilog", "--open-mode", "--switches",
    "--time-min", "--tmp", "--uid", "--gid", "--wckey", "--cpu-freq", "--hint", "--container", "--mincpus",
    "--nodefile", "--profile", "--resv-ports", "--acctg-freq", "--deadline", "--delay-boot", "--exact-time",
    "--input-filter", "--output-filter", "--error-filter", "--cluster-constraint", "--tres-per-task",
    "--x11", "--bb", "--bbf", "--spread-job", "--send-libs"};

// sparkguard node's options that take the next word (src/cli/node.cpp).
const Valued kNodeOptions = {"--run-dir", "--memory-floor", "--thermal-interval", "--grace"};

bool is_sparkguard_node(const std::vector<std::string>& argv, size_t i) {
    return i + 1 < argv.size() && base_name(argv[i]) == "sparkguard" && argv[i + 1] == "node";
}

// The operands after one wrapper's options, or nullopt when argv[i] is no wrapper.
std::optional<size_t> after_wrapper(const std::vector<std::string>& argv, size_t i) {
    const std::string name = base_name(argv[i]);
    if (name == "env") {
        i = skip_options(argv, i + 1, {"-u", "--unset", "-C", "--chdir", "-S"});
        while (i < argv.size() && argv[i].find('=') != std::string::npos && !starts_with(argv[i], "-")) ++i;
        return i;
    }
    if (name == "nice" || name == "ionice") return skip_options(argv, i + 1, {"-n", "--adjustment", "-c", "--class", "--classdata"});
    if (name == "nohup" || name == "setsid" || name == "time") return skip_options(argv, i + 1, {});
    if (name == "prlimit" || name == "stdbuf") return skip_options(argv, i + 1, {"-p", "--pid", "-i", "-o", "-e"});
    if (name == "taskset") {
        i = skip_options(argv, i + 1, {});
        return i < argv.size() ? i + 1 : i;  // the CPU mask or list
    }
    if (name == "numactl")
        return skip_options(argv, i + 1, {"-i", "-N", "-m", "-C", "-p", "--interleave", "--cpunodebind", "--membind",
                                          "--physcpubind", "--preferred"});
    if (name == "timeout") {
        i = skip_options(argv, i + 1, {"-k", "--kill-after", "-s", "--signal"});
        return i < argv.size() ? i + 1 : i;  // the duration
    }
    return std::nullopt;
}


// From argv[i]: the first word that is not a wrapper or its option.
size_t skip_wrappers_from(const std::vector<std::string>& argv, size_t i) {
    while (i < argv.size())
        if (auto next = after_wrapper(argv, i)) i = *next;
        else break;
    return i;
}

}  // namespace

std::string TrainerInvocation::name() const { return module ? path : base_name(path); }

size_t skip_wrappers(const std::vector<std::string>& argv) { return skip_wrappers_from(argv, 0); }

TrainerInvocation locate_trainer(const std::vector<std::string>& argv) {
    size_t i = 0;
    while (i < argv.size()) {
        i = skip_wrappers_from(argv, i);
        if (i >= argv.size()) break;
        const std::string name = base_name(argv[i]);
        if (name == "bash" || name == "sh" || name == "dash" || name == "zsh") {
            const size_t script = skip_options(argv, i + 1, {"-o", "-O", "+O", "--rcfile", "--init-file"});
            if (script < argv.size() && argv[script - 1] == "-c") return {i, false, i + 1, argv[i]};  // a command string
            return {script, false, script + 1, script < argv.size() ? argv[script] : ""};
        } else if (name == "srun") {
            i = skip_options(argv, i + 1, kSrunOptions);  // the step's program: a launcher, a guard, the trainer
        } else if (is_sparkguard_node(argv, i)) {
            i = skip_options(argv, i + 2, kNodeOptions);
        } else if (name == "uv" && i + 1 < argv.size() && argv[i + 1] == "run") {
            i = skip_options(argv, i + 2, kUvOptions);
        } else if (name == "accelerate" && i + 1 < argv.size() && argv[i + 1] == "launch") {
            return python_target(argv, i + 2, kTorchrunOptions);
        } else if (name == "torchrun" || name == "deepspeed") {
            return python_target(argv, i + 1, kTorchrunOptions);
        } else if (is_python(name)) {
            TrainerInvocation target = python_target(argv, i + 1, kPythonOptions);
            // python -m torch.distributed.run / .launch, accelerate.commands.launch: launchers under another name
            if (target.module && (target.path == "torch.distributed.run" || target.path == "torch.distributed.launch" ||
                                  target.path == "accelerate.commands.launch"))
                return python_target(argv, target.args_begin, kTorchrunOptions);
            return target;
        } else {
            return {i, false, i + 1, argv[i]};
        }
    }
    return {argv.size(), false, argv.size(), ""};
}

std::optional<SrunInvocation> locate_srun(const std::vector<std::string>& argv) {
    const size_t i = skip_wrappers(argv);
    if (i >= argv.size() || base_name(argv[i]) != "srun") return std::nullopt;
    return SrunInvocation{i, skip_options(argv, i + 1, kSrunOptions)};
}

std::vector<std::string> with_kill_on_bad_exit(std::vector<std::string> argv) {
    const auto srun = locate_srun(argv);
    if (!srun) return argv;
    for (size_t i = srun->srun + 1; i < srun->operand; ++i)
        if (starts_with(argv[i], "-K") || starts_with(argv[i], "--kill-on-bad-exit")) return argv;
    argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(srun->srun + 1), "--kill-on-bad-exit=1");
    return argv;
}

std::vector<std::string> srun_probe_command(const std::vector<std::string>& argv, const std::vector<std::string>& program) {
    const auto srun = locate_srun(argv);
    if (!srun) return {};
    // Where tasks go and how many: the probe's own. Where output goes: the probe's stdout.
    static const std::set<std::string_view> dropped = {"-n", "--ntasks", "--ntasks-per-node", "--ntasks-per-socket",
                                                       "--ntasks-per-core", "--ntasks-per-gpu", "-o", "--output", "-e",
                                                       "--error", "-i", "--input", "--open-mode", "-l", "--label"};
    std::vector<std::string> probe(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(srun->srun + 1));
    for (size_t i = srun->srun + 1; i < srun->operand; ++i) {
        const std::string& word = argv[i];
        if (word == "--") break;
        const bool takes_next = kSrunOptions.count(word) && word.find('=') == std::string::npos;
        std::string name = word.substr(0, word.find('='));
        if (!starts_with(name, "--") && name.size() > 2) name = name.substr(0, 2);  // -n2, -oout.log
        if (!dropped.count(name)) {
            probe.push_back(word);
            if (takes_next && i + 1 < srun->operand) probe.push_back(argv[i + 1]);
        }
        if (takes_next) ++i;
    }
    probe.push_back("--ntasks-per-node=1");
    probe.insert(probe.end(), program.begin(), program.end());
    return probe;
}

SrunLayout srun_layout(const std::vector<std::string>& argv) {
    SrunLayout layout;
    const auto srun = locate_srun(argv);
    if (!srun) return layout;
    auto number = [](std::string_view text) -> std::optional<long long> {
        text = text.substr(0, text.find_first_of("-:"));  // "2-4": at least 2 nodes
        auto n = parse_int(text);
        return n && *n > 0 ? std::optional<long long>(*n) : std::nullopt;
    };
    for (size_t i = srun->srun + 1; i < srun->operand; ++i) {
        const std::string& word = argv[i];
        const size_t eq = word.find('=');
        const std::string name = word.substr(0, eq);
        const bool attached = !name.starts_with("--") && name.size() > 2;  // -N2
        const std::string key = attached ? name.substr(0, 2) : name;
        std::optional<std::string> value;
        if (eq != std::string::npos) value = word.substr(eq + 1);
        else if (attached) value = word.substr(2);
        else if (kSrunOptions.count(word) && i + 1 < srun->operand) value = argv[i + 1];
        if (!value) continue;
        if (key == "-N" || key == "--nodes") layout.nodes = number(*value);
        else if (key == "-n" || key == "--ntasks") layout.tasks = number(*value);
        else if (key == "--ntasks-per-node") layout.tasks_per_node = number(*value);
    }
    return layout;
}

std::vector<std::string> with_node_guard(std::vector<std::string> argv, const std::vector<std::string>& node) {
    const auto srun = locate_srun(argv);
    if (!srun || srun->operand >= argv.size() || is_sparkguard_node(argv, srun->operand)) return argv;
    argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(srun->operand), node.begin(), node.end());
    return argv;
}

bool has_node_guard(const std::vector<std::string>& argv) {
    const auto srun = locate_srun(argv);
    return srun && is_sparkguard_node(argv, srun->operand);
}

std::vector<std::string> trainer_args(const std::vector<std::string>& argv, const TrainerInvocation& where) {
    if (where.args_begin >= argv.size()) return {};
    return {argv.begin() + static_cast<std::ptrdiff_t>(where.args_begin), argv.end()};
}

}  // namespace sg
