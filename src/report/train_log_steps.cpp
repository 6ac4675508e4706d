#include "report/train_log_steps.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "telemetry/step_tracker.hpp"
#include "util/record_lines.hpp"

namespace sg {
namespace {

constexpr std::array<std::string_view, 5> kTags = {"stdout", "stderr", "stdout+", "stderr+", "sparkguard"};

// Where a line appended after a crash begins inside a torn one: where a timestamp starts.
size_t appended_line(std::string_view text) {
    for (size_t i = 1; i + 20 < text.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(text[i])) && text[i + 4] == '-' &&
            parse_rfc3339(text.substr(i, text.find(' ', i) - i)))
            return i;
    return 0;
}

}  // namespace

TrainLogSteps::TrainLogSteps(std::vector<double> attempt_starts, std::string file_name)
    : starts_(std::move(attempt_starts)), file_name_(std::move(file_name)) {}
TrainLogSteps::~TrainLogSteps() = default;
TrainLogSteps::TrainLogSteps(TrainLogSteps&&) noexcept = default;
TrainLogSteps& TrainLogSteps::operator=(TrainLogSteps&&) noexcept = default;

Status TrainLogSteps::line(std::string_view text, size_t number, bool unterminated_last) {
    Status recorded = record(text, number);
    if (recorded) return recorded;
    const size_t appended = appended_line(text);
    if (!unterminated_last && !appended) return recorded;
    warnings_.push_back(torn_warning(file_name_, number));
    if (appended) record(text.substr(appended), number);
    return Ok{};
}

Status TrainLogSteps::record(std::string_view text, size_t number) {
    const size_t space = text.find(' ');
    const std::string_view stamp = text.substr(0, space);
    if (stamp != stamp_text_) {
        auto parsed = parse_rfc3339(stamp);
        if (!parsed) return make_error(line_error(file_name_, number, "timestamp", parsed.error().message));
        stamp_ = *parsed;
        stamp_text_ = std::string(stamp);
    }
    const std::string_view rest = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    const std::string_view tag = rest.substr(0, rest.find(' '));
    if (std::find(kTags.begin(), kTags.end(), tag) == kTags.end())
        return make_error(line_error(file_name_, number, "tag", "not stdout, stderr or sparkguard: '" + std::string(tag.substr(0, 20)) + "'"));
    ++lines_;
    if (!first_) first_ = stamp_;
    last_ = stamp_;
    if (tag == "sparkguard") return Ok{};
    const int attempt = attempt_at(stamp_.epoch_s);
    if (attempt != attempt_ || !tracker_) {
        attempt_ = attempt;
        tracker_ = std::make_unique<telemetry::StepTracker>();
    }
    const auto before = tracker_->last_step();
    tracker_->feed(rest.size() > tag.size() ? rest.substr(tag.size() + 1) : std::string_view());
    const auto after = tracker_->last_step();
    if (attempt_ > 0 && after && after != before) points_.push_back({stamp_.epoch_s, *after, attempt_});
    return Ok{};
}

int TrainLogSteps::attempt_at(double time) const {
    return static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), time) - starts_.begin());
}

}  // namespace sg
