#pragma once
// Knowing it was OOM (DESIGN.md section 5): a streaming classifier over the trainer's output,
// decided at death together with the exit status and the kernel's evidence. Pure core: it is
// fed lines and values, never touches a process or a file.
//
// Run and diagnose both drive it through LogDiagnoser (log_diagnosis.hpp): diagnose over a whole
// log, run over the end of train.log once the trainer is dead. LogDiagnoser does this:
//   Classifier classifier;
//   for each line, split on '\n' and '\r':
//       tracker.feed(line);                                   // telemetry/step_tracker.hpp
//       if (tracker.last_step()) classifier.mark_step(*tracker.last_step());
//       else if (tracker.training_started()) classifier.mark_training_started();
//       classifier.feed(line);
//   Verdict v = classifier.verdict(ExitStatus::from_wait_status(status), watch.collect(pids));

#include <array>
#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "oom/kernel_evidence.hpp"
#include "util/literal_set.hpp"

namespace sg::oom {

// Kinds of OOM. The names (kind_name) are stable: report.json, events.jsonl and the ladder use them.
enum class Kind {
    none,
    cuda_allocator,       // PyTorch's CUDA caching allocator: "CUDA out of memory. Tried to allocate"
    cuda_runtime,         // the CUDA runtime itself: "CUDA error: out of memory", cudaErrorMemoryAllocation
    cpu_allocator,        // PyTorch's host allocator: "DefaultCPUAllocator: can't allocate memory"
    cublas,               // CUBLAS_STATUS_ALLOC_FAILED
    cudnn,                // CUDNN_STATUS_ALLOC_FAILED
    bitsandbytes,         // "Error out of memory at line N in file .../pythonInterface.c"
    nccl,                 // NCCL's "Cuda failure 'out of memory'"
    xla,                  // XLA/JAX/TensorFlow "RESOURCE_EXHAUSTED: Out of memory"
    hip,                  // ROCm: "HIP out of memory"
    mps,                  // Apple: "MPS backend out of memory"
    dataloader_fork,      // "[Errno 12] Cannot allocate memory" while forking DataLoader workers
    enomem,               // "Cannot allocate memory" (ENOMEM) elsewhere on the host
    python_memory_error,  // Python's MemoryError (NumPy "Unable to allocate")
    kernel_oom_kill,      // the kernel's OOM killer killed a trainer process (whole machine out)
    cgroup_oom_kill,      // the kernel killed it at a cgroup's memory limit
    sigkill_probable,     // SIGKILL with no kernel record to confirm it: probably the OOM killer
    memory_stall,         // a hang with memory evidence; decided by the supervisor, never by Classifier
    memory_guard,         // sparkguard's memory guard killed it: MemAvailable under the floor (supervisor)
    host_lost_memory,     // the host died during the attempt with the pool nearly dry, or twice (--resume-run)
    unified_memory,       // the NVIDIA driver failed a unified-memory allocation (NVRM NV_ERR_NO_MEMORY) and
                          // nothing else explains the death
    caught_oom,           // the trainer caught its OOM and tried to recover (skipped or shrank the batch, or a
                          // batch-size finder gave up), then died
    xpu,                  // Intel GPUs through PyTorch: "XPU out of memory"
    engine_allocator,     // an engine or library's allocation failure in its own words (llama.cpp/ggml, vLLM,
                          // ONNX Runtime, TensorRT, MLX/Metal, custom CUDA code): the generic detector
    monitor_kill,         // a scheduler's or framework's memory monitor killed it and said so (Slurm's
                          // accounting, Ray, Dask's nanny, Kubernetes OOMKilled, systemd-oomd, YARN, Colab)
};
std::string_view kind_name(Kind kind);
std::optional<Kind> kind_from_name(std::string_view name);

// The families the rules are organised by (DESIGN.md section 5): what kind of witness saw the
// memory run out. Each kind belongs to one.
enum class Family {
    allocator,   // a framework allocator's own message (PyTorch CUDA/CPU/HIP/MPS/XPU, XLA, MemoryError)
    library,     // a library or engine's allocation failure (CUDA runtime, cuBLAS, cuDNN, NCCL, ggml, ENOMEM)
    kernel_kill, // the kernel's OOM killer or a memory cgroup (its records, systemd's account of them)
    monitor,     // a scheduler's or framework's memory monitor (Slurm, Ray, Dask, Kubernetes, systemd-oomd)
    driver,      // the GPU driver's record of a failed allocation (NVRM)
    sigkill,     // a SIGKILL with no competing cause: probably the OOM killer
    recovered,   // a caught OOM the trainer tried to recover from, then died
    supervisor,  // decided by sparkguard run itself: memory stall, memory guard, host lost
};
Family family_of(Kind kind);
std::string_view family_name(Family family);  // "allocator", ..., "recovered-then-died", "supervisor"

enum class Phase { load, train };  // before the first training step, or after
std::string_view phase_name(Phase phase);

enum class Confidence { certain, probable };
std::string_view confidence_name(Confidence confidence);

// How the trainer ended, as far as it is known.
struct ExitStatus {
    std::optional<int> code;    // it exited with this code
    std::optional<int> signal;  // a signal killed it

    static ExitStatus exited(int code) { return {code, std::nullopt}; }
    static ExitStatus killed(int signal) { return {std::nullopt, signal}; }
    static ExitStatus unknown() { return {}; }
    // A number as shells and launchers print it: 128+N (N ≤ 64) and -N mean signal N.
    static ExitStatus from_number(int number);
    static ExitStatus from_wait_status(int status);

    bool known() const { return code || signal; }
    bool succeeded() const { return code && *code == 0; }
    bool sigkill() const { return signal && *signal == 9; }
    std::string describe() const;  // "exit code 1", "signal 9 (SIGKILL)", "unknown exit status"
};

struct Verdict {
    bool oom = false;
    Kind kind = Kind::none;
    std::optional<Phase> phase;            // set when oom
    std::optional<Confidence> confidence;  // set when oom
    std::string evidence;                  // the deciding output line or kernel record; may be empty
    std::optional<long long> evidence_line;  // 1-based count of fed lines, when a line decided
    std::string reason;                    // one sentence for people
    // Set when a SIGKILL was put down to something other than memory: the stop from outside or the
    // earlier error just before it that decided (not in the JSON; judge_death respects it).
    std::optional<std::string> competing_cause;
};
// {"oom", "kind", "phase", "confidence", "evidence", "line", "reason"}; absent values are null.
void to_json(nlohmann::json& out, const Verdict& verdict);

class Classifier {
public:
    Classifier();

    // One line of output (no '\n' or '\r'). Returns true when it became the deciding evidence (for an exit 0,
    // the end state that decides it).
    // Work per line is bounded: long lines are examined in their first 16 KiB and last 1 KiB.
    bool feed(std::string_view line);
    // The supervisor's step tracker saw the first training step: later evidence is mid-training.
    void mark_training_started();
    // A training step was seen. Evidence followed by progress of two more steps was survived
    // (a caught OOM, a restarted worker) and no longer counts.
    void mark_step(long long step);

    bool training_started() const { return training_; }
    // The first line that said the trainer was stopped from outside: a scheduler's cancellation, time
    // limit or preemption, a launcher told to shut down, an eviction, a kill at a deadline.
    const std::optional<std::string>& stopped_by() const { return termination_; }
    long long lines_seen() const { return lines_; }

    // The decision. A trainer that exited 0 is not OOM, unless a scheduler's or container runtime's record
    // of the end names a memory kill (memory_end_). The driver's NVRM allocation failures
    // (kernel.nvrm_records, or such lines in the output) decide only a death nothing else explains:
    // a SIGKILL, or a death whose output shows no other error. A SIGKILL is OOM only without a
    // competing cause: an error in the 20 lines before it, or a stop from outside (stopped_by()).
    Verdict verdict(const ExitStatus& exit, const KernelEvidence& kernel) const;

    // Evidence strength inside the output: an allocator's own message beats a SIGKILL sign.
    enum class Strength { sign, message };
    struct Evidence {
        Kind kind = Kind::none;
        Strength strength = Strength::sign;
        std::string text;
        long long line = 0;
        bool in_training = false;
        int steps_after = 0;
    };

private:
    std::optional<Evidence> match(std::string_view text, LiteralSet::Bits found) const;
    bool record(Evidence evidence, std::string_view shown);
    bool consider_wrapped(std::string_view line, LiteralSet::Bits found);
    bool straddles(std::string_view tail, std::string_view glue, std::string_view head) const;
    void remember_tail(std::string_view line);
    void note_detail(std::string_view line);
    void note_context(LiteralSet::Bits found, std::string_view line);
    bool note_other(LiteralSet::Bits found, std::string_view line);
    std::optional<bool> killed_over_quota(std::string_view line, LiteralSet::Bits found);
    void note_engine_failure(std::string_view line, bool is_failure);
    void note_smaller_request();
    std::optional<Verdict> driver_verdict(const ExitStatus& exit, const KernelEvidence& kernel,
                                          const std::optional<std::string>& killed) const;

    static size_t bigram(char a, char b) { return static_cast<unsigned char>(a) << 8 | static_cast<unsigned char>(b); }

    LiteralSet anchors_;
    std::bitset<65536> continuations_;  // first two bytes of every anchor's remainder after a break
    std::optional<Evidence> message_;  // strongest: the first allocator message not yet survived
    std::optional<Evidence> sign_;     // the first SIGKILL sign not yet survived
    std::optional<Evidence> nvrm_;     // the first NVIDIA driver allocation failure pasted into the output
    std::optional<Evidence> error_;    // the first other error in the output (a traceback, an exception, a crash)
    std::optional<Evidence> last_error_;  // the latest such error line (not a traceback's header)
    std::optional<Evidence> sign_cause_;  // an error just before the first SIGKILL sign: a competing cause
    long long sign_cause_before_ = 0;     // the line of the sign that sign_cause_ came just before
    bool judged_second_sign_ = false;     // the first sign opened the excerpt, and the next one was judged instead
    std::optional<Evidence> memory_end_;  // a scheduler's or runtime's end state naming a memory kill (OUT_OF_MEMORY, OOMKilled)
    std::optional<Evidence> over_quota_;  // the latest "memory quota exceeded": a kill right after it is for memory
    std::optional<long long> recovered_at_;  // the line of the latest caught OOM (a recovery attempt)
    struct Failure {
        long long line = 0;
        double bytes = 0;  // the size it asked for; 0 until read (on its line or the record's next lines)
    };
    std::optional<Failure> failure_, previous_failure_;  // the latest two engine allocation failures
    bool asked_for_less_ = false;  // the latest failure asked for less than the one before: a probe
    bool died_after_recovery_ = false;        // an error or a kill sign after it
    std::optional<std::string> termination_;  // the first stop from outside (a scheduler's cancellation, ...)
    std::optional<Evidence> signature_;        // the first code signature the system refused (macOS kills the binary)
    std::optional<long long> refused_at_;      // the latest allocation that failed with an errno other than ENOMEM,
                                               // or for a size no machine meets, or past a device's limit for one
                                               // allocation, or an allocator that cannot work (jemalloc's page size)
    std::optional<Evidence> startup_kill_;     // the first shell kill report of a command killed as it started
    std::optional<Evidence> macos_;            // the first line that shows the log is macOS's (a /Users/ path, an .app)
    std::optional<long long> v8_report_at_;    // the latest header of V8's fatal report ("<--- Last few GCs --->")
    std::array<char, 128> record_head_{};  // the head of the latest unindented line, where a record gives its level
    size_t record_head_size_ = 0;
    bool srun_task_ended_ = false;     // srun reported a task's end: a cancellation after it is its consequence
    int stack_kills_ = 0;              // services that reported exit 137 on consecutive lines (a stack's stop)
    long long stack_kill_line_ = 0;    // the line of the latest of them
    long long fork_context_until_ = 0; // lines up to this one follow a fork() in a traceback
    long long lines_ = 0;
    bool training_ = false;
    std::optional<long long> step_;
    std::string tail_;                 // the end of the previous line, to catch wrapped messages
    const char* startup_why_ = "";     // what says the kill of startup_kill_ came as it started
    bool quiet_ = true;        // nothing printed before this line but command echoes ("$ ./tool") and blank lines
    bool quiet_after_ = true;  // the same, after this line
};

}  // namespace sg::oom
