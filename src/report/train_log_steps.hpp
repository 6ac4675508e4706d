#pragma once
// train.log read back for the step rate: each time an attempt's training step changes, when.
// Pure: fed the file's lines by the caller, who reads the file in pieces (it can be gigabytes).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.hpp"
#include "util/result.hpp"

namespace sg {

namespace telemetry {
class StepTracker;
}

struct StepPoint {
    double time = 0;  // epoch seconds
    long long step = 0;
    int attempt = 0;  // 1-based; 0 before the first attempt started
};

class TrainLogSteps {
public:
    // `attempt_starts`: when each attempt started (epoch seconds, in order): a line at or after
    // the n-th start belongs to attempt n, whose step tracker starts afresh.
    explicit TrainLogSteps(std::vector<double> attempt_starts, std::string file_name = "train.log");
    ~TrainLogSteps();
    TrainLogSteps(TrainLogSteps&&) noexcept;
    TrainLogSteps& operator=(TrainLogSteps&&) noexcept;

    // One "TIMESTAMP TAG TEXT" line without its newline. The error names the line and the field;
    // a torn line (see util/record_lines.hpp) is a warning instead.
    Status line(std::string_view text, size_t number, bool unterminated_last);

    const std::vector<StepPoint>& points() const { return points_; }
    const std::vector<std::string>& warnings() const { return warnings_; }
    std::optional<Timestamp> first_time() const { return first_; }
    std::optional<Timestamp> last_time() const { return last_; }
    size_t lines() const { return lines_; }

private:
    Status record(std::string_view text, size_t number);
    int attempt_at(double time) const;

    std::vector<double> starts_;
    std::string file_name_;
    std::unique_ptr<telemetry::StepTracker> tracker_;
    int attempt_ = 0;
    std::string stamp_text_;  // the last timestamp parsed: lines share one per read of output
    Timestamp stamp_;
    std::vector<StepPoint> points_;
    std::vector<std::string> warnings_;
    std::optional<Timestamp> first_, last_;
    size_t lines_ = 0;
};

}  // namespace sg
