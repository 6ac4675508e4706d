#pragma once
// Running one trainer attempt on one event loop: spawn it in its own process group, pump its
// output, tick a sampler, forward signals, and stop its whole tree in stages.
// Boost.Process and Boost.Asio stay behind this header.

#include <sys/types.h>

#include <functional>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace sg {

enum class Stream { out, err };

// The oom_score_adj sparkguard gives the trainer: the kernel's OOM killer takes it, never sparkguard.
constexpr int kTrainerOomScoreAdj = 500;

struct AttemptSpec {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // set on top of sparkguard's environment
    double grace_seconds = 30;   // SIGTERM → SIGKILL
    double tick_seconds = 1;     // how often AttemptObserver::on_tick runs
    // A sampler faster than the tick (the memory guard), on the same event loop: it runs right
    // after the launch, then after the seconds it returns; a POLLPRI on `sampler_wake_fd` (a PSI
    // trigger; -1 for none) runs it at once.
    std::function<double()> sampler;
    int sampler_wake_fd = -1;
    // The trainer's oom_score_adj, set before exec and inherited by its whole tree, so that the
    // kernel, if it acts, takes the trainer and never sparkguard; 0 leaves it alone.
    int oom_score_adj = 0;
};

struct AttemptExit {
    int exit_code = 0;                    // the trainer's code, or 128+N when signal N killed it
    std::optional<int> term_signal;       // N when a signal killed it
    std::optional<int> forwarded_signal;  // a signal sparkguard received and passed on
    bool stopped_on_request = false;      // request_stop() was called
    std::string stop_reason;
    std::string died_at;                  // RFC 3339: when the leader's exit was seen
};

// Called on the event loop; keep the work small (on_line runs for every line of output).
class AttemptObserver {
public:
    virtual ~AttemptObserver() = default;
    virtual void on_started(pid_t pid) = 0;
    // Each read of output: begin (before it is passed on; one clock reading serves its lines),
    // its lines, done (after; `data` is what was passed on, empty at end of file).
    virtual void on_output_chunk_begin(Stream stream) = 0;
    virtual void on_line(Stream stream, std::string_view line, bool complete) = 0;
    virtual void on_output_chunk_done(Stream stream, std::string_view data) = 0;
    virtual void on_tick() = 0;
};

class Session {
public:
    // Catches SIGINT, SIGTERM and SIGHUP for the whole run, makes sparkguard a child subreaper
    // (orphaned grandchildren stay findable) and ignores SIGPIPE (a closed stdout loses no log).
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs an attempt until its whole process tree is gone and its output drained.
    // Throws Failure with exit code 127/126 when the command cannot be found/executed.
    AttemptExit run(const AttemptSpec& spec, AttemptObserver& observer);

    // From an observer callback: stop the running attempt's tree (SIGTERM, grace, SIGKILL).
    void request_stop(std::string reason);
    // From an observer callback or the sampler: SIGKILL the running attempt's whole tree at once
    // (its process group first, then every process of the tree found now). No grace: a process
    // asked to stop could allocate more.
    void kill_now(std::string reason);

    // The pids of the running attempt's tree as last seen (refreshed every tick).
    const std::vector<pid_t>& tree() const;

    // A SIGINT/SIGTERM/SIGHUP received so far (during or between attempts).
    std::optional<int> received_signal();

    // Waits `seconds` while still noticing signals (and serving helpers); returns early when a
    // signal arrives.
    void sleep(double seconds);

    // A long-lived helper process of sparkguard's own (nvidia-smi's sampling loop) on this event
    // loop, across attempts and outside the trainer's tree: each line of its stdout goes to
    // `on_line`, its end to `on_exit` (exit code, 128+N for a signal). It runs in its own process
    // group and is stopped when the session ends. Errors when it cannot be started.
    // `options` adds environment variables, a file for its standard input (else /dev/null) and a
    // timeout after which its process group is SIGKILLed (on_exit then sees 137).
    struct HelperOptions {
        std::vector<std::pair<std::string, std::string>> env;
        std::optional<std::filesystem::path> stdin_file;
        double timeout_seconds = 0;  // 0: none
    };
    Status start_helper(const std::vector<std::string>& argv, std::function<void(std::string_view)> on_line,
                        std::function<void(int)> on_exit, const HelperOptions& options);
    Status start_helper(const std::vector<std::string>& argv, std::function<void(std::string_view)> on_line,
                        std::function<void(int)> on_exit) {
        return start_helper(argv, std::move(on_line), std::move(on_exit), HelperOptions{});
    }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace sg
