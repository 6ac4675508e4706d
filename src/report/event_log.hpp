#pragma once
// events.jsonl: one JSON object per line, {"time": RFC 3339, "event": NAME, ...fields}.

#include <filesystem>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sg {

class EventLog {
public:
    explicit EventLog(std::filesystem::path path) : path_(std::move(path)) {}
    // Appends one event; a failed write is logged, never thrown (the run matters more).
    void write(std::string_view event, nlohmann::json fields = nlohmann::json::object()) const;
    // The same, on disk before it returns (fsync): for the last seconds before a host may wedge.
    void write_durable(std::string_view event, nlohmann::json fields) const;
    // Called with every event after it is written (the notification hooks listen here).
    using Listener = std::function<void(std::string_view event, const nlohmann::json& fields)>;
    void listen(Listener listener) { listener_ = std::move(listener); }

private:
    std::filesystem::path path_;
    Listener listener_;
};

}  // namespace sg
