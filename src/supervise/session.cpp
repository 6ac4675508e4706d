#include "supervise/session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <chrono>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>

#include "supervise/boost_process.hpp"
#include "supervise/executable.hpp"
#include "supervise/process_tree.hpp"
#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/line_splitter.hpp"

extern char** environ;

namespace sg {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using namespace std::chrono_literals;

namespace {

std::chrono::milliseconds millis(double seconds) { return std::chrono::milliseconds(static_cast<long>(seconds * 1000)); }

// The child side of the launch: its own process group, default signal dispositions, our
// environment additions, and death with sparkguard (a killed supervisor must not leave a
// trainer holding the memory a resumed run needs).
struct TrainerSetup {
    std::vector<std::string> env_strings;
    std::vector<char*> envp;

    int oom_score_adj = 0;
    char oom_score_text[16] = {};

    explicit TrainerSetup(const std::vector<std::pair<std::string, std::string>>& additions, int score_adj = 0)
        : oom_score_adj(score_adj) {
        std::snprintf(oom_score_text, sizeof oom_score_text, "%d", score_adj);
        for (char** e = environ; *e; ++e) {
            std::string_view entry(*e);
            std::string_view key = entry.substr(0, entry.find('='));
            bool overridden = std::any_of(additions.begin(), additions.end(), [&](const auto& kv) { return kv.first == key; });
            if (!overridden) env_strings.emplace_back(entry);
        }
        for (const auto& [key, value] : additions) env_strings.push_back(key + "=" + value);
        for (auto& s : env_strings) envp.push_back(s.data());
        envp.push_back(nullptr);
    }

    bp::error_code on_setup(bp::posix::default_launcher& launcher, const bp::filesystem::path&, const char* const*) {
        launcher.env = envp.data();
        return {};
    }

    bp::error_code on_exec_setup(bp::posix::default_launcher&, const bp::filesystem::path&, const char* const*) {
        if (::setpgid(0, 0) != 0) return bp::error_code(errno, bp::system_category());
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (oom_score_adj != 0) raise_oom_score();
        for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        return {};
    }

    // Between fork and exec: only async-signal-safe calls; best effort.
    void raise_oom_score() const {
        int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0) return;
        [[maybe_unused]] ssize_t n = ::write(fd, oom_score_text, std::strlen(oom_score_text));
        ::close(fd);
    }
};

// Blocking write of all bytes; false once the reader is gone (EPIPE) so we stop trying.
bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n >= 0) {
            data.remove_prefix(static_cast<size_t>(n));
        } else if (errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, 1000);
        } else if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

struct Pump {
    Pump(asio::io_context& ctx, int fd, Stream which) : pipe(ctx), forward_fd(fd), stream(which) {}
    asio::readable_pipe pipe;
    int forward_fd;
    Stream stream;
    bool open = true;
    bool forwarding = true;
    LineSplitter splitter;
    std::array<char, 64 * 1024> buffer{};
};

}  // namespace

struct Session::Impl {
    asio::io_context ctx;
    asio::signal_set signals{ctx, SIGINT, SIGTERM, SIGHUP};
    std::optional<int> received;
    std::vector<pid_t> tree;

    struct Helper {
        Helper(asio::io_context& ctx) : pipe(ctx), deadline(ctx) {}
        asio::readable_pipe pipe;
        asio::steady_timer deadline;
        std::optional<bp::process> process;
        LineSplitter splitter;
        std::array<char, 8192> buffer{};
        std::function<void(std::string_view)> on_line;
        std::function<void(int)> on_exit;
        pid_t pid = -1;
        bool running = false;
        bool eof = false;                 // its output is read to the end
        std::optional<int> exit_code;     // it has exited
        // on_exit runs once both happened, so that it sees every line of the output.
        void maybe_done() {
            if (eof && exit_code && on_exit) std::exchange(on_exit, nullptr)(*exit_code);
        }
    };
    std::vector<std::unique_ptr<Helper>> helpers;

    std::vector<pid_t> helper_pids() const {
        std::vector<pid_t> pids;
        for (const auto& h : helpers)
            if (h->running) pids.push_back(h->pid);
        return pids;
    }

    void read_helper(Helper& h) {
        h.pipe.async_read_some(asio::buffer(h.buffer), [this, &h](const boost::system::error_code& ec, size_t n) {
            if (ec) {
                h.splitter.finish([&](std::string_view line, bool) { h.on_line(line); });
                h.eof = true;
                h.maybe_done();
                return;
            }
            h.splitter.feed(std::string_view(h.buffer.data(), n), [&](std::string_view line, bool) { h.on_line(line); });
            read_helper(h);
        });
    }

    struct Attempt {
        Attempt(asio::io_context& ctx) : out(ctx, STDOUT_FILENO, Stream::out), err(ctx, STDERR_FILENO, Stream::err),
                                         tick(ctx), grace(ctx), linger(ctx), sample(ctx), wake(ctx) {}
        Pump out, err;
        asio::steady_timer tick, grace, linger, sample;
        asio::posix::stream_descriptor wake;  // a dup of the sampler's wake fd
        pid_t pid = -1;
        bool exited = false;
        bool stopping = false;
        AttemptExit result;
        bool done() const { return exited && !out.open && !err.open; }
    };
    Attempt* attempt = nullptr;
    AttemptObserver* observer = nullptr;
    const AttemptSpec* spec = nullptr;

    void arm_signals() {
        signals.async_wait([this](const boost::system::error_code& ec, int sig) {
            if (ec) return;
            received = sig;
            if (attempt && !attempt->exited) {
                attempt->result.forwarded_signal = sig;
                refresh_tree();
                signal_processes(attempt->pid, tree, sig);
                start_stop();
            }
            arm_signals();
        });
    }

    // Stage two of a stop: after the grace period, SIGKILL whatever is left of the tree.
    void start_stop() {
        if (attempt->stopping) return;
        attempt->stopping = true;
        attempt->grace.expires_after(millis(spec->grace_seconds));
        attempt->grace.async_wait([this](const boost::system::error_code& ec) {
            if (ec || !attempt) return;
            refresh_tree();
            signal_processes(attempt->pid, tree, SIGKILL);
        });
    }

    void refresh_tree() {
        if (attempt) tree = descendants(::getpid(), attempt->pid, helper_pids());
    }

    std::vector<pid_t> keep_unreaped() const {
        std::vector<pid_t> keep = helper_pids();
        if (attempt) keep.push_back(attempt->pid);
        return keep;
    }

    void read(Pump& pump) {
        pump.pipe.async_read_some(asio::buffer(pump.buffer), [this, &pump](const boost::system::error_code& ec, size_t n) {
            observer->on_output_chunk_begin(pump.stream);
            if (ec) {
                pump.splitter.finish([&](std::string_view line, bool complete) { observer->on_line(pump.stream, line, complete); });
                observer->on_output_chunk_done(pump.stream, {});
                pump.open = false;
                return;
            }
            std::string_view data(pump.buffer.data(), n);
            if (pump.forwarding) pump.forwarding = write_all(pump.forward_fd, data);
            pump.splitter.feed(data, [&](std::string_view line, bool complete) { observer->on_line(pump.stream, line, complete); });
            observer->on_output_chunk_done(pump.stream, data);
            read(pump);
        });
    }

    void tick() {
        attempt->tick.expires_after(millis(spec->tick_seconds));
        attempt->tick.async_wait([this](const boost::system::error_code& ec) {
            if (ec || !attempt || attempt->exited) return;
            refresh_tree();
            reap_adopted_children(keep_unreaped());
            observer->on_tick();
            tick();
        });
    }

    void schedule_sample(double seconds) {
        attempt->sample.expires_after(std::chrono::microseconds(static_cast<long>(seconds * 1e6)));
        attempt->sample.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) run_sampler();
        });
    }

    void run_sampler() {
        if (!attempt || attempt->exited || !spec->sampler) return;
        schedule_sample(spec->sampler());
    }

    // A PSI trigger fired: sample now (the pending timer is replaced).
    void wait_for_wake() {
        attempt->wake.async_wait(asio::posix::descriptor_base::wait_error, [this](const boost::system::error_code& ec) {
            if (ec || !attempt || attempt->exited) return;
            attempt->sample.cancel();
            run_sampler();
            wait_for_wake();
        });
    }

    void start_sampler() {
        if (!spec->sampler) return;
        if (spec->sampler_wake_fd >= 0)
            if (int fd = ::fcntl(spec->sampler_wake_fd, F_DUPFD_CLOEXEC, 0); fd >= 0) {
                attempt->wake.assign(fd);
                wait_for_wake();
            }
        run_sampler();
    }

    // The leader is gone: whatever it left behind (workers, grandchildren) goes too, so the
    // next attempt gets its memory and the pipes reach end of file.
    void clean_up_after_leader() {
        refresh_tree();
        reap_adopted_children(helper_pids());
        if (!tree.empty()) signal_processes(attempt->pid, tree, SIGTERM);
        attempt->linger.expires_after(1s);
        attempt->linger.async_wait([this](const boost::system::error_code& ec) {
            if (ec || !attempt) return;
            refresh_tree();
            if (!tree.empty()) signal_processes(attempt->pid, tree, SIGKILL);
            reap_adopted_children(helper_pids());
            // A process that escaped the tree can hold the pipes open forever; stop reading.
            attempt->linger.expires_after(2s);
            attempt->linger.async_wait([this](const boost::system::error_code& ec2) {
                if (ec2 || !attempt) return;
                boost::system::error_code ignored;
                for (Pump* pump : {&attempt->out, &attempt->err})
                    if (pump->open) pump->pipe.close(ignored);
            });
        });
    }
};

Session::Session() : impl_(std::make_unique<Impl>()) {
    ::signal(SIGPIPE, SIG_IGN);
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    impl_->arm_signals();
}

Session::~Session() {
    for (auto& h : impl_->helpers)
        if (h->running) ::kill(h->pid, SIGTERM);
    for (auto& h : impl_->helpers)
        if (h->running) {
            h->on_exit = nullptr;  // the session is ending: not a failure to report
            ::waitpid(h->pid, nullptr, 0);
        }
}

Status Session::start_helper(const std::vector<std::string>& argv, std::function<void(std::string_view)> on_line,
                             std::function<void(int)> on_exit, const HelperOptions& options) {
    auto exe = resolve_executable(argv.at(0), nullptr);
    if (!exe) return exe.error();
    auto helper = std::make_unique<Impl::Helper>(impl_->ctx);
    TrainerSetup setup(options.env);
    boost::system::error_code ec;
    const auto args = std::vector<std::string>(argv.begin() + 1, argv.end());
    if (options.stdin_file)
        helper->process.emplace(bp::default_process_launcher()(impl_->ctx.get_executor(), ec, *exe, args,
                                                               bp::process_stdio{*options.stdin_file, helper->pipe, nullptr}, setup));
    else
        helper->process.emplace(bp::default_process_launcher()(impl_->ctx.get_executor(), ec, *exe, args,
                                                               bp::process_stdio{nullptr, helper->pipe, nullptr}, setup));
    if (ec) return make_error(argv[0] + ": " + ec.message());
    if (options.timeout_seconds > 0) {
        const pid_t pid = helper->process->id();
        Impl::Helper* h = helper.get();
        helper->deadline.expires_after(std::chrono::milliseconds(static_cast<long>(options.timeout_seconds * 1000)));
        helper->deadline.async_wait([h, pid](const boost::system::error_code& error) {
            if (error || !h->running) return;
            ::kill(-pid, SIGKILL);  // its own process group: whatever it started goes too
            ::kill(pid, SIGKILL);
        });
    }
    Impl::Helper& h = *helper;
    h.pid = h.process->id();
    h.running = true;
    h.on_line = std::move(on_line);
    h.on_exit = std::move(on_exit);
    impl_->read_helper(h);
    h.process->async_wait([&h](const boost::system::error_code&, int) {
        h.running = false;
        const int status = h.process->native_exit_code();
        h.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        h.deadline.cancel();
        h.maybe_done();
    });
    impl_->helpers.push_back(std::move(helper));
    return Ok{};
}

AttemptExit Session::run(const AttemptSpec& spec, AttemptObserver& observer) {
    int code = kExitNotFound;
    auto exe = resolve_executable(spec.argv.at(0), &code);
    if (!exe) throw Failure("cannot run the trainer", exe.error().message, code);

    Impl& impl = *impl_;
    Impl::Attempt attempt(impl.ctx);
    TrainerSetup setup(spec.env, spec.oom_score_adj);
    boost::system::error_code ec;
    auto process = bp::default_process_launcher()(
        impl.ctx.get_executor(), ec, *exe, std::vector<std::string>(spec.argv.begin() + 1, spec.argv.end()),
        bp::process_stdio{nullptr, attempt.out.pipe, attempt.err.pipe}, setup);
    if (ec) {
        int exec_code = ec.value() == ENOENT ? kExitNotFound : kExitNotExecutable;
        throw Failure("cannot run the trainer", spec.argv[0] + ": " + ec.message(), exec_code);
    }
    attempt.pid = process.id();
    ::setpgid(attempt.pid, attempt.pid);  // also here: no window in which a signal misses the group

    impl.attempt = &attempt;
    impl.observer = &observer;
    impl.spec = &spec;
    impl.tree = {attempt.pid};  // sparkguard runs no other child while an attempt runs
    observer.on_started(attempt.pid);
    if (impl.received) {  // a signal arrived while we were launching
        attempt.result.forwarded_signal = impl.received;
        signal_processes(attempt.pid, impl.tree, *impl.received);
        impl.start_stop();
    }
    impl.read(attempt.out);
    impl.read(attempt.err);
    impl.tick();
    impl.start_sampler();
    process.async_wait([&](const boost::system::error_code&, int) {
        const int status = process.native_exit_code();  // the portable code hides whether it was a signal
        attempt.exited = true;
        attempt.result.died_at = rfc3339_now();
        attempt.tick.cancel();
        attempt.grace.cancel();
        attempt.sample.cancel();
        boost::system::error_code ignored;
        attempt.wake.cancel(ignored);
        if (WIFSIGNALED(status)) {
            attempt.result.term_signal = WTERMSIG(status);
            attempt.result.exit_code = 128 + WTERMSIG(status);
        } else {
            attempt.result.exit_code = WEXITSTATUS(status);
        }
        impl.clean_up_after_leader();
    });
    while (!attempt.done()) impl.ctx.run_one();
    attempt.linger.cancel();
    impl.ctx.poll();  // let cancelled handlers finish while `attempt` is alive
    impl.attempt = nullptr;
    impl.observer = nullptr;
    impl.spec = nullptr;
    impl.tree.clear();
    return attempt.result;
}

void Session::request_stop(std::string reason) {
    Impl& impl = *impl_;
    if (!impl.attempt || impl.attempt->exited || impl.attempt->stopping) return;
    impl.attempt->result.stopped_on_request = true;
    impl.attempt->result.stop_reason = std::move(reason);
    impl.refresh_tree();
    signal_processes(impl.attempt->pid, impl.tree, SIGTERM);
    impl.start_stop();
}

void Session::kill_now(std::string reason) {
    Impl& impl = *impl_;
    if (!impl.attempt || impl.attempt->exited) return;
    ::kill(-impl.attempt->pid, SIGKILL);
    impl.attempt->result.stopped_on_request = true;
    impl.attempt->result.stop_reason = std::move(reason);
    impl.refresh_tree();
    signal_processes(impl.attempt->pid, impl.tree, SIGKILL);
}

const std::vector<pid_t>& Session::tree() const { return impl_->tree; }

std::optional<int> Session::received_signal() {
    impl_->ctx.poll();
    return impl_->received;
}

void Session::sleep(double seconds) {
    asio::steady_timer timer(impl_->ctx, millis(seconds));
    bool done = false;
    timer.async_wait([&](const boost::system::error_code&) { done = true; });
    while (!done && !impl_->received) impl_->ctx.run_one();
    timer.cancel();
    impl_->ctx.poll();
}

}  // namespace sg
