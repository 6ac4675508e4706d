#pragma once
// A whole log run through the step tracker and the classifier, the way `sparkguard diagnose`
// reads it: bytes in any chunks, split on '\n' and '\r' (tqdm redraws with '\r'), every piece fed
// to the step tracker first (a step glued before a message on the same line counts) and then to
// the classifier. Pure: the caller reads the file.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "oom/classifier.hpp"
#include "oom/srun_output.hpp"
#include "telemetry/step_tracker.hpp"

namespace sg::oom {

struct LogDiagnosis {
    Verdict verdict;  // evidence_line counts the log's '\n'-separated lines, from 1
    std::optional<long long> last_step;
    std::optional<long long> total_steps;
    long long lines = 0;
    std::optional<SrunTaskEnd> srun_cause;  // the log is srun's: the task whose end srun reported first
    std::optional<NodeReport> node_report;  // a node's sparkguard node reported a memory death
    std::optional<std::string> stopped_by;  // a stop from outside the trainer said so (Classifier::stopped_by)
};

class LogDiagnoser {
public:
    LogDiagnoser() = default;
    // With a trainer profile's progress patterns instead of the defaults.
    explicit LogDiagnoser(const std::vector<telemetry::StepPattern>& patterns) : tracker_(patterns) {}

    // The next bytes of the log.
    void chunk(std::string_view data);
    // With srun's output, the first task's end stands for `exit` (srun returns a later task's).
    LogDiagnosis finish(const ExitStatus& exit, const KernelEvidence& kernel);

    // A "line" longer than this (binary garbage without newlines) is fed in pieces.
    static constexpr size_t kMaxLine = 1 << 20;

private:
    void carry(std::string_view piece);
    void append(std::string_view text);
    void flush_segment();
    void feed(std::string_view segment);

    telemetry::StepTracker tracker_;
    Classifier classifier_;
    SrunCause srun_;
    std::string pending_;
    long long line_number_ = 0;                // complete '\n' lines so far
    bool in_line_ = false;                     // bytes after the last '\n' were seen
    std::map<long long, long long> physical_;  // classifier's line count → the log's line number
};

// The whole log at once.
LogDiagnosis diagnose_log(std::string_view text, const ExitStatus& exit, const KernelEvidence& kernel = {});

}  // namespace sg::oom
