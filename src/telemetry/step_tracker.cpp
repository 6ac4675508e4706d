#include "telemetry/step_tracker.hpp"

#include <charconv>
#include <stdexcept>

namespace sg::telemetry {
namespace {

constexpr size_t kWindow = 4096;  // progress lines are short; longer lines are looked at this far

// A regex with (?<step>...)/(?<total>...) rewritten as plain groups, and where those groups are.
struct Translated {
    std::string regex;
    int groups = 0;
    int step_group = 0;
    int total_group = 0;
};

Translated translate_named_groups(std::string_view pattern) {
    Translated out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            out.regex += pattern.substr(i++, 2);
            continue;
        }
        if (in_class || c != '(') {
            in_class = c == '[' ? true : c == ']' ? false : in_class;
            out.regex += c;
            continue;
        }
        const std::string_view rest = pattern.substr(i);
        if (rest.starts_with("(?<") && !rest.starts_with("(?<=") && !rest.starts_with("(?<!")) {
            const size_t close = rest.find('>');
            if (close == std::string_view::npos) throw std::invalid_argument("unterminated group name in " + std::string(pattern));
            const std::string_view name = rest.substr(3, close - 3);
            ++out.groups;
            if (name == "step") out.step_group = out.groups;
            else if (name == "total") out.total_group = out.groups;
            else throw std::invalid_argument("unknown group name '" + std::string(name) + "' (step or total) in " + std::string(pattern));
            out.regex += '(';
            i += close;
            continue;
        }
        if (!rest.starts_with("(?")) ++out.groups;
        out.regex += c;
    }
    if (out.step_group == 0 && out.groups >= 1) out.step_group = 1;
    if (out.total_group == 0 && out.groups >= 2 && out.step_group == 1) out.total_group = 2;
    return out;
}

bool is_meta(char c) { return std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos; }

// The longest run of plain characters at the top level of a regex without alternation: a string
// every matching line must contain. Empty when there is none of at least 2 bytes.
std::string derive_literal(std::string_view regex) {
    std::string best, run;
    auto end_run = [&] {
        if (run.size() > best.size()) best = run;
        run.clear();
    };
    int depth = 0;
    for (size_t i = 0; i < regex.size(); ++i) {
        char c = regex[i];
        if (c == '|') return "";
        if (c == '[') {  // a class: skip it whole
            for (++i; i < regex.size() && regex[i] != ']'; ++i)
                if (regex[i] == '\\') ++i;
            end_run();
            continue;
        }
        if (c == '(' || c == ')') {
            depth += c == '(' ? 1 : -1;
            end_run();
            continue;
        }
        if (c == '\\' && i + 1 < regex.size()) {
            c = regex[++i];
            if (!is_meta(c) && c != '/') {  // \d, \s, \b, \w: not a fixed character
                end_run();
                continue;
            }
        } else if (is_meta(c)) {
            end_run();
            continue;
        }
        if (depth > 0) continue;
        run += c;
        const char after = i + 1 < regex.size() ? regex[i + 1] : '\0';
        if (after == '?' || after == '*' || after == '{') run.pop_back();  // optional or counted: not required
        if (after == '?' || after == '*' || after == '{' || after == '+') end_run();
    }
    end_run();
    return best.size() >= 2 ? best : "";
}

std::optional<long long> number(const std::csub_match& group) {
    if (!group.matched) return std::nullopt;
    long long value = 0;
    auto [ptr, ec] = std::from_chars(group.first, group.second, value);
    if (ec != std::errc() || ptr != group.second) return std::nullopt;
    return value;
}

}  // namespace

const std::vector<StepPattern>& default_step_patterns() {
    static const std::vector<StepPattern> patterns = {
        // A training progress bar: no description or a training one ("Epoch 3:", "steps:"), "it/s" or "s/it".
        {R"(^\s*(?:(?:[Ee]poch|[Ss]teps?|[Tt]rain\w*|[Ii]ter\w*)[^|%]{0,40}:\s*)?\d{1,3}%\|[^|]{0,400}\|\s*(?<step>\d+)/(?<total>\d+)\s*\[[^\]]{0,100}?(?:it/s|s/it))",
         "%|"},
        // Hugging Face Trainer's log dict: {'loss': 1.23, 'grad_norm': ..., 'learning_rate': ..., 'epoch': 0.5}
        {R"(^\s*\{.*['"]learning_rate['"]\s*:.*['"]epoch['"]\s*:)", "learning_rate"},
        {R"((?:^|[^A-Za-z_])[Ss]tep\s*[:=#]?\s*(?<step>\d+)\s*/\s*(?<total>\d+)(?![\d.]))", "tep"},
        // "Epoch: [1][367/4899]", "Epoch [1][50/29317]" (mmcv and many research loops): the iteration within the epoch.
        {R"([Ee]poch:?\s*\[\s*\d+\s*\]\s*\[\s*(?<step>\d+)\s*/\s*(?<total>\d+)\s*\])", "poch"},
        {R"((?:^|[^A-Za-z_])[Ss]tep\s*[:=#]?\s*(?<step>\d+)(?![\d.]).*\b[Ll]oss\b)", "tep"},
        {R"(\b[Ll]oss\b.*[^A-Za-z_][Ss]tep\s*[:=#]?\s*(?<step>\d+)(?![\d.]))", "tep"},
        {R"(global_step\s*[=:]\s*(?<step>\d+)(?![\d.eE]))", "global_step"},
        {R"(^Iter (?<step>\d+): Train loss)", "Iter "},
        {R"(\*{5} Running training \*{5})", "Running training"},
    };
    return patterns;
}

StepTracker::StepTracker(const std::vector<StepPattern>& patterns) {
    std::vector<std::string> literals;
    for (const auto& pattern : patterns) {
        const Translated t = translate_named_groups(pattern.regex);
        Compiled compiled;
        try {
            compiled.regex = std::regex(t.regex, std::regex::ECMAScript | std::regex::optimize);
        } catch (const std::regex_error& e) {
            throw std::invalid_argument("step pattern '" + pattern.regex + "': " + e.what());
        }
        compiled.step_group = t.step_group;
        compiled.total_group = t.total_group;
        const std::string literal = pattern.literal.empty() ? derive_literal(t.regex) : pattern.literal;
        if (literal.size() >= 2 && literals.size() < 64) {
            compiled.literal = static_cast<int>(literals.size());
            literals.push_back(literal);
        }
        patterns_.push_back(std::move(compiled));
    }
    if (!literals.empty()) literals_.emplace(std::move(literals));
}

void StepTracker::feed(std::string_view line, std::optional<double> now) {
    const std::string_view window = line.substr(0, kWindow);
    const uint64_t found = literals_ ? literals_->find(window) : 0;
    std::cmatch match;
    for (const auto& pattern : patterns_) {
        if (pattern.literal >= 0 && !(found & (uint64_t{1} << pattern.literal))) continue;
        if (!std::regex_search(window.begin(), window.end(), match, pattern.regex)) continue;
        apply(pattern, match, now);
        return;
    }
}

void StepTracker::apply(const Compiled& pattern, const std::cmatch& match, std::optional<double> now) {
    if (pattern.step_group == 0) {
        started_ = true;
        ++log_records_;
        changed_at_ = now;
        return;
    }
    const auto step = number(match[pattern.step_group]);
    const auto total = pattern.total_group ? number(match[pattern.total_group]) : std::nullopt;
    if (!step) return;
    if (total && total_ && *total != *total_) return;  // another bar (evaluation) with its own total
    if (total) total_ = total;
    started_ = true;
    if (step_ == step) return;
    step_ = step;
    changed_at_ = now;
}

}  // namespace sg::telemetry
