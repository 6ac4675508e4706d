#pragma once
// Recognises training progress in a trainer's output lines: the last step, the total, and
// whether training has started at all (which sets the phase of an OOM: load or train).
// Pure core: it is fed lines (and, if the caller wants change times, the caller's clock).
//
// What it recognises is data: a list of StepPattern (regexes or built-in recognisers),
// default_step_patterns() unless a trainer profile says otherwise. Every line passes a one-pass
// literal prefilter first; std::regex runs only on lines holding its pattern's literal.
// A regex's step is its capture group named "step" (written (?<step>...), which std::regex lacks
// and the tracker translates) or else its first group; the optional total is the group named
// "total" or else the second. A regex with no capture group marks progress without a step number
// ("***** Running training *****"). Data-loading bars ("Loading checkpoint shards: 2/4",
// "Map: 100/1000 examples") are load phase and match no default pattern.

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "util/literal_set.hpp"

namespace sg::telemetry {

struct StepPattern {
    std::string regex;    // ECMAScript, plus (?<step>...) and (?<total>...); or a built-in recogniser,
                          // native code for the formats a log floods with: "@tqdm" (a training progress
                          // bar), "@step" ("Step 5/100", "step 12 ... loss"), "@hf-log" ({'loss': ...})
    // Fixed strings one of which every matching line contains (the cheap prefilter); empty:
    // derived from the regex, or none (the regex runs on every line) when it has no plain run of
    // 2+ bytes. Longer literals make the prefilter faster for every pattern.
    std::vector<std::string> literals;
};

const std::vector<StepPattern>& default_step_patterns();

// What one pattern found in one line: a step (and total), or a progress marker without a step.
struct StepMatch {
    bool matched = false;
    std::optional<long long> step;
    std::optional<long long> total;
};

class StepTracker {
public:
    StepTracker() : StepTracker(default_step_patterns()) {}
    // Throws std::invalid_argument naming the pattern when a regex does not compile or a
    // built-in's name is unknown.
    explicit StepTracker(const std::vector<StepPattern>& patterns);

    // One output line. `now` is the caller's clock (seconds), recorded when progress changes.
    void feed(std::string_view line, std::optional<double> now = std::nullopt);

    std::optional<long long> last_step() const { return step_; }
    // The first step above 0 seen: a resumed trainer's first is past its checkpoint's.
    std::optional<long long> first_step() const { return first_step_; }
    std::optional<long long> total_steps() const { return total_; }
    bool training_started() const { return started_; }
    // Progress markers without a step number (Hugging Face {'loss': ...} dicts) seen so far.
    long long log_records() const { return log_records_; }
    // When the step or the log-record count last changed, in the caller's clock.
    std::optional<double> last_change_time() const { return changed_at_; }

private:
    struct Compiled {
        std::optional<std::regex> regex;
        int step_group = 0;   // 0: none (a progress marker)
        int total_group = 0;  // 0: none
        StepMatch (*builtin)(std::string_view) = nullptr;
        uint64_t literals = 0;  // bits in literals_; 0: always try the pattern
        StepMatch match(std::string_view window) const;
    };
    void apply(const StepMatch& match, std::optional<double> now);

    std::vector<Compiled> patterns_;
    std::optional<LiteralSet> literals_;
    std::optional<long long> step_;
    std::optional<long long> first_step_;
    std::optional<long long> total_;
    bool started_ = false;
    long long log_records_ = 0;
    std::optional<double> changed_at_;
};

}  // namespace sg::telemetry
