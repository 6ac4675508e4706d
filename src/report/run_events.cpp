#include "report/run_events.hpp"

#include "util/record_lines.hpp"

namespace sg {
namespace {

using nlohmann::json;

// Where a record appended after a crash begins inside a torn line; 0 when none does.
size_t appended_record(std::string_view line) {
    const size_t at = line.find("{\"time\":", 1);
    return at == std::string_view::npos ? 0 : at;
}

Result<RunEvent> event_from(const json& object, const RecordLine& line, std::string_view file_name) {
    const auto fail = [&](std::string_view field, std::string_view why) {
        return make_error(line_error(file_name, line.number, field, why));
    };
    if (!object.is_object()) return fail("", "not a JSON object");
    if (!object.contains("time") || !object["time"].is_string()) return fail("time", "missing or not a string");
    if (!object.contains("event") || !object["event"].is_string()) return fail("event", "missing or not a string");
    auto time = parse_rfc3339(object["time"].get<std::string>());
    if (!time) return fail("time", time.error().message);
    return RunEvent{*time, object["event"].get<std::string>(), object, line.number};
}

}  // namespace

Result<RunEvents> parse_run_events(std::string_view text, std::string_view file_name) {
    RunEvents out;
    std::optional<Error> error;
    for_each_record_line(text, [&](const RecordLine& line) {
        json object = json::parse(line.text, nullptr, false);
        if (object.is_discarded()) {
            const size_t appended = appended_record(line.text);
            if (!line.unterminated_last && !appended) {
                error = Error{line_error(file_name, line.number, "", "not JSON")};
                return false;
            }
            out.warnings.push_back(torn_warning(file_name, line.number));
            if (!appended) return true;
            object = json::parse(line.text.substr(appended), nullptr, false);  // the record written after the crash
            if (object.is_discarded()) return true;
        }
        auto event = event_from(object, line, file_name);
        if (!event) error = event.error();
        else out.events.push_back(std::move(*event));
        return event.ok();
    });
    if (error) return *error;
    return out;
}

}  // namespace sg
