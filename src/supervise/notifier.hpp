#pragma once
// Event hooks: commands the person chose (--notify, or [notify] in ~/.config/sparkguard/
// config.toml) run on the events they chose, each with the event as one JSON object on standard
// input and SPARKGUARD_EVENT, SPARKGUARD_RUN_DIR, SPARKGUARD_SUMMARY in its environment. A hook
// never blocks or breaks the run: it runs beside it under a timeout, one at a time per hook with
// the rest queued, and its failure is a warning in events.jsonl.

#include <deque>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/event_log.hpp"
#include "report/run_dir.hpp"
#include "supervise/session.hpp"

namespace sg {

struct NotifySettings {
    std::vector<std::vector<std::string>> commands;  // each an argv; no shell unless the user wrote sh -c
    std::set<std::string> events;                    // empty: the default set
    double timeout_seconds = 30;
};

// Every event a hook can be given, and the default choice.
const std::vector<std::string>& notify_event_names();
const std::set<std::string>& default_notify_events();
// "end,oom" -> the set; UsageError naming an unknown event.
std::set<std::string> parse_notify_events(std::string_view list);
// The user's config file ($XDG_CONFIG_HOME/sparkguard/config.toml, else ~/.config/...), its
// [notify] table: commands = [[...], ...], on = [...], timeout = "30s". Absent file: nothing.
NotifySettings read_notify_config();
// What a hook is told for an events.jsonl event (one may mean two: an OOM by the memory guard
// is also "memory-guard"), with a sentence for people; empty when no hook event corresponds.
struct HookEvent {
    std::string name;
    std::string summary;
};
std::vector<HookEvent> hook_events(std::string_view event, const nlohmann::json& fields);

class Notifier {
public:
    Notifier(Session& session, const RunDir& dir, const EventLog& events, NotifySettings settings);
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    // Every event written to events.jsonl passes here.
    void on_event(std::string_view event, const nlohmann::json& fields);
    // The run is over: serve the queued and running hooks, each up to its timeout.
    void drain();

private:
    struct Pending {
        std::string event;
        std::string summary;
        std::filesystem::path input;  // the event's JSON, the hook's standard input
    };
    struct Hook {
        std::vector<std::string> argv;
        std::deque<Pending> queue;
        bool running = false;
    };
    void start_next(Hook& hook);
    bool idle() const;

    Session& session_;
    const RunDir& dir_;
    const EventLog& events_;
    NotifySettings settings_;
    std::vector<Hook> hooks_;
    int sent_ = 0;
};

}  // namespace sg
