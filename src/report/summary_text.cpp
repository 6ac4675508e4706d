#include "report/summary_text.hpp"

#include <algorithm>

#include "util/printable.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

constexpr size_t kWidth = 80;
constexpr size_t kLabel = 10;  // "reproduce " and the other labels

// Columns a UTF-8 string takes: one per code point (what a terminal shows for this text).
size_t columns(std::string_view text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(std::string text, size_t width) {
    const size_t used = columns(text);
    return used >= width ? text : text + std::string(width - used, ' ');
}

// At most `width` columns, "…" ending a cut.
std::string cut(const std::string& text, size_t width) {
    if (columns(text) <= width) return text;
    std::string out;
    size_t used = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((text[i] & 0xC0) != 0x80 && ++used > width - 1) break;
        out += text[i];
    }
    return out + "\xE2\x80\xA6";
}

// `text` in lines of kWidth columns at most, broken between words, each line after `indent`
// spaces; past `max_lines` the last line is cut with "…".
std::string wrapped(const std::string& text, size_t indent, size_t max_lines) {
    const size_t room = kWidth - indent;
    std::vector<std::string> lines{""};
    for (const auto& word : split(text, ' ')) {
        std::string& line = lines.back();
        if (line.empty() || columns(line) + 1 + columns(word) <= room) {
            line += (line.empty() ? "" : " ") + word;
        } else {
            lines.push_back(word);
        }
    }
    if (lines.size() > max_lines) {  // the rest joins the last line, cut with "…"
        for (size_t i = max_lines; i < lines.size(); ++i) lines[max_lines - 1] += " " + lines[i];
        lines.resize(max_lines);
        lines.back() = cut(lines.back(), room);
    }
    std::string out;
    for (const auto& line : lines) out += std::string(indent, ' ') + line + "\n";  // a long path stays whole
    return out;
}

// "label     text", wrapped with the label's indent.
std::string labelled(std::string_view label, const std::string& text, size_t max_lines = 4) {
    return pad(std::string(label), kLabel) + wrapped(text, kLabel, max_lines).substr(kLabel);
}

std::string gb(double value) { return fixed(value, value < 10 ? 2 : 1) + " GB"; }

std::string outcome_line(const RunSummary& s) {
    std::string line = s.outcome;
    if (s.exit_code) line += " (exit " + std::to_string(*s.exit_code) + ")";
    if (s.outcome == "running")
        line += ": no end recorded: still running, or sparkguard itself was stopped";
    if (!s.summary.empty()) line += ": " + printable(s.summary, 400);
    return line;
}

std::string when_line(const RunSummary& s) {
    if (!s.start) return "unknown (report.json has no start time)";
    const int off = s.utc_offset_minutes;
    std::string line = format_local(*s.start, off);
    if (s.end) {
        const bool same_day = format_local(*s.start, off).substr(0, 10) == format_local(*s.end, off).substr(0, 10);
        line += " \xE2\x86\x92 " + format_local(*s.end, off, !same_day) + (s.end_recorded ? "" : " (last record)");
    }
    line += " (" + format_utc_offset(off) + ")";
    if (auto d = s.duration_s()) line += ", " + format_duration(*d);
    return line;
}

std::string steps_text(const AttemptSummary& a) {
    if (!a.record.last_step) return a.resumed_at ? "from step " + std::to_string(*a.resumed_at) : "";
    if (a.resumed_at) return "steps " + std::to_string(*a.resumed_at) + "\xE2\x86\x92" + std::to_string(*a.record.last_step);
    return "step " + std::to_string(*a.record.last_step);
}

// Why the attempt ended, in a few words, then the evidence.
std::string ending_text(const AttemptSummary& a) {
    const AttemptRecord& r = a.record;
    std::string text;
    if (r.outcome == "oom") {
        text = "OOM " + r.oom_kind.value_or("?");
        if (r.phase) text += *r.phase == "load" ? " while loading" : " while training";
        if (r.confidence && *r.confidence != "certain") text += " (" + *r.confidence + ")";
    } else if (r.outcome == "failed") {
        text = "failed" + (r.exit_code ? ", exit " + std::to_string(*r.exit_code) : std::string());
    } else if (r.outcome == "stalled") {
        text = "hung";
    } else if (r.outcome == "running") {
        text = "no end recorded";
    } else {
        text = r.outcome + (r.outcome != "succeeded" && r.exit_code ? " (exit " + std::to_string(*r.exit_code) + ")" : "");
    }
    // Through srun: which node's task ended first and decided.
    if (r.node) text += " on " + *r.node + (r.rank ? " (task " + *r.rank + ")" : std::string());
    if (r.evidence && !r.evidence->empty()) text += ": " + printable(*r.evidence, 400);
    if (a.details) text += " [" + *a.details + "]";
    return text;
}

// "  3  shorter-packing  batch 8, seq 2048" then "     8h19m, steps 40→1016: succeeded".
std::string attempt_lines(const AttemptSummary& a) {
    const AttemptRecord& r = a.record;
    std::string out = "  " + pad(std::to_string(r.n), 3) + pad(r.rung ? std::string(to_string(*r.rung)) : "as given", 17) +
                      describe(r.config) + "\n";
    std::vector<std::string> facts;
    if (auto took = a.duration_s()) facts.push_back(format_duration(*took));
    if (const std::string steps = steps_text(a); !steps.empty()) facts.push_back(steps);
    out += wrapped((facts.empty() ? "" : join(facts, ", ") + ": ") + ending_text(a), 5, 2);
    for (const auto& skip : r.skipped_rungs)
        out += wrapped("skipped " + std::string(to_string(skip.rung)) + ": " + skip.why, 5, 1);
    return out;
}

// One line per fact: the measurement, the estimate against it, the budget.
std::vector<std::string> memory_lines(const MemorySummary& m) {
    std::vector<std::string> lines;
    if (m.peak_used_gb) {
        std::string peak = "peak pool used " + gb(*m.peak_used_gb);
        if (m.pool_total_gb) peak += " of " + gb(*m.pool_total_gb);
        if (m.peak_attempt) peak += " (attempt " + std::to_string(*m.peak_attempt) + ")";
        if (m.peak_rss_gb) peak += ", trainer RSS " + gb(*m.peak_rss_gb);
        lines.push_back(peak);
    }
    if (m.estimate_gb) {
        std::string estimate = "estimate " + gb(*m.estimate_gb) + " peak";
        if (m.train_estimate_gb && *m.train_estimate_gb != *m.estimate_gb) estimate += " (training " + gb(*m.train_estimate_gb) + ")";
        if (m.peak_used_gb && *m.estimate_gb > 0)
            estimate += ": measured " + fixed(100 * *m.peak_used_gb / *m.estimate_gb, 0) + "% of it";
        lines.push_back(estimate);
    }
    if (m.budget_gb) lines.push_back("budget " + gb(*m.budget_gb) + (m.verdict.empty() ? "" : " (" + m.verdict + ")"));
    if (lines.empty()) lines.emplace_back("no measurement recorded");
    return lines;
}

std::string power_line(const TelemetrySummary& t, int offset) {
    std::vector<std::string> parts;
    if (t.peak_temp_c)
        parts.push_back("peak " + fixed(*t.peak_temp_c, 0) + " \xC2\xB0""C" +
                        (t.peak_temp_at ? " at " + format_local(*t.peak_temp_at, offset, false).substr(0, 5) : ""));
    if (t.mean_power_w) parts.push_back("power mean " + fixed(*t.mean_power_w, 0) + " W");
    if (t.max_power_w) parts.push_back("max " + fixed(*t.max_power_w, 0) + " W");
    if (t.cap_w) parts.push_back("cap " + fixed(*t.cap_w, 0) + " W");
    if (t.seconds_at_cap && *t.seconds_at_cap > 0) parts.push_back(format_duration(*t.seconds_at_cap) + " at the cap");
    if (parts.empty()) return "no GPU readings in " + std::to_string(t.rows) + " samples";
    return join(parts, ", ");
}

std::string throttle_line(const TelemetrySummary& t) {
    if (t.throttle_episodes == 0) return "none detected";
    std::string line = std::to_string(t.throttle_episodes) + (t.throttle_episodes == 1 ? " episode" : " episodes");
    if (t.seconds_throttled && *t.seconds_throttled > 0) line += ", " + format_duration(*t.seconds_throttled) + " throttled";
    return line + " (slower steps at the power cap, hotter)";
}

}  // namespace

std::string format_summary_text(const RunSummary& s) {
    std::string out = labelled("run", s.run_dir) + labelled("outcome", outcome_line(s)) + labelled("when", when_line(s));
    out += "\nattempts (" + std::to_string(s.attempts.size()) + ")\n";
    for (const auto& a : s.attempts) out += attempt_lines(a);
    if (s.attempts.empty()) out += "  none launched\n";
    out += "\n";
    for (const auto& skip : s.skipped_at_end)
        out += labelled("ladder", "nothing left at " + std::string(to_string(skip.rung)) + ": " + skip.why);
    if (s.final_config) out += labelled("final", describe(*s.final_config));
    if (!s.reproduce.empty()) out += pad("reproduce", kLabel) + s.reproduce + "\n";
    const auto memory = memory_lines(s.memory);
    for (size_t i = 0; i < memory.size(); ++i) out += labelled(i == 0 ? "memory" : "", memory[i]);
    if (s.telemetry) {
        out += labelled("gpu", power_line(*s.telemetry, s.utc_offset_minutes));
        if (!s.telemetry->power_cap_message.empty()) out += labelled("", printable(s.telemetry->power_cap_message, 400));
        out += labelled("throttle", throttle_line(*s.telemetry));
    }
    for (size_t i = 0; i < s.nodes.size(); ++i) {
        const NodeSummary& n = s.nodes[i];
        std::string line = n.host + ": ";
        if (n.peak_pool_used_gb) line += "pool peak " + fixed(*n.peak_pool_used_gb, 1) + " GB used, ";
        if (n.peak_rss_gb) line += "rank peak " + fixed(*n.peak_rss_gb, 1) + " GB resident, ";
        line += "gpu " + power_line(n.telemetry, s.utc_offset_minutes) + ", throttle " + throttle_line(n.telemetry);
        out += labelled(i == 0 ? "nodes" : "", line);
    }
    for (size_t i = 0; i < s.missing.size(); ++i) out += labelled(i == 0 ? "missing" : "", s.missing[i]);
    if (!s.files.empty()) out += labelled("details", join(s.files, ", ") + " in " + s.run_dir);
    return out;
}

}  // namespace sg
