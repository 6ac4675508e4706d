#include "telemetry/step_tracker.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "util/strings.hpp"

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

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string_view skip_spaces(std::string_view text) {
    const size_t start = text.find_first_not_of(" \t");
    return start == std::string_view::npos ? std::string_view() : text.substr(start);
}

// Digits at the front of `text`, consumed.
std::optional<long long> take_number(std::string_view& text) {
    long long value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr == text.data()) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(ptr - text.data()));
    return value;
}

// A tqdm bar's description that marks a training bar: none, or "Epoch 3:", "steps:", "Training:".
bool training_description(std::string_view description) {
    if (description.empty()) return true;
    if (description.size() > 45 || description.back() != ':') return false;
    for (std::string_view word : {"Epoch", "epoch", "Step", "step", "Train", "train", "Iter", "iter"})
        if (description.starts_with(word)) return true;
    return false;
}

// "@tqdm": "{description}: {pct}%|{bar}| {n}/{total} [{elapsed}<{left}, {rate}it/s or s/it...]".
StepMatch tqdm_training_bar(std::string_view line) {
    const size_t bar = line.find("%|");
    if (bar == std::string_view::npos) return {};
    size_t pct = bar;
    while (pct > 0 && is_digit(line[pct - 1]) && bar - pct < 3) --pct;
    if (pct == bar) return {};
    const std::string_view description = trim(line.substr(0, pct));
    if (!training_description(description)) return {};
    std::string_view rest = line.substr(bar + 2);
    const size_t bar_end = rest.substr(0, 400).find('|');
    if (bar_end == std::string_view::npos) return {};
    rest = skip_spaces(rest.substr(bar_end + 1));
    const auto step = take_number(rest);
    if (!step || !rest.starts_with('/')) return {};
    rest.remove_prefix(1);
    const auto total = take_number(rest);
    rest = skip_spaces(rest);
    if (!total || !rest.starts_with('[')) return {};
    const std::string_view bracket = rest.substr(0, std::min(rest.find(']'), size_t{100}));
    if (bracket.find("it/s") == std::string_view::npos && bracket.find("s/it") == std::string_view::npos) return {};
    return {true, step, total};
}

bool has_word(std::string_view line, std::string_view word) {
    for (size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
        const size_t end = at + word.size();
        if ((at == 0 || !is_word(line[at - 1])) && (end == line.size() || !is_word(line[end]))) return true;
    }
    return false;
}

// "@step": "Step 5/100", "step: 12 ... loss", "loss ... step 450"; not "warmup_steps", "optimizer.step()".
StepMatch step_word(std::string_view line) {
    for (size_t at = line.find("tep"); at != std::string_view::npos; at = line.find("tep", at + 1)) {
        if (at == 0 || (line[at - 1] != 'S' && line[at - 1] != 's')) continue;
        if (at >= 2 && is_word(line[at - 2])) continue;
        std::string_view rest = skip_spaces(line.substr(at + 3));
        if (!rest.empty() && (rest[0] == ':' || rest[0] == '=' || rest[0] == '#')) rest = skip_spaces(rest.substr(1));
        const auto step = take_number(rest);
        if (!step || (!rest.empty() && rest[0] == '.')) continue;
        const std::string_view after = skip_spaces(rest);
        if (after.starts_with('/')) {
            std::string_view total_text = skip_spaces(after.substr(1));
            const auto total = take_number(total_text);
            if (total && (total_text.empty() || (!is_digit(total_text[0]) && total_text[0] != '.'))) return {true, step, total};
            continue;
        }
        if (has_word(line, "loss") || has_word(line, "Loss")) return {true, step, std::nullopt};
    }
    return {};
}

// "@hf-log": the Hugging Face Trainer's log dict, {'loss': 1.23, ..., 'learning_rate': 2e-05, 'epoch': 0.5}
// (or its JSON form); evaluation dicts have no learning_rate, the final summary no epoch after it.
StepMatch hf_log_dict(std::string_view line) {
    const std::string_view t = trim(line);
    if (!t.starts_with('{')) return {};
    static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {{"'learning_rate':", "'epoch':"},
                                                                              {"\"learning_rate\":", "\"epoch\":"}};
    for (const auto& [lr, epoch] : kKeys) {
        const size_t at = t.find(lr);
        if (at != std::string_view::npos && t.find(epoch, at) != std::string_view::npos) return {true, std::nullopt, std::nullopt};
    }
    return {};
}

struct Builtin {
    std::string_view name;
    std::vector<std::string> literals;
    StepMatch (*match)(std::string_view);
};
const Builtin kBuiltins[] = {{"@tqdm", {"it/s", "s/it"}, tqdm_training_bar},
                             {"@step", {"step", "Step"}, step_word},
                             {"@hf-log", {"learning_rate"}, hf_log_dict}};

const Builtin& builtin(const std::string& name) {
    for (const auto& b : kBuiltins)
        if (b.name == name) return b;
    throw std::invalid_argument("unknown built-in step pattern '" + name + "' (@tqdm, @step or @hf-log)");
}

}  // namespace

const std::vector<StepPattern>& default_step_patterns() {
    static const std::vector<StepPattern> patterns = {
        // A training progress bar: no description or a training one ("Epoch 3:", "steps:"), "it/s" or "s/it".
        {"@tqdm", {}},
        // Hugging Face Trainer's log dict: {'loss': 1.23, 'grad_norm': ..., 'learning_rate': ..., 'epoch': 0.5}
        {"@hf-log", {}},
        // "Step 5/100", "step: 12, loss: 1.5", "loss 1.93 at step 450".
        {"@step", {}},
        // "Epoch: [1][367/4899]", "Epoch [1][50/29317]" (mmcv and many research loops): the iteration within the epoch.
        {R"([Ee]poch:?\s*\[\s*\d+\s*\]\s*\[\s*(?<step>\d+)\s*/\s*(?<total>\d+)\s*\])", {"poch [", "poch: ["}},
        {R"(global_step\s*[=:]\s*(?<step>\d+)(?![\d.eE]))", {"global_step"}},
        {R"(^Iter (?<step>\d+): Train loss)", {"Iter "}},
        {R"(\*{5} Running training \*{5})", {"Running training"}},
    };
    return patterns;
}

StepTracker::StepTracker(const std::vector<StepPattern>& patterns) {
    std::vector<std::string> literals;
    for (const auto& pattern : patterns) {
        Compiled compiled;
        std::vector<std::string> gate = pattern.literals;
        if (pattern.regex.starts_with('@')) {
            const Builtin& b = builtin(pattern.regex);
            compiled.builtin = b.match;
            if (gate.empty()) gate = b.literals;
        } else {
            const Translated t = translate_named_groups(pattern.regex);
            try {
                compiled.regex.emplace(t.regex, std::regex::ECMAScript | std::regex::optimize);
            } catch (const std::regex_error& e) {
                throw std::invalid_argument("step pattern '" + pattern.regex + "': " + e.what());
            }
            compiled.step_group = t.step_group;
            compiled.total_group = t.total_group;
            if (gate.empty()) gate = {derive_literal(t.regex)};
        }
        const bool gated = std::all_of(gate.begin(), gate.end(), [](const std::string& l) { return l.size() >= 2; });
        if (gated && !gate.empty() && literals.size() + gate.size() <= 64) {
            for (auto& literal : gate) {
                compiled.literals |= uint64_t{1} << literals.size();
                literals.push_back(std::move(literal));
            }
        }
        patterns_.push_back(std::move(compiled));
    }
    if (!literals.empty()) literals_.emplace(std::move(literals));
}

StepMatch StepTracker::Compiled::match(std::string_view window) const {
    if (builtin) return builtin(window);
    std::cmatch m;
    if (!std::regex_search(window.begin(), window.end(), m, *regex)) return {};
    if (step_group == 0) return {true, std::nullopt, std::nullopt};
    const auto step = number(m[step_group]);
    if (!step) return {};
    return {true, step, total_group ? number(m[total_group]) : std::nullopt};
}

void StepTracker::feed(std::string_view line, std::optional<double> now) {
    const std::string_view window = line.substr(0, kWindow);
    const LiteralSet::Bits found = literals_ ? literals_->find(window) : 0;
    for (const auto& pattern : patterns_) {
        if (pattern.literals && !(found & pattern.literals)) continue;
        if (const StepMatch m = pattern.match(window); m.matched) {
            apply(m, now);
            return;
        }
    }
}

void StepTracker::apply(const StepMatch& match, std::optional<double> now) {
    if (!match.step) {
        started_ = true;
        ++log_records_;
        changed_at_ = now;
        return;
    }
    if (match.total && total_ && *match.total != *total_) return;  // another bar (evaluation) with its own total
    if (match.total) total_ = match.total;
    started_ = true;
    if (step_ == match.step) return;
    step_ = match.step;
    if (!first_step_ && *step_ > 0) first_step_ = step_;  // a bar drawn at 0 has not stepped yet
    changed_at_ = now;
}

}  // namespace sg::telemetry
