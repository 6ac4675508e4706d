#pragma once
// events.jsonl: one JSON object per line, {"time": RFC 3339, "event": NAME, ...fields}.

#include <filesystem>
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

private:
    std::filesystem::path path_;
};

}  // namespace sg
