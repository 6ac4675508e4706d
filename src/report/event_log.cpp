#include "report/event_log.hpp"

#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace sg {

namespace {

void append_event(const std::filesystem::path& path, std::string_view event, nlohmann::json fields, bool durable) {
    nlohmann::json line = {{"time", rfc3339_now()}, {"event", event}};
    line.update(fields);
    auto written = append_line(path, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), durable);
    if (!written) spdlog::error("{}", written.error().message);
}

}  // namespace

void EventLog::write(std::string_view event, nlohmann::json fields) const {
    append_event(path_, event, fields, false);
    if (listener_) listener_(event, fields);
}

void EventLog::write_durable(std::string_view event, nlohmann::json fields) const {
    append_event(path_, event, fields, true);
    if (listener_) listener_(event, fields);
}

}  // namespace sg
