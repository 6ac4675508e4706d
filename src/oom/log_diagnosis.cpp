#include "oom/log_diagnosis.hpp"

#include <cstring>

namespace sg::oom {
namespace {

// Index of `c` in `text`, or text.size(); memchr keeps splitting near the speed of a copy.
size_t find_byte(std::string_view text, char c) {
    const void* at = std::memchr(text.data(), c, text.size());
    return at ? static_cast<size_t>(static_cast<const char*>(at) - text.data()) : text.size();
}

}  // namespace

void LogDiagnoser::chunk(std::string_view data) {
    while (!data.empty()) {
        const size_t length = find_byte(data, '\n');
        carry(data.substr(0, length));
        if (length == data.size()) {
            in_line_ = true;
            return;
        }
        flush_segment();
        ++line_number_;
        in_line_ = false;
        data.remove_prefix(length + 1);
    }
}

// A piece of the current line; '\r' ends a segment within it.
void LogDiagnoser::carry(std::string_view piece) {
    while (!piece.empty()) {
        const size_t length = find_byte(piece, '\r');
        append(piece.substr(0, length));
        if (length == piece.size()) return;
        flush_segment();
        piece.remove_prefix(length + 1);
    }
}

void LogDiagnoser::append(std::string_view text) {
    while (pending_.size() + text.size() > kMaxLine) {
        const size_t room = kMaxLine - pending_.size();
        pending_.append(text.substr(0, room));
        flush_segment();
        text.remove_prefix(room);
    }
    pending_.append(text);
}

void LogDiagnoser::flush_segment() {
    feed(pending_);
    pending_.clear();
}

void LogDiagnoser::feed(std::string_view segment) {
    if (segment.empty()) return;
    tracker_.feed(segment);
    if (auto step = tracker_.last_step()) classifier_.mark_step(*step);
    else if (tracker_.training_started()) classifier_.mark_training_started();
    srun_.feed(segment);
    if (classifier_.feed(segment)) physical_[classifier_.lines_seen()] = line_number_ + 1;
}

namespace {

// A node's guard or kernel saw the memory run out: that decides, unless a rank's own allocator or
// a library said so in its own words (the more precise account of the same death).
void decide_by_node(LogDiagnosis& d, bool training_started) {
    const Family family = family_of(d.verdict.kind);
    if (d.verdict.oom && (family == Family::allocator || family == Family::library)) return;
    const NodeReport& r = *d.node_report;
    Verdict v;
    v.oom = true;
    v.kind = r.kind;
    v.phase = training_started ? Phase::train : Phase::load;
    v.confidence = Confidence::certain;
    v.evidence = r.line;
    v.reason = "sparkguard node on " + r.node + " reported " + std::string(kind_name(r.kind)) + ": " + r.evidence;
    d.verdict = v;
    d.stopped_by.reset();  // the peers' cancellation followed this death
}

}  // namespace

LogDiagnosis LogDiagnoser::finish(const ExitStatus& exit, const KernelEvidence& kernel) {
    flush_segment();
    const auto& cause = srun_.cause();
    const ExitStatus status = cause && cause->status.known() && !exit.succeeded() ? cause->status : exit;
    LogDiagnosis d{classifier_.verdict(status, kernel), tracker_.last_step(), tracker_.total_steps(),
                   line_number_ + (in_line_ ? 1 : 0), cause, srun_.node_report(), classifier_.stopped_by()};
    if (d.node_report && !exit.succeeded()) decide_by_node(d, tracker_.training_started());
    if (d.verdict.evidence_line) {
        auto it = physical_.find(*d.verdict.evidence_line);
        d.verdict.evidence_line = it == physical_.end() ? std::nullopt : std::optional(it->second);
    }
    return d;
}

LogDiagnosis diagnose_log(std::string_view text, const ExitStatus& exit, const KernelEvidence& kernel) {
    LogDiagnoser diagnoser;
    diagnoser.chunk(text);
    return diagnoser.finish(exit, kernel);
}

}  // namespace sg::oom
