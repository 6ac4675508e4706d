#include "supervise/node.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "accounting/platform.hpp"
#include "ladder/command_line.hpp"
#include "oom/classifier.hpp"
#include "oom/kernel_watch.hpp"
#include "preflight/preflight.hpp"
#include "report/event_log.hpp"
#include "supervise/capture.hpp"
#include "supervise/memory_guard_probe.hpp"
#include "supervise/process_tree.hpp"
#include "supervise/session.hpp"
#include "supervise/telemetry_recorder.hpp"
#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/parse.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

using nlohmann::json;
constexpr double kGB = 1e9;

// The node's files: RUN_DIR/nodes/<host> when the run directory is here (its state.json, written
// before every launch, is what a shared filesystem shows), else a directory of this node's own.
fs::path choose_node_dir(const std::optional<fs::path>& run_dir, const std::string& host) {
    if (run_dir && fs::exists(*run_dir / "state.json")) return node_dir(*run_dir, host);
    const char* job = std::getenv("SLURM_JOB_ID");
    const std::string run = run_dir ? run_dir->filename().string() : "job-" + std::string(job ? job : "none");
    const fs::path local = user_state_dir() / "nodes" / run / host;
    // Named once, on stderr: the top-level run cannot collect what it cannot see.
    std::cerr << "sparkguard-node: " << host << ": files in " << local.string() << " on this node ("
              << (run_dir ? run_dir->string() + " is not on this node" : std::string("no --run-dir")) << ")\n";
    return local;
}

int attempt_number() {
    const char* text = std::getenv("SPARKGUARD_ATTEMPT");
    if (!text) return 0;
    auto n = parse_int(text);
    return n ? static_cast<int>(*n) : 0;
}

double run_started() {
    if (const char* text = std::getenv("SPARKGUARD_RUN_STARTED"))
        if (auto t = parse_double(text)) return *t;
    return epoch_seconds();
}

class NodeSupervisor final : public AttemptObserver {
public:
    NodeSupervisor(const NodeOptions& options, std::string host, fs::path dir)
        : options_(options), host_(std::move(host)), dir_(std::move(dir)), events_(dir_ / "events.jsonl"),
          attempt_(attempt_number()) {}

    int run() {
        const accounting::MachineState machine = accounting::read_machine();
        const auto profile = accounting::detect_platform(accounting::load_platforms(), machine);
        const std::string platform = preflight::platform_name(profile, machine);
        telemetry_.emplace(session_, dir_ / "thermal.csv", options_.thermal_interval, platform, run_started());
        floor_ = oom::resolve_floor(options_.memory_floor, preflight::is_unified_platform(platform),
                                    machine.meminfo ? machine.meminfo->total : 0);
        spec_.argv = options_.command;
        spec_.grace_seconds = options_.grace_seconds;
        spec_.oom_score_adj = kTrainerOomScoreAdj;
        if (floor_) {
            lock_own_memory();
            guard_ = arm_memory_guard(*floor_, events_, attempt_, session_, watch_, spec_);
        }
        events_.write("node-start", {{"attempt", attempt_}, {"host", host_}, {"argv", spec_.argv}, {"platform", platform},
                                     {"memory_floor_gb", floor_ ? json(*floor_ / kGB) : json()}});
        const AttemptExit exit = session_.run(spec_, *this);
        killed_by_ = exit.term_signal;
        return end(exit);
    }

    // The signal that killed the command, if one did.
    std::optional<int> killed_by() const { return killed_by_; }

    void on_started(pid_t pid) override {
        watch_.emplace(oom::KernelWatch::start(pid));
        seen_ = {pid};
        on_tick();  // a row at the launch: an attempt shorter than the interval has one too
    }
    void on_output_chunk_begin(Stream) override {}
    void on_line(Stream, std::string_view, bool) override {}
    void on_output_chunk_done(Stream, std::string_view) override {}

    void on_tick() override {
        if (watch_) watch_->poll();
        double rss = 0;
        for (pid_t pid : session_.tree()) {
            seen_.insert(pid);
            rss += rss_bytes(pid);
        }
        std::optional<MemInfo> meminfo;
        if (auto mem = read_meminfo()) meminfo = *mem;
        TelemetryContext context;
        context.attempt = attempt_;
        context.trainer_rss_gb = rss / kGB;
        for (const auto& event : telemetry_->tick(context, meminfo)) events_.write(event.name, event.fields);
    }

private:
    // The death's kind as this node saw it: its guard, or the kernel's records of the rank's
    // processes (the classifier decides, from no output: the top-level run has that).
    std::optional<oom::Verdict> death(const AttemptExit& exit) {
        if (guard_ && guard_->fired()) {
            oom::Verdict v;
            v.oom = true;
            v.kind = oom::Kind::memory_guard;
            v.evidence = guard_->evidence();
            return v;
        }
        if (exit.exit_code == 0 && !exit.term_signal) return std::nullopt;
        const oom::ExitStatus status = exit.term_signal ? oom::ExitStatus::killed(*exit.term_signal)
                                                        : oom::ExitStatus::exited(exit.exit_code);
        const oom::KernelEvidence kernel = watch_ ? watch_->collect(seen_) : oom::KernelEvidence{};
        oom::Verdict v = oom::Classifier().verdict(status, kernel);
        const oom::Family family = oom::family_of(v.kind);
        if (!v.oom || (family != oom::Family::kernel_kill && family != oom::Family::driver)) return std::nullopt;
        return v;
    }

    int end(const AttemptExit& exit) {
        json record = {{"attempt", attempt_}, {"host", host_}, {"ended", exit.died_at}, {"exit_code", exit.exit_code},
                       {"signal", exit.term_signal ? json(*exit.term_signal) : json()},
                       {"forwarded_signal", exit.forwarded_signal ? json(*exit.forwarded_signal) : json()},
                       {"telemetry", telemetry_->summary()}};
        if (guard_) record["memory_guard"] = guard_->measured();
        if (auto v = exit.forwarded_signal ? std::nullopt : death(exit)) {
            std::string evidence(trim(v->evidence));
            for (char& c : evidence)
                if (c == '\n' || c == '\r') c = ' ';
            record["death"] = {{"kind", oom::kind_name(v->kind)}, {"evidence", evidence}};
            const char* task = std::getenv("SLURM_PROCID");  // srun's task number: which rank it was
            std::cerr << "sparkguard-node: " << host_ << ": " << oom::kind_name(v->kind) << ": " << evidence
                      << (task && *task ? std::string(" (task ") + task + ")" : "") << std::endl;
        }
        if (auto written = append_line(dir_ / "attempts.jsonl", record.dump(), /*fsync=*/true); !written)
            spdlog::warn("{}", written.error().message);
        return exit.exit_code;
    }

    const NodeOptions& options_;
    std::string host_;
    fs::path dir_;
    EventLog events_;
    int attempt_;
    Session session_;
    AttemptSpec spec_;
    std::optional<TelemetryRecorder> telemetry_;
    std::optional<double> floor_;
    std::unique_ptr<MemoryGuardProbe> guard_;
    std::optional<oom::KernelWatch> watch_;
    std::set<int> seen_;
    std::optional<int> killed_by_;
};

// Ends this process the way the trainer ended: srun then reports the task as it would have
// without sparkguard in between ("task 1: Killed", "Exited with exit code 3").
[[noreturn]] void end_like(int signal_number) {
    std::cout.flush();
    std::cerr.flush();
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal_number, &action, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), signal_number);
    std::_Exit(128 + signal_number);  // a signal whose default is to ignore it
}

}  // namespace

std::string own_path() {
    const fs::path self = executable_path();
    return self.empty() ? "sparkguard" : self.string();
}

std::string node_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    std::string host(name);
    return host.substr(0, host.find('.'));
}

fs::path node_dir(const fs::path& run_dir, const std::string& host) { return run_dir / "nodes" / host; }

int run_node(const NodeOptions& options) {
    if (options.command.empty()) throw UsageError("node", "no command (sparkguard node [OPTIONS] -- COMMAND [ARGS...])");
    const std::string host = node_name();
    const fs::path dir = choose_node_dir(options.run_dir, host);
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) throw Failure(dir.string(), "cannot create the node's directory: " + error.message());
    int code = 0;
    std::optional<int> signal_number;
    {
        NodeSupervisor node(options, host, dir);
        code = node.run();
        signal_number = node.killed_by();
    }
    if (signal_number) end_like(*signal_number);
    return code;
}

std::optional<NodeBudget> parse_node_probe(std::string_view line) {
    constexpr std::string_view kPrefix = "sparkguard-node: ";
    const size_t at = line.find(kPrefix);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view rest = line.substr(at + kPrefix.size());
    const size_t host_end = rest.find(": probe: ");
    if (host_end == 0 || host_end == std::string_view::npos) return std::nullopt;
    const json probe = json::parse(rest.substr(host_end + 9), nullptr, false);
    if (!probe.is_object() || !probe.contains("budget_gb") || !probe["budget_gb"].is_number()) return std::nullopt;
    return NodeBudget{std::string(rest.substr(0, host_end)), probe.value("platform", ""), probe["budget_gb"].get<double>(),
                      probe.value("budget_source", "")};
}

Result<std::vector<NodeBudget>> probe_node_budgets(const std::vector<std::string>& command, double timeout_seconds) {
    const auto argv = srun_probe_command(command, {own_path(), "node", "--probe"});
    if (argv.empty()) return make_error("the command has no srun");
    auto ran = capture_output(argv, timeout_seconds);
    if (!ran) return make_error(ran.error().message);
    if (ran->timed_out) return make_error(join(argv, " ") + " did not answer in " + fixed(timeout_seconds, 0) + " s");
    std::vector<NodeBudget> nodes;
    for (const auto& line : split(ran->out, '\n'))
        if (auto node = parse_node_probe(line)) nodes.push_back(*node);
    if (ran->exit_code != 0 || nodes.empty()) {
        const std::string err(trim(ran->err));
        return make_error(join(argv, " ") + " exited " + std::to_string(ran->exit_code) +
                          (err.empty() ? "" : ": " + err.substr(0, 300)));
    }
    return nodes;
}

int probe_node() {
    const accounting::MachineState machine = accounting::read_machine();
    const auto profile = accounting::detect_platform(accounting::load_platforms(), machine);
    const accounting::Budget budget = accounting::compute_budget(profile, machine);
    json probe = {{"platform", preflight::platform_name(profile, machine)},
                  {"profile", profile.name},
                  {"unified", profile.unified},
                  {"budget_gb", budget.budget_gb},
                  {"budget_source", budget.source},
                  {"gpus", machine.gpus.gpus.size()}};
    if (machine.meminfo) {
        probe["mem_total_gb"] = machine.meminfo->total / kGB;
        probe["mem_available_gb"] = machine.meminfo->available / kGB;
    }
    std::cout << "sparkguard-node: " << node_name() << ": probe: " << probe.dump() << std::endl;
    return kExitOk;
}

}  // namespace sg
