#pragma once
// Recognises training progress in a trainer's output lines: the last step, the total, and
// whether training has started at all (which sets the phase of an OOM: load or train).
// Pure core: it is fed lines (and, if the caller wants change times, the caller's clock).
//
// What it is fed is data: a list of StepPattern (regexes), default_step_patterns() unless a
// trainer profile says otherwise. A pattern's step is its capture group named "step" (written
// (?<step>...), which std::regex lacks and the tracker translates) or else its first group;
// the optional total is the group named "total" or else the second. A pattern with no capture
// group marks progress without a step number (a Hugging Face log dict, "***** Running training
// *****"). Data-loading bars ("Loading checkpoint shards: 2/4", "Map: 100/1000 examples") are
// load phase and match no default pattern.

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "util/literal_set.hpp"

namespace sg::telemetry {

struct StepPattern {
    std::string regex;    // ECMAScript, plus (?<step>...) and (?<total>...)
    std::string literal;  // a fixed string every matching line contains (the cheap prefilter);
                          // empty: derived from the regex, or none when it has no plain run of 2+ bytes
};

const std::vector<StepPattern>& default_step_patterns();

class StepTracker {
public:
    StepTracker() : StepTracker(default_step_patterns()) {}
    // Throws std::invalid_argument naming the pattern when a regex does not compile.
    explicit StepTracker(const std::vector<StepPattern>& patterns);

    // One output line. `now` is the caller's clock (seconds), recorded when progress changes.
    void feed(std::string_view line, std::optional<double> now = std::nullopt);

    std::optional<long long> last_step() const { return step_; }
    std::optional<long long> total_steps() const { return total_; }
    bool training_started() const { return started_; }
    // Progress markers without a step number (Hugging Face {'loss': ...} dicts) seen so far.
    long long log_records() const { return log_records_; }
    // When the step or the log-record count last changed, in the caller's clock.
    std::optional<double> last_change_time() const { return changed_at_; }

private:
    struct Compiled {
        std::regex regex;
        int step_group = 0;   // 0: none (a progress marker)
        int total_group = 0;  // 0: none
        int literal = -1;     // index in literals_, -1: always try the regex
    };
    void apply(const Compiled& pattern, const std::cmatch& match, std::optional<double> now);

    std::vector<Compiled> patterns_;
    std::optional<LiteralSet> literals_;
    std::optional<long long> step_;
    std::optional<long long> total_;
    bool started_ = false;
    long long log_records_ = 0;
    std::optional<double> changed_at_;
};

}  // namespace sg::telemetry
