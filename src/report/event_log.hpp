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

private:
    std::filesystem::path path_;
};

}  // namespace sg
