#include "oom/classifier.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <span>
#include <utility>

#include <nlohmann/json.hpp>

#include "oom/srun_output.hpp"
#include "util/printable.hpp"
#include "util/strings.hpp"

namespace sg::oom {
namespace {

constexpr std::array kKindNames = {
    std::pair{Kind::none, "none"},
    std::pair{Kind::cuda_allocator, "cuda-allocator"},
    std::pair{Kind::cuda_runtime, "cuda-runtime"},
    std::pair{Kind::cpu_allocator, "cpu-allocator"},
    std::pair{Kind::cublas, "cublas"},
    std::pair{Kind::cudnn, "cudnn"},
    std::pair{Kind::bitsandbytes, "bitsandbytes"},
    std::pair{Kind::nccl, "nccl"},
    std::pair{Kind::xla, "xla"},
    std::pair{Kind::hip, "hip"},
    std::pair{Kind::mps, "mps"},
    std::pair{Kind::dataloader_fork, "dataloader-fork"},
    std::pair{Kind::enomem, "enomem"},
    std::pair{Kind::python_memory_error, "python-memory-error"},
    std::pair{Kind::kernel_oom_kill, "kernel-oom-kill"},
    std::pair{Kind::cgroup_oom_kill, "cgroup-oom-kill"},
    std::pair{Kind::sigkill_probable, "sigkill-probable"},
    std::pair{Kind::memory_stall, "memory-stall"},
    std::pair{Kind::memory_guard, "memory-guard"},
    std::pair{Kind::host_lost_memory, "host-lost-memory"},
    std::pair{Kind::unified_memory, "unified-memory"},
    std::pair{Kind::caught_oom, "caught-oom"},
    std::pair{Kind::xpu, "xpu"},
    std::pair{Kind::engine_allocator, "engine-allocator"},
    std::pair{Kind::monitor_kill, "monitor-kill"},
};

constexpr std::array kFamilyNames = {
    std::pair{Family::allocator, "allocator"},     std::pair{Family::library, "library"},
    std::pair{Family::kernel_kill, "kernel-kill"}, std::pair{Family::monitor, "monitor"},
    std::pair{Family::driver, "driver"},           std::pair{Family::sigkill, "sigkill"},
    std::pair{Family::recovered, "recovered-then-died"}, std::pair{Family::supervisor, "supervisor"},
};

// Fixed strings one of which every line the rules care about contains; LiteralSet finds them
// all in one pass, and lines with none (nearly all of them, "memory" in a report included) cost
// nothing more. At most 64 (a bit each); "OOM" stands for every rule that needs the word.
enum Anchor : int {
    kOutOfMemory, kOutOfMemoryClass, kOutOfMemoryCaps, kMemoryAllocation, kAllocFailed,
    kOom, kAllocateMemory, kNotEnoughMemory, kMemoryError,
    kKilled, kKilledZh, kSigkill, kExitcode, kExitCode, kExitStatus, kExitedWith,
    kCancelled, kSigterm, kGotSignal, kOsFork, kPopenFork, kForkExec,
    kNvrm, kNoExecutableBatch, kReturnCode, kByOomKiller, kOomKillResult,
    kTraceback, kErrorColon, kErrorLower, kException, kTerminateCalled, kSegfault, kCoreDumped, kFatalPython,
    kOutOfMemorySlurm, kKillEvent, kSrunError,
    kToAllocate, kAllocationFailed, kInsufficient, kExhaustedCaps, kExhausted, kAvailableMemory,
    kMemoryLimit, kMemoryBudget, kMemoryPressure, kSystemdOomd, kLowOnMemory, kAvailableRam,
    kContainerOom, kKernelDied, kDeathSignal, kPreemption, kStopping, kKvCache, kAllocationFailure, kExceeded,
    kOfMemoryCapital, kAllocLower, kAllocCapital, kMpiExitCode, kReason, kNvgpu, kCmaAlloc, kOnHold, kMemInfo,
    kOomKillFrame, kMemCreate, kMemCreateSnake, kUnhealthy, kTimeoutCaps, kTimeoutWord, kTimedOut,
    kTimeLimit, kTimeLimitClass, kBadAlloc, kOfMemorySnake, kOomReaper, kFailcnt, kTotalVm, kSignature, kBadness,
    kHarakiri, kKilling, kUsageThreshold, kJvmMemory, kHeapSpace, kYarnExit, kYarnExitStatus, kThrashing, kMemoryRestart,
    kKillRequestCaps, kKillRequest, kStopRequest, kCtlRestart, kCtlStop, kDockerStop, kDockerKill, kDockerRestart, kKillNine,
    kDisappeared, kOutOf, kErrno, kKilledFr, kKilledDe, kEnlargeMemory, kEnomem, kJetsam, kTerminatedDue,
    kSigint, kAttemptingReset, kConnectionClosed, kKillSignal, kPagingFile, kTaskRow,
    kBySignalNine, kWaitpidReturned, kLowMemoryKiller, kPerProcessLimit, kErrno1455, kLastFewGcs, kPageSize,
    kMacUsers, kMacApp, kOutOfMemoryParen, kKernelRestarter,
    kAnchorCount
};
const std::vector<std::string> kAnchorTexts = {
    "of memory" /* out of memory, Out of memory, lack of memory */, "OutOfMemory", "OUT_OF_" /* _MEMORY, _DEVICE_MEMORY */,
    "MemoryAllocation", "ALLOC_FAILED",
    "OOM" /* OOM when allocating, OOM Detected, recover from OOM, OOMKilled, due to CUDA OOM */, "allocate memory",
    "enough" /* not enough memory, does not have enough free memory */, "MemoryError",
    "illed" /* Killed, killed */, "\u5df2\u6740\u6b7b" /* 已杀死: bash's zh_CN "Killed" */, "SIGKILL", "exitcode", "exit code",
    "exit status", "exited with",
    "CANCELLED", "SIGTERM", "got signal", "os.fork()", "popen_fork", "fork_exec",
    "NVRM: ", "No executable batch size", "return code", "by the OOM killer",
    "oom-kill",
    "Traceback (most", "Error:", "error:", "Exception", "terminate called", "Segmentation fault", "core dumped",
    "Fatal Python error",
    "Out Of Memory", "kill event", "srun: error: ",
    "o allocate", "llocation failed", "nsufficient ", "EXHAUSTED", "exhausted", "available memory",
    "memory limit", "memory budget", "memory pressure", "oomd" /* systemd-oomd, oomd */, "low on ", "available RAM",
    "container oom", "appears to have died", "death signal", "PREEMPT", "topping", "KV cache", "ALLOCATION_FAIL", "xceeded",
    "f Memory" /* of Memory, Of Memory */, "alloc", "Alloc", "EXIT CODE: 9", "eason:" /* Reason:, reason: */,
    "nvgpu", "cma_alloc", "on hold", "Mem-Info:",
    "oom_kill_process", "emCreate", "em_create", "nhealthy", "TIMEOUT", "imeout", "timed out",
    "ime limit", "imeLimit", "bad_alloc", "of_memory" /* out_of_memory+0x.. in a call trace */, "oom_reaper", "failcnt",
    "total-vm:", "ignature", "badness", "HARAKIRI", "Killing", "usage threshold", "JVM memory", "heap space",
    "xit code:-10", "xitStatus: -10" /* YARN's ContainerExitStatus */, "thrashing", "memory-restart",
    "KILL request", "kill request", "stop request", "ctl restart" /* supervisorctl, systemctl */, "ctl stop",
    "docker stop", "docker kill", "docker restart", "kill -9",
    "disappeared", "OutOf" /* ErrorOutOfDeviceMemory, ErrorOutOfHostMemory */, "(errno=",
    "Processus arr\u00eat\u00e9" /* SIGKILL's strsignal in French */, "Get\u00f6tet" /* in German */,
    // Each anchor is found through its rarest byte pair (util/literal_set.hpp): "Cannot enlarge" rather than
    // "enlarge memory", whose rarest pair, "me", is in every other line.
    "Cannot enlarge" /* Emscripten's "Cannot enlarge memory arrays" */,
    "ENOMEM", "RESOURCE_TYPE_MEMORY" /* iOS's EXC_RESOURCE */, "Terminated due" /* "Terminated due to memory issue" */,
    "SIGINT", "Attempting reset", "closed the connection unexpectedly" /* psql's, its server gone */,
    "Kill signal" /* nvcc's "'cicc' died due to signal 9 (Kill signal)" */, "The paging file",
    "] [" /* a kernel log's timestamp, then the OOM killer's task table's "[  pid  ]" */,
    "by signal 9" /* "sccache: Compile terminated by signal 9" */, "waitpid returned" /* rq's work-horse */,
    "lowmemorykiller" /* Android's lmkd */, "per-process-limit" /* a JetsamEvent's reason */,
    "errno=1455" /* Windows' ERROR_COMMITMENT_LIMIT as Go prints it */,
    "Last few GCs" /* V8's fatal report's header */, "Unsupported system page size" /* jemalloc's */,
    "/Users/" /* a macOS home */, ".app/Contents" /* a macOS application bundle */,
    "(out-of-memory)" /* Racket's sandbox: "evaluator: terminated (out-of-memory)" */,
    "KernelRestarter: restarting" /* Jupyter's server, its kernel dead */,
};
static_assert(kAnchorCount <= LiteralSet::kMaxLiterals, "LiteralSet finds at most 128 literals");
using Bits = LiteralSet::Bits;
constexpr Bits bit(Anchor anchor) { return Bits{1} << anchor; }
constexpr Bits kErrorAnchors = bit(kTraceback) | bit(kErrorColon) | bit(kErrorLower) | bit(kException) |
                                   bit(kTerminateCalled) | bit(kSegfault) | bit(kCoreDumped) | bit(kFatalPython) |
                                   bit(kSignature);
// A stop someone asked for (see stop_from_outside).
constexpr Bits kStopRequestAnchors = bit(kKillRequestCaps) | bit(kKillRequest) | bit(kStopRequest) | bit(kCtlRestart) |
                                     bit(kCtlStop) | bit(kDockerStop) | bit(kDockerKill) | bit(kDockerRestart) | bit(kKillNine);
constexpr Bits kTimeoutAnchors = bit(kTimeoutCaps) | bit(kTimeoutWord) | bit(kTimedOut) | bit(kTimeLimit) | bit(kTimeLimitClass);

constexpr size_t kHeadWindow = 16 * 1024;
constexpr size_t kTailWindow = 1024;
constexpr int kStackStopServices = 3;  // services exiting 137 together: a stack stopped, not OOM kills
constexpr size_t kWrapMinColumns = 60;  // only lines this long can have been wrapped
constexpr size_t kWrapSeam = 32;        // bytes either side of a line break searched for a split anchor
constexpr size_t kWrapJoin = 400;       // bytes of each side joined to look for a wrapped message
constexpr size_t kEvidenceBytes = 1000;
constexpr int kSurvivalSteps = 2;
constexpr long long kForkContextLines = 40;
constexpr long long kCompetingLines = 20;  // an error this close before a SIGKILL sign competes with the OOM killer
constexpr long long kDetailLines = 3;  // a multi-line failure record gives its size this close after its first line
constexpr long long kV8ReportLines = 200;  // V8's fatal report: its last GCs, its JS stack, then its FATAL line
constexpr long long kRetryLines = 5;  // an engine's retry this close after its allocation failure answers it

bool has(std::string_view text, std::string_view needle) {
    return ::memmem(text.data(), text.size(), needle.data(), needle.size()) != nullptr;
}

constexpr std::string_view kExitWords[] = {" code", " status"};

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The number right after KEY in S ("waitpid returned 9" -> 9), or -1.
long long number_after(std::string_view s, std::string_view key) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) return -1;
    long long number = -1;
    for (size_t i = at + key.size(); i < s.size() && is_digit(s[i]) && number < (1LL << 56); ++i)
        number = std::max(number, 0LL) * 10 + (s[i] - '0');
    return number;
}

// "except torch.cuda.OutOfMemoryError:" in a traceback's source excerpt is code, not an error.
// So is a printf format a debugger shows in a frame ('format=0x7ffff37d0ac0 "%s: failed to allocate %lu bytes"').
bool looks_like_code(std::string_view text) {
    if (has(text, "except ") || has(text, "isinstance(") || has(text, "import ") || has(text, "%lu") || has(text, "%zu"))
        return true;
    // A throw statement ("throw std::bad_alloc();"); a Zig error set written as a type, in a compiler's type error
    // ("expected type 'void', found 'error{OutOfMemory}'": the program that fails at run time prints "error:
    // OutOfMemory").
    if (has(text, "throw std::") || has(text, "throw new ") || trim(text).starts_with("throw ") || has(text, "error{"))
        return true;
    // A compiler's quote of the source line it means, behind the line's number and a bar: GCC's and rustc's
    // "  128 | void* operator new[](std::size_t) _GLIBCXX_THROW (std::bad_alloc)".
    const std::string_view t = trim(text);
    size_t digits = 0;
    while (digits < t.size() && is_digit(t[digits])) ++digits;
    return digits > 0 && t.substr(digits).starts_with(" | ");
}

bool cuda_allocator(std::string_view s) {
    if (has(s, "CUDA out of memory")) return true;
    return (has(s, "torch.cuda.OutOfMemoryError") || has(s, "torch.OutOfMemoryError")) && !looks_like_code(s);
}

// The driver's initialisation failing with CUDA_ERROR_OUT_OF_MEMORY (numba's "Call to cuInit results in
// CUDA_ERROR_OUT_OF_MEMORY" under WSL2) allocated nothing: the driver could not start.
bool driver_initialisation(std::string_view s) { return has(s, "cuInit"); }

// TensorFlow's stream executor growing its allocator's region ("cuda_driver.cc:789] failed to allocate
// 4.00G (4294967296 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY"): the allocator asks again for less,
// and fails with its own "OOM when allocating tensor" only if nothing fits. A caught OOM.
bool stream_executor_retry(std::string_view s) {
    return (has(s, "cuda_driver.cc") || has(s, "stream_executor")) && has(s, "failed to allocate") && has(s, "from device");
}

// Error 2 is cudaErrorMemoryAllocation; Torch7 and PyTorch before 1.0 printed it through THC.
bool cuda_runtime(std::string_view s) {
    if (driver_initialisation(s) || stream_executor_retry(s)) return false;
    return has(s, "CUDA error: out of memory") || has(s, "cudaErrorMemoryAllocation") ||
           has(s, "CUDA_ERROR_OUT_OF_MEMORY") || has(s, "cudaMalloc failed: out of memory") ||
           (has(s, "THCudaCheck FAIL") && has(s, "error=2 : out of memory")) ||
           has(s, "cuda runtime error (2) : out of memory");
}

// A CUDA status printed as a number from an allocation call: 2 is CUDA_ERROR_OUT_OF_MEMORY (driver API) and
// cudaErrorMemoryAllocation (runtime API). "CUresult error result=2 ... func=cu_mem_create", "CUDA error 2
// in cudaMalloc".
bool cuda_status_two(std::string_view s) {
    const bool cuda = has(s, "CUresult") || has(s, "CUDA") || has(s, "cuda") || has(s, "Cuda");
    const bool allocation = has(s, "emCreate") || has(s, "em_create") || has(s, "alloc") || has(s, "Alloc");
    if (!cuda || !allocation || driver_initialisation(s)) return false;
    for (std::string_view key : {"result=", "result ", "error=", "error ", "code=", "code ", "status="}) {
        for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
            const size_t i = at + key.size();
            if (i < s.size() && s[i] == '2' && (i + 1 == s.size() || !is_digit(s[i + 1]))) return true;
        }
    }
    return false;
}

// A trainer or engine that caught its OOM and tries another way: fairseq's "attempting to recover from
// OOM" and "ran out of memory, skipping batch", a batch-size finder shrinking the batch ("OOM Detected,
// reducing batch/grad size") or giving up (accelerate's "No executable batch size found"), a fallback
// ("copy inputs ... to CPU due to CUDA OOM", "lack of memory. Moving results arrays to CPU", "Ran out
// of memory when regular VAE decoding, retrying with tiled VAE decoding"): memory words and a recovery
// on one line. Whether it then died is for the verdict.
bool caught_oom(std::string_view s) {
    if (has(s, "raise ")) return false;  // the finder's source line in a traceback
    if (stream_executor_retry(s)) return true;
    if (has(s, "recover from OOM") || has(s, "OOM Detected, reducing batch") || has(s, "No executable batch size found"))
        return true;
    const bool memory = has(s, "ut of memory") || has(s, "ut of Memory") || has(s, "ut Of Memory") || has(s, "OOM") ||
                        has(s, "lack of memory");
    return memory && (has(s, "skipping batch") || has(s, "skip this batch") || has(s, "etrying") || has(s, "to CPU") ||
                      has(s, "reducing batch") || has(s, "falling back"));
}

// systemd's account of a unit's process killed at the unit's memory limit or the machine's.
bool systemd_oom_kill(std::string_view s) {
    return has(s, "has been killed by the OOM killer") || has(s, "Failed with result 'oom-kill'") ||
           has(s, "(Result: oom-kill)");
}

// The operating system refusing a binary for its code signature ("invalid signature (code or signature have
// been modified)", the kernel's "load code signature error 2 for file"): macOS SIGKILLs such a program as
// it starts.
bool signature_refused(std::string_view s) {
    return has(s, "invalid signature") || has(s, "Code Signature Invalid") || has(s, "CODESIGNING") ||
           has(s, "code signature error");
}

// Another error in the output: a traceback, an exception, argparse's "error:", a crash, a refused signature.
bool error_line(std::string_view s) {
    if (has(s, "except ") || has(s, "isinstance(") || has(s, "raise ")) return false;
    return has(s, "Traceback (most recent call last)") || has(s, "Error:") || has(s, "Exception:") || signature_refused(s) ||
           has(s, ": error:") || has(s, "terminate called") || has(s, "Segmentation fault") ||
           has(s, "core dumped") || has(s, "Fatal Python error") || trim(s).ends_with("Exception");
}

// A label with nothing after it ("Error:", "ERROR:"): its message is on the next line.
bool bare_label(std::string_view s) {
    const std::string_view t = trim(s);
    return t.size() > 1 && t.back() == ':' && t.find(' ') == std::string_view::npos;
}

bool xla(std::string_view s) {
    return has(s, "RESOURCE_EXHAUSTED: Out of memory") || has(s, "Resource exhausted: Out of memory") ||
           has(s, "Ran out of memory in memory space hbm") || has(s, "OOM when allocating") ||
           (has(s, "ResourceExhaustedError") && has(s, ": OOM"));  // "errors_impl.ResourceExhaustedError: OOM"
}

bool cpu_allocator(std::string_view s) {
    return has(s, "DefaultCPUAllocator: can't allocate memory") || has(s, "DefaultCPUAllocator: not enough memory");
}

// Python's MemoryError as the exception of a traceback's last line, or NumPy's variant.
bool python_memory_error(std::string_view s) {
    if (has(s, "MemoryError: Unable to allocate") || has(s, "_ArrayMemoryError")) return true;
    std::string_view t = trim(s);
    while (t.ends_with('`')) t.remove_suffix(1);  // a paste's closing fence glued on: "MemoryError```"
    for (size_t at = t.find("MemoryError"); at != std::string_view::npos; at = t.find("MemoryError", at + 1)) {
        const bool starts = at == 0 || t[at - 1] == ' ' || t[at - 1] == ']';
        const size_t end = at + std::strlen("MemoryError");
        if (starts && (end == t.size() || t[end] == ':')) return true;
    }
    return false;
}

// A kernel OOM-killer line pasted into the log (dmesg appended by hand, a container's log): the kill itself
// ("Out of memory: Killed process 935 (python)", or on kernels that print the reason on the line before,
// "Killed process 935 (python) total-vm:113656kB, anon-rss:...", and the reaper's "oom_reaper: reaped
// process"). Also the rest of the OOM killer's report when the excerpt holds only part of it: its header
// ("python invoked oom-killer: gfp_mask=..."), the frames of its call trace however they are indented
// ("oom_kill_process+0x202/0x3c0", "out_of_memory+0x", "mem_cgroup_out_of_memory+0x13a/0x150"), its summary
// line, the memory dump that opens it, a memory cgroup's usage at its limit ("memory: usage 1048576kB,
// limit 1048576kB, failcnt 141").
bool kernel_record(std::string_view s) {
    const bool kill = has(s, "Killed process") || has(s, "Kill process");
    if (kill && (has(s, "Out of memory") || has(s, "Memory cgroup out of memory") || has(s, "total-vm:"))) return true;
    if (has(s, "oom_reaper: reaped process")) return true;
    if (has(s, "memory: usage ") && has(s, ", limit ") && has(s, "failcnt")) return true;
    return has(s, "invoked oom-killer") || has(s, "oom_kill_process+0x") || has(s, "out_of_memory+0x") ||
           has(s, "out_of_memory.cold+0x") || has(s, "oom-kill:constraint=") || has(s, "] Mem-Info:");
}

// A row of the table of tasks the OOM killer prints before it chooses ("[49077.824941] [18981]  1000 18981  1283938
// 678976 2512 7 600084 0 ld": pid, then uid, tgid, total_vm, rss, page tables, swap entries and oom_score_adj, with
// one more column on 4.x kernels and three more on 6.x, rss split into anon, file and shmem; then the name), pasted
// without the report around it. Only the OOM killer prints it (dump_tasks).
bool oom_task_row(std::string_view s) {
    for (size_t at = s.find("] ["); at != std::string_view::npos; at = s.find("] [", at + 1)) {
        size_t i = at + 3;
        while (i < s.size() && s[i] == ' ') ++i;
        const size_t pid = i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == pid || i == s.size() || s[i] != ']') continue;
        int numbers = 0;
        for (++i; i < s.size() && s[i] == ' ';) {
            while (i < s.size() && s[i] == ' ') ++i;
            size_t j = i + (i < s.size() && s[i] == '-');
            const size_t digits = j;
            while (j < s.size() && is_digit(s[j])) ++j;
            if (j == digits || (j < s.size() && s[j] != ' ')) break;  // the name
            ++numbers;
            i = j;
        }
        if ((numbers == 7 || numbers == 8 || numbers == 10) && i < s.size() && s[i] != ' ') return true;
    }
    return false;
}

// "exitcode: -9" in torchrun's failure line and "exitcode  : -9 (pid: N)" in ChildFailedError.
bool elastic_minus_nine(std::string_view s) {
    for (size_t at = s.find("exitcode"); at != std::string_view::npos; at = s.find("exitcode", at + 1)) {
        size_t i = at + std::strlen("exitcode");
        while (i < s.size() && s[i] == ' ') ++i;
        if (i >= s.size() || s[i] != ':') continue;
        ++i;
        while (i < s.size() && s[i] == ' ') ++i;
        if (s.substr(i).starts_with("-9") && (i + 2 == s.size() || !is_digit(s[i + 2]))) return true;
    }
    return false;
}

// "exit code 137", "exit status -9", "exited with exit code 137": one of numbers.
bool exit_number_is(std::string_view s, std::initializer_list<std::string_view> numbers) {
    if (std::none_of(numbers.begin(), numbers.end(), [&](std::string_view n) { return has(s, n); })) return false;
    for (size_t at = s.find("exit"); at != std::string_view::npos; at = s.find("exit", at + 1)) {
        std::string_view rest = s.substr(at + 4);
        for (std::string_view filler : {"s with return", "ed with", " exit"})
            if (rest.starts_with(filler)) rest.remove_prefix(filler.size());
        const auto word = std::find_if(std::begin(kExitWords), std::end(kExitWords),
                                       [&](std::string_view w) { return rest.starts_with(w); });
        if (word == std::end(kExitWords)) continue;
        rest.remove_prefix(word->size());
        rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" :=")));
        for (std::string_view number : numbers)
            if (rest.starts_with(number) && (rest.size() == number.size() || !is_digit(rest[number.size()])))
                return true;
    }
    return false;
}

bool exit_number_is_sigkill(std::string_view s) { return exit_number_is(s, {"137", "-9"}); }

// SIGKILL's strsignal as bash prints it, in English and then in the user's language: fr's "Processus
// arrêté", de's "Getötet", zh_CN's "已杀死" (its job report, "line 3: 4242 Killed  python", is known in
// all but the last).
constexpr std::string_view kKilledWords[] = {"Killed", "killed", "Processus arr\u00eat\u00e9", "Get\u00f6tet",
                                             "\u5df2\u6740\u6b7b"};
constexpr auto kKilledLocalised = std::span(kKilledWords).subspan(2);
constexpr auto kJobKilled = std::span(kKilledWords).first(4);

// "28% building modules", "49% ▕███▌": a percentage, then a space, as progress bars draw them.
bool progress_line(std::string_view s) {
    for (size_t at = s.find("% "); at != std::string_view::npos; at = s.find("% ", at + 1))
        if (at > 0 && is_digit(s[at - 1])) return true;
    return false;
}

// An ANSI colour escape's end ("\x1b[91m", its ESC byte sometimes lost in a paste): "[", digits and ";", "m".
bool ends_with_colour(std::string_view s) {
    if (s.size() < 3 || s.back() != 'm') return false;
    size_t i = s.size() - 1;
    while (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == ';')) --i;
    return i < s.size() - 1 && i > 0 && s[i - 1] == '[';
}

// A spinner's frame (| / - \) drawn after a step's label, "Solving environment: \" or "Resolving... /".
bool spinner_frame(std::string_view s) {
    if (s.size() < 3 || s[s.size() - 2] != ' ' || std::string_view("|/-\\").find(s.back()) == std::string_view::npos)
        return false;
    const std::string_view label = trim(s.substr(0, s.size() - 2));
    return label.ends_with(':') || label.ends_with("...");
}

// A shell's report of a SIGKILLed child: "Killed" alone (or localised, "已杀死"), glued to the end of
// output that had no newline yet (a tqdm bar's "...it/s]Killed", a counter's "Relation(0 0.0/s)Killed",
// "450734725Killed"), bash's "line 3: 4242 Killed  python train.py" (its command may wrap to the next
// line), zsh's "zsh: killed  python". Not BSD's and macOS's "Killed: 9": there it is mostly a code signature
// the kernel refused (7 of the 8 such logs in rounds 1-20 were).
bool shell_killed(std::string_view s) {
    const std::string_view t = trim(s);
    if (t == "Killed" || t == "killed") return true;
    if (t.size() > 6 && t.ends_with("Killed")) {
        // Or after the padding of a bar that drew its last frame: "49% ▕███▌   ▏ (~4.2 minutes remaining)  Killed".
        const std::string_view before = t.substr(0, t.find_last_not_of(' ', t.size() - 7) + 1);
        const char glued_to = before.empty() ? ' ' : before.back();
        if (is_digit(glued_to) || glued_to == ']' || glued_to == ')' || glued_to == '%') return true;
        // Or after a colour's escape ("\x1b[91mKilled", docker build's stderr in red).
        if (ends_with_colour(before)) return true;
        // Or after a spinner's last frame behind a step's label: conda's "Solving environment: \ Killed".
        if (spinner_frame(before)) return true;
        // Or after a step's label that ends in dots: "Installing meteor-tool@1.0.35...  Killed".
        if (before.ends_with("...")) return true;
        // A progress line's last frame, whatever it ended on: webpack's "28% building modules 154/275 modules 121
        // active ...core-js/library/fn/symbol/iterator.jsKilled".
        if (progress_line(before)) return true;
        // make's report of a recipe that died of it: "make[1]: *** [ghc.mk:4: LicenseId.p_o] Killed".
        if (has(t, ": *** [") && t.ends_with("] Killed")) return true;
    }
    for (std::string_view word : kKilledLocalised)
        if (t.ends_with(word)) return true;
    for (std::string_view word : kJobKilled) {
        for (size_t at = t.find(word); at != std::string_view::npos; at = t.find(word, at + 1)) {
            const size_t end = at + word.size();
            if (at == 0 || t[at - 1] != ' ') continue;
            const std::string_view before = trim(t.substr(0, at));
            if (end == t.size() && has(before, ": line ") && is_digit(before.back())) return true;
            // zsh's job table with the command cut off: "[1]    2843557 killed".
            if (end == t.size() && t.starts_with('[') && !before.empty() && is_digit(before.back())) return true;
            if (end >= t.size() || t[end] != ' ') continue;
            if (!before.empty() && (is_digit(before.back()) || before.ends_with("zsh:"))) return true;
        }
    }
    return false;
}

// A line's words between blanks. Not split_command_words: a log line is no command, and a quote it leaves open
// ("Killed  python3 main.py ... --lr 0.001\n\"", a report quoted in another) is no error.
std::vector<std::string_view> blank_separated(std::string_view s) {
    std::vector<std::string_view> words;
    for (std::string_view rest = trim(s); !rest.empty();) {
        const size_t end = std::min(rest.find_first_of(" \t"), rest.size());
        words.push_back(rest.substr(0, end));
        rest = trim(rest.substr(end));
    }
    return words;
}

// A shell's kill report for a command that asked only for its version or help ("zsh: killed  fleet --version",
// "[2]    95057 killed     ./AccurateMassSearch -h"): such a command needs next to no memory, so the kill came
// as the program started, a refusal (a code signature, a security policy), not the OOM killer.
bool killed_asking_version(std::string_view s) {
    if (!shell_killed(s)) return false;
    // The command after the kill's word must be the program and that one argument: "-v" after others is a verbose
    // run ("1148 Killed  NUMBA_CUDA_ENABLE_PYNVJITLINK=1 python -m numba.runtests numba.cuda.tests -v"), and a
    // lone word is the program's own name ("zsh: killed  version").
    const std::vector<std::string_view> words = blank_separated(s);
    const auto kill =
        std::find_if(words.rbegin(), words.rend(), [](std::string_view w) { return w == "killed" || w == "Killed"; });
    if (kill == words.rend() || kill - words.rbegin() != 2) return false;
    for (std::string_view word : {"--version", "-version", "version", "-v", "-V", "--help", "-help", "help", "-h"})
        if (words.back() == word) return true;
    return false;
}

// The command a zsh or fish kill report names: zsh's "zsh: killed     ./node-v14.17.0-macos-arm64" and its job table's
// "[1]    22082 killed     modd", fish's "fish: Job 1, './freeze README.md' terminated by signal SIGKILL (Forced quit)"
// and 'fish: “mas list” terminated by signal SIGKILL'; empty for any other line (bash says "Killed").
std::string_view killed_command(std::string_view s) {
    const std::string_view t = trim(s);
    if (t.starts_with("fish: ") && has(t, "terminated by signal SIGKILL")) {
        for (auto [open, close] : {std::pair<std::string_view, std::string_view>{"'", "'"}, {"\u201c", "\u201d"}}) {
            const size_t from = t.find(open);
            if (from == std::string_view::npos) continue;
            const size_t to = t.find(close, from + open.size());
            if (to != std::string_view::npos) return trim(t.substr(from + open.size(), to - from - open.size()));
        }
        return {};
    }
    const size_t at = t.find(" killed ");
    if (at == std::string_view::npos) return {};
    const std::string_view before = trim(t.substr(0, at));
    if (before != "zsh:" && !(t.starts_with('[') && !before.empty() && is_digit(before.back()))) return {};
    return trim(t.substr(at + std::strlen(" killed ")));
}

// A command that runs a script ("python3 -m llama.convert_llama ...", "node build.js"), past any "NAME=value" before
// it: the interpreter is a signed program, and a script may work a long while before it prints a line.
bool runs_a_script(std::string_view command) {
    for (std::string_view word : blank_separated(command)) {
        const size_t eq = word.find('=');
        if (eq != std::string_view::npos && !has(word.substr(0, eq), "/")) continue;  // an environment variable's value
        word.remove_prefix(word.find_last_of('/') + 1);  // npos + 1 is 0: no directory
        if (word.starts_with("python")) return true;
        for (std::string_view interpreter :
             {"node", "java", "ruby", "perl", "Rscript", "R", "julia", "php", "bash", "sh", "bun", "deno"})
            if (word == interpreter) return true;
        return false;
    }
    return false;
}

// A command echoed after its prompt ("$ ./freeze README.md", fish's "> python3 stable_diffusion.py ..."): what follows is
// that command's output.
bool echoed_command(std::string_view s) { return s.starts_with("$ ") || s.starts_with("> "); }

// A kill whose own line names a deadline (Go's "signal: killed: context deadline exceeded", "timed out",
// Celery's "Hard time limit (60s) exceeded"): a stop from outside.
bool names_a_timeout(std::string_view s) {
    return has(s, "deadline exceeded") || has(s, "timed out") || has(s, "imeout") || has(s, "TIMEOUT") ||
           has(s, "ime limit") || has(s, "imeLimit");
}

// A timeout reported as an error ("[CRITICAL] WORKER TIMEOUT (pid:12903)", "Error R12 (Exit timeout)",
// "[ERROR/MainThread] Hard time limit (60s) exceeded for task"): a parent that kills its child for hanging.
// Just before a SIGKILL it is the kill's competing cause.
bool timeout_reported(std::string_view s) {
    return names_a_timeout(s) &&
           (has(s, "ERROR") || has(s, "rror") || has(s, "CRITICAL") || has(s, "FATAL") || has(s, "atal"));
}

// A kill whose own line says the process was being stopped ("did not stop cleanly when terminated (exit
// code 137)"): the escalation of a stop, SIGTERM then SIGKILL.
bool names_a_stop(std::string_view s) {
    return has(s, "did not stop") || has(s, "failed to stop") || has(s, "when terminated");
}

// An orchestrator that killed a container for failing its health check ("task: non-zero exit (137):
// dockerexec: unhealthy container").
bool health_check_kill(std::string_view s) {
    return has(s, "unhealthy") && (has(s, "exit") || has(s, "kill") || has(s, "Kill"));
}

// "Signal 9 (SIGKILL)", "(signal: 9, SIGKILL: kill)" (cargo's report of rustc).
bool names_signal_nine(std::string_view s) {
    for (std::string_view key : {"ignal 9", "ignal: 9"}) {
        for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
            const size_t end = at + key.size();
            if (end == s.size() || !is_digit(s[end])) return true;
        }
    }
    return false;
}

// "signal SIGKILL", and as runners quote it: yarn's 'Command failed with signal "SIGKILL"', Node's
// "signal: 'SIGKILL'".
bool signal_sigkill(std::string_view s) {
    for (size_t at = s.find("SIGKILL"); at != std::string_view::npos; at = s.find("SIGKILL", at + 1)) {
        if (at == 0) continue;
        const size_t last = s.find_last_not_of(" :'\"=", at - 1);
        if (last != std::string_view::npos && last >= 5 && s.substr(last - 5, 6) == "signal") return true;
    }
    return false;
}

// A program's report that its child died of signal 9, in the number alone: nvcc's "'cicc' died due to signal
// 9 (Kill signal)", "%Error: Verilator threw signal 9", swiftc's "compile command failed due to signal 9".
bool died_of_signal_nine(std::string_view s) {
    return names_signal_nine(s) && (has(s, "died") || has(s, "threw") || has(s, "failed due to"));
}

bool sigkill_sign(std::string_view s, Bits found) {
    // "collect2: error: ld terminated with signal 9 [Killed]" names the number and the word, not SIGKILL.
    if ((found & bit(kKilled)) && names_signal_nine(s)) return true;
    if ((found & (bit(kKillSignal) | bit(kErrorColon) | bit(kErrorLower))) && died_of_signal_nine(s)) return true;
    if ((found & bit(kSigkill)) && (names_signal_nine(s) || has(s, "Signals.SIGKILL") || has(s, "was sent SIGKILL") ||
                                    has(s, "killed (i.e. SIGKILL)") /* cabal's */ ||
                                    (signal_sigkill(s) && !has(s, "closing signal") && !has(s, "Sending"))))
        return true;
    // GCC's driver: its compiler (cc1plus, lto1) died of SIGKILL, whose strsignal is "Killed". make -j's
    // compilers are the OOM killer's usual victims.
    if ((found & bit(kKilled)) && has(s, "Killed signal terminated program")) return true;
    // GCC's other wording ("internal compiler error: Killed (program cc1plus)", in French "internal compiler
    // error: Processus arrêté (program cc1plus)"); clang's driver for its linker or compiler ("clang-13: error:
    // unable to execute command: Killed").
    if ((found & bit(kKilled)) && (has(s, "internal compiler error: Killed") || has(s, "unable to execute command: Killed")))
        return true;
    if ((found & (bit(kKilledFr) | bit(kKilledDe))) && has(s, "internal compiler error: ")) return true;
    // A client whose server process vanished without a word (Gradle's "the daemon has disappeared", "Gradle
    // build daemon disappeared unexpectedly (it may have been killed or may have crashed)"), as Jupyter's
    // kernel "appears to have died".
    if ((found & bit(kDisappeared)) && (has(s, "daemon has disappeared") || has(s, "daemon disappeared unexpectedly")))
        return true;
    // psql's server gone mid-query ("server closed the connection unexpectedly", "The connection to the server
    // was lost. Attempting reset"): the backend the OOM killer takes on a small machine.
    if ((found & (bit(kAttemptingReset) | bit(kConnectionClosed))) &&
        (has(s, "erver closed the connection") || has(s, "Attempting reset")))
        return true;
    if ((found & bit(kExitcode)) && elastic_minus_nine(s)) return true;
    if ((found & (bit(kExitCode) | bit(kExitStatus) | bit(kExitedWith) | bit(kReturnCode))) && exit_number_is_sigkill(s))
        return true;
    if ((found & bit(kKilled)) && has(s, "killed by signal: Killed")) return true;
    // A wrapper's report of its child's signal: sccache's "Compile terminated by signal 9", rq's "work-horse
    // terminated unexpectedly; waitpid returned 9", systemd's "Main process exited, code=killed, status=9/KILL".
    if ((found & bit(kBySignalNine)) && names_signal_nine(s)) return true;
    if ((found & bit(kWaitpidReturned)) && number_after(s, "waitpid returned ") == 9) return true;
    if ((found & bit(kKilled)) && has(s, "code=killed, status=9/KILL")) return true;
    // GCC's driver naming no program: "x86_64-pc-linux-gnu-g++: fatal error: Killed".
    if ((found & bit(kKilled)) && trim(s).ends_with("fatal error: Killed")) return true;
    if (found & bit(kMpiExitCode)) return trim(s).ends_with("EXIT CODE: 9");  // MPICH's hydra: the rank's signal
    if ((found & bit(kKilled)) && has(s, "signal: killed")) return true;  // Go's os/exec: a runner SIGKILLed
    if ((found & bit(kKilled)) && has(s, "Received \"killed\" signal")) return true;  // CircleCI's step, SIGKILLed
    // Jupyter's server restarting a kernel that died ("AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random
    // ports"); a restart the user asked for is "Kernel restarted", with no restarter.
    if (found & bit(kKernelRestarter)) return true;
    if (found & bit(kKernelDied)) return has(s, "kernel") && has(s, "appears to have died");  // Jupyter's notice
    return (found & (bit(kKilled) | bit(kKilledZh) | bit(kKilledFr) | bit(kKilledDe))) && shell_killed(s);
}

// A launcher's or scheduler's report of a process's end: the death's consequence, never a cause competing with it.
// GCC's assembler reading a compiler killed mid-output through -pipe ("{standard input}:913986: Error: unknown
// pseudo-op"): the kill's consequence too.
// An error that reports the kill itself ("KEMException: [Error] Critical: Haskell Backend execution failed with code
// 137", OpenDroneMap's "Exception: Child returned 137") is its account, not another cause.
bool death_report(std::string_view s) {
    return has(s, "{standard input}:") || has(s, "ChildFailedError") || has(s, "failed (exitcode") || has(s, "slurmstepd") ||
           parse_srun_task_end(s) || has(s, "with code 137") || number_after(s, "returned ") == 137 ||
           exit_number_is_sigkill(s);
}

// Kubernetes' reason for a container's end, when it is not OOMKilled: the runtime says OOMKilled for
// its memory cgroup's kills, so "Reason: Error" with exit 137 was a kill for something else (a
// liveness probe, a deadline, a drained node).
bool kubernetes_other_reason(std::string_view s) {
    size_t at = s.find("eason:");
    if (at == std::string_view::npos || at == 0 || (s[at - 1] != 'R' && s[at - 1] != 'r')) return false;
    if (at > 1 && s[at - 2] != ' ' && s[at - 2] != '\t') return false;  // "Reason:", not "exitReason:"
    const std::string_view t = trim(s.substr(at + 6));
    return t == "Error" || t == "Completed" || t == "ContainerCannotRun" || t == "DeadlineExceeded" || t == "Evicted";
}

// A memory error a log line reports at INFO or DEBUG level was handled, not the end of the program
// (ESMFold's "| INFO | root | Failed (CUDA out of memory) on sequence ...").
// HotSpot's "VM warning: INFO: os::commit_memory(...) failed" is no level: the JVM exits after it.
// TensorFlow's "INFO:tensorflow:Error reported to Coordinator: <class '...ResourceExhaustedError'>" is no level either:
// the coordinator stops every thread and raises the error.
bool logged_as_handled(std::string_view s) {
    if (has(s, "VM warning: INFO:") || has(s, "Error reported to Coordinator")) return false;
    // A child's fatal report relayed at the wrapper's level ("DEBUG - web build: FATAL ERROR: ... JavaScript heap out
    // of memory"): the level is the wrapper's, and the child died.
    if (has(s, "FATAL ERROR") || has(s, "fatal error")) return false;
    return has(s, " INFO ") || has(s, "| INFO |") || has(s, "[INFO]") || has(s, "INFO:") || has(s, " DEBUG ") ||
           has(s, "[DEBUG]") || has(s, "DEBUG:") || has(s, "level=info") || has(s, "level=debug");
}

// A stop from outside: a scheduler's cancellation, time limit or preemption, a launcher told to shut
// down, docker compose stopping its services, Kubernetes evicting a pod for anything but memory or
// naming another reason for a container's end, an orchestrator's kill for a failed health check, a
// kill that names its deadline or the stop it escalated, a supervisor killing what outlived its
// timeout (systemd's "State 'stop-sigterm' timed out. Killing.", uWSGI's "*** HARAKIRI ON WORKER 10").
bool stop_from_outside(std::string_view s, Bits found) {
    if ((found & bit(kReason)) && kubernetes_other_reason(s)) return true;
    if ((found & (bit(kKilled) | bit(kSigkill) | bit(kKilling))) && names_a_timeout(s)) return true;
    if ((found & bit(kHarakiri)) && has(s, "HARAKIRI ON WORKER")) return true;
    if ((found & bit(kUnhealthy)) && health_check_kill(s)) return true;
    if (names_a_stop(s) && sigkill_sign(s, found)) return true;
    // A process that exited 143 (128 + SIGTERM) was told to stop ("georchestra_cas_1 exited with code 143" as
    // docker compose stops its services): a 137 beside it is the stop's escalation, SIGTERM then SIGKILL.
    if ((found & (bit(kExitCode) | bit(kExitStatus) | bit(kExitedWith))) && exit_number_is(s, {"143"})) return true;
    // A stop someone asked for: a runner handling a kill or stop request ("Handling KILL request"), or the
    // command that stops or restarts the process in a script's trace ("+ docker-compose exec web
    // supervisorctl restart all", "$ docker stop trainer", "kill -9 4242").
    if (found & kStopRequestAnchors) return true;
    // SIGINT sent or received: an interrupt, a user's or a runner's cancelling the job ("Sending SIGINT to process
    // 8440" as Azure Pipelines' agent cancels a step at its time limit).
    if ((found & bit(kSigint)) && (has(s, "Sending SIGINT") || has(s, "sent SIGINT") || has(s, "eceived SIGINT")))
        return true;
    if (!(found & (bit(kCancelled) | bit(kSigterm) | bit(kGotSignal) | bit(kDeathSignal) | bit(kPreemption) |
                   bit(kStopping) | bit(kLowOnMemory))))
        return false;
    const std::string_view t = trim(s);
    return has(s, "CANCELLED AT") || has(s, "DUE TO TIME LIMIT") || has(s, "DUE TO PREEMPTION") ||
           has(s, "Signal 15 (SIGTERM) received") || has(s, "got signal: 15") || has(s, "Received SIGTERM") ||
           (has(s, "death signal") && has(s, "shutting down")) || has(s, "Gracefully stopping") ||
           (t.starts_with("Stopping ") && t.ends_with("... done")) ||
           (has(s, "low on resource: ") && !has(s, "low on resource: memory"));
}

// srun's account of a task that Slurm's cgroup killed: "srun: error: node2: task 1: Out Of Memory".
bool slurm_task_oom(std::string_view s) {
    auto end = parse_srun_task_end(s);
    return end && end->out_of_memory;
}

// slurmstepd's count of the step's cgroup OOM kills, on any node: "slurmstepd: error: Detected 1
// oom-kill event(s) in StepId=5.0 cgroup." (older: "in step 370626.batch cgroup"; some: "oom_kill event").
bool slurm_oom_events(std::string_view s) {
    return has(s, "Detected ") && (has(s, "oom-kill event") || has(s, "oom_kill event"));
}

// --- The monitor family: a scheduler or framework that watches memory killed the worker and said so.

// A word of its own: "OUT_OF_MEMORY" as a job state, not inside CUDA_ERROR_OUT_OF_MEMORY.
bool state_word(std::string_view s, std::string_view word) {
    for (size_t at = s.find(word); at != std::string_view::npos; at = s.find(word, at + 1)) {
        const char before = at == 0 ? ' ' : s[at - 1];
        if (before != '_' && !std::isalnum(static_cast<unsigned char>(before))) return true;
    }
    return false;
}

// Slurm's accounting: "Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
// "Exceeded job memory limit"; the job state OUT_OF_MEMORY (sacct cuts it to "OUT_OF_ME+").
// Not "Exceeded job memory limit at some point": Slurm prints that for jobs that went on to finish.
bool slurm_memory_limit(std::string_view s) {
    if (has(s, "exceeded memory limit") && has(s, "being killed")) return true;
    if ((has(s, "Exceeded job memory limit") || has(s, "Exceeded step memory limit")) && !has(s, "at some point"))
        return true;
    return state_word(s, "OUT_OF_ME");
}

// The other batch schedulers' and platforms' memory kills: LSF's TERM_MEMLIMIT and TERM_SWAP (its limit on a job's
// virtual memory, as PBS's vmem and SGE's h_vmem are: "TERM_SWAP: job killed after reaching LSF swap usage limit."),
// PBS's "job killed: vmem N exceeded limit M" and "Job exceeded a memory resource limit", SGE's "exceeded hard limit
// h_vmem", HTCondor's "memory usage exceeded request_memory" and "Job has gone over memory limit of 4096 megabytes",
// Cloud Run's "Memory limit of 5120 MiB exceeded with 5261 MiB used"; runc's "container init was OOM-killed". A
// limit is enforced; a quota may not be (memory_quota_exceeded).
bool batch_memory_limit(std::string_view s) {
    // A warning's class kills nothing (a kill logged at level WARNING still is one): Node's
    // "MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 connect listeners added. Use
    // emitter.setMaxListeners() to increase limit".
    if (has(s, "Warning:")) return false;
    if (has(s, "TERM_MEMLIMIT") || has(s, "TERM_SWAP") || has(s, "OOM-killed") || has(s, "OOM Killed")) return true;
    if (has(s, "illed") && (has(s, "excessive memory") || has(s, "out-of-memory"))) return true;  // HTCondor, site notices
    // OpenShift's "The build pod was killed due to an out of memory condition.", Racket's sandbox "evaluator:
    // terminated (out-of-memory)".
    if ((has(s, "killed due to") && has(s, "out of memory")) || has(s, "terminated (out-of-memory)")) return true;
    if (has(s, "on hold") && has(s, "memory usage")) return true;  // HTCondor's SYSTEM_PERIODIC_HOLD for memory
    if (has(s, "over memory limit") || has(s, "over the memory limit") || has(s, "over its memory limit")) return true;
    if (!has(s, "xceeded")) return false;
    const bool memory = has(s, "vmem") || has(s, "mem ") || has(s, "memory") || has(s, "Memory");
    // Not a query told to spill to disk (MongoDB's "Sort exceeded memory limit of 104857600 bytes, but did not
    // opt in to external sorting"): the server refused the query and went on.
    if (has(s, "allowDiskUse") || has(s, "external sort")) return false;
    // Nor a request refused before anything ran: a namespace's quota ('pods "x" is forbidden: exceeded quota:
    // ..., requested: limits.memory=4Gi'), Cloud Foundry's "You have exceeded your organization's memory limit",
    // Slurm's submission ("sbatch: error: job memory limit for shared nodes exceeded. Must be <= 120000 MB").
    if (has(s, "quota") || has(s, "organization's memory limit") || has(s, "sbatch: ")) return false;
    // Nor PostgreSQL's cap on one allocation ("Failed on request of size 1868601608 in memory context "ExprContext":
    // exceeded limits on size of allocations (1073741823)"), MaxAllocSize, under its "invalid memory alloc request size".
    if (has(s, "size of allocations")) return false;
    return memory && (has(s, "limit") || has(s, "request_memory")) && !has(s, "at some point");
}

// A platform's memory quota passed ("Error R14 (Memory quota exceeded)"): by itself a warning, since
// the platform lets the process run on (swapping) until it decides to kill it; a kill right after it
// is the platform's memory kill, and so is Heroku's R15, "vastly exceeded" (Classifier::killed_over_quota).
bool memory_quota_exceeded(std::string_view s) {
    return has(s, "emory quota") && has(s, "xceeded");
}

// Kubernetes' and docker's OOMKilled, not docker inspect's "OOMKilled": false.
bool oom_killed(std::string_view s) {
    for (size_t at = s.find("OOMKilled"); at != std::string_view::npos; at = s.find("OOMKilled", at + 1)) {
        std::string_view rest = s.substr(at + std::strlen("OOMKilled"));
        rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of("\"\': =")));
        if (!rest.starts_with("false") && !rest.starts_with("False")) return true;
    }
    return false;
}

// A scheduler's or container runtime's record of how a job or container ended, naming a memory kill:
// Slurm's state OUT_OF_MEMORY, Kubernetes' OOMKilled, Nomad's 'Exit Message: "OOM Killed"'. They count an
// OOM kill of any of its processes, while the exit code they show is the main process's: "State:
// OUT_OF_MEMORY (exit code 0)", 'Terminated Exit Code: 0, Exit Message: "OOM Killed"'.
bool memory_end_state(std::string_view s) {
    return state_word(s, "OUT_OF_ME") || oom_killed(s) || has(s, "OOM Killed");
}

// The leading count of "2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers
// crashed due to other reasons": Ray prints the summary when the count is 0 too.
bool ray_summary_counts_kills(std::string_view s) {
    const size_t at = s.find(" Workers (tasks / actors) killed due to memory pressure");
    if (at == std::string_view::npos) return false;
    size_t begin = at;
    while (begin > 0 && is_digit(s[begin - 1])) --begin;
    return begin < at && s.substr(begin, at - begin) != "0";
}

// YARN's exit status for a container it killed over its memory limits: -104 physical
// (KILLED_EXCEEDED_PMEM), -103 virtual (KILLED_EXCEEDED_VMEM), printed as "Exit code:-103" or "exitStatus: -104".
bool yarn_memory_exit(std::string_view s) {
    for (std::string_view key : {"xit code:-10", "xitStatus: -10"}) {
        const size_t at = s.find(key);
        if (at == std::string_view::npos) continue;
        const size_t i = at + key.size();
        if (i < s.size() && (s[i] == '3' || s[i] == '4') && (i + 1 == s.size() || !is_digit(s[i + 1]))) return true;
    }
    return false;
}

// Ray's memory monitor ("Task was killed due to the node running low on memory", its
// OutOfMemoryError, an actor dead of NODE_OUT_OF_MEMORY), Dask's nanny ("Worker exceeded 95% memory
// budget. Restarting"), Kubernetes' OOMKilled (not docker inspect's "OOMKilled": false), docker's
// "container oom" event, systemd-oomd's kill, YARN's container kill, Colab's crashed session, Vercel's build
// report ('At least one "Out of Memory" ("OOM") event was detected during the build': its container SIGKILLed a
// process).
bool framework_memory_monitor(std::string_view s) {
    if (has(s, "ray.exceptions.OutOfMemoryError") || has(s, "running low on memory") || has(s, "NODE_OUT_OF_MEMORY") ||
        has(s, "exceeds the memory usage threshold") || ray_summary_counts_kills(s))
        return true;
    if (yarn_memory_exit(s)) return true;
    if (has(s, "exceeded") && has(s, "memory budget") && !has(s, "exceeded 0% memory budget")) return true;  // 0%: misconfigured
    // systemd-oomd's "Killed /user.slice/... due to memory pressure", Meta's oomd running its kill action,
    // earlyoom's 'sending SIGTERM to process 12006 "python3": badness 209, VmRSS 2891 MiB', PM2's "Process
    // 2 restarted because it exceeds --max-memory-restart value".
    if (has(s, "max-memory-restart") && has(s, "exceeds")) return true;
    // A supervisor stopping a process over its size: Sidekiq's swarm, "Process 99408 too large at 336892KB, stopping it".
    if (number_after(s, "too large at ") > 0 && has(s, "stopping")) return true;
    const bool oomd_kill = has(s, "oomd") && (has(s, "Killed") || has(s, "Action=kill"));
    const bool user_space_killer = has(s, "badness") && (has(s, "sending SIG") || has(s, "illed") || has(s, "killing"));
    // Android's lmkd: "lowmemorykiller: Kill 'com.example' (27311), uid 10557, oom_score_adj 200 to free 198456kB rss".
    const bool lmkd_kill = has(s, "lowmemorykiller: Kill");
    return oom_killed(s) || has(s, "container oom") || oomd_kill || user_space_killer || lmkd_kill ||
           has(s, "low on resource: memory") ||
           (has(s, "beyond") && has(s, "memory limits")) || has(s, "for exceeding memory limits") ||
           has(s, "session crashed after using all available RAM") || has(s, "(\"OOM\") event was detected") ||
           has(s, "due to memory limit") /* isolated-vm's "Isolate was disposed during execution due to memory limit" */;
}

// --- The library family's backstop: an allocation failure in an engine's own words ("ggml_aligned_malloc:
// insufficient memory", "Failed to allocate memory for requested buffer of size N", "CUDA Error: out of
// memory", "[METAL] ... Insufficient Memory"), not caught by a specific rule. The phrase must come with a
// size, an allocation verb or an error's wording; it must not be about a compiler's or kernel launch's
// resource limits (shared memory, registers, TPU vmem), a disk, a warning in a run that went on, or
// advice.
constexpr std::string_view kFailurePhrases[] = {
    "out of memory", "Out of memory", "Out of Memory", "Out Of Memory", "OUT OF MEMORY", "OutOfMemory", "Cannot allocate", "cannot allocate",
    "can't allocate", "Can't allocate" /* DALI's "Can't allocate 129499136 bytes on device 0." */, "ailed to allocate",
    "nable to allocate", "llocation failed", "alloc failed",
    "nsufficient memory", "nsufficient Memory", "not enough memory", "Not enough memory", "RESOURCE_EXHAUSTED",
    "esource exhausted", "memory exhausted" /* R's "vector memory exhausted", GCC's "virtual memory exhausted" */,
    "No available memory", "OUT_OF_MEMORY", "OUT_OF_DEVICE_MEMORY", "OUT_OF_HOST_MEMORY",
    "OutOfDeviceMemory", "OutOfHostMemory" /* Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY as its bindings name it */,
    "ALLOCATION_FAILURE",
    "nlarge memory" /* a heap that could not grow: Emscripten's "Cannot enlarge memory arrays" */,
    "ouldn't allocate", "ould not allocate", "ytes exhausted" /* PHP's "Allowed memory size of N bytes exhausted" */,
    "eap exhausted" /* GHC's "Heap exhausted;" */, "xhausted heap" /* the Dart VM's "Exhausted heap space" */,
    "ut of heap" /* MSVC's "fatal error C1060: compiler is out of heap space" */};
// A runtime's size limit, not its heap running out (V8's "invalid table size Allocation failed - JavaScript heap out
// of memory": a Map or Set past its largest capacity), as the JVM's "Requested array size exceeds VM limit" is.
constexpr std::string_view kSizeLimits[] = {"invalid table size", "invalid array length", "invalid string length"};
// Lines about other limits (a kernel launch's or compiler's resources, a disk, an API's quota,
// a JVM's threads; its heap has its own rule, jvm_out_of_memory), a driver
// that could not start (cuInit), TensorRT's builder timing tactics in its virtual memory buffer (it skips a
// tactic whose workspace does not fit, and goes on), and other families' records: the kernel's OOM kills
// and the NVIDIA driver's (see driver_verdict).
constexpr std::string_view kNotAnAllocation[] = {
    "shared memory", "too many resources", "ptxas", "register", "No space left", "disk", "Disk", "vmem", "VMEM",
    "SMEM", "tactic", "Tactic", "virtualMemoryBuffer", "cuInit", "Java heap", "java.lang", "OUT_OF_RESOURCES", "necessary resources", "StatusCode.", "static TLS", "quota", "Quota", "rate limit", "Rate limit", "not a failure", "NVRM", "nvgpu", "cma_alloc", "Killed process", "Kill process", "oom-kill",
    "oom_kill",
    // A scheduler that could not place a pod ("FailedScheduling: 0/8 nodes are available: 8 Insufficient
    // memory"): nothing ran. SQLite's misleading "unable to open database file: out of memory (14)", its code
    // 14 being CANTOPEN. A device lost to a GPU page fault that MoltenVK labels VK_ERROR_OUT_OF_DEVICE_MEMORY.
    "FailedScheduling", "nodes are available", "nable to open", "PageFault", "Page Fault", "Address Fault",
    // NVENC's status 10 (NV_ENC_ERR_OUT_OF_MEMORY) opening an encode session: its answer to a GPU past its
    // session limit or a driver without NVENC ("OpenEncodeSessionEx failed: out of memory (10)").
    "EncodeSession",
    // A failure the program says it went on from ("Not enough memory to train LightGBM... Skipping this model.").
    "Skipping", "skipping",
    // PostgreSQL's limit on one allocation (1 GB, MaxAllocSize), which it reports as "out of memory" under
    // program_limit_exceeded ("psycopg2.errors.ProgramLimitExceeded: out of memory", "Cannot enlarge string
    // buffer containing 1073741822 bytes by 1 more bytes"); its memory running out is the class out_of_memory.
    "ProgramLimitExceeded", "program_limit_exceeded", "enlarge string buffer",
    // A shared-memory zone of the size its configuration gave it, full: nginx's "ngx_slab_alloc() failed: no
    // memory in lua_shared_dict zone".
    "ngx_slab_alloc",
    // Arduino's sizer: the sketch does not fit the board's SRAM ("RunnerException: Not enough memory; see
    // http://www.arduino.cc/en/Guide/Troubleshooting#size"); the build did not run out.
    "Troubleshooting#size", "reducing your footprint" /* its later wording, with a support article's address */,
    // A WebAssembly memory V8 could not reserve ("RangeError: WebAssembly.Memory(): could not allocate memory",
    // "WebAssembly.Instance(): Out of memory: wasm memory"): on 64-bit it reserves 8 GiB or more of address space
    // for each, which ulimit -v refuses long before memory runs out.
    "WebAssembly.",
    // The kernel's slab allocator failing one of its own allocations ("SLUB: Unable to allocate memory on node
    // -1 (gfp=0x8020)"), as its "page allocation failure" is: the kernel goes on; a process it killed for
    // memory has its OOM killer's report.
    "SLUB: ",
    // Android's CursorWindow ("Could not allocate CursorWindow '...db' of size 2097152 due to error -12"): its
    // windows live in ashmem, a per-process limit that cursors left open use up (its exception counts them).
    "CursorWindow",
    // The JVM reserving its class space at start ("Could not allocate metaspace: 1073741824 bytes"): address space,
    // which ulimit -v or a sandbox refuses; its metaspace running out is "OutOfMemoryError: Metaspace".
    "allocate metaspace",
    // libfuse's "fuse: memory allocation failed" from an AppImage's runtime whose FUSE does not match the system's (then
    // "Can't open squashfs image: Bad address", "Cannot mount AppImage, please check your FUSE setup"); three projects'
    // AppImages, none out of memory.
    "fuse: memory allocation failed"};
// A shared file a process could not map ("RuntimeError: unable to mmap 4096 bytes from file
// </torch_362873_3123855485_63350>: Cannot allocate memory (12)", a DataLoader worker's tensor in shared
// memory): a shared mapping takes no memory when it is made, so its ENOMEM is the map count
// (vm.max_map_count) or the address space, not memory running out; the JVM's "Map failed" is the same, and
// so is the dynamic loader's "failed to map segment from shared object: Cannot allocate memory" (a library's
// file mapped under ulimit -v or SGE's h_vmem), and QEMU's guest RAM backed by a file ("unable to map backing store for
// guest RAM: Cannot allocate memory"): hugetlbfs, whose pool of huge pages, set aside at boot, is too small or empty.
bool maps_a_file(std::string_view s) {
    return (has(s, "unable to mmap") && has(s, "from file")) || has(s, "map segment from shared object") ||
           has(s, "map backing store");
}
// A thread that could not be started ("ghc: failed to create OS thread: Cannot allocate memory",
// "pthread_create failed"): its stack is reserved address space, so its ENOMEM is ulimit -v or a limit on
// threads, as the JVM's "unable to create new native thread" is.
// ART's 'Throwing OutOfMemoryError "Could not allocate JNI Env"' is a thread's too: each thread has its own, and so is
// the signal stack Rust's runtime maps for each new thread ("thread '<unnamed>' panicked at 'failed to allocate an
// alternative stack'", a test under its own setrlimit(RLIMIT_AS)).
constexpr std::string_view kThreadLimit[] = {"OS thread", "native thread", "pthread_create", "create thread", "new thread",
                                             "JNI Env", "alternative stack"};
constexpr std::string_view kWarning[] = {"WARNING", "Warning", "WARN", "warning:", "[W]", "level=warn"};
// Pages a process locked in RAM (mlock, RLIMIT_MEMLOCK, ulimit -l's "max locked memory"): a limit on
// locking, not memory running out. io_uring's rings and registered buffers count against RLIMIT_MEMLOCK
// (before Linux 5.12, and its registered buffers still): "io_uring_setup(...) = -1 ENOMEM (Cannot allocate memory)".
// Elasticsearch's bootstrap says it in its own words: "Unable to lock JVM Memory: error=12, reason=Cannot allocate memory".
constexpr std::string_view kLocksMemory[] = {"mlock",         "lock memory", "locking page",   "lock page",
                                             "locked memory", "io_uring",    "lock JVM Memory"};
constexpr std::string_view kAdvice[] = {"If you", "if you", "Try ", "try ", "onsider", "may ", "might "};
// A guess at the cause, even in an error ("Worker (pid:25) was sent SIGKILL! Perhaps out of memory?"), as a program's
// dialog for any error makes it ("An error occurred. The system may have run out of memory, or a bug may have
// occurred.", "It was likely caused by running out of memory"); a failure named first and then guessed at ("Allocation
// failed, likely due to insufficient memory") still counts.
constexpr std::string_view kGuess[] = {"Perhaps", "perhaps", "Possibly", "possibly", "Maybe", "maybe",
                                       "may have run out", "might have run out", "likely caused by"};
constexpr std::string_view kFailureContext[] = {
    "alloc", "reserve", "buffer", "rror", "ERROR", "FATAL", "atal", "failed", "Failed", "Exception", "what()",
    "terminat", "abort", "Abort", "eason: " /* dlib's "code: 2, reason: out of memory" */,
    "ran out of" /* a report that it did: Metaflow's "Task ran out of memory." */,
    "Heap exhausted;" /* GHC's runtime, the heap's size on the next line */,
    "virtual memory exhausted" /* GCC's xmalloc, its strerror in the user's language: "virtual memory exhausted: 无法分配内存" */,
    "Alloc" /* the allocating call named: Blender's "Out of memory in cuMemAlloc(&device_pointer, size)" */};

// An allocation larger than this is a size bug (an overflow, an uninitialised length), not memory running
// out: more than any GPU and nearly any host has ("Failed to allocate 7663872811008 bytes", 7 TiB).
constexpr double kImplausibleBytes = 4.0 * 1024 * 1024 * 1024 * 1024;

// The largest size with a unit in a line, in bytes (0 when none): "7663872811008 bytes", "2268047721628.89 MB",
// R's "cannot allocate vector of size 4211100.6 Gb" (its units are binary).
double largest_size(std::string_view s) {
    constexpr std::pair<std::string_view, double> kUnits[] = {
        {"bytes", 1}, {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
        {"TiB", 1024.0 * 1024 * 1024 * 1024}, {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
        {"EiB", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
        {"PB", 1e15}, {"EB", 1e18}, {"Kb", 1024.0}, {"Mb", 1024.0 * 1024}, {"Gb", 1024.0 * 1024 * 1024},
        {"Tb", 1024.0 * 1024 * 1024 * 1024}, {"B", 1}};
    double largest = 0;
    for (size_t i = 0; i < s.size();) {
        if (!is_digit(s[i]) || (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == '.'))) { ++i; continue; }
        size_t j = i;
        while (j < s.size() && (is_digit(s[j]) || s[j] == '.')) ++j;
        size_t k = j;
        while (k < s.size() && s[k] == ' ') ++k;
        const std::string_view unit = s.substr(k, 6);
        for (const auto& [name, scale] : kUnits) {
            if (!unit.starts_with(name) || (unit.size() > name.size() && std::isalpha(static_cast<unsigned char>(unit[name.size()]))))
                continue;
            largest = std::max(largest, std::strtod(std::string(s.substr(i, j - i)).c_str(), nullptr) * scale);
            break;
        }
        i = j;
    }
    return largest;
}

// "2830172160", "100.00 MiB", "4 GB", "2268047721628.89 MB": a number of at least 4 digits or one with a unit.
bool has_size(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        if (!is_digit(s[i])) { ++i; continue; }
        size_t j = i;
        while (j < s.size() && (is_digit(s[j]) || s[j] == '.')) ++j;
        const size_t digits = j - i;
        size_t k = j;
        while (k < s.size() && s[k] == ' ') ++k;
        const std::string_view unit = s.substr(k, 5);
        for (std::string_view u : {"B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "bytes"})
            if (unit.starts_with(u) && (unit.size() == u.size() || !std::isalpha(static_cast<unsigned char>(unit[u.size()]))))
                return true;
        if (digits >= 4) return true;
        i = j;
    }
    return false;
}

bool any_of(std::string_view s, std::span<const std::string_view> needles) {
    return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) { return has(s, n); });
}

// GHC's runtime linker mapping code where it must lie, near the program's own ("ghc-iserv: mmap 4096 bytes at (nil):
// Cannot allocate memory", its m32 allocator's "mmap 131072 bytes at (nil)"): a place in the address space it could
// not get (a kernel's mmap regression, GHC #19421), not memory; GHC's heap running out is "Heap exhausted".
bool placed_mapping(std::string_view s) {
    const size_t at = s.find("mmap ");
    if (at == std::string_view::npos) return false;
    const std::string_view mapping = s.substr(at);
    return number_after(mapping, "mmap ") >= 0 && has(mapping, " bytes at ");
}

// A limit on address space, mappings, threads or locked pages: its ENOMEM is not memory running out.
// mprotect's ENOMEM ("loom: fault mprotect (197681): Out of memory") is the map count: changing a page's protection
// splits a mapping, and past vm.max_map_count the kernel refuses; it allocates nothing.
bool limit_not_memory(std::string_view s) {
    return any_of(s, kLocksMemory) || maps_a_file(s) || any_of(s, kThreadLimit) || has(s, "mprotect") || placed_mapping(s);
}

// "bm_alloc_gmem failed", "Alloc Device Memory Failed!": an allocation verb, a failure and memory.
bool alloc_failed(std::string_view s) {
    const size_t alloc = std::min(s.find("alloc"), s.find("Alloc"));
    if (alloc == std::string_view::npos) return false;
    const std::string_view rest = s.substr(alloc);
    return (has(rest, "fail") || has(rest, "Fail") || has(rest, "FAIL")) &&
           (has(s, "mem") || has(s, "Mem") || has(s, "MEM"));
}

// MindSpore's "plus alloc size : 301990400 is more than total mem size : 29464985600".
bool request_exceeds_memory(std::string_view s) {
    return (has(s, "more than") || has(s, "exceeds") || has(s, "larger than")) &&
           (has(s, "total mem") || has(s, "available mem") || has(s, "free mem") || has(s, "device mem"));
}

size_t first_of(std::string_view s, std::span<const std::string_view> needles) {
    size_t first = std::string_view::npos;
    for (std::string_view n : needles) first = std::min(first, s.find(n));
    return first;
}

// A hint ("Try a smaller batch to avoid running out of memory") names the failure after its advice; a
// failure that guesses at its cause afterwards ("GPU memory allocation failed (might be due to
// insufficient memory)") is still the failure.
bool advice_before_failure(std::string_view s) {
    const size_t advice = first_of(s, kAdvice);
    if (advice == std::string_view::npos) return false;
    const size_t failure = std::min({first_of(s, kFailurePhrases), s.find("alloc"), s.find("Alloc")});
    return advice < failure;
}

// A size below zero: a length that wrapped ("internal error: Unable to commit -1604321280 bytes of memory").
bool negative_size(std::string_view s) {
    for (size_t at = s.find('-'); at != std::string_view::npos; at = s.find('-', at + 1)) {
        if (at + 1 == s.size() || !is_digit(s[at + 1]) || (at > 0 && s[at - 1] != ' ' && s[at - 1] != '(')) continue;
        size_t end = at + 1;
        while (end < s.size() && (is_digit(s[end]) || s[end] == '.')) ++end;
        while (end < s.size() && s[end] == ' ') ++end;
        if (largest_size(s.substr(at + 1, end - at - 1 + 5)) > 0) return true;  // the number and its unit
    }
    return false;
}

// The length in a system call trace's mmap ("mmap(NULL, 360287970189658312, PROT_READ|PROT_WRITE, ...) = -1 ENOMEM"),
// in bytes without a unit; 0 when none.
double traced_length(std::string_view s) {
    const size_t at = s.find("mmap(NULL, ");
    if (at == std::string_view::npos) return 0;
    double bytes = 0;
    for (size_t i = at + std::strlen("mmap(NULL, "); i < s.size() && is_digit(s[i]); ++i) bytes = bytes * 10 + (s[i] - '0');
    return bytes;
}

// The size a call was given, in its arguments and in bytes without a unit (macOS malloc's "mach_vm_map(size=
// 18446744069961388032) failed", a debugger's frame "operator new (sz=0xffffffffffffffff)"); 0 when none.
double argument_size(std::string_view s) {
    double largest = 0;
    for (std::string_view key : {"(size=", " size=", "(sz="}) {
        const size_t at = s.find(key);
        if (at == std::string_view::npos) continue;
        size_t i = at + key.size();
        const bool hex = s.substr(i).starts_with("0x");
        const int base = hex ? 16 : 10;
        if (hex) i += 2;
        double bytes = 0;
        for (; i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])) && (hex || is_digit(s[i])); ++i)
            bytes = bytes * base + (is_digit(s[i]) ? s[i] - '0' : std::tolower(static_cast<unsigned char>(s[i])) - 'a' + 10);
        largest = std::max(largest, bytes);
    }
    return largest;
}

// ART's request larger than the most its heap may ever grow to ("Failed to allocate a 4792046832 byte allocation
// with 2097152 free bytes and 253MB until OOM, target footprint 4961960, growth limit 268435456"): a length read
// from corrupt data, which no amount of free memory would have met, as the JVM's "Requested array size exceeds VM
// limit" is.
bool over_growth_limit(std::string_view s) {
    const long long request = number_after(s, "Failed to allocate a "), limit = number_after(s, "growth limit ");
    return request > 0 && limit > 0 && request > limit;
}

// Go's request for a block thousands of times what its heap holds ("runtime: out of memory: cannot allocate
// 68719476736-byte block (3866624 in use)"), or for less than nothing ("cannot allocate -8289131749560221696-byte
// block"): a length read from corrupt data, as over_growth_limit's is. A heap that grew until memory ran out
// holds about what it asks for next ("cannot allocate 17179869184-byte block (17242652672 in use)").
bool far_beyond_heap(std::string_view s) {
    if (!has(s, "-byte block")) return false;
    if (has(s, "cannot allocate -")) return true;
    const long long request = number_after(s, "cannot allocate "), in_use = number_after(s, "-byte block (");
    return request >= (1LL << 30) && in_use >= 0 && has(s, " in use)") && request / 1000 > in_use;
}

// Rust's abort for a request smaller than a page ("memory allocation of 5 bytes failed"): the allocator could not
// map one page, which on a kernel that overcommits is the allocator broken (jemalloc built for smaller pages than
// the kernel's), not memory gone; the OOM killer answers memory running out long before such a request fails.
bool sub_page_request(std::string_view s) {
    const long long bytes = number_after(s, "memory allocation of ");
    return bytes > 0 && bytes < 4096 && has(s, " bytes failed");
}

// A size no allocation runs out at: more than any machine has, nothing ("Failed to allocate 0 bytes"), less than
// nothing, more than the heap may ever hold or far beyond what it holds, or less than a page (see each).
bool impossible_size(std::string_view s) {
    if (sub_page_request(s)) return true;
    const double bytes = std::max({largest_size(s), traced_length(s), argument_size(s)});
    return bytes > kImplausibleBytes || (bytes == 0 && (has(s, " 0 bytes") || has(s, " 0 B "))) || negative_size(s) ||
           over_growth_limit(s) || far_beyond_heap(s);
}

// A debugger's notice of an exception thrown, caught or not (Visual Studio's first-chance "Exception thrown:
// 'System.OutOfMemoryException' in System.Drawing.dll", "Exception thrown at 0x00007FF8 in app.exe: Microsoft C++
// exception: std::bad_alloc"): it says nothing of the program's end. System.Drawing throws OutOfMemoryException
// for a file that is not an image.
bool first_chance_exception(std::string_view s) {
    return has(s, "Exception thrown: '") || (has(s, "Exception thrown at 0x") && has(s, "exception:"));
}

// A database's limit on what one query or user may take, which refuses that query and goes on: ClickHouse's
// "Memory limit (for query) exceeded" and "(for user)" (not "(total)", the server's own, set from the machine's
// memory), StarRocks' "Memory of Query... exceed limit", CockroachDB's "memory budget exceeded: 10240 bytes
// requested", Neo4j's "MemoryPoolOutOfMemoryError" (dbms.memory.transaction.total.max), BigQuery's "The query could not
// be executed in the allotted memory" and "Resources exceeded during query execution: Your project or organization
// exceeded the maximum disk and memory limit available for shuffle operations"), as MongoDB's allowDiskUse is.
bool query_memory_limit(std::string_view s) {
    return has(s, "Memory limit (for query)") || has(s, "Memory limit (for user)") || has(s, "allotted memory") ||
           has(s, "Resources exceeded during query execution") ||
           (has(s, "Memory of Query") && has(s, "exceed limit")) ||
           (has(s, "memory budget exceeded") && has(s, "requested")) || has(s, "MemoryPoolOutOfMemoryError");
}

// Limits that are not memory running out, whatever a rule's words say of them:
// - a GPU kernel's memory per block, which its compiler or launcher checks ("RESOURCE_EXHAUSTED: Shared memory size
//   limit exceeded" from Pallas, AMDGPU's LDS in "error: local memory limit exceeded (98304) in kernel");
// - pages both writable and executable, which a security policy refuses (cffi's "MemoryError: Cannot allocate
//   write+execute memory for ffi.callback()" on macOS or under SELinux);
// - a shared zone of the size nginx's configuration gave it ("could not allocate new session in SSL session shared
//   cache");
// - .NET's largest array ("System.OutOfMemoryException: 'Array dimensions exceeded supported range.'"), as the JVM's
//   "Requested array size exceeds VM limit" is, and the JDK's own check before it asks ("java.lang.OutOfMemoryError:
//   Required array length 2147483638 + 13300 is too large": a StringBuilder past Integer.MAX_VALUE);
// - V8 reserving address space, which ulimit -v refuses ("Fatal process out of memory: SegmentedTable::InitializeTable
//   (subspace allocation)", "Fatal process OOM in Failed to reserve virtual memory for CodeRange");
// - a graphics or compute API creating its instance, device, swapchain or queue ("vkCreateInstance failed with
//   ERROR_OUT_OF_HOST_MEMORY", "CL_OUT_OF_HOST_MEMORY when calling clCreateCommandQueueWithProperties", wgpu's
//   "Adapter::request_device: not enough memory left"): a driver or setup that does not work, reported with the only
//   error codes the API has; memory running out fails an allocation of memory, a buffer or an image;
// - a table as long as the open-files limit, which a container can inherit at a billion ("library initialization
//   failed - unable to allocate file descriptor table - out of memory", the JVM's);
// - memcached's cache, of the size -m gave it, with no room in one slab class ("SERVER_ERROR out of memory storing
//   object"), as Redis' maxmemory is;
// - Vulkan's descriptor pool, sized when it was made ("Unable to allocate 1 descriptorSets from VkDescriptorPool",
//   VK_ERROR_OUT_OF_POOL_MEMORY);
// - LMDB's map, address space it reserves ("mdb_env_set_mapsize: Cannot allocate memory" for a map of 2^50 bytes), as
//   V8's reservations are.
constexpr std::string_view kOtherLimits[] = {
    "hared memory size limit", "local memory limit", "write+execute", "shared cache", "Array dimensions exceeded",
    "Required array length",
    "subspace allocation", "reserve virtual memory", "vkCreateInstance", "vkCreateDevice", "vkCreateSwapchain",
    "clCreateCommandQueue", "clCreateContext", "request_device", "file descriptor table", "out of memory storing object",
    "descriptorSets", "DescriptorPool", "descriptor pool", "OUT_OF_POOL_MEMORY", "set_mapsize"};

// An allocation whose failure names its cause, and the cause is not memory: thrust's "std::bad_alloc:
// cudaErrorSystemDriverMismatch: system has unsupported display driver / cuda driver combination" (its real OOM is
// "std::bad_alloc: cudaErrorMemoryAllocation: out of memory"), Kokkos' "Allocation of size 64.12 K failed because of
// an unknown error" (its real OOM is "failed, likely due to insufficient memory").
bool names_other_cause(std::string_view s) {
    if (has(s, "because of an unknown error")) return true;
    const size_t at = s.find("bad_alloc: cudaError");
    return at != std::string_view::npos && !s.substr(at).starts_with("bad_alloc: cudaErrorMemoryAllocation");
}

// Chrome's FATAL "Out of memory. size=524288" for a request of a few megabytes: its shared memory, /dev/shm, full
// (64 MB in a container unless --shm-size or --disable-dev-shm-usage says otherwise), not the machine's memory.
bool chrome_shared_memory(std::string_view s) {
    const long long size = number_after(s, "size=");
    return has(s, "FATAL:memory.cc") && size >= 0 && size <= 16LL * 1024 * 1024;
}

// A request past the device's limit for one allocation, not past the memory it has free (ggml's "Requested buffer size
// exceeds device memory allocation limit: ErrorOutOfDeviceMemory", Vulkan's maxMemoryAllocationSize).
bool device_allocation_cap(std::string_view s) { return has(s, "allocation limit") && has(s, "device"); }

bool another_limit(std::string_view s) {
    return any_of(s, kOtherLimits) || names_other_cause(s) || chrome_shared_memory(s) || device_allocation_cap(s);
}

// The status RESOURCE_EXHAUSTED (gRPC's, absl's) alone covers quotas, bandwidth, message sizes: it is an
// allocation failure only where the line names memory ("RESOURCE_EXHAUSTED: Out of memory").
bool exhausted_status_only(std::string_view s) {
    return (has(s, "RESOURCE_EXHAUSTED") || has(s, "esource exhausted")) && !has(s, "emory") && !has(s, "EMORY") &&
           !has(s, "OOM") && !has(s, "lloc");
}

// A program whose last words are the phrase alone (Perl's "Out of memory!", the Dart VM's "Out of Memory"),
// or a message that begins with it ("> Not enough memory to run compilation.", Kotlin's compiler under
// Gradle's arrow), or says what is left (wgpu's "not enough memory left").
bool bare_out_of_memory(std::string_view s) {
    std::string_view t = trim(s);
    while (t.starts_with('>')) t = trim(t.substr(1));
    if (t.ends_with('!') || t.ends_with('.')) t.remove_suffix(1);
    for (std::string_view phrase :
         {"Out of memory", "Out of Memory", "out of memory", "OUT OF MEMORY", "Not enough memory", "not enough memory"}) {
        if (!t.starts_with(phrase)) continue;
        const std::string_view rest = t.substr(phrase.size());
        if (rest.empty() || rest.starts_with(" to ") || rest == " left") return true;
    }
    return false;
}

// A runtime that could not commit the pages it had reserved ("ghc: internal error: Unable to commit
// 1048576 bytes of memory"): the commit is the allocation.
bool commit_failed(std::string_view s) {
    return (has(s, "nable to commit") || has(s, "ailed to commit") || has(s, "ould not commit")) && has(s, "of memory");
}

// SQLite's answer when it could not open a database at all (a directory it may not write, a file missing):
// sqlite3_errmsg() on the handle it did not make says "out of memory" ("failed to open sqlite database: out of
// memory"), as its CANTOPEN's "unable to open database file: out of memory (14)" does.
bool sqlite_open_failed(std::string_view s) {
    return (has(s, "sqlite") || has(s, "SQLite")) && (has(s, "open") || has(s, "Open"));
}

// The Boehm collector's allocation failing ("GC Warning: Out of Memory! Heap size: 0 MiB. Returning NULL!"): a
// warning in name, but GC_malloc returns nothing and the program (Crystal's, Mono's) dies on it.
bool boehm_returns_null(std::string_view s) { return has(s, "Out of Memory!") && has(s, "Returning NULL"); }

// A frame of a native stack under the message ("4: v8::internal::V8::FatalProcessOutOfMemory(char const*, bool)
// [node]", gdb's "#3  0x00007f3a in GC_out_of_memory ()"): a function's name, whose words say nothing of why.
bool native_frame(std::string_view s) {
    std::string_view t = trim(s);
    if (t.starts_with('#')) t.remove_prefix(1);
    size_t digits = 0;
    while (digits < t.size() && is_digit(t[digits])) ++digits;
    if (digits == 0 || digits == t.size() || (t[digits] != ':' && t[digits] != ' ')) return false;
    const std::string_view frame = trim(t.substr(digits + 1));
    return frame.starts_with("0x") || (has(frame, "::") && has(frame, "("));
}

// A parser's stack at its depth limit (bison's "memory exhausted" past YYMAXDEPTH: "crash.wast:3569:37: memory
// exhausted", OpenSCAD's "Parser error: memory exhausted in file design.scad, line 40108"): input nested too deep.
// GCC's "virtual memory exhausted" and R's "vector memory exhausted" are their allocators'.
bool parser_stack_exhausted(std::string_view s) {
    const size_t at = s.find("memory exhausted");
    if (at == std::string_view::npos || has(s, "virtual memory") || has(s, "vector memory")) return false;
    if (has(s, "arser") || has(s, "syntax")) return true;
    const std::string_view before = s.substr(0, at);  // "file:line:column: "
    return before.ends_with(": ") && before.size() > 2 && is_digit(before[before.size() - 3]);
}

// A GPU compiler that itself ran out of host memory ("ptxas fatal   : Memory allocation failure"), not the kernel
// it compiled past a limit of the GPU's ("ptxas error   : Entry function 'k' uses too much shared data").
bool compiler_out_of_memory(std::string_view s) { return has(s, "ptxas fatal") && has(s, "Memory allocation failure"); }

// A program's own check that what it needs does not fit what is free, with both sizes: VAPOR's "Not enough GPU RAM
// free (3686MB free, need at least 4122MB)", T-Rex's "Device does not have enough free memory to hold the DAG for
// epoch 270. Required: 3.11 GB, free: 3.10 GB." (a warning that it will skip the work is not one: allocation_failure).
bool refused_for_room(std::string_view s) {
    return (has(s, "ot enough") || has(s, "not have enough") || has(s, "n't have enough")) &&
           (has(s, "memory") || has(s, "RAM")) && (has(s, "need") || has(s, "equire")) &&
           (has(s, "free") || has(s, "available")) && has_size(s);
}

// A file a reader could not read or parse, its allocation failure the reason and no size given ("Error reading XLS
// file: Unable to allocate memory", "Failed to parse x.sas7bdat: Unable to allocate memory", fastText's "Cannot load
// file.vec due to C++ extension failed to allocate the memory"): a length or count the file gave that the reader's
// own cap refused, or that was garbage.
bool unreadable_file(std::string_view s) {
    return (has(s, "Error reading") || has(s, "Failed to parse") || has(s, "Cannot load file")) && !has_size(s);
}

bool allocation_failure(std::string_view s) {
    if (!(any_of(s, kFailurePhrases) || alloc_failed(s) || commit_failed(s) ||
          (has(s, "alloc") && request_exceeds_memory(s)) || refused_for_room(s)) ||
        (any_of(s, kNotAnAllocation) && !compiler_out_of_memory(s)) || any_of(s, kSizeLimits) || limit_not_memory(s) ||
        (any_of(s, kWarning) && !boehm_returns_null(s)) || any_of(s, kGuess) || looks_like_code(s) || native_frame(s) ||
        parser_stack_exhausted(s) || sqlite_open_failed(s) || unreadable_file(s))
        return false;
    if (advice_before_failure(s) && !has(s, "rror")) return false;  // a hint, unless an error carries it
    if (exhausted_status_only(s)) return false;
    return has_size(s) || any_of(s, kFailureContext) || bare_out_of_memory(s);
}

// C++'s allocation failure: "terminate called after throwing an instance of 'std::bad_alloc'", its
// "what():  std::bad_alloc", a library's "std::bad_alloc: cudaErrorMemoryAllocation". A parser fed a
// malformed length throws it too; the log alone cannot tell, and memory running out is the usual cause.
bool bad_alloc(std::string_view s) { return has(s, "std::bad_alloc") && !looks_like_code(s) && !has(s, "catch"); }

// The JVM's heap, or its metaspace or direct buffers, exhausted: "java.lang.OutOfMemoryError: Java heap space",
// "GC overhead limit exceeded". Not its threads ("unable to create new native thread": a process limit),
// an array longer than the VM allows ("Requested array size exceeds VM limit": a size bug), nor a file
// it could not map ("OutOfMemoryError: Map failed": address space or the map count, not the heap).
bool jvm_out_of_memory(std::string_view s) {
    // Gradle's account of its daemon: "Expiring Daemon because JVM heap space is exhausted", "Daemon will be
    // stopped at the end of the build after running out of JVM heap space", "stopped: JVM
    // garbage collector thrashing and after running out of JVM memory", "stopped: since the JVM garbage
    // collector is thrashing" (its heap nearly full, the JVM spends its time collecting).
    if ((has(s, "heap space") && has(s, "exhausted")) || has(s, "out of JVM memory") || has(s, "out of JVM heap space"))
        return true;
    if (has(s, "garbage collector") && has(s, "thrashing")) return true;
    // The error's message given as another failure's reason: '*** Error reading file "x.json" (Java heap space)'.
    if (has(s, "(Java heap space)")) return true;
    if (!has(s, "OutOfMemoryError") || any_of(s, kThreadLimit) || has(s, "VM limit") || has(s, "Map failed")) return false;
    return has(s, "java.lang.OutOfMemoryError") || has(s, "Java heap space") || has(s, "GC overhead limit") ||
           has(s, "Metaspace") || has(s, "Direct buffer memory");
}

// An inference engine's KV cache that does not fit what is free after the weights ("The model's max
// seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache").
bool kv_cache_does_not_fit(std::string_view s) {
    return has(s, "KV cache") && (has(s, "larger than the maximum number of tokens") || has(s, "nsufficient ") ||
                                  has(s, "ot enough memory") || has(s, "No available memory"));
}

// iOS's memory limit (jetsam) ending an app: Xcode's "Terminated due to memory issue", the crash report's
// "EXC_RESOURCE RESOURCE_TYPE_MEMORY (limit=650 MB, unused=0x0)" or "Reason: The process was terminated for exceeding
// jetsam memory limits", a JetsamEvent's '"reason" : "per-process-limit"'. The kernel's kill, as Linux's OOM killer's.
bool jetsam_kill(std::string_view s) {
    return has(s, "Terminated due to memory") || (has(s, "EXC_RESOURCE") && has(s, "RESOURCE_TYPE_MEMORY")) ||
           has(s, "exceeding jetsam memory limit") || (has(s, "\"reason\"") && has(s, "\"per-process-limit\""));
}

// ENOMEM as a runtime names the errno in its error ("Error: spawn ENOMEM", Node's fork of a worker;
// "code: 'ENOMEM'"), not a system call trace's "= -1 ENOMEM", which says so in words the enomem rule reads.
bool errno_name_enomem(std::string_view s) {
    if (has(s, "= -1 ENOMEM") || looks_like_code(s) || any_of(s, kWarning)) return false;
    return has(s, "Error: ") || has(s, "spawn ENOMEM") /* npm's "npm ERR! spawn ENOMEM" */ || has(s, "code: 'ENOMEM'") ||
           has(s, "code: \"ENOMEM\"") || has(s, "errno: 'ENOMEM'") ||
           has(s, "ENOMEM: not enough memory") /* libuv's, as Node prints it: "ENOMEM: not enough memory, read" */;
}

// A job watchdog's kill for a memory measure, not a limit's name: CMS's WMAgent "Job has exceeded maxPSS:
// 23997 MB", "exceeded maxRSS".
bool exceeded_resident_memory(std::string_view s) {
    return has(s, "xceeded") && (has(s, "PSS") || has(s, "RSS")) && has_size(s);
}

// A platform's account of an exit that names its cause: Cloud Foundry's "Exited with status 137 (out of memory)".
bool exit_named_out_of_memory(std::string_view s) {
    return (has(s, "xited with status 137") || exit_number_is_sigkill(s)) && has(s, "(out of memory)");
}

struct Rule {
    Bits anchors;
    Kind kind;
    bool (*test)(std::string_view);
};

constexpr Bits kFailureAnchors = bit(kOutOfMemory) | bit(kOutOfMemoryClass) |
                                     bit(kAllocateMemory) | bit(kToAllocate) | bit(kAllocationFailed) |
                                     bit(kInsufficient) | bit(kNotEnoughMemory) |
                                     bit(kExhaustedCaps) | bit(kExhausted) | bit(kAvailableMemory) |
                                     bit(kOutOfMemoryCaps) | bit(kAllocationFailure) | bit(kOfMemoryCapital) |
                                     bit(kAllocLower) | bit(kAllocCapital) | bit(kOutOf) |
                                     bit(kEnlargeMemory) | bit(kHeapSpace);

// The messages that decide by themselves, by family and most specific first within it: the first
// rule that matches names the kind ("torch.OutOfMemoryError: HIP out of memory" is HIP). The
// look-alikes each family must not take are in the comments of its tests (tests/data/logs).
const std::array kMessageRules = {
    // allocator: a framework allocator's own message. Not: "except torch.cuda.OutOfMemoryError:" in
    // a traceback's source lines.
    Rule{bit(kOutOfMemory) | bit(kOutOfMemoryClass), Kind::hip, [](std::string_view s) {
             // chipStar maps OpenCL's CL_OUT_OF_RESOURCES at a kernel's launch to hipErrorOutOfMemory: a launch's
             // resources, not memory ("hipErrorOutOfMemory (CL_OUT_OF_RESOURCES) in CHIPBackendOpenCL.cc:1693:launchImpl").
             if (has(s, "OUT_OF_RESOURCES")) return false;
             return has(s, "HIP out of memory") || has(s, "hipErrorOutOfMemory") || has(s, "HIP_ERROR_OutOfMemory");
         }},
    Rule{bit(kOutOfMemory), Kind::mps, [](std::string_view s) { return has(s, "MPS backend out of memory"); }},
    Rule{bit(kOutOfMemory), Kind::xpu, [](std::string_view s) { return has(s, "XPU out of memory"); }},
    // library (NCCL's wording names the CUDA allocator, so it goes first)
    Rule{bit(kOutOfMemory), Kind::nccl, [](std::string_view s) {
             return has(s, "out of memory'") && (has(s, "Cuda failure") || has(s, "NCCL"));
         }},
    // NCCL's own allocation of device memory ("NCCL WARN Failed to CUDA calloc 6291456 bytes"): NCCL reports its
    // errors as WARN lines.
    Rule{bit(kAllocLower), Kind::nccl, [](std::string_view s) {
             return has(s, "Failed to CUDA calloc") || has(s, "Failed to CUDA malloc");
         }},
    Rule{bit(kOutOfMemory) | bit(kOutOfMemoryClass), Kind::cuda_allocator, cuda_allocator},
    Rule{bit(kOutOfMemory) | bit(kOutOfMemoryCaps) | bit(kMemoryAllocation), Kind::cuda_runtime, cuda_runtime},
    Rule{bit(kMemCreate) | bit(kMemCreateSnake) | bit(kAllocLower) | bit(kAllocCapital), Kind::cuda_runtime, cuda_status_two},
    Rule{bit(kAllocFailed), Kind::cublas, [](std::string_view s) { return has(s, "CUBLAS_STATUS_ALLOC_FAILED"); }},
    Rule{bit(kAllocFailed), Kind::cudnn, [](std::string_view s) { return has(s, "CUDNN_STATUS_ALLOC_FAILED"); }},
    Rule{bit(kOutOfMemory), Kind::bitsandbytes, [](std::string_view s) { return has(s, "Error out of memory at line"); }},
    Rule{bit(kOutOfMemory) | bit(kOom), Kind::xla, xla},
    Rule{bit(kAllocateMemory) | bit(kNotEnoughMemory), Kind::cpu_allocator, cpu_allocator},
    // Not RLIMIT_MEMLOCK ("warning: failed to mlock ... Cannot allocate memory", "Error locking page at
    // 0x7f23b4089000: Cannot allocate memory"), a shared file's mapping or a thread (limit_not_memory), nor a warning.
    Rule{bit(kAllocateMemory), Kind::enomem, [](std::string_view s) {
             return has(s, "Cannot allocate memory") && !limit_not_memory(s) && !any_of(s, kWarning);
         }},
    Rule{bit(kEnomem), Kind::enomem, errno_name_enomem},
    // Windows' ERROR_COMMITMENT_LIMIT (1455), its ENOMEM: RAM and the paging file are spoken for ("The paging file
    // is too small", Go's "VirtualAlloc of 65536 bytes failed with errno=1455"). The JVM reports it as a warning
    // ("VM warning: INFO: os::commit_memory(...) failed; error='The paging file is too small...'") and exits.
    Rule{bit(kPagingFile) | bit(kErrno1455), Kind::enomem, [](std::string_view s) {
             return (has(s, "paging file is too small") || (has(s, "errno=1455") && has(s, "failed"))) &&
                    (!any_of(s, kWarning) || has(s, "os::commit_memory"));
         }},
    Rule{bit(kMemoryError), Kind::python_memory_error, python_memory_error},
    // library: C++'s and the JVM's allocation failures (before the monitors: "GC overhead limit exceeded").
    Rule{bit(kBadAlloc), Kind::engine_allocator, bad_alloc},
    Rule{bit(kOutOfMemoryClass) | bit(kHeapSpace) | bit(kJvmMemory) | bit(kThrashing), Kind::engine_allocator, jvm_out_of_memory},
    // recovered-then-died. Not: a caught OOM followed by two more steps (mark_step forgets it).
    Rule{bit(kOutOfMemory) | bit(kOfMemoryCapital) | bit(kOom) | bit(kNoExecutableBatch), Kind::caught_oom, caught_oom},
    // kernel-kill: iOS's memory limit.
    Rule{bit(kJetsam) | bit(kTerminatedDue) | bit(kReason) | bit(kPerProcessLimit), Kind::kernel_oom_kill, jetsam_kill},
    // monitor: Slurm's cgroup and accounting, the frameworks' memory monitors. Not: "Exceeded job memory
    // limit at some point", Ray's summary counting 0 kills, docker inspect's "OOMKilled": false.
    Rule{bit(kOutOfMemorySlurm), Kind::cgroup_oom_kill, slurm_task_oom},
    Rule{bit(kKillEvent), Kind::cgroup_oom_kill, slurm_oom_events},
    Rule{bit(kMemoryLimit) | bit(kOutOfMemoryCaps), Kind::monitor_kill, slurm_memory_limit},
    Rule{bit(kKilled) | bit(kExceeded) | bit(kOom) | bit(kOnHold) | bit(kMemoryLimit) | bit(kOutOfMemoryParen), Kind::monitor_kill,
         batch_memory_limit},
    Rule{bit(kExceeded), Kind::monitor_kill, exceeded_resident_memory},
    Rule{bit(kOutOfMemory), Kind::monitor_kill, exit_named_out_of_memory},
    Rule{bit(kOutOfMemoryClass) | bit(kOutOfMemoryCaps) | bit(kLowOnMemory) | bit(kMemoryPressure) | bit(kMemoryBudget) |
             bit(kOom) | bit(kContainerOom) | bit(kSystemdOomd) | bit(kMemoryLimit) | bit(kAvailableRam) | bit(kBadness) |
             bit(kUsageThreshold) | bit(kYarnExit) | bit(kYarnExitStatus) | bit(kMemoryRestart) | bit(kLowMemoryKiller) |
             bit(kStopping),
         Kind::monitor_kill, framework_memory_monitor},
    // library's backstop: any engine's allocation failure, last so that every named kind goes first.
    Rule{bit(kKvCache), Kind::engine_allocator, kv_cache_does_not_fit},
    Rule{kFailureAnchors, Kind::engine_allocator, allocation_failure},
    // V8's fatal report opens with its last collections ("<--- Last few GCs --->"): it prints them only when its heap
    // gave up, and a paste often ends before the FATAL ERROR line. A size limit named there undoes it (note_context).
    Rule{bit(kLastFewGcs), Kind::engine_allocator, [](std::string_view s) { return has(s, "<--- Last few GCs --->"); }},
};

std::string evidence_text(std::string_view text) {
    if (text.size() <= kEvidenceBytes) return printable(trim(text), kEvidenceBytes + 8);
    return printable(text.substr(0, kEvidenceBytes / 2), kEvidenceBytes) + " … " +
           printable(text.substr(text.size() - kEvidenceBytes / 2), kEvidenceBytes);
}

// The part of a long line the classifier examines.
std::string bounded(std::string_view line) {
    if (line.size() <= kHeadWindow + kTailWindow) return std::string(line);
    return std::string(line.substr(0, kHeadWindow)) + "\n" + std::string(line.substr(line.size() - kTailWindow));
}

std::string signal_name(int signal) {
    const char* abbrev = sigabbrev_np(signal);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

Verdict oom_verdict(Kind kind, Confidence confidence, bool in_training, std::string evidence,
                    std::optional<long long> line, std::string reason) {
    Verdict v;
    v.oom = true;
    v.kind = kind;
    v.confidence = confidence;
    v.phase = in_training ? Phase::train : Phase::load;
    v.evidence = std::move(evidence);
    v.evidence_line = line;
    v.reason = std::move(reason);
    return v;
}

Verdict not_oom(std::string reason) {
    Verdict v;
    v.reason = std::move(reason);
    return v;
}

// The verdict's evidence_line says where; the reason says when.
std::string when(const Classifier::Evidence& e) {
    return e.in_training ? "during training" : "before training started";
}

std::string victim(const OomKillRecord& record) {
    return "pid " + std::to_string(record.pid) + (record.comm.empty() ? "" : " (" + record.comm + ")");
}

// The kernel named a trainer process, or the trainer's cgroup counted the kill: certain.
std::optional<Verdict> kernel_confirms(const std::string& killed, const KernelEvidence& kernel, bool in_training) {
    if (!kernel.trainer_kills.empty()) {
        const auto& record = kernel.trainer_kills.front();
        return oom_verdict(record.memcg ? Kind::cgroup_oom_kill : Kind::kernel_oom_kill, Confidence::certain, in_training,
                           record.text, std::nullopt, killed + " and the kernel's OOM killer killed " + victim(record));
    }
    if (kernel.cgroup_oom_kills.value_or(0) > 0)
        return oom_verdict(Kind::cgroup_oom_kill, Confidence::certain, in_training,
                           kernel.cgroup_counter + ": oom_kill +" + std::to_string(*kernel.cgroup_oom_kills),
                           std::nullopt, killed + " and its cgroup's oom_kill counter moved");
    return std::nullopt;
}

// The OOM killer acted while the trainer ran, on a process not known as the trainer's: probable.
std::optional<Verdict> kernel_suggests(const std::string& killed, const KernelEvidence& kernel, bool in_training) {
    if (!kernel.other_kills.empty()) {
        const auto& record = kernel.other_kills.front();
        return oom_verdict(Kind::kernel_oom_kill, Confidence::probable, in_training, record.text, std::nullopt,
                           killed + " while the kernel's OOM killer killed " + victim(record) +
                               ", a process not known to be the trainer's");
    }
    if (kernel.system_oom_kills.value_or(0) > 0)
        return oom_verdict(Kind::kernel_oom_kill, Confidence::probable, in_training,
                           "/proc/vmstat: oom_kill +" + std::to_string(*kernel.system_oom_kills), std::nullopt,
                           killed + " while the machine's OOM-kill counter moved");
    return std::nullopt;
}

}  // namespace

std::string_view kind_name(Kind kind) {
    for (const auto& [k, name] : kKindNames)
        if (k == kind) return name;
    return "none";
}

std::optional<Kind> kind_from_name(std::string_view name) {
    for (const auto& [k, n] : kKindNames)
        if (n == name) return k;
    return std::nullopt;
}

Family family_of(Kind kind) {
    switch (kind) {
        case Kind::cuda_allocator: case Kind::cpu_allocator: case Kind::hip: case Kind::mps: case Kind::xpu:
        case Kind::xla: case Kind::python_memory_error:
            return Family::allocator;
        case Kind::none: case Kind::cuda_runtime: case Kind::cublas: case Kind::cudnn: case Kind::bitsandbytes:
        case Kind::nccl: case Kind::engine_allocator: case Kind::dataloader_fork: case Kind::enomem:
            return Family::library;
        case Kind::kernel_oom_kill: case Kind::cgroup_oom_kill: return Family::kernel_kill;
        case Kind::monitor_kill: return Family::monitor;
        case Kind::unified_memory: return Family::driver;
        case Kind::sigkill_probable: return Family::sigkill;
        case Kind::caught_oom: return Family::recovered;
        case Kind::memory_stall: case Kind::memory_guard: case Kind::host_lost_memory: return Family::supervisor;
    }
    return Family::library;
}

std::string_view family_name(Family family) {
    for (const auto& [f, name] : kFamilyNames)
        if (f == family) return name;
    return "library";
}

std::string_view phase_name(Phase phase) { return phase == Phase::load ? "load" : "train"; }

std::string_view confidence_name(Confidence confidence) {
    return confidence == Confidence::certain ? "certain" : "probable";
}

ExitStatus ExitStatus::from_number(int number) {
    if (number < 0) return killed(-number);
    if (number > 128 && number <= 128 + 64) return killed(number - 128);
    return exited(number);
}

ExitStatus ExitStatus::from_wait_status(int status) {
    if (WIFSIGNALED(status)) return killed(WTERMSIG(status));
    if (WIFEXITED(status)) return exited(WEXITSTATUS(status));
    return unknown();
}

std::string ExitStatus::describe() const {
    if (code) return "exit code " + std::to_string(*code);
    if (signal) return "signal " + std::to_string(*signal) + " (" + signal_name(*signal) + ")";
    return "unknown exit status";
}

void to_json(nlohmann::json& out, const Verdict& v) {
    using nlohmann::json;
    out = json{{"oom", v.oom},
               {"kind", v.oom ? json(kind_name(v.kind)) : json(nullptr)},
               {"phase", v.phase ? json(phase_name(*v.phase)) : json(nullptr)},
               {"confidence", v.confidence ? json(confidence_name(*v.confidence)) : json(nullptr)},
               {"evidence", v.evidence.empty() ? json(nullptr) : json(v.evidence)},
               {"line", v.evidence_line ? json(*v.evidence_line) : json(nullptr)},
               {"reason", v.reason}};
}

Classifier::Classifier() : anchors_(kAnchorTexts) {
    // A macOS path decides nothing on its own line, so no message is joined across a break for it: "/Users/"
    // would make every line that starts "Us" (UserWarning) a candidate continuation.
    for (size_t a = 0; a < kAnchorTexts.size(); ++a) {
        if (a == kMacUsers || a == kMacApp) continue;
        const std::string& anchor = kAnchorTexts[a];
        for (size_t i = 1; i + 1 < anchor.size(); ++i) continuations_.set(bigram(anchor[i], anchor[i + 1]));
    }
}

void Classifier::mark_training_started() { training_ = true; }

void Classifier::mark_step(long long step) {
    training_ = true;
    if (step_ == step) return;
    step_ = step;
    for (auto* evidence : {&message_, &sign_, &nvrm_, &error_, &last_error_, &sign_cause_, &memory_end_, &over_quota_}) {
        if (*evidence && ++(*evidence)->steps_after >= kSurvivalSteps) evidence->reset();
    }
}

bool Classifier::feed(std::string_view line) {
    ++lines_;
    quiet_ = quiet_after_;
    quiet_after_ = echoed_command(line) || (quiet_ && trim(line).empty());
    const std::string window = line.size() > kHeadWindow + kTailWindow ? bounded(line) : std::string();
    const std::string_view text = window.empty() ? line : std::string_view(window);
    Bits found = anchors_.find(text);
    // "] [" is in every DeepSpeed line ("[2024-01-16 02:14:43,936] [INFO]"): it stands for a row of the OOM
    // killer's table only where one parses, and otherwise leaves the line to the prefilter.
    if ((found & bit(kTaskRow)) && !oom_task_row(text)) found &= ~bit(kTaskRow);
    if (message_ && lines_ - message_->line <= kDetailLines) note_detail(text);  // checked here: it runs on every line
    if (found) note_context(found, text);
    if (auto decided = found ? killed_over_quota(text, found) : std::nullopt) {
        remember_tail(text);
        return *decided;
    }
    // An indented line goes on the record its unindented first line began: a warning's detail is the warning's
    // (glommio's "WARN ... Error: registering buffers in the main ring. Skipping", then "    message: \"Cannot
    // allocate memory\","). The record's level comes first: its first line's head is kept, and read only when a
    // detail line has something to match.
    const bool indented = line.starts_with(' ') || line.starts_with('\t');
    if (!indented) {
        record_head_size_ = std::min(text.size(), record_head_.size());
        std::memcpy(record_head_.data(), text.data(), record_head_size_);
    }
    const bool warning_detail =
        indented && found && any_of(std::string_view(record_head_.data(), record_head_size_), kWarning);
    auto evidence = found && !warning_detail ? match(text, found) : std::nullopt;
    note_engine_failure(text, evidence && evidence->kind == Kind::engine_allocator);
    const bool end_state = evidence && evidence->kind == Kind::monitor_kill && !memory_end_ && memory_end_state(text);
    if (end_state) memory_end_ = Evidence{evidence->kind, evidence->strength, evidence_text(text), lines_, training_, 0};
    bool decided = (evidence ? record(std::move(*evidence), line) : consider_wrapped(text, found)) || end_state;
    if (!evidence && !decided && found) decided = note_other(found, text);
    remember_tail(text);
    return decided;
}

// A platform's kill right after it said the memory quota was exceeded (Heroku's "Error R15 (Memory quota
// vastly exceeded)", then "Stopping process with SIGKILL"): the quota notice says why. nullopt when
// this line is no such kill; else it was recorded as the platform's memory kill, and whether it decides.
std::optional<bool> Classifier::killed_over_quota(std::string_view line, Bits found) {
    if ((found & bit(kExceeded)) && memory_quota_exceeded(line)) {
        Evidence notice{Kind::monitor_kill, Strength::message, evidence_text(line), lines_, training_, 0};
        // Heroku's R15 is the kill's own notice: past twice or five times the quota the dyno manager restarts the
        // dyno (SIGKILL) with it, and the log may end there ("Error R15 (Memory quota vastly exceeded)").
        if (has(line, "vastly exceeded")) return record(std::move(notice), line);
        over_quota_ = std::move(notice);
        return std::nullopt;
    }
    if (!over_quota_ || lines_ - over_quota_->line > kRetryLines) return std::nullopt;
    if (!(found & bit(kSigkill)) && !sigkill_sign(line, found)) return std::nullopt;
    Evidence kill = *over_quota_;
    kill.line = lines_;
    over_quota_.reset();
    const std::string shown = kill.text + " | " + std::string(line);
    return record(std::move(kill), shown);
}

// Follows the sizes of an engine's allocation failures, read from the failure's line or its record's next
// lines ("radv/amdgpu: Failed to allocate a buffer:", then "radv/amdgpu:    size      : 10767560704 bytes").
// A program that asked for less each time and then printed more than the failure's record got a buffer and
// went on: it was probing for the largest it can get (memtest_vulkan). A recovery, as a caught OOM is; a
// probe that the output ends on (TensorFlow shrinking its first allocation on a GPU another process holds)
// is not known to have succeeded.
void Classifier::note_engine_failure(std::string_view line, bool is_failure) {
    if (is_failure) {
        previous_failure_ = failure_;
        failure_ = Failure{lines_, largest_size(line)};
        asked_for_less_ = false;
    } else if (failure_ && failure_->bytes == 0 && lines_ - failure_->line <= kDetailLines) {
        failure_->bytes = largest_size(line);
    } else {
        if (asked_for_less_ && lines_ - failure_->line > kDetailLines) {
            recovered_at_ = lines_ - 1;  // the probe's end: this line, an error or more output, comes after it
            died_after_recovery_ = false;
            asked_for_less_ = false;
        }
        return;
    }
    note_smaller_request();
}

void Classifier::note_smaller_request() {
    if (!failure_ || !previous_failure_ || failure_->bytes == 0 || previous_failure_->bytes == 0) return;
    asked_for_less_ = failure_->line - previous_failure_->line <= kRetryLines && failure_->bytes < previous_failure_->bytes;
}

// The driver's allocation failure and other errors: neither decides by itself (see verdict()).
// True when an NVRM record is now the first evidence.
bool Classifier::note_other(Bits found, std::string_view line) {
    if ((found & (bit(kNvrm) | bit(kNvgpu) | bit(kCmaAlloc))) && is_nvrm_memory_record(line)) {
        if (nvrm_) return false;
        nvrm_ = Evidence{Kind::unified_memory, Strength::sign, evidence_text(line), lines_, training_, 0};
        return !message_ && !sign_;
    }
    if (((found & kErrorAnchors) && error_line(line)) || ((found & kTimeoutAnchors) && timeout_reported(line))) {
        if (recovered_at_ && lines_ > *recovered_at_) died_after_recovery_ = true;
        Evidence error{Kind::none, Strength::sign, evidence_text(line), lines_, training_, 0};
        if (!error_) error_ = error;
        // A traceback's header, or an error's bare label ("Error:" with its message on the next line, as
        // forge prints "solc exited with signal: 9"), belongs to the error that follows it, which may be the
        // SIGKILL sign itself (a DataLoader worker "killed by signal: Killed").
        if (!has(line, "Traceback (most recent call last)") && !bare_label(line) && !death_report(line))
            last_error_ = std::move(error);
    }
    return false;
}

// Keeps the first evidence of each strength; true when it is now the deciding one.
bool Classifier::record(Evidence evidence, std::string_view shown) {
    const bool is_message = evidence.strength == Strength::message;
    auto& slot = is_message ? message_ : sign_;
    // A kill sign after a recovery attempt says the trainer died, and so does the error again at no handled level (it
    // was not caught this time); another caught OOM does not. A finder that gave up ("RuntimeError: No executable
    // batch size found") is no attempt but the death itself.
    const bool handled = is_message && family_of(evidence.kind) != Family::monitor && logged_as_handled(shown);
    if (recovered_at_ && evidence.line > *recovered_at_ && (!is_message || (!handled && evidence.kind != Kind::caught_oom)))
        died_after_recovery_ = true;
    if ((evidence.kind == Kind::caught_oom && !error_line(shown) && !has(shown, "No executable batch size")) || handled) {
        recovered_at_ = evidence.line;  // what came before belonged to the OOM it caught
        died_after_recovery_ = false;
    }
    // A caught OOM says that an allocation failed; the allocator's own message after it says which.
    const bool names_the_allocator = is_message && slot && slot->kind == Kind::caught_oom &&
                                     evidence.kind != Kind::caught_oom && evidence.line - slot->line <= kForkContextLines;
    // The lines before the first kill say whether another error caused it; a kill on the excerpt's first
    // line has nothing before it, and the next kill's lines decide instead.
    const bool judged = !is_message && (!slot || (slot->line == 1 && !std::exchange(judged_second_sign_, true)));
    if (judged && last_error_ && evidence.line - last_error_->line <= kCompetingLines)
        sign_cause_ = last_error_, sign_cause_before_ = evidence.line;
    if (slot && !names_the_allocator) return false;
    evidence.text = evidence_text(shown);
    slot = std::move(evidence);
    return is_message || !message_;
}

// A message that a terminal or rich wrapped across the line break ("CUDA out of mem" + "ory.",
// "cudaMalloc fail" + "ed: out of memory"): tried when this line has an anchor it does not explain
// by itself, or when an anchor straddles the break.
bool Classifier::consider_wrapped(std::string_view line, Bits found) {
    if (message_ || tail_.empty() || line.size() < 2 || line.front() == ' ') return false;
    if (!found && !continuations_.test(bigram(line[0], line[1]))) return false;  // starts no anchor's remainder
    const std::string_view tail = std::string_view(tail_).substr(tail_.size() - std::min(tail_.size(), kWrapSeam));
    const std::string_view head = line.substr(0, kWrapSeam);
    for (std::string_view glue : {"", " "}) {
        if (!found && !straddles(tail, glue, head)) continue;
        const std::string joined = tail_ + std::string(glue) + std::string(line.substr(0, kWrapJoin));
        auto evidence = match(joined, anchors_.find(joined));
        if (evidence && evidence->strength == Strength::message) return record(std::move(*evidence), joined);
    }
    return false;
}

bool Classifier::straddles(std::string_view tail, std::string_view glue, std::string_view head) const {
    std::array<char, 2 * kWrapSeam + 1> buffer{};
    char* end = std::copy(tail.begin(), tail.end(), buffer.data());
    end = std::copy(glue.begin(), glue.end(), end);
    end = std::copy(head.begin(), head.end(), end);
    const Bits in_seam = anchors_.find(std::string_view(buffer.data(), static_cast<size_t>(end - buffer.data())));
    return (in_seam & ~(anchors_.find(tail) | anchors_.find(head))) != 0;
}

void Classifier::remember_tail(std::string_view line) {
    if (line.size() < kWrapMinColumns) {
        tail_.clear();
        return;
    }
    tail_.assign(line.substr(line.size() - std::min(line.size(), kWrapJoin)));
}

// The detail under an engine's failure (message_), on the lines right after it, anchored or not: a request larger
// than the heap may ever grow to (ART's, under its OutOfMemoryError) or than any machine has (OpenVINO's "requested
// 2305843008391495680 bytes", under its "Check '!exceed_allocatable_mem_size' failed"; a debugger's next frame,
// "operator new (sz=0xffffffffffffffff)") says the failure was a corrupt length's, not memory running out. So does a
// request past the device's limit for one allocation (ggml's "Requested buffer size exceeds device memory allocation
// limit: ErrorOutOfDeviceMemory"), and GDI+ under a .NET OutOfMemoryException ("at
// System.Drawing.Graphics.CheckErrorStatus", "Exception source [System.Drawing]"): GDI+ reports OutOfMemory for
// parameters it cannot use and images it cannot read.
void Classifier::note_detail(std::string_view line) {
    if (message_->kind != Kind::engine_allocator) return;
    const bool gdi_plus = has(message_->text, "OutOfMemoryException") && has(line, "System.Drawing");
    if (impossible_size(line) || device_allocation_cap(line) || gdi_plus) {
        message_.reset();
        refused_at_ = lines_;  // and the failures that follow are the same request's
    }
}

void Classifier::note_context(Bits found, std::string_view line) {
    if (found & (bit(kOsFork) | bit(kPopenFork) | bit(kForkExec))) {
        fork_context_until_ = lines_ + kForkContextLines;
        // Workers' tracebacks interleave: the ENOMEM line may come before its fork() frame.
        if (message_ && message_->kind == Kind::enomem && lines_ - message_->line <= kForkContextLines)
            message_->kind = Kind::dataloader_fork;
    }
    // An engine that tried another way after its allocation failed survived it: TensorRT's builder
    // "Skipping tactic 3 due to insufficient memory" after "Error Code 2: OutOfMemory".
    if ((found & bit(kInsufficient)) && has(line, "Skipping tactic") && message_ && message_->kind == Kind::engine_allocator &&
        lines_ - message_->line <= kRetryLines)
        message_.reset();
    // A task's end that srun reported first is the cause; the step's cancellation after it, a consequence.
    if ((found & bit(kSrunError)) && parse_srun_task_end(line)) srun_task_ended_ = true;
    if (!termination_ && !srun_task_ended_ && stop_from_outside(line, found)) termination_ = evidence_text(line);
    // Services that all exited 137 at once, line after line ("kobo-docker_redis_main_1 exited with code 137",
    // then its MongoDB's and PostgreSQL's): docker compose stopping a stack whose services ignored SIGTERM. The
    // OOM killer takes one process at a time.
    if ((found & bit(kExitedWith)) && exit_number_is(line, {"137"})) {
        stack_kills_ = stack_kill_line_ + 1 == lines_ ? stack_kills_ + 1 : 1;
        stack_kill_line_ = lines_;
        if (stack_kills_ == kStackStopServices && !termination_)
            termination_ = std::to_string(kStackStopServices) +
                           " services exited with code 137 on consecutive lines, the last " + evidence_text(line);
    }
    // An allocation that failed with another errno than ENOMEM ("os::commit_memory(...) failed; error='Operation
    // not permitted' (errno=1)", a hardened kernel refusing the mapping): the report that follows it ("Native
    // memory allocation (mmap) failed to map 2555904 bytes") is no memory running out.
    if ((found & bit(kErrno)) && has(line, "failed") && !has(line, "(errno=12)") &&
        (has(line, "memory") || has(line, "mmap") || has(line, "alloc")))
        refused_at_ = lines_;
    // jemalloc built for smaller pages than the kernel's ("<jemalloc>: Unsupported system page size", a Raspberry
    // Pi 5's 16 KiB): every allocation after it fails ("memory allocation of 56 bytes failed"), with memory free.
    if ((found & bit(kPageSize)) && has(line, "<jemalloc>")) refused_at_ = lines_;
    // A request no machine could meet, reported as failed ("malloc: *** mach_vm_map(size=18446744069961388032) failed",
    // "Failed to reallocate a memory block to -12 bytes."): the failures on the lines after it are its.
    if ((found & (bit(kAllocLower) | bit(kAllocCapital))) && (has(line, "failed") || has(line, "Failed")) &&
        impossible_size(line))
        refused_at_ = lines_;
    // Go's corrupt length: its "fatal error: out of memory" follows on the next line.
    if ((found & bit(kOutOfMemory)) && far_beyond_heap(line)) refused_at_ = lines_;
    if ((found & bit(kSignature)) && !signature_ && signature_refused(line))
        signature_ = Evidence{Kind::none, Strength::sign, evidence_text(line), lines_, training_, 0};
    // A kill as the program started: of a command that asked only for its version or help, or of a program (no
    // script's interpreter) that zsh or fish reports killed before it printed a line: on macOS, whose default shells
    // they are, the kernel's refusal of its code signature as it starts (ten projects' such kills, none out of
    // memory), not the OOM killer; an interpreter may work a long while before it prints.
    if ((found & (bit(kKilled) | bit(kSigkill))) && !startup_kill_) {
        const char* why = nullptr;
        if ((found & bit(kKilled)) && killed_asking_version(line))
            why = "the command asked only for its version or help, which needs next to no memory";
        else if (const std::string_view command = quiet_ ? killed_command(line) : std::string_view();
                 !command.empty() && !runs_a_script(command))
            why = "zsh or fish reports a program (no script's interpreter) killed before it printed a line";
        if (why) {
            startup_kill_ = Evidence{Kind::none, Strength::sign, evidence_text(line), lines_, training_, 0};
            startup_why_ = why;
        }
    }
    if ((found & (bit(kMacUsers) | bit(kMacApp))) && !macos_)
        macos_ = Evidence{Kind::none, Strength::sign, evidence_text(line), lines_, training_, 0};
    // V8's report: its header decided (see the rule); the FATAL line under it naming a size limit ("FATAL ERROR:
    // invalid table size Allocation failed - JavaScript heap out of memory") says the heap did not run out.
    if ((found & bit(kLastFewGcs)) && has(line, "<--- Last few GCs --->")) v8_report_at_ = lines_;
    if (v8_report_at_ && message_ && message_->line == *v8_report_at_ && lines_ - *v8_report_at_ <= kV8ReportLines &&
        has(line, "FATAL ERROR:") && any_of(line, kSizeLimits))
        message_.reset();
}

std::optional<Classifier::Evidence> Classifier::match(std::string_view text, Bits found) const {
    Evidence e;
    e.line = lines_;
    e.in_training = training_;
    const bool refused = refused_at_ && lines_ - *refused_at_ <= kRetryLines;
    for (const auto& rule : kMessageRules) {
        if (!(found & rule.anchors) || (refused && (rule.kind == Kind::engine_allocator || rule.kind == Kind::enomem)) ||
            !rule.test(text))
            continue;
        // A database's limit for one query, a debugger's notice of an exception, a limit that is not memory (see
        // another_limit): no rule's words count there.
        if (query_memory_limit(text) || first_chance_exception(text) || another_limit(text)) return std::nullopt;
        // A size no allocation runs out at decides against every allocation's rule, not only the backstop's
        // ("CUDA out of memory. Tried to allocate 1048475.67 GiB": an index that overflowed); a monitor's report
        // may name a process's virtual memory ("43.0 GB of 47.6 TB virtual memory used").
        const Family family = family_of(rule.kind);
        if ((family == Family::allocator || family == Family::library) && impossible_size(text)) continue;
        e.kind = rule.kind;
        e.strength = Strength::message;
        if (e.kind == Kind::enomem && (lines_ <= fork_context_until_ || has(text, "DataLoader") || has(text, "/torch_")))
            e.kind = Kind::dataloader_fork;
        return e;
    }
    if ((found & (bit(kOutOfMemory) | bit(kOomKillResult) | bit(kMemInfo) | bit(kOomKillFrame) | bit(kOfMemorySnake) |
                  bit(kOomReaper) | bit(kFailcnt) | bit(kTotalVm))) &&
        kernel_record(text)) {
        e.kind = has(text, "Memory cgroup") || has(text, "CONSTRAINT_MEMCG") || has(text, "mem_cgroup") || has(text, "failcnt")
                     ? Kind::cgroup_oom_kill
                     : Kind::kernel_oom_kill;
        return e;
    }
    if (found & bit(kTaskRow)) {  // a row (see feed); a cgroup's OOM killer prints the same table
        e.kind = Kind::kernel_oom_kill;
        return e;
    }
    if ((found & (bit(kByOomKiller) | bit(kOomKillResult))) && systemd_oom_kill(text)) {
        e.kind = Kind::cgroup_oom_kill;
        return e;
    }
    if (sigkill_sign(text, found)) {
        e.kind = Kind::sigkill_probable;
        return e;
    }
    return std::nullopt;
}

Verdict Classifier::verdict(const ExitStatus& exit, const KernelEvidence& kernel) const {
    if (exit.succeeded() && memory_end_)
        return oom_verdict(memory_end_->kind, Confidence::certain, memory_end_->in_training, memory_end_->text, memory_end_->line,
                           "the exit code was 0, but the record of the end names a memory kill " + when(*memory_end_) +
                               ": the scheduler or container runtime counts the OOM kill of any of its processes, while "
                               "the exit code is the main process's");
    if (exit.succeeded()) return not_oom("the trainer exited with code 0");
    // A caught OOM (or the allocator message the trainer caught) with nothing after it that says the
    // trainer died, and no exit status to say so: it went on.
    if (message_ && recovered_at_ && *recovered_at_ >= message_->line && *recovered_at_ - message_->line <= kForkContextLines &&
        !exit.known() && !died_after_recovery_ && !sign_)
        return not_oom("the trainer caught its out-of-memory error (line " + std::to_string(*recovered_at_) +
                       ") and went on; nothing after it says it died");
    if (message_)
        return oom_verdict(message_->kind, Confidence::certain, message_->in_training, message_->text, message_->line,
                           "the trainer printed an out-of-memory message " + when(*message_));
    if (!exit.sigkill() && !sign_) {
        if (auto driver = driver_verdict(exit, kernel, std::nullopt)) return *driver;
        return not_oom("no out-of-memory message in " + std::to_string(lines_) + " lines of output and " +
                       exit.describe() + " is not a SIGKILL");
    }
    const std::string killed = exit.sigkill() ? "the trainer was killed by SIGKILL" : "a trainer process got SIGKILL";
    if (auto confirmed = kernel_confirms(killed, kernel, training_)) return *confirmed;
    if (signature_) {
        Verdict refused = not_oom(killed + ", and the system refused a code signature (line " +
                                  std::to_string(signature_->line) + ": " + signature_->text +
                                  "): macOS kills such a program as it starts, not for memory");
        refused.competing_cause = signature_->text;
        return refused;
    }
    if (startup_kill_) {
        Verdict refused = not_oom(killed + " as it started: " + startup_why_ + " (line " + std::to_string(startup_kill_->line) +
                                  ": " + startup_kill_->text +
                                  "); such a kill is a refusal (a code signature, a security policy), not the OOM killer");
        refused.competing_cause = startup_kill_->text;
        return refused;
    }
    if (macos_) {
        Verdict mac = not_oom(killed + " on macOS (line " + std::to_string(macos_->line) + ": " + macos_->text +
                              "), where a SIGKILL with no memory text is mostly the kernel refusing a code signature: "
                              "macOS compresses and swaps memory, and asks the user to quit programs, before it kills");
        mac.competing_cause = macos_->text;
        return mac;
    }
    if (termination_) {
        Verdict stopped = not_oom(killed + " after a stop from outside (" + *termination_ + "), not by the OOM killer");
        stopped.competing_cause = termination_;
        return stopped;
    }
    // What came just before the kill decides: another error there, not memory, is the likely cause
    // (a launcher or engine that kills its own tree after a failure).
    const auto& competing = sign_ ? sign_cause_
                            : last_error_ && lines_ - last_error_->line <= kCompetingLines ? last_error_ : std::nullopt;
    if (competing) {
        Verdict other = not_oom(killed + " " + std::to_string((sign_ ? sign_cause_before_ : lines_) - competing->line) +
                                " lines after another error (line " + std::to_string(competing->line) + ": " +
                                competing->text + "): that error, not the OOM killer, is the likely cause");
        other.competing_cause = competing->text;
        return other;
    }
    if (auto driver = driver_verdict(exit, kernel, killed)) return *driver;
    if (auto suggested = kernel_suggests(killed, kernel, training_)) return *suggested;
    if (kernel.could_have_seen_a_kill())
        return not_oom(killed + ", but the kernel recorded no OOM kill while the trainer ran");
    const std::string unread = kernel.unavailable.empty()
                                   ? "no kernel evidence was read"
                                   : "no kernel evidence could be read (" + join(kernel.unavailable, "; ") + ")";
    if (sign_)
        return oom_verdict(sign_->kind, Confidence::probable, sign_->in_training, sign_->text, sign_->line,
                           killed + " (" + when(*sign_) + ") and " + unread +
                               ": the kernel's OOM killer is the probable cause");
    return oom_verdict(Kind::sigkill_probable, Confidence::probable, training_, "", std::nullopt,
                       killed + " with no message and " + unread + ": the kernel's OOM killer is the probable cause");
}

// The NVIDIA driver's failed unified-memory allocations (kernel log, or pasted into the output). The
// same records appear on healthy runs and at rest, so they decide only a death that nothing else
// explains: a SIGKILL (`killed` says which), or a death with no other error in the output and no
// stop request. nullopt when there is no such record.
std::optional<Verdict> Classifier::driver_verdict(const ExitStatus& exit, const KernelEvidence& kernel,
                                                  const std::optional<std::string>& killed) const {
    std::string record;
    std::optional<long long> line;
    bool in_training = training_;
    std::string source;
    if (!kernel.nvrm_records.empty()) {
        record = kernel.nvrm_records.front();
        source = "in the kernel log during the attempt";
    } else if (nvrm_) {
        record = nvrm_->text;
        line = nvrm_->line;
        in_training = nvrm_->in_training;
        source = "in the log, line " + std::to_string(nvrm_->line);
    } else {
        return std::nullopt;
    }
    const std::string driver = "the NVIDIA driver recorded a failed unified-memory allocation " + source;
    if (killed)
        return oom_verdict(Kind::unified_memory, Confidence::probable, in_training, record, line,
                           *killed + " with no kernel OOM kill recorded, and " + driver +
                               ": the unified pool ran dry (the driver's record decided)");
    const bool stopped = exit.signal && (*exit.signal == SIGTERM || *exit.signal == SIGINT || *exit.signal == SIGHUP ||
                                         *exit.signal == SIGQUIT);
    if (error_ || termination_ || stopped) {
        const std::string other = error_ ? "an error in its output (line " + std::to_string(error_->line) + ": " + error_->text + ")"
                                  : termination_ ? "a stop from outside (" + *termination_ + ")"
                                                      : "a stop request (" + exit.describe() + ")";
        return not_oom("the trainer ended (" + exit.describe() + ") after " + other + "; " + driver +
                       " too, but such records also appear on healthy runs, so they do not decide a death that has "
                       "another explanation");
    }
    return oom_verdict(Kind::unified_memory, Confidence::probable, in_training, record, line,
                       "the trainer ended (" + exit.describe() + ") with no other error in its output, and " + driver +
                           ": the unified pool ran dry (the driver's record decided)");
}

}  // namespace sg::oom
