#include "util/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace sg {
namespace {

// %* in the pattern: nothing for info, "warning: " / "error: " / "debug: " otherwise.
class LevelPrefix : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        std::string_view prefix;
        switch (msg.level) {
            case spdlog::level::warn: prefix = "warning: "; break;
            case spdlog::level::err: case spdlog::level::critical: prefix = "error: "; break;
            case spdlog::level::debug: case spdlog::level::trace: prefix = "debug: "; break;
            default: break;
        }
        dest.append(prefix.data(), prefix.data() + prefix.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelPrefix>(); }
};

}  // namespace

void init_logging(Verbosity verbosity) {
    auto logger = spdlog::get("sparkguard");
    if (!logger) {
        logger = std::make_shared<spdlog::logger>("sparkguard", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<LevelPrefix>('*').set_pattern("sparkguard: %*%v");
        logger->set_formatter(std::move(formatter));
        logger->flush_on(spdlog::level::trace);
        spdlog::set_default_logger(logger);
    }
    switch (verbosity) {
        case Verbosity::quiet: logger->set_level(spdlog::level::warn); break;
        case Verbosity::normal: logger->set_level(spdlog::level::info); break;
        case Verbosity::verbose: logger->set_level(spdlog::level::debug); break;
    }
}

}  // namespace sg
