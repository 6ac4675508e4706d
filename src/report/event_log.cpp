#include "report/event_log.hpp"

#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace sg {

void EventLog::write(std::string_view event, nlohmann::json fields) const {
    nlohmann::json line = {{"time", rfc3339_now()}, {"event", event}};
    line.update(fields);
    auto written = append_line(path_, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!written) spdlog::error("{}", written.error().message);
}

}  // namespace sg
