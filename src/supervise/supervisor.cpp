#include "supervise/supervisor.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "accounting/alternatives.hpp"
#include "accounting/history_store.hpp"
#include "ladder/argument_errors.hpp"
#include "ladder/checkpoints.hpp"
#include "ladder/command_line.hpp"
#include "ladder/knobs.hpp"
#include "ladder/prequantized.hpp"
#include "ladder/trainer_profile.hpp"
#include "oom/death.hpp"
#include "oom/kernel_watch.hpp"
#include "oom/log_diagnosis.hpp"
#include "report/event_log.hpp"
#include "report/run_dir.hpp"
#include "report/run_dir_reader.hpp"
#include "report/run_report.hpp"
#include "report/train_log.hpp"
#include "supervise/drop_caches.hpp"
#include "supervise/env_report_writer.hpp"
#include "supervise/executable.hpp"
#include "supervise/lost_host.hpp"
#include "supervise/memory_guard_probe.hpp"
#include "supervise/node.hpp"
#include "supervise/prelaunch.hpp"
#include "supervise/process_tree.hpp"
#include "supervise/session.hpp"
#include "supervise/stall_probe.hpp"
#include "supervise/status_line.hpp"
#include "supervise/telemetry_recorder.hpp"
#include "preflight/host.hpp"
#include "preflight/cluster.hpp"
#include "preflight/preflight.hpp"
#include "telemetry/meminfo.hpp"
#include "telemetry/step_tracker.hpp"
#include "telemetry/telemetry_summary.hpp"
#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/strings.hpp"

namespace sg {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kGB = 1e9;
constexpr std::uint64_t kTickWindow = 64 * 1024;         // train.log read per tick for steps, at most
constexpr std::uint64_t kJudgedTail = 64 * 1024 * 1024;  // train.log read at a death, at most

constexpr double kNodeProbeSeconds = 120;  // srun's step to every node, queueing included

std::string signal_name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGKILL: return "SIGKILL";
        default: return "signal " + std::to_string(sig);
    }
}

TrainConfig starting_config(const RunOptions& o, const CommandKnobs& knobs) {
    TrainConfig c = knobs.config;
    if (o.batch_size) c.batch_size = o.batch_size;
    if (o.grad_accum) c.grad_accum = o.grad_accum;
    if (o.seq_len) c.seq_len = o.seq_len;
    if (o.method) c.method = *o.method;
    if (o.model) c.model = o.model;
    return c;
}

double to_unix_seconds(fs::file_time_type t) {
    const auto sys = std::chrono::file_clock::to_sys(t);
    return std::chrono::duration<double>(sys.time_since_epoch()).count();
}

fs::file_time_type from_unix_seconds(double seconds) {
    const auto sys = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
    return std::chrono::file_clock::from_sys(sys);
}

struct MemorySample {
    double total = 0;
    double available = 0;
    double tree_rss = 0;
};

class Supervisor final : public AttemptObserver {
    struct Stall {
        oom::StallJudgement judgement;
        oom::StallReadings readings;
        std::string dump;  // RUN_DIR/stall-N.txt
    };

public:
    Supervisor(RunOptions options, RunDir dir, TrainerProfile profile)
        : options_(std::move(options)), dir_(std::move(dir)), profile_(std::move(profile)),
          command_(profile_, options_.command), knobs_(command_.knobs()), config_(starting_config(options_, knobs_)),
          ladder_(options_.ladder), log_(dir_.train_log()), events_(dir_.events()) {
        report_.profile = profile_.name;
        report_.command = options_.command;
        report_.config_sources = knobs_.from;
        report_.started = rfc3339_now();
        status_ = StatusLine::open_on_terminal(options_.quiet);
        if (!options_.notify.commands.empty()) {
            notifier_.emplace(session_, dir_, events_, options_.notify);
            events_.listen([this](std::string_view event, const json& fields) { notifier_->on_event(event, fields); });
        }
        for (const auto& pattern : profile_.progress_patterns) step_patterns_.push_back({pattern, {}});
        if (step_patterns_.empty()) step_patterns_ = telemetry::default_step_patterns();
        if (!profile_.resume.epoch_pattern.empty()) epoch_pattern_.emplace(profile_.resume.epoch_pattern);
    }

    // For --resume-run: the state a killed sparkguard left behind. An exit code when that ends the
    // run (the host was lost and the ladder has no rung left).
    std::optional<int> restore(const json& state, RunReport report) {
        config_ = train_config_from_json(state.at("config"));
        ladder_ = Ladder(options_.ladder, state.at("ladder_position").get<size_t>());
        if (state.contains("bf16_exceeds_budget") && state["bf16_exceeds_budget"].is_string())
            bf16_exceeds_ = state["bf16_exceeds_budget"].get<std::string>();
        if (state.contains("pending_rung") && state["pending_rung"].is_string())
            pending_rung_ = parse_rung(state["pending_rung"].get<std::string>());
        if (state.contains("first_launch_unix") && state["first_launch_unix"].is_number())
            first_launch_ = from_unix_seconds(state["first_launch_unix"].get<double>());
        report_ = std::move(report);
        if (auto ended = judge_lost_host(state)) return ended;
        for (auto& attempt : report_.attempts)
            if (attempt.outcome == "running") {
                attempt.outcome = "interrupted";
                attempt.notes.push_back("sparkguard was killed during this attempt; resumed with --resume-run");
            }
        report_.outcome = "running";
        report_.exit_code.reset();
        events_.write("resume-run", {{"attempts_so_far", report_.attempts.size()}, {"config", to_json(config_)}});
        note("resuming the run after sparkguard was stopped; next: " + describe(config_));
        return std::nullopt;
    }

    // --resume-run on another boot: the attempt still marked running died with the host.
    std::optional<int> judge_lost_host(const json& state) {
        const std::string boot = state.value("boot_id", "");
        if (boot.empty() || boot_id_.empty() || boot == boot_id_ || report_.attempts.empty()) return std::nullopt;
        AttemptRecord& lost = report_.attempts.back();
        if (lost.outcome != "running") return std::nullopt;
        oom::HostLossFacts facts = read_host_loss_facts(dir_, lost.n);
        if (state.contains("memory_floor_bytes") && state["memory_floor_bytes"].is_number())
            facts.warning_gb = 2 * state["memory_floor_bytes"].get<double>() / kGB;
        facts.earlier_losses = static_cast<int>(std::count_if(report_.attempts.begin(), report_.attempts.end() - 1, [&](const AttemptRecord& a) {
            return a.outcome == "host-lost" && to_json(a.config) == to_json(lost.config);
        }));
        const oom::HostLossJudgement judged = oom::judge_host_loss(facts);
        lost.notes.push_back("the host was lost during this attempt (boot " + boot + ", now " + boot_id_ + ")");
        events_.write("host-lost", {{"attempt", lost.n}, {"previous_boot", boot}, {"memory", judged.memory},
                                    {"oom", judged.oom}, {"evidence", judged.evidence}});
        spdlog::warn("attempt {} was lost with the host: {}", lost.n, judged.evidence);
        if (!judged.oom) {
            lost.outcome = "host-lost";
            lost.evidence = judged.evidence;
            pending_rung_.reset();
            save();
            return std::nullopt;
        }
        oom::Verdict verdict;
        verdict.oom = true;
        verdict.kind = oom::Kind::host_lost_memory;
        verdict.confidence = oom::Confidence::probable;
        verdict.evidence = verdict.reason = judged.evidence;
        const int code = record_oom(lost, verdict);
        return code >= 0 ? std::optional(code) : std::nullopt;
    }

    // --max-attempts counts the attempts the ladder (or --on-hang relaunch) asked for; an attempt
    // cut short because sparkguard itself was stopped is not one. Used up, the run ends the way the
    // last attempt did.
    std::optional<int> attempts_used_up() {
        const auto counted = std::count_if(report_.attempts.begin(), report_.attempts.end(),
                                           [](const AttemptRecord& a) { return a.outcome != "interrupted"; });
        if (counted < options_.max_attempts) return std::nullopt;
        const std::string limit = std::to_string(options_.max_attempts) + " attempts (--max-attempts)";
        if (!report_.attempts.empty() && report_.attempts.back().outcome == "stalled")
            return finish("stalled", kExitStalled, "the trainer still hangs after " + limit);
        return finish("oom-exhausted", kExitOomExhausted, "still out of memory after " + limit);
    }

    // Before the first launch: the budget check (an exit code when the run is blocked), the
    // environment checks into env-report.json, and the telemetry.
    std::optional<int> prelaunch() {
        say_what_the_ladder_can_reach();
        std::optional<int> blocked;
        std::optional<accounting::PlanRequest> request;
        if (options_.workload) {
            PrelaunchPlan pre = plan_first_attempt(*options_.workload, options_.workload_named_model, config_);
            if (pre.plan && locate_srun(options_.command)) pre.plan = per_rank(with_smallest_node(*pre.plan));
            if (pre.plan) {
                blocked = check_budget(*pre.plan);
                request = request_for(*pre.request, config_);  // with --fit's configuration
            } else {
                spdlog::info("no pre-launch estimate: {}", pre.skipped_because);
                events_.write("plan", {{"skipped", pre.skipped_because}});
            }
        }
        write_env_report(request);
        return blocked;
    }

    // Under srun every node must hold its rank: the plan is judged against the smallest node's
    // budget, each node's read by `sparkguard node --probe` in one srun step before the first launch.
    accounting::Plan with_smallest_node(accounting::Plan plan) {
        auto nodes = probe_node_budgets(options_.command, kNodeProbeSeconds);
        if (!nodes) {
            spdlog::warn("the nodes' budgets could not be read ({}); the estimate is judged against this machine's", nodes.error().message);
            events_.write("node-budgets", {{"error", nodes.error().message}});
            return plan;
        }
        json list = json::array();
        for (const auto& n : *nodes)
            list.push_back({{"host", n.host}, {"platform", n.platform}, {"budget_gb", n.budget_gb}, {"source", n.source}});
        const auto smallest = std::min_element(nodes->begin(), nodes->end(),
                                               [](const NodeBudget& a, const NodeBudget& b) { return a.budget_gb < b.budget_gb; });
        events_.write("node-budgets", {{"nodes", list}, {"smallest", smallest->host}});
        spdlog::info("budget: the smallest of {} nodes', {}: {} GB ({})", nodes->size(), smallest->host,
                     fixed(smallest->budget_gb, 1), smallest->source);
        plan.budget.budget_gb = smallest->budget_gb;
        plan.budget.source = smallest->host + ", the smallest of " + std::to_string(nodes->size()) + " nodes: " + smallest->source;
        return accounting::replan(plan, plan.workload);
    }

    // Under srun the estimate is one rank's: a full replica each (DDP), unless the command or its
    // configs shard the states (FSDP, ZeRO-3) over the ranks; on unified memory a node's ranks
    // share its pool. The plan's assumptions say which.
    accounting::Plan per_rank(accounting::Plan plan) {
        const SrunLayout srun = srun_layout(options_.command);
        const preflight::ClusterSettings cluster =
            preflight::read_cluster_settings(options_.command, {}, preflight::read_config_files(options_.command));
        const long long local = cluster.local_world_size.value_or(1);  // torchrun's --nproc_per_node
        long long per_node = srun.tasks_per_node.value_or(1);
        if (!srun.tasks_per_node && srun.tasks && srun.nodes) per_node = (*srun.tasks + *srun.nodes - 1) / *srun.nodes;
        const long long tasks = srun.tasks ? *srun.tasks : srun.nodes.value_or(1) * per_node;
        const long long ranks = tasks * local, ranks_per_node = per_node * local;
        const std::string count = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
        accounting::Workload workload = plan.workload;
        if (!cluster.sharded_by.empty() && ranks > 1) {
            workload.shards = ranks;
            plan.assumptions.push_back("per rank, sharded (" + cluster.sharded_by + "): weights, gradients and optimizer states "
                                       "split over " + count + ", two layers' weights gathered at a time (a model of "
                                       "FSDP/ZeRO-3 not yet checked against measured runs)");
        } else {
            plan.assumptions.push_back("per rank, DDP assumed: each of " + count + " holds a full replica (no FSDP or "
                                       "ZeRO-3 in the command or its config files)");
        }
        if (ranks_per_node > 1 && plan.platform.unified) {
            plan.budget.budget_gb /= static_cast<double>(ranks_per_node);
            plan.budget.source += ", shared by the node's " + std::to_string(ranks_per_node) + " ranks";
        }
        return accounting::replan(plan, workload);
    }

    std::optional<int> check_budget(accounting::Plan plan) {
        if (options_.fit) {
            auto fitted = fitted_config(plan, config_);
            if (!fitted)
                return finish("blocked", kExitBlocked, "--fit: no packing length and batch fit the budget" +
                                                           accounting::alternatives_sentence(accounting::what_would_fit(plan)));
            spdlog::info("--fit: starting from {}", describe(*fitted));
            config_ = *fitted;
            plan = accounting::replan(plan, workload_for(plan.workload, config_));
        }
        report_.plan = accounting::to_json(plan);
        if (plan.bf16_weights_exceed_budget())
            bf16_exceeds_ = "the estimator says bf16 weights alone (" + fixed(plan.estimate.bf16_weights_gb, 1) +
                            " GB) exceed the budget (" + fixed(plan.budget.budget_gb, 1) + " GB)";
        const std::string verdict(accounting::name(plan.verdict));
        events_.write("plan", {{"verdict", verdict}, {"peak_gb", plan.estimate.peak_gb}, {"budget_gb", plan.budget.budget_gb}});
        spdlog::info("pre-launch estimate: peak {} GB of {} GB budget: {}", fixed(plan.estimate.peak_gb, 1),
                     fixed(plan.budget.budget_gb, 1), verdict);
        plan_ = plan;
        if (plan.verdict != accounting::Verdict::does_not_fit) return std::nullopt;
        if (options_.force) {
            spdlog::warn("the estimate says this does not fit; launching anyway (--force)");
            return std::nullopt;
        }
        return finish("blocked", kExitBlocked,
                      "the estimate (" + fixed(plan.estimate.peak_gb, 1) + " GB peak) does not fit the budget (" +
                          fixed(plan.budget.budget_gb, 1) + " GB); see `sparkguard plan`, or --force to launch anyway, "
                          "--fit to start from what fits");
    }

    // Before the first launch, in one sentence each: what sparkguard could not read, and a ladder
    // that could not change anything the trainer reads.
    void say_what_the_ladder_can_reach() {
        for (const auto& note : knobs_.notes) {
            spdlog::warn("{}", note);
            events_.write("profile-note", {{"note", note}});
        }
        const LadderFacts f = facts();
        if (f.seq_unreachable.empty() || f.batch_unreachable.empty() ||
            (config_.method == Method::qlora && f.method_unreachable.empty()))
            return;
        const std::string text =
            "no rung of the OOM ladder can change what this trainer runs (profile '" + profile_.name + "': " +
            f.batch_unreachable + "), so a relaunch would repeat the same configuration; put {batch_size}, {grad_accum} "
            "and {seq_len} placeholders in the command, read $SPARKGUARD_BATCH_SIZE, $SPARKGUARD_GRAD_ACCUM and "
            "$SPARKGUARD_SEQ_LEN in the script, or name the trainer with --profile";
        spdlog::warn("{}", text);
        events_.write("ladder-unreachable", {{"profile", profile_.name}, {"why", text}});
    }

    void write_env_report(const std::optional<accounting::PlanRequest>& request) {
        env_report_.emplace(session_, dir_, events_, preflight::PreflightRequest{request, options_.command, true});
        platform_ = env_report_->platform();
    }

    int run() {
        start_telemetry();
        start_memory_guard();
        while (true) {
            if (auto sig = session_.received_signal()) return finish("interrupted", 128 + *sig, "stopped by " + signal_name(*sig) + " before the next launch");
            if (auto used_up = attempts_used_up()) return *used_up;
            AttemptRecord& record = begin_attempt();
            AttemptExit exit;
            try {
                exit = session_.run(spec_, *this);
            } catch (const Failure& e) {
                record.outcome = "failed";
                record.exit_code = e.exit_code();
                record.ended = rfc3339_now();
                finish("failed", e.exit_code(), e.what());
                throw;
            }
            log_.flush();
            const int code = end_attempt(record, exit);
            remember(record);
            if (code >= 0) return code;
        }
    }

    void on_started(pid_t pid) override {
        leader_ = pid;
        watch_.emplace(oom::KernelWatch::start(pid));
        seen_pids_ = {pid};
        events_.write("launch", {{"attempt", report_.attempts.size()}, {"pid", pid}, {"argv", spec_.argv},
                                 {"config", to_json(config_)}});
    }

    void on_output_chunk_begin(Stream) override {
        log_.stamp_now();
        last_output_ = monotonic_seconds();
    }

    // The hot path: every line of a chatty trainer. It only goes to train.log; the step tracker
    // reads train.log's new lines once a tick, the classifier its end once the trainer is dead.
    void on_line(Stream stream, std::string_view line, bool complete) override {
        log_.line(stream == Stream::out ? (complete ? "stdout" : "stdout+") : (complete ? "stderr" : "stderr+"), line);
    }

    void on_output_chunk_done(Stream, std::string_view) override { log_.flush(); }

    void on_tick() override {
        read_new_output();
        check_resumed();
        for (pid_t pid : session_.tree()) seen_pids_.insert(pid);
        if (watch_) watch_->poll();
        MemorySample sample;
        last_meminfo_.reset();
        if (auto mem = read_meminfo()) {
            sample.total = mem->total;
            sample.available = mem->available;
            last_meminfo_ = *mem;
        }
        for (pid_t pid : session_.tree()) sample.tree_rss += rss_bytes(pid);
        peak_used_ = std::max(peak_used_, sample.total - sample.available);
        peak_rss_ = std::max(peak_rss_, sample.tree_rss);
        recent_.push_back(sample);
        if (recent_.size() > 5) recent_.pop_front();
        record_telemetry(sample);
        watch_for_stall();
        track_step_rate();
        if (status_) draw_status();
    }

private:
    AttemptRecord& begin_attempt() {
        AttemptRecord record;
        record.n = static_cast<int>(report_.attempts.size()) + 1;
        record.rung = pending_rung_;
        record.skipped_rungs = std::move(pending_skips_);
        pending_skips_.clear();
        record.config = config_;
        if (plan_) record.measured["estimated_peak_gb"] = accounting::replan(*plan_, workload_for(plan_->workload, config_)).estimate.peak_gb;
        if (config_.drop_caches) {
            const DropCachesResult dropped = drop_caches();
            record.notes.push_back(dropped.ok ? "page cache dropped before launch (" + dropped.how + ")"
                                              : "drop caches failed: " + dropped.error);
            events_.write("drop-caches", {{"attempt", record.n}, {"ok", dropped.ok}, {"how", dropped.how},
                                          {"error", dropped.ok ? json() : json(dropped.error)}});
        }
        if (!first_launch_) first_launch_ = fs::file_time_type::clock::now() - std::chrono::seconds(2);
        std::optional<std::string> resume_from = find_resume_point(record);
        const fs::path attempt_dir = dir_.path / ("attempt-" + std::to_string(record.n));
        LaunchCommand command = command_.render({config_, resume_from, options_.output_dir, attempt_dir});
        if (command.config_copy)
            record.notes.push_back("the trainer reads a changed copy of its config: " + command.config_copy->string() +
                                   " (" + knobs_.config_file.value_or("?") + " is untouched)");
        command.env.emplace_back("SPARKGUARD_ATTEMPT", std::to_string(record.n));
        command.env.emplace_back("SPARKGUARD_RUN_DIR", fs::absolute(dir_.path).string());
        if (auto started = parse_rfc3339(report_.started))  // sparkguard node's thermal.csv counts from it too
            command.env.emplace_back("SPARKGUARD_RUN_STARTED", fixed(started->epoch_s, 3));
        record.argv = command.argv;
        record.env = command.env;
        record.resumed_from = resume_from;
        record.started = rfc3339_now();
        spec_ = AttemptSpec{};
        spec_.argv = command.argv;
        spec_.env = command.env;
        spec_.grace_seconds = options_.grace_seconds;
        spec_.tick_seconds = options_.tick_seconds;
        spec_.oom_score_adj = kTrainerOomScoreAdj;
        arm_memory_guard(record.n);

        steps_ = std::make_unique<telemetry::StepTracker>(step_patterns_);
        step_offsets_.clear();
        watch_.reset();
        recent_.clear();
        peak_used_ = peak_rss_ = 0;
        stall_.reset();
        first_step_.reset();
        steps_per_second_.reset();
        resume_checked_ = false;
        first_epoch_.reset();
        last_output_ = monotonic_seconds();

        std::string headline = "attempt " + std::to_string(record.n) +
                               (record.rung ? " (rung " + std::string(to_string(*record.rung)) + ")" : "") + ": " +
                               describe(config_) + (resume_from ? ", resuming from " + *resume_from : "");
        spdlog::info("{}", headline);
        note(headline);
        attempt_log_start_ = scanned_to_ = log_.size();
        report_.attempts.push_back(std::move(record));
        save();
        return report_.attempts.back();
    }

    std::optional<std::string> find_resume_point(AttemptRecord& record) {
        if (record.n == 1) return std::nullopt;
        resume_past_.reset();
        if (!profile_.resume.supported) {
            record.notes.push_back(profile_.resume.note.empty() ? "the trainer cannot resume: restarting from step 0" : profile_.resume.note);
            return std::nullopt;
        }
        const std::optional<std::string> output_dir = options_.output_dir ? options_.output_dir : knobs_.output_dir;
        if (!output_dir) {
            record.notes.push_back("no output directory known (give --output-dir): restarting from step 0");
            return std::nullopt;
        }
        CheckpointFilter filter{first_launch_, std::nullopt};
        if (knobs_.resume) filter.also = *knobs_.resume;
        const bool torchtune = profile_.resume.layout == CheckpointLayout::torchtune;
        auto checkpoint = torchtune ? newest_torchtune_checkpoint(*output_dir, &record.notes, filter)
                                    : newest_complete_checkpoint(*output_dir, &record.notes, filter);
        if (!checkpoint) {
            record.notes.push_back("no complete checkpoint written by this run in " + *output_dir + ": restarting from step 0");
            return std::nullopt;
        }
        if (!torchtune) {
            TrainerStateOverrides overrides{config_.batch_size, knobs_.save_steps, knobs_.logging_steps, knobs_.eval_steps};
            auto changes = rewrite_trainer_state(checkpoint->path, overrides);
            if (!changes) {
                record.notes.push_back("could not update trainer_state.json: " + changes.error().message);
            } else if (!changes->empty()) {
                record.notes.push_back(checkpoint->path.string() + "/trainer_state.json: " + join(*changes, ", ") +
                                       " (original kept as trainer_state.json.sparkguard-orig)");
            }
        }
        // The check that it happened: the first step logged must be past the checkpoint's (or, with
        // an epoch_pattern, the first epoch past the epochs it completed).
        resume_past_ = torchtune ? checkpoint->epoch.value_or(0) : checkpoint->step;
        events_.write("resume", {{"attempt", record.n}, {"checkpoint", checkpoint->path.string()}, {"step", checkpoint->step}});
        return checkpoint->path.string();
    }

    // A resume is claimed only once the trainer's first logged step is past the checkpoint's.
    void check_resumed() {
        const bool by_epoch = epoch_pattern_.has_value();
        const std::optional<long long> first = by_epoch ? first_epoch_ : steps_->first_step();
        if (!resume_past_ || resume_checked_ || !first) return;
        resume_checked_ = true;
        AttemptRecord& record = report_.attempts.back();
        if (*first > *resume_past_) {
            events_.write("resumed", {{"attempt", record.n}, {"checkpoint", record.resumed_from.value_or("")}, {by_epoch ? "first_epoch" : "first_step", *first}});
            return;
        }
        const std::string text = "did not resume: restarted at " + std::string(by_epoch ? "epoch " : "step ") +
                                 std::to_string(*first) + " although pointed at " + record.resumed_from.value_or("?");
        spdlog::warn("attempt {} {}", record.n, text);
        note(text);
        events_.write("resume-failed", {{"attempt", record.n}, {"checkpoint", record.resumed_from.value_or("")},
                                        {by_epoch ? "first_epoch" : "first_step", *first}});
        record.notes.push_back(text);
        record.resume_requested = record.resumed_from;
        record.resumed_from.reset();
        save();
    }

    // Feeds the step tracker what the trainer wrote since the last tick (at most its last 64 KB:
    // steps only go forward, the newest is what counts), remembering where in train.log the
    // latest two step changes were read.
    void read_new_output() {
        log_.flush();
        const std::uint64_t end = log_.size();
        if (end <= scanned_to_) return;
        const std::uint64_t from = std::max(scanned_to_, end > kTickWindow ? end - kTickWindow : 0);
        const auto before = steps_->last_step();
        const double now = monotonic_seconds();
        for_each_train_log_line(log_.path(), from, end, [&](const TrainLogLine& line) {
            if (!line.from_trainer()) return;
            steps_->feed(line.text, now);
            std::match_results<std::string_view::const_iterator> m;
            if (epoch_pattern_ && !first_epoch_ && std::regex_search(line.text.begin(), line.text.end(), m, *epoch_pattern_))
                first_epoch_ = std::stoll(m[1].str());
        });
        if (steps_->last_step() != before) {
            step_offsets_.push_back(from);
            if (step_offsets_.size() > 2) step_offsets_.pop_front();
        }
        scanned_to_ = end;
    }

    // The trainer is dead: its end of train.log goes through the same classifier as `sparkguard
    // diagnose`, from the second-to-last step on (evidence two steps old was survived), with what
    // the kernel said.
    oom::LogDiagnosis judge(const AttemptExit& exit) {
        const std::uint64_t end = log_.size();
        std::uint64_t from = step_offsets_.size() == 2 ? std::max(attempt_log_start_, step_offsets_.front()) : attempt_log_start_;
        from = std::max(from, end > kJudgedTail ? end - kJudgedTail : 0);
        oom::LogDiagnoser diagnoser(step_patterns_);
        for_each_train_log_line(log_.path(), from, end, [&](const TrainLogLine& line) {
            if (!line.from_trainer()) return;
            diagnoser.chunk(line.text);
            diagnoser.chunk("\n");
        });
        const oom::ExitStatus status = exit.term_signal ? oom::ExitStatus::killed(*exit.term_signal)
                                                        : oom::ExitStatus::exited(exit.exit_code);
        std::set<int> pids(seen_pids_.begin(), seen_pids_.end());
        oom::LogDiagnosis diagnosis = diagnoser.finish(status, watch_ ? watch_->collect(pids) : oom::KernelEvidence{});
        std::vector<oom::MemoryReading> recent;
        for (const auto& s : recent_) recent.push_back({s.total, s.available});
        diagnosis.verdict = oom::judge_death(std::move(diagnosis.verdict), status, recent, steps_->training_started());
        return diagnosis;
    }

    // The attempt's last output lines, read back from train.log.
    std::vector<std::string> last_output_lines(size_t count) {
        log_.flush();
        const std::uint64_t end = log_.size();
        std::deque<std::string> lines;
        for_each_train_log_line(log_.path(), std::max(attempt_log_start_, end > 16384 ? end - 16384 : 0), end,
                                [&](const TrainLogLine& line) {
                                    if (!line.from_trainer()) return;
                                    lines.emplace_back(line.text.substr(0, 1024));
                                    if (lines.size() > count) lines.pop_front();
                                });
        return {lines.begin(), lines.end()};
    }

    // This machine's history keeps what the attempt measured against what its plan estimated.
    void remember(const AttemptRecord& record) {
        if (!plan_ || record.outcome == "interrupted") return;
        const auto plan = accounting::replan(*plan_, workload_for(plan_->workload, record.config));
        if (auto problem = accounting::record_attempt(plan, record.measured, record.outcome == "oom", record.last_step, profile_.name))
            spdlog::warn("history not written: {}", *problem);
    }

    // Returns the exit code when the run is over, -1 to go on with the next attempt.
    int end_attempt(AttemptRecord& record, const AttemptExit& exit) {
        read_new_output();
        check_resumed();
        if (resume_past_ && !resume_checked_)
            record.notes.push_back("resume not confirmed: the attempt logged no progress past the checkpoint before it ended");
        record.ended = exit.died_at;
        record.exit_code = exit.exit_code;
        record.last_step = steps_->last_step();
        record.measured["peak_pool_used_gb"] = peak_used_ / kGB;
        record.measured["peak_trainer_rss_gb"] = peak_rss_ / kGB;
        if (guard_) record.measured["memory_guard"] = guard_->measured();
        events_.write("exit", {{"attempt", record.n}, {"exit_code", exit.exit_code}, {"died", exit.died_at},
                               {"last_step", record.last_step ? json(*record.last_step) : json()}});

        if (exit.forwarded_signal) {
            record.outcome = "interrupted";
            return finish("interrupted", 128 + *exit.forwarded_signal,
                          "stopped by " + signal_name(*exit.forwarded_signal) + "; the trainer's tree was stopped");
        }
        if (stall_ && exit.stopped_on_request) return end_stalled(record);
        if (guard_ && guard_->fired()) return end_guarded(record);
        if (exit.exit_code == 0 && !exit.term_signal) {
            record.outcome = "succeeded";
            return finish("succeeded", kExitOk, "succeeded on attempt " + std::to_string(record.n));
        }
        const oom::LogDiagnosis diagnosis = judge(exit);
        const oom::Verdict& verdict = diagnosis.verdict;
        if (!verdict.oom && record.argv != options_.command)
            if (auto refused = argument_error(last_output_lines(40))) return end_refused(record, exit, *refused);
        if (diagnosis.srun_cause) note_srun_cause(record, *diagnosis.srun_cause, exit);
        if (const auto& r = diagnosis.node_report; r && verdict.evidence == r->line) {  // the node's account decided
            if (r->task || record.node != r->node) record.rank = r->task;
            record.node = r->node;
        }
        if (!verdict.oom && diagnosis.stopped_by) {
            // Slurm's time limit, scancel, a preemption: the step was stopped from outside. Nothing to
            // relaunch here; a requeued job continues with --resume-run.
            record.outcome = "interrupted";
            record.evidence = *diagnosis.stopped_by;
            events_.write("stopped-from-outside", {{"attempt", record.n}, {"line", *diagnosis.stopped_by}});
            return finish("interrupted", exit.exit_code,
                          "stopped from outside the trainer (" + *diagnosis.stopped_by + "); continue it with --resume-run " +
                              dir_.path.string());
        }
        if (!verdict.oom) {
            const int code = diagnosis.srun_cause ? diagnosis.srun_cause->exit_code() : exit.exit_code;
            record.outcome = "failed";
            record.exit_code = code;
            record.evidence = verdict.evidence.empty() ? std::nullopt : std::optional(verdict.evidence);
            return finish("failed", code,
                          "the trainer failed (exit " + std::to_string(code) + ") for a reason that is not OOM: " +
                              (verdict.reason.empty() ? "see train.log" : verdict.reason));
        }
        return record_oom(record, verdict);
    }

    // srun returns the status of the last task it saw end; the first one is the death's cause.
    void note_srun_cause(AttemptRecord& record, const oom::SrunTaskEnd& cause, const AttemptExit& exit) {
        record.node = cause.node;
        record.rank = cause.tasks;
        record.notes.push_back("srun: task " + cause.tasks + " on " + cause.node + " ended first (" + cause.line +
                               "); srun itself returned " + std::to_string(exit.exit_code));
        events_.write("srun-cause", {{"attempt", record.n}, {"node", cause.node}, {"tasks", cause.tasks},
                                     {"line", cause.line}, {"srun_exit_code", exit.exit_code}});
    }

    // The trainer's parser rejected what sparkguard wrote: that is the profile's fault, and
    // relaunching would only repeat it.
    int end_refused(AttemptRecord& record, const AttemptExit& exit, const std::string& line) {
        record.outcome = "rewrite-refused";
        record.evidence = line;
        events_.write("rewrite-refused", {{"attempt", record.n}, {"argv", record.argv}, {"error", line}});
        return finish("rewrite-refused", exit.exit_code,
                      "the trainer refused sparkguard's rewrite of its command (" + line + "); attempt " +
                          std::to_string(record.n) + " ran: " + reproduce_line(record.argv, {}) +
                          ". This is trainer profile '" + profile_.name + "' (" + profile_.source.string() +
                          ") writing something this trainer version does not take: fix the profile or choose another with --profile");
    }

    int record_oom(AttemptRecord& record, const oom::Verdict& verdict) {
        record.outcome = "oom";
        record.oom_kind = std::string(oom::kind_name(verdict.kind));
        if (verdict.phase) record.phase = std::string(oom::phase_name(*verdict.phase));
        if (verdict.confidence) record.confidence = std::string(oom::confidence_name(*verdict.confidence));
        record.evidence = verdict.evidence.empty() ? verdict.reason : verdict.evidence;
        events_.write("oom", {{"attempt", record.n}, {"kind", *record.oom_kind}, {"phase", record.phase ? json(*record.phase) : json()},
                              {"evidence", verdict.evidence}, {"reason", verdict.reason}});
        spdlog::warn("attempt {} ran out of memory ({}{}): {}", record.n, *record.oom_kind,
                     record.phase ? ", during " + std::string(*record.phase == "load" ? "model load" : "training") : "",
                     *record.evidence);
        return climb();
    }

    void start_telemetry() {
        if (platform_.empty())  // --resume-run: the first sparkguard's preflight said
            if (auto env = read_file(dir_.env_report())) {
                const nlohmann::json report = nlohmann::json::parse(*env, nullptr, false);
                if (report.is_object()) platform_ = report.value("platform", "");
            }
        const auto started = parse_rfc3339(report_.started);
        telemetry_.emplace(session_, dir_.thermal(), options_.thermal_interval, platform_,
                           started ? started->epoch_s : epoch_seconds());
    }

    void record_telemetry(const MemorySample& sample) {
        TelemetryContext context;
        context.attempt = static_cast<int>(report_.attempts.size());
        if (pending_rung_) context.rung = std::string(to_string(*pending_rung_));
        context.step = steps_->last_step();
        context.trainer_rss_gb = sample.tree_rss / kGB;
        for (const auto& event : telemetry_->tick(context, last_meminfo_)) {
            events_.write(event.name, event.fields);
            spdlog::info("{}: {}", event.name, event.fields.value("message", event.fields.dump()));
        }
    }

    // Steps per second over the attempt, from the first step seen to the latest.
    void track_step_rate() {
        auto step = steps_->last_step();
        auto when = steps_->last_change_time();
        if (!step || !when) return;
        if (!first_step_) first_step_ = std::make_pair(*step, *when);
        if (*when > first_step_->second && *step > first_step_->first)
            steps_per_second_ = static_cast<double>(*step - first_step_->first) / (*when - first_step_->second);
    }

    void draw_status() {
        StatusInfo info;
        info.attempt = static_cast<int>(report_.attempts.size());
        if (pending_rung_) info.rung = std::string(to_string(*pending_rung_));
        info.step = steps_->last_step();
        info.total_steps = steps_->total_steps();
        info.steps_per_second = steps_per_second_;
        if (telemetry_) {
            const auto gpu = telemetry_->latest_gpu();
            info.gpu_temp_c = gpu.temp_c;
            info.gpu_power_w = gpu.power_w;
        }
        if (!recent_.empty() && recent_.back().total > 0) {
            info.pool_used_gb = (recent_.back().total - recent_.back().available) / kGB;
            info.pool_total_gb = recent_.back().total / kGB;
        }
        const double now = monotonic_seconds();
        info.elapsed_seconds = now - run_started_;
        info.quiet_seconds = now - std::max(last_output_, steps_->last_change_time().value_or(0));
        info.stalled = stall_.has_value();
        status_->draw(info);
    }

    // Every tick: has the trainer been silent and stepless for --stall-timeout?
    void watch_for_stall() {
        if (options_.stall_timeout <= 0 || stall_) return;
        const double now = monotonic_seconds();
        const double active = std::max(last_output_, steps_->last_change_time().value_or(0));
        if (now - active < options_.stall_timeout) return;
        oom::StallReadings readings = read_stall(session_.tree(), leader_);
        readings.quiet_seconds = now - active;
        for (const auto& s : recent_)
            if (s.total > 0)
                readings.min_available_fraction = std::min(readings.min_available_fraction.value_or(1.0), s.available / s.total);
        stall_ = Stall{oom::judge_stall(readings), readings, ""};
        write_stall_dump(*stall_);
        spdlog::warn("the trainer has stalled ({}); stopping it", stall_->judgement.evidence);
        session_.request_stop("stalled: " + stall_->judgement.evidence);
    }

    // RUN_DIR/stall-N.txt, for the morning read.
    void write_stall_dump(Stall& stall) {
        const int n = static_cast<int>(report_.attempts.size());
        const std::string text = format_stall_report(n, stall.judgement, stall.readings, last_output_lines(20),
                                                     py_spy_dumps(stall.readings.processes));
        const fs::path path = dir_.path / ("stall-" + std::to_string(n) + ".txt");
        if (auto written = write_file_atomic(path, text); !written) spdlog::error("{}", written.error().message);
        stall.dump = path.string();
    }

    int end_stalled(AttemptRecord& record) {
        const Stall& stall = *stall_;
        record.measured["stall"] = to_json(stall.readings);
        record.notes.push_back("stall details: " + stall.dump);
        events_.write("stall", {{"attempt", record.n}, {"memory", stall.judgement.memory},
                                {"evidence", stall.judgement.evidence}, {"details", stall.dump}});
        if (stall.judgement.memory) {
            oom::Verdict verdict;
            verdict.oom = true;
            verdict.kind = oom::Kind::memory_stall;
            verdict.phase = steps_->training_started() ? oom::Phase::train : oom::Phase::load;
            verdict.confidence = oom::Confidence::probable;
            verdict.reason = stall.judgement.evidence;
            return record_oom(record, verdict);
        }
        record.outcome = "stalled";
        record.evidence = stall.judgement.evidence;
        if (!options_.relaunch_on_hang)
            return finish("stalled", kExitStalled,
                          "the trainer hung: " + stall.judgement.evidence + " (details in " + stall.dump +
                              "); --on-hang relaunch would resume it instead");
        spdlog::warn("the trainer hung; relaunching it with the same configuration (--on-hang relaunch)");
        pending_rung_.reset();
        save();
        return -1;
    }

    // The memory guard's floor for the whole run: --memory-floor, else the platform's default.
    void start_memory_guard() {
        if (has_node_guard(options_.command)) {  // srun's tasks are not in this sparkguard's tree
            spdlog::info("memory guard: on each node, by sparkguard node (files in {})", (dir_.path / "nodes").string());
            return;
        }
        auto mem = read_meminfo();
        memory_floor_ = oom::resolve_floor(options_.memory_floor, preflight::is_unified_platform(platform_), mem ? mem->total : 0);
        if (!memory_floor_) return;
        const std::string locked = lock_own_memory();
        spdlog::info("memory guard: the trainer is killed when MemAvailable stays under {} GB (sparkguard's memory {})",
                     fixed(*memory_floor_ / kGB, 2), locked);
    }

    void arm_memory_guard(int attempt) {
        guard_.reset();
        if (!memory_floor_) return;
        guard_ = sg::arm_memory_guard(*memory_floor_, events_, attempt, session_, watch_, spec_);
    }

    int end_guarded(AttemptRecord& record) {
        oom::Verdict verdict;
        verdict.oom = true;
        verdict.kind = oom::Kind::memory_guard;
        verdict.phase = steps_->training_started() ? oom::Phase::train : oom::Phase::load;
        verdict.confidence = oom::Confidence::certain;
        verdict.evidence = guard_->evidence();
        verdict.reason = "sparkguard's memory guard killed the trainer before the pool ran dry";
        return record_oom(record, verdict);
    }

    int climb() {
        auto step = ladder_.next(config_, facts());
        if (auto* exhausted = std::get_if<LadderExhausted>(&step)) {
            report_.skipped_at_end = exhausted->skipped;
            for (const auto& s : exhausted->skipped) log_skip(s);
            return finish("oom-exhausted", kExitOomExhausted,
                          "still out of memory after the last rung (" + describe(config_) +
                              "). What is left: a smaller model, a lower LoRA rank or fewer target modules, "
                              "8-bit optimizer states, CPU offload, or more machines (DDP/FSDP across two Sparks)");
        }
        auto& move = std::get<LadderMove>(step);
        for (const auto& s : move.skipped) log_skip(s);
        spdlog::info("next rung: {} ({})", to_string(move.rung), move.change);
        events_.write("rung", {{"rung", to_string(move.rung)}, {"change", move.change}, {"config", to_json(move.config)}});
        config_ = move.config;
        pending_rung_ = move.rung;
        pending_skips_ = move.skipped;
        save();
        return -1;
    }

    // sparkguard's own line in train.log, with its own timestamp.
    void note(const std::string& text) {
        log_.stamp_now();
        log_.line("sparkguard", text);
        log_.flush();
    }

    void log_skip(const SkippedRung& s) {
        spdlog::info("skipping rung {}: {}", to_string(s.rung), s.why);
        events_.write("skip", {{"rung", to_string(s.rung)}, {"why", s.why}});
    }

    LadderFacts facts() const {
        LadderFacts f;
        f.drop_caches_why_not = drop_caches_blocker();
        f.can_drop_caches = f.drop_caches_why_not.empty();
        if (!report_.attempts.empty()) f.last_oom_kind = report_.attempts.back().oom_kind;
        f.seq_unreachable = command_.unreachable(Knob::seq_len);
        f.batch_unreachable = command_.unreachable(Knob::batch_size);
        f.grad_accum_unreachable = command_.unreachable(Knob::grad_accum);
        f.method_unreachable = command_.unreachable(Knob::method);
        if (config_.model) {
            f.model_prequantized = is_prequantized(*config_.model);
            f.bf16_model = options_.bf16_model ? options_.bf16_model : known_bf16_original(*config_.model);
        }
        f.bf16_weights_exceed_budget = bf16_exceeds_;
        return f;
    }

    int finish(const std::string& outcome, int exit_code, const std::string& summary) {
        report_.outcome = outcome;
        report_.exit_code = exit_code;
        report_.summary = summary;
        report_.ended = rfc3339_now();
        report_.final_config = config_;
        if (telemetry_) report_.telemetry = telemetry_->summary();
        summarize_nodes();
        LaunchCommand final_command = command_.render({config_, std::nullopt, options_.output_dir, dir_.path / "final"});
        report_.reproduce = reproduce_line(final_command.argv, final_command.env);
        if (env_report_) env_report_->settle();
        events_.write("end", {{"outcome", outcome}, {"exit_code", exit_code}, {"summary", summary}});
        note(outcome + ": " + summary);
        save();
        if (notifier_) notifier_->drain();  // the end of the run is news too: let the hooks deliver it
        if (outcome == "succeeded")
            spdlog::info("{}; report: {}", summary, dir_.report().string());
        else
            spdlog::error("{}; report: {}", summary, dir_.report().string());
        return exit_code;
    }

    // Under srun, each node's telemetry (sparkguard node's nodes/<host>/thermal.csv).
    void summarize_nodes() {
        std::vector<std::string> warnings;
        const auto nodes = read_node_thermal(dir_.path, warnings);
        for (const auto& warning : warnings) spdlog::warn("{}", warning);
        if (nodes.empty()) return;
        report_.nodes = json::object();
        for (const auto& [host, rows] : nodes) report_.nodes[host] = telemetry::summarize_rows(rows, platform_);
    }

    // report.json for people; state.json for --resume-run. Both atomic.
    void save() {
        if (auto written = write_file_atomic(dir_.report(), to_json(report_).dump(2) + "\n"); !written)
            spdlog::error("{}", written.error().message);
        json state = {{"version", 1},
                      {"options", to_json(options_)},
                      {"profile", profile_.name},
                      {"cwd", fs::current_path().string()},
                      {"config", to_json(config_)},
                      {"ladder_position", ladder_.position()},
                      {"pending_rung", pending_rung_ ? json(to_string(*pending_rung_)) : json()},
                      {"bf16_exceeds_budget", bf16_exceeds_ ? json(*bf16_exceeds_) : json()},
                      {"first_launch_unix", first_launch_ ? json(to_unix_seconds(*first_launch_)) : json()},
                      {"boot_id", boot_id_},
                      {"memory_floor_bytes", memory_floor_ ? json(*memory_floor_) : json()}};
        if (auto written = write_file_atomic(dir_.state(), state.dump(2) + "\n"); !written)
            spdlog::error("{}", written.error().message);
    }

    RunOptions options_;
    RunDir dir_;
    TrainerProfile profile_;
    TrainerCommand command_;
    CommandKnobs knobs_;
    TrainConfig config_;
    Ladder ladder_;
    RunReport report_;
    std::optional<Rung> pending_rung_;
    std::vector<SkippedRung> pending_skips_;
    std::optional<std::string> bf16_exceeds_;  // the estimator's proof, for the bf16-lora rung
    std::optional<accounting::Plan> plan_;     // the pre-launch estimate, when there was one
    std::string platform_;                     // env-report.json's platform
    Session session_;
    std::optional<TelemetryRecorder> telemetry_;
    std::optional<EnvReportWriter> env_report_;  // G1's probe answers while the first attempt runs
    std::optional<MemInfo> last_meminfo_;
    TrainLog log_;
    EventLog events_;
    std::optional<Notifier> notifier_;  // --notify hooks, fed by events_
    AttemptSpec spec_;

    std::vector<telemetry::StepPattern> step_patterns_;  // the profile's, else the defaults
    std::unique_ptr<telemetry::StepTracker> steps_;
    std::optional<oom::KernelWatch> watch_;
    pid_t leader_ = 0;         // the attempt's main process
    std::set<int> seen_pids_;
    std::deque<MemorySample> recent_;
    double peak_used_ = 0;
    double peak_rss_ = 0;
    double last_output_ = 0;  // monotonic time of the attempt's last output (or its launch)
    std::uint64_t attempt_log_start_ = 0;     // train.log's size when the attempt began
    std::uint64_t scanned_to_ = 0;            // how far the step tracker has read train.log
    std::deque<std::uint64_t> step_offsets_;  // where the latest two step changes were read
    std::optional<Stall> stall_;
    std::optional<double> memory_floor_;         // bytes; none: the guard is off
    std::unique_ptr<MemoryGuardProbe> guard_;    // this attempt's
    std::string boot_id_ = current_boot_id();    // state.json's: --resume-run on another boot knows the host died
    std::optional<std::pair<long long, double>> first_step_;  // (step, time) first seen this attempt
    std::optional<double> steps_per_second_;
    std::optional<fs::file_time_type> first_launch_;  // checkpoints older than this are not this run's
    std::optional<long> resume_past_;  // this attempt resumed: its first step must be past this
    bool resume_checked_ = false;
    std::optional<std::regex> epoch_pattern_;  // the profile's [resume] epoch_pattern
    std::optional<long long> first_epoch_;     // the first epoch this attempt logged
    std::unique_ptr<StatusLine> status_;
    double run_started_ = monotonic_seconds();
};

// Under srun, what every rank runs in front of its command: this sparkguard's `node`, writing into
// the run directory (DESIGN.md section 9).
std::vector<std::string> node_command(const RunDir& dir, const RunOptions& options) {
    std::vector<std::string> node = {own_path(), "node", "--run-dir",
                                     fs::absolute(dir.path).lexically_normal().string()};
    if (options.memory_floor) node.insert(node.end(), {"--memory-floor", options.memory_floor->text()});
    if (options.thermal_interval != RunOptions{}.thermal_interval)
        node.insert(node.end(), {"--thermal-interval", fixed(options.thermal_interval,
                                                             options.thermal_interval == std::floor(options.thermal_interval) ? 0 : 3)});
    node.push_back("--");
    return node;
}

TrainerProfile choose_profile(const RunOptions& options) {
    if (options.profile) return find_trainer_profile(*options.profile);
    return detect_trainer_profile(load_trainer_profiles(), options.command);
}

// --run-dir: never two sparkguards in one directory, never a new run appended to an earlier one.
RunDir claim_run_dir(const fs::path& requested, const RunOptions& options) {
    RunDir dir = prepare_run_dir(requested);
    lock_run_dir(dir, options.command);  // a live run is refused here, --overwrite or not
    if (!holds_a_run(dir.path)) return dir;
    if (!options.overwrite) {
        std::string what = "an earlier run";
        if (auto text = read_file(dir.report())) {
            const json report = json::parse(*text, nullptr, false);
            if (report.is_object())
                what = "the run started " + report.value("started", std::string("?")) + " (" +
                       report.value("outcome", std::string("?")) + ")";
        }
        throw UsageError("--run-dir " + requested.string(),
                         "holds " + what + ": continue an unfinished run with --resume-run " + requested.string() +
                             ", give a new --run-dir, or add --overwrite to move this one aside");
    }
    dir.lock.reset();
    const fs::path aside = move_aside(dir.path);
    spdlog::info("--overwrite: the earlier run in {} is now {}", requested.string(), aside.string());
    return prepare_run_dir(requested);
}

void check_executable(const std::vector<std::string>& command) {
    int code = kExitNotFound;
    if (auto exe = resolve_executable(command.at(0), &code); !exe) throw Failure("cannot run the trainer", exe.error().message, code);
}

}  // namespace


int run_supervised(const RunOptions& options) {
    if (options.command.empty()) throw UsageError("run", "no trainer command (sparkguard run [OPTIONS] -- COMMAND ...)");
    TrainerProfile profile = choose_profile(options);
    check_executable(options.command);
    {
        TrainerCommand command(profile, options.command);  // an unreadable config or a bad value fails here
        command.render({starting_config(options, command.knobs()), std::nullopt, options.output_dir, {}});
    }
    RunDir dir = options.run_dir ? claim_run_dir(*options.run_dir, options) : new_default_run_dir(options.command);
    if (!dir.lock) lock_run_dir(dir, options.command);
    spdlog::info("run directory {} (trainer profile {})", dir.path.string(), profile.name);
    RunOptions effective = options;
    effective.command = with_node_guard(options.command, node_command(dir, options));
    Supervisor supervisor(effective, dir, std::move(profile));
    if (auto blocked = supervisor.prelaunch()) return *blocked;
    return supervisor.run();
}

int resume_supervised(const fs::path& run_dir) {
    RunDir dir = prepare_run_dir(run_dir);
    lock_run_dir(dir, {"sparkguard", "run", "--resume-run", run_dir.string()});
    auto state_text = read_file(dir.state());
    if (!state_text) throw UsageError("--resume-run " + run_dir.string(), "no state.json: " + state_text.error().message);
    json state = json::parse(*state_text, nullptr, false);
    if (state.is_discarded() || !state.is_object()) throw UsageError(dir.state().string(), "not valid JSON");
    auto report_text = read_file(dir.report());
    if (!report_text) throw UsageError("--resume-run " + run_dir.string(), report_text.error().message);
    json report_json = json::parse(*report_text, nullptr, false);
    if (report_json.is_discarded()) throw UsageError(dir.report().string(), "not valid JSON");
    RunReport report = report_from_json(report_json);
    if (report.outcome != "running" && report.outcome != "interrupted")
        throw UsageError("--resume-run " + run_dir.string(), "this run already ended (" + report.outcome + "): nothing to resume");
    RunOptions options;
    try {
        options = run_options_from_json(state.at("options"));
    } catch (const json::exception& e) {
        throw UsageError(dir.state().string(), e.what());
    }
    options.run_dir = dir.path;
    if (auto cwd = state.value("cwd", ""); !cwd.empty() && cwd != fs::current_path().string()) {
        std::error_code ec;
        fs::current_path(cwd, ec);
        if (ec) throw UsageError(dir.state().string(), "cannot return to the run's directory " + cwd + ": " + ec.message());
    }
    TrainerProfile profile = find_trainer_profile(state.at("profile").get<std::string>());
    check_executable(options.command);
    Supervisor supervisor(options, dir, std::move(profile));
    if (auto ended = supervisor.restore(state, std::move(report))) return *ended;
    return supervisor.run();
}

}  // namespace sg
