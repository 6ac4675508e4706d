#pragma once
// Where the trainer sits in a command: launchers and wrappers (srun, sparkguard node, env, nice, nohup, prlimit, taskset,
// numactl, timeout, stdbuf, uv run, python [-m], accelerate launch, torchrun, deepspeed) come
// first, and their own options are never the trainer's. Pure: argv in, positions out.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sg {

struct TrainerInvocation {
    size_t program = 0;      // argv index of the trainer: a script, an entry point, or a module name
    bool module = false;     // the program is a Python module (python -m MODULE, accelerate launch -m)
    size_t args_begin = 1;   // argv index of the trainer's first argument
    std::string name() const;  // the program's base name ("train.py", "axolotl", "axolotl.cli.train")
    std::string path;          // argv[program], as written
};

TrainerInvocation locate_trainer(const std::vector<std::string>& argv);

// The index of the first word that is not a process wrapper (env, nice, nohup, prlimit, taskset,
// numactl, timeout, stdbuf, setsid, ionice, time) or its option: the launcher or the program.
size_t skip_wrappers(const std::vector<std::string>& argv);

// srun in a command (after any wrappers): its index and the index of the step's program, past
// srun's own options.
struct SrunInvocation {
    size_t srun = 0;
    size_t operand = 0;
};
std::optional<SrunInvocation> locate_srun(const std::vector<std::string>& argv);

// The command with srun told to end the step when one task fails (--kill-on-bad-exit=1), unless
// srun's options already say (-K, -K0, --kill-on-bad-exit=0); other commands unchanged.
std::vector<std::string> with_kill_on_bad_exit(std::vector<std::string> argv);

// Under srun: the command with `node` (sparkguard node and its options, ending in "--") inserted
// as the step's program, so every rank runs under its node's guard; unchanged when the step's
// program is sparkguard node already, or when there is no srun.
std::vector<std::string> with_node_guard(std::vector<std::string> argv, const std::vector<std::string>& node);
// The command's srun, one task on each of its nodes, running `program`: srun's options that place
// the job (-N, -w, -p, --mem, ...) kept, those that count tasks or redirect output dropped, and
// the wrappers before srun kept. Empty without srun.
std::vector<std::string> srun_probe_command(const std::vector<std::string>& argv, const std::vector<std::string>& program);
// What srun's options say of the step's shape: -N/--nodes (the low end of a range), -n/--ntasks,
// --ntasks-per-node; absent when not given.
struct SrunLayout {
    std::optional<long long> nodes;
    std::optional<long long> tasks;
    std::optional<long long> tasks_per_node;
};
SrunLayout srun_layout(const std::vector<std::string>& argv);
// Whether srun's step program is sparkguard node.
bool has_node_guard(const std::vector<std::string>& argv);

// The trainer's own arguments: argv[args_begin..].
std::vector<std::string> trainer_args(const std::vector<std::string>& argv, const TrainerInvocation& where);

}  // namespace sg
