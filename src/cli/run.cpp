// sparkguard run: the main job. Parse options, hand them to the supervisor.
#include <iostream>

#include "cli/commands.hpp"

#include "ladder/command_line.hpp"
#include "cli/workload_options.hpp"
#include "ladder/trainer_profile.hpp"
#include "supervise/notifier.hpp"
#include "supervise/supervisor.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::cli {
namespace {

std::vector<OptionSpec> run_options() {
    std::vector<OptionSpec> specs = {
        {"profile", "NAME", "trainer profile (hf, trl, axolotl, llamafactory, torchtune, unsloth, generic, ...); detected from the command when absent"},
        {"print-default-profile", "", "print the trainer profile that would be used, as TOML, and exit"},
        {"run-dir", "DIR", "the run directory (default runs/<date>-<slug>/)"},
        {"overwrite", "", "--run-dir holds an earlier run: move it aside to DIR.previous-<time> and start anew"},
        {"resume-run", "DIR", "continue a run whose sparkguard was killed (no COMMAND needed)"},
        {"ladder", "LIST", "rungs in order (default drop-caches,shorter-packing,smaller-batch,bf16-lora)"},
        {"min-seq", "N", "shorter-packing stops at this length (default 512)"},
        {"max-attempts", "N", "attempts in all, the first included (default 10)"},
        {"grace", "SECONDS", "after SIGTERM, how long the trainer's tree has before SIGKILL (default 30)"},
        {"stall-timeout", "DURATION", "no output and no new step for this long is a stall (default 30m; 0: never)"},
        {"on-hang", "stop|relaunch", "a stall without memory evidence: stop with exit 5 (default), or relaunch"},
        {"thermal-interval", "SECONDS", "seconds between thermal.csv rows (default 30; 1 at least)"},
        {"memory-floor", "GB|N%", "kill the trainer when MemAvailable falls under this (default 5% of MemTotal on unified memory, else off; 0: off)"},
        {"output-dir", "DIR", "where the trainer writes checkpoint-N/ (when its profile cannot see it)"},
        {"bf16-model", "PATH", "the bf16 original of a pre-quantised model, for the bf16-lora rung"},
        {"notify", "CMD", "run CMD on the chosen events, the event as JSON on stdin (repeatable; no shell unless CMD is sh -c ...)",
         0, true},
        {"notify-on", "LIST", "events for --notify (default end,oom-exhausted,stall,memory-guard,host-lost; also start,oom,rung,throttle,power-cap)"},
        {"notify-timeout", "DURATION", "a hook still running after this is killed (default 30s)"},
        {"force", "", "launch even when the pre-launch estimate says it does not fit"},
        {"fit", "", "start from the largest packing length, then batch, that the estimate says fits"},
        {"quiet", "", "no status line; only warnings and errors from sparkguard itself", 'q'},
        {"verbose", "", "also debug messages", 'v'},
    };
    // In run, the knobs the ladder turns start from the trainer's command unless given here.
    const std::pair<const char*, const char*> starting[] = {
        {"model", "the model (overrides the command's; feeds the estimate and {model})"},
        {"method", "full|lora|qlora (default: what the command's flags say)"},
        {"batch", "starting per-device batch (default: the command's)"},
        {"seq", "starting sequence / packing length (default: the command's)"},
        {"grad-accum", "starting gradient accumulation (default: the command's)"},
    };
    for (auto spec : workload_options()) {
        for (const auto& [name, help] : starting)
            if (spec.name == name) spec.help = help;
        specs.push_back(spec);
    }
    return specs;
}

constexpr const char* kEpilog =
    "The workload flags set the trainer's starting knobs (--batch, --grad-accum, --seq, --method,\n"
    "--model override the command and fill {batch_size}-style placeholders) and feed the pre-launch\n"
    "estimate, together with what the command says. The trainer's stdout and stderr pass through\n"
    "unchanged; sparkguard's own messages go to stderr, prefixed \"sparkguard:\".\n\n"
    "exit status: 0 success; the trainer's own code when it failed for a reason that is not OOM\n"
    "(128+N when killed by signal N); 2 usage or configuration error; 3 blocked by the pre-launch\n"
    "budget check; 4 still out of memory after the last rung; 5 the trainer hung (no output and no\n"
    "step for --stall-timeout, without memory evidence) and was stopped; 125 sparkguard's own failure;\n"
    "126/127 the command could not be executed / was not found; 128+N sparkguard was stopped by\n"
    "signal N (SIGINT, SIGTERM, SIGHUP are passed on to the trainer first).\n";

RunOptions options_from(const ParsedArgs& parsed) {
    RunOptions o;
    o.command = with_kill_on_bad_exit(parsed.rest());  // under srun, one dead rank ends the step at once
    o.profile = parsed.get("profile");
    if (auto dir = parsed.get("run-dir")) o.run_dir = *dir;
    o.overwrite = parsed.has("overwrite");
    if (o.overwrite && !o.run_dir) throw UsageError("--overwrite", "needs --run-dir: a new default run directory is always fresh");
    if (auto ladder = parsed.get("ladder")) {
        o.ladder.order = parse_ladder(*ladder);
        if (o.ladder.order.empty()) throw UsageError("--ladder", "names no rung");
    }
    if (auto min_seq = parsed.get_int("min-seq", 64, 1 << 22)) o.ladder.min_seq = *min_seq;
    if (auto max_attempts = parsed.get_int("max-attempts", 1, 1000)) o.max_attempts = static_cast<int>(*max_attempts);
    if (auto grace = parsed.get("grace")) {
        auto seconds = parse_duration(*grace);
        if (!seconds) throw UsageError("--grace", seconds.error().message);
        o.grace_seconds = *seconds;
    }
    if (auto stall = parsed.get("stall-timeout")) {
        auto seconds = parse_duration(*stall);
        if (!seconds) throw UsageError("--stall-timeout", seconds.error().message);
        o.stall_timeout = *seconds;
    }
    if (auto on_hang = parsed.get("on-hang")) {
        if (*on_hang != "stop" && *on_hang != "relaunch")
            throw UsageError("--on-hang", "expected stop or relaunch, got '" + *on_hang + "'");
        o.relaunch_on_hang = *on_hang == "relaunch";
    }
    o.quiet = parsed.has("quiet");
    if (auto text = parsed.get("thermal-interval")) {
        auto seconds = parse_duration(*text);
        if (!seconds || *seconds < 1) throw UsageError("--thermal-interval", "expected at least 1 second, got '" + *text + "'");
        o.thermal_interval = *seconds;
    }
    if (auto floor = parsed.get("memory-floor")) {
        auto spec = oom::parse_floor(*floor);
        if (!spec) throw UsageError("--memory-floor", spec.error().message);
        o.memory_floor = *spec;
    }
    o.output_dir = parsed.get("output-dir");
    o.bf16_model = parsed.get("bf16-model");
    o.notify = read_notify_config();
    for (const auto& command : parsed.all("notify")) {
        auto words = split_command_words(command);
        if (words.empty()) throw UsageError("--notify", "names no command");
        o.notify.commands.push_back(std::move(words));
    }
    if (auto on = parsed.get("notify-on")) o.notify.events = parse_notify_events(*on);
    if (auto text = parsed.get("notify-timeout")) {
        auto seconds = parse_duration(*text);
        if (!seconds || *seconds <= 0) throw UsageError("--notify-timeout", "expected a duration such as 30s, got '" + *text + "'");
        o.notify.timeout_seconds = *seconds;
    }
    o.force = parsed.has("force");
    o.fit = parsed.has("fit");
    o.workload = plan_request_from_args(parsed);
    o.workload_named_model = o.workload->model.has_value() || o.workload->params.has_value();
    const auto& w = o.workload->workload;
    if (w.batch) o.batch_size = *w.batch;
    if (w.grad_accum) o.grad_accum = *w.grad_accum;
    if (w.seq) o.seq_len = *w.seq;
    o.method = w.method;
    if (parsed.has("model")) o.model = o.workload->model;
    return o;
}

int print_profile(const RunOptions& options) {
    TrainerProfile profile = options.profile ? find_trainer_profile(*options.profile)
                                             : detect_trainer_profile(load_trainer_profiles(), options.command);
    auto text = read_file(profile.source);
    if (!text) throw Failure(profile.source.string(), text.error().message);
    std::cout << "# " << profile.source.string() << "\n" << *text;
    return kExitOk;
}

}  // namespace

int run_main(Args args) {
    const auto specs = run_options();
    const ParsedArgs parsed = parse_args(specs, args, /*stop_at_first_positional=*/true);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard run [OPTIONS] -- COMMAND [ARGS...]\n       sparkguard run --resume-run DIR",
                                 "Supervises a training command: budget check, OOM ladder, telemetry, report.", specs, kEpilog);
        return kExitOk;
    }
    init_logging(parsed.has("quiet") ? Verbosity::quiet : parsed.has("verbose") ? Verbosity::verbose : Verbosity::normal);
    RunOptions options = options_from(parsed);
    if (parsed.has("print-default-profile")) return print_profile(options);
    if (auto resume = parsed.get("resume-run")) {
        if (!options.command.empty()) throw UsageError("--resume-run", "takes no COMMAND: the run directory remembers it");
        for (const auto& spec : specs)
            if (spec.name != "resume-run" && spec.name != "quiet" && spec.name != "verbose" && parsed.has(spec.name))
                throw UsageError("--resume-run", "takes no --" + spec.name + ": the run continues with the options it was started with");
        return resume_supervised(*resume);
    }
    if (options.command.empty()) throw UsageError("run", "no trainer command (sparkguard run [OPTIONS] -- COMMAND [ARGS...])");
    return run_supervised(options);
}

}  // namespace sg::cli
