#include "supervise/notifier.hpp"

#include <algorithm>

#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/parse.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string>& notify_event_names() {
    static const std::vector<std::string> names = {"start", "oom", "rung", "end", "oom-exhausted", "stall",
                                                   "memory-guard", "host-lost", "throttle", "power-cap"};
    return names;
}

const std::set<std::string>& default_notify_events() {
    static const std::set<std::string> events = {"end", "oom-exhausted", "stall", "memory-guard", "host-lost"};
    return events;
}

std::set<std::string> parse_notify_events(std::string_view list) {
    std::set<std::string> out;
    for (const auto& word : split(list, ',')) {
        const std::string name(trim(word));
        if (name.empty()) continue;
        const auto& known = notify_event_names();
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw UsageError("--notify-on", "unknown event '" + name + "' (events: " + join(known, ", ") + ")");
        out.insert(name);
    }
    if (out.empty()) throw UsageError("--notify-on", "names no event");
    return out;
}

NotifySettings read_notify_config() {
    NotifySettings settings;
    if (user_config_dir().empty()) return settings;
    const fs::path file = user_config_dir() / "config.toml";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return settings;
    const toml::table root = parse_toml_file(file);
    reject_unknown_keys(file, root, {"notify"});
    const toml::table* notify = root["notify"].as_table();
    if (!notify) return settings;
    reject_unknown_keys(file, *notify, {"commands", "on", "timeout"}, "[notify]");
    if (const toml::node* commands = notify->get("commands")) {
        const toml::array* list = commands->as_array();
        if (!list) throw UsageError(where(file, *commands), "[notify] commands: an array of commands, each an array of strings");
        for (const auto& command : *list) {
            const toml::array* words = command.as_array();
            if (!words || words->empty())
                throw UsageError(where(file, command), "[notify] commands: each command is a non-empty array of strings");
            std::vector<std::string> argv;
            for (const auto& word : *words) {
                if (!word.is_string()) throw UsageError(where(file, word), "[notify] commands: words must be strings");
                argv.push_back(*word.value<std::string>());
            }
            settings.commands.push_back(std::move(argv));
        }
    }
    if (const toml::node* on = notify->get("on")) {
        const toml::array* list = on->as_array();
        if (!list) throw UsageError(where(file, *on), "[notify] on: an array of event names");
        std::vector<std::string> names;
        for (const auto& name : *list) {
            if (!name.is_string()) throw UsageError(where(file, name), "[notify] on: event names are strings");
            names.push_back(*name.value<std::string>());
        }
        try {
            settings.events = parse_notify_events(join(names, ","));
        } catch (const UsageError& e) {
            throw UsageError(where(file, *on), e.what());
        }
    }
    if (const toml::node* timeout = notify->get("timeout")) {
        auto seconds = timeout->is_string() ? parse_duration(*timeout->value<std::string>()) : Result<double>(make_error("not a string"));
        if (!seconds || *seconds <= 0) throw UsageError(where(file, *timeout), "[notify] timeout: a duration such as \"30s\"");
        settings.timeout_seconds = *seconds;
    }
    return settings;
}

namespace {

std::string text_of(const json& fields, const char* key) {
    if (!fields.contains(key)) return "";
    const json& v = fields[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string shortened(std::string text, size_t limit = 200) {
    if (text.size() > limit) text = text.substr(0, limit) + "...";
    return text;
}

}  // namespace

std::vector<HookEvent> hook_events(std::string_view event, const json& fields) {
    const std::string attempt = text_of(fields, "attempt");
    if (event == "launch") {
        if (attempt != "1") return {};
        return {{"start", "training started (attempt 1)"}};
    }
    if (event == "end") {
        const std::string outcome = text_of(fields, "outcome");
        std::vector<HookEvent> out = {{"end", "the run ended: " + outcome + ": " + shortened(text_of(fields, "summary"), 400)}};
        if (outcome == "oom-exhausted") out.push_back({"oom-exhausted", "out of memory after the last rung: " + shortened(text_of(fields, "summary"), 400)});
        return out;
    }
    if (event == "oom") {
        const std::string kind = text_of(fields, "kind");
        std::vector<HookEvent> out = {{"oom", "attempt " + attempt + " ran out of memory (" + kind + "): " + shortened(text_of(fields, "evidence"))}};
        if (kind == "memory-guard") out.push_back({"memory-guard", "the memory guard stopped attempt " + attempt + " before the pool ran dry: " + shortened(text_of(fields, "evidence"))});
        return out;
    }
    if (event == "rung") return {{"rung", "next rung: " + text_of(fields, "rung") + " (" + text_of(fields, "change") + ")"}};
    if (event == "stall") return {{"stall", "the trainer stalled: " + shortened(text_of(fields, "evidence"))}};
    if (event == "host-lost") return {{"host-lost", "the host was lost during attempt " + attempt + " (" + text_of(fields, "outcome") + ")"}};
    if (event == "throttle" || event == "power-cap") {
        const std::string message = text_of(fields, "message");
        return {{std::string(event), message.empty() ? std::string(event) : message}};
    }
    return {};
}

Notifier::Notifier(Session& session, const RunDir& dir, const EventLog& events, NotifySettings settings)
    : session_(session), dir_(dir), events_(events), settings_(std::move(settings)) {
    if (settings_.events.empty()) settings_.events = default_notify_events();
    for (auto& argv : settings_.commands) hooks_.push_back({std::move(argv), {}, false});
}

void Notifier::on_event(std::string_view event, const json& fields) {
    if (hooks_.empty()) return;
    for (const auto& hook_event : hook_events(event, fields)) {
        if (!settings_.events.count(hook_event.name)) continue;
        json payload = fields;
        payload["event"] = hook_event.name;
        payload["source_event"] = std::string(event);
        payload["summary"] = hook_event.summary;
        payload["run_dir"] = fs::absolute(dir_.path).string();
        payload["time"] = rfc3339_now();
        const fs::path input = dir_.path / "notify" / (std::to_string(++sent_) + "-" + hook_event.name + ".json");
        std::error_code ec;
        fs::create_directories(input.parent_path(), ec);
        if (auto written = write_file_atomic(input, payload.dump() + "\n"); !written) {
            spdlog::warn("notify: {}", written.error().message);
            continue;
        }
        for (auto& hook : hooks_) {
            hook.queue.push_back({hook_event.name, hook_event.summary, input});
            if (!hook.running) start_next(hook);
        }
    }
}

void Notifier::start_next(Hook& hook) {
    if (hook.queue.empty()) return;
    Pending next = std::move(hook.queue.front());
    hook.queue.pop_front();
    Session::HelperOptions options;
    options.env = {{"SPARKGUARD_EVENT", next.event},
                   {"SPARKGUARD_RUN_DIR", fs::absolute(dir_.path).string()},
                   {"SPARKGUARD_SUMMARY", next.summary}};
    options.stdin_file = next.input;
    options.timeout_seconds = settings_.timeout_seconds;
    const std::string name = hook.argv.front();
    const double started = monotonic_seconds();
    hook.running = true;
    auto launched = session_.start_helper(
        hook.argv, [name](std::string_view line) { spdlog::debug("notify {}: {}", name, line); },
        [this, &hook, event = next.event, name, started](int code) {
            hook.running = false;
            if (code != 0) {
                const bool timed_out = code == 128 + 9 && monotonic_seconds() - started >= settings_.timeout_seconds - 0.05;
                const std::string why = timed_out ? "killed after its " + fixed(settings_.timeout_seconds, 0) + " s timeout"
                                                  : "exited " + std::to_string(code);
                spdlog::warn("notify hook {} for {}: {}", name, event, why);
                events_.write("notify-failed", {{"hook", name}, {"for", event}, {"exit_code", code}, {"timed_out", timed_out}});
            }
            start_next(hook);
        },
        options);
    if (!launched) {
        hook.running = false;
        spdlog::warn("notify hook {} for {}: {}", name, next.event, launched.error().message);
        events_.write("notify-failed", {{"hook", name}, {"for", next.event}, {"error", launched.error().message}});
        start_next(hook);
    }
}

bool Notifier::idle() const {
    return std::all_of(hooks_.begin(), hooks_.end(), [](const Hook& h) { return !h.running && h.queue.empty(); });
}

void Notifier::drain() {
    // Each queued event gets its hook's full timeout, one after another.
    size_t waiting = 0;
    for (const auto& hook : hooks_) waiting = std::max(waiting, hook.queue.size() + (hook.running ? 1 : 0));
    const double deadline = monotonic_seconds() + static_cast<double>(waiting) * (settings_.timeout_seconds + 1);
    while (!idle() && monotonic_seconds() < deadline) session_.sleep(0.05);
}

}  // namespace sg
