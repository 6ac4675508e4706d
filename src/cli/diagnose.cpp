// sparkguard diagnose LOGFILE [--exit-code N] [--json]: was it OOM, of which kind, in which phase.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "oom/log_diagnosis.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/options.hpp"

namespace sg::cli {
namespace {

using oom::ExitStatus;
using oom::Verdict;

const std::vector<OptionSpec> kOptions = {
    {"exit-code", "N", "the trainer's exit status: a code, or 128+N / -N for signal N (137 and -9 are SIGKILL)"},
    {"json", "", "print one JSON object instead of text"},
};

constexpr std::string_view kUsage = "sparkguard diagnose LOGFILE [--exit-code N] [--json]";
constexpr std::string_view kSummary =
    "Classifies a finished run's log: out of memory or not, of which kind (cuda-allocator,\n"
    "cpu-allocator, kernel-oom-kill, ...), and whether it happened while the model loaded or\n"
    "during training. LOGFILE '-' reads standard input.";
constexpr std::string_view kEpilog =
    "Without --exit-code the exit status is unknown; a SIGKILL sign in the log (\"Killed\",\n"
    "torchrun's \"exitcode: -9\", \"Signal 9 (SIGKILL)\") then makes OOM the probable cause.\n"
    "diagnose reads only the log, never the kernel's: a SIGKILL is at best \"probable\" here;\n"
    "sparkguard run confirms it from /dev/kmsg and the cgroup's oom_kill counter.\n"
    "Exit status: 0 whether or not it was OOM; 2 for usage errors (a missing file).";

constexpr size_t kChunk = 1 << 20;

// The log's descriptor, closed on every way out (standard input is left open).
class LogFile {
public:
    explicit LogFile(const std::string& path)
        : fd_(path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        if (fd_ < 0) throw UsageError(path, "cannot read: " + errno_text(errno));
    }
    LogFile(const LogFile&) = delete;
    LogFile& operator=(const LogFile&) = delete;
    ~LogFile() {
        if (fd_ != STDIN_FILENO) ::close(fd_);
    }
    int fd() const { return fd_; }

private:
    int fd_;
};

void read_log(const std::string& path, oom::LogDiagnoser& diagnoser) {
    const LogFile log(path);
    std::vector<char> buffer(kChunk);
    for (;;) {
        const ssize_t n = ::read(log.fd(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw UsageError(path, "cannot read: " + errno_text(errno));
        if (n == 0) return;
        diagnoser.chunk(std::string_view(buffer.data(), static_cast<size_t>(n)));
    }
}

nlohmann::json to_json(const oom::LogDiagnosis& d, const ExitStatus& exit) {
    nlohmann::json out = d.verdict;
    out["exit"] = exit.known() ? nlohmann::json(exit.describe()) : nlohmann::json(nullptr);
    out["last_step"] = d.last_step ? nlohmann::json(*d.last_step) : nlohmann::json(nullptr);
    out["total_steps"] = d.total_steps ? nlohmann::json(*d.total_steps) : nlohmann::json(nullptr);
    out["lines"] = d.lines;
    out["srun_cause"] = d.srun_cause ? nlohmann::json{{"node", d.srun_cause->node}, {"tasks", d.srun_cause->tasks},
                                                      {"line", d.srun_cause->line}}
                                     : nlohmann::json(nullptr);
    return out;
}

void print_text(const oom::LogDiagnosis& d, std::ostream& out) {
    const Verdict& v = d.verdict;
    if (v.oom)
        out << "verdict:  OOM (" << oom::kind_name(v.kind) << "), "
            << (*v.phase == oom::Phase::train ? "during training" : "while loading, before the first training step")
            << ", " << oom::confidence_name(*v.confidence) << "\n";
    else
        out << "verdict:  not OOM\n";
    if (!v.evidence.empty())
        out << "evidence: " << (v.evidence_line ? "line " + std::to_string(*v.evidence_line) + ": " : "") << v.evidence << "\n";
    out << "why:      " << v.reason << "\n";
    if (d.srun_cause)
        out << "cause:    node " << d.srun_cause->node << ", task " << d.srun_cause->tasks
            << " ended first; the other tasks' ends followed it (" << d.srun_cause->line << ")\n";
    if (d.last_step)
        out << "progress: step " << *d.last_step << (d.total_steps ? " of " + std::to_string(*d.total_steps) : "") << "\n";
}

}  // namespace

int diagnose_main(Args args) {
    const ParsedArgs parsed = parse_args(kOptions, args);
    if (parsed.has("help")) {
        std::cout << format_help(kUsage, kSummary, kOptions, kEpilog);
        return kExitOk;
    }
    if (parsed.positionals().size() != 1)
        throw UsageError("diagnose", "needs exactly one LOGFILE (or '-' for standard input); see --help");
    const auto number = parsed.get_int("exit-code", -64, 255);
    const ExitStatus exit = number ? ExitStatus::from_number(static_cast<int>(*number)) : ExitStatus::unknown();
    oom::LogDiagnoser diagnoser;
    read_log(parsed.positionals().front(), diagnoser);
    oom::KernelEvidence kernel;
    kernel.unavailable.push_back("diagnose reads only the log");
    const oom::LogDiagnosis diagnosis = diagnoser.finish(exit, kernel);
    if (parsed.has("json"))
        std::cout << to_json(diagnosis, exit).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        print_text(diagnosis, std::cout);
    return kExitOk;
}

}  // namespace sg::cli
