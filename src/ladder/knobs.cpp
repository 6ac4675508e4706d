#include "ladder/knobs.hpp"

#include <algorithm>

#include "util/errors.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

// One occurrence of a flag: where it is and how its value is written.
struct FlagHit {
    size_t index;
    std::string flag;
    bool inline_value;                 // "--f=v"
    std::optional<std::string> value;  // nullopt: a bare switch at the end or followed by another flag
};

bool is_bool_word(std::string_view text) {
    static const char* kWords[] = {"true", "false", "yes", "no", "t", "f", "y", "n", "1", "0"};
    std::string lower = to_lower(text);
    return std::any_of(std::begin(kWords), std::end(kWords), [&](const char* w) { return lower == w; });
}

bool bool_word_value(std::string_view text) {
    std::string lower = to_lower(text);
    return lower == "true" || lower == "yes" || lower == "t" || lower == "y" || lower == "1";
}

std::vector<FlagHit> find_flags(const std::vector<std::string>& argv, const std::vector<std::string>& flags) {
    std::vector<FlagHit> hits;
    for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "--") break;  // the trainer's own positional section
        for (const auto& flag : flags) {
            if (argv[i] == flag) {
                std::optional<std::string> value;
                if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) value = argv[i + 1];
                hits.push_back({i, flag, false, value});
            } else if (argv[i].rfind(flag + "=", 0) == 0) {
                hits.push_back({i, flag, true, argv[i].substr(flag.size() + 1)});
            }
        }
    }
    return hits;
}

// The single occurrence of any of a knob's flags; UsageError when it is given twice.
std::optional<FlagHit> find_single(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                                   std::string_view knob) {
    auto hits = find_flags(argv, flags);
    if (hits.size() > 1)
        throw UsageError("trainer command", "flag " + hits[0].flag + " (" + std::string(knob) + ") is given twice: '" +
                                                hits[0].value.value_or("") + "' and '" + hits[1].value.value_or("") +
                                                "'; give it once so sparkguard knows which value the trainer uses");
    if (hits.empty()) return std::nullopt;
    return hits[0];
}

std::optional<long> integer_knob(const TrainerProfile& profile, Knob knob, const std::vector<std::string>& argv) {
    const KnobBinding& binding = profile.knob(knob);
    auto hit = find_single(argv, binding.flags, to_string(knob));
    if (!hit) return binding.default_value;
    if (!hit->value) throw UsageError("trainer command", "flag " + hit->flag + " needs a number");
    auto value = parse_int(*hit->value);
    if (!value || *value < 1)
        throw UsageError("trainer command", "flag " + hit->flag + ": expected a positive integer, got '" + *hit->value + "'");
    return *value;
}

std::optional<std::string> string_knob(const TrainerProfile& profile, Knob knob, const std::vector<std::string>& argv) {
    auto hit = find_single(argv, profile.knob(knob).flags, to_string(knob));
    return hit ? hit->value : std::nullopt;
}

// A switch is on when present bare or followed by a true-ish word.
bool switch_on(const std::vector<std::string>& argv, const std::vector<std::string>& switches) {
    for (const auto& hit : find_flags(argv, switches))
        if (!hit.value || !is_bool_word(*hit.value) || bool_word_value(*hit.value)) return true;
    return false;
}

std::optional<Method> method_from_flags(const TrainerProfile& profile, const std::vector<std::string>& argv) {
    if (!profile.quant_switches.empty() && switch_on(argv, {profile.quant_switches.front()})) return Method::qlora;
    if (switch_on(argv, profile.lora_switches)) return Method::lora;
    if (auto method = string_knob(profile, Knob::method, argv)) return accounting::parse_method(*method);
    return std::nullopt;
}

void set_flag(std::vector<std::string>& argv, const KnobBinding& binding, const std::string& value) {
    auto hits = find_flags(argv, binding.flags);
    if (hits.empty()) {
        auto end = std::find(argv.begin(), argv.end(), "--");
        argv.insert(end, {binding.flags.front(), value});
        return;
    }
    const FlagHit& hit = hits.front();
    if (hit.inline_value)
        argv[hit.index] = hit.flag + "=" + value;
    else if (hit.value)
        argv[hit.index + 1] = value;
    else
        argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(hit.index) + 1, value);
}

// Removes switches (with a following true/false word) and valued flags (with their value).
void remove_flags(std::vector<std::string>& argv, const std::vector<std::string>& switches,
                  const std::vector<std::string>& valued) {
    std::vector<std::string> out;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        auto matches = [&](const std::string& flag) { return arg == flag || arg.rfind(flag + "=", 0) == 0; };
        bool is_switch = std::any_of(switches.begin(), switches.end(), matches);
        bool is_valued = std::any_of(valued.begin(), valued.end(), matches);
        if (!is_switch && !is_valued) {
            out.push_back(arg);
            continue;
        }
        bool has_inline = arg.find('=') != std::string::npos;
        if (!has_inline && i + 1 < argv.size() && (is_valued || is_bool_word(argv[i + 1]))) ++i;
    }
    argv = std::move(out);
}

void substitute(std::vector<std::string>& argv, const std::string& placeholder, const std::string& value) {
    const std::string token = "{" + placeholder + "}";
    for (auto& arg : argv)
        for (size_t at = arg.find(token); at != std::string::npos; at = arg.find(token, at + value.size()))
            arg.replace(at, token.size(), value);
}

bool uses_placeholder(const std::vector<std::string>& argv, const std::string& placeholder) {
    const std::string token = "{" + placeholder + "}";
    return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(token) != std::string::npos; });
}

std::optional<std::string> knob_value(Knob knob, const RenderRequest& request) {
    const TrainConfig& c = request.config;
    auto number = [](const std::optional<long>& v) { return v ? std::optional(std::to_string(*v)) : std::nullopt; };
    switch (knob) {
        case Knob::batch_size: return number(c.batch_size);
        case Knob::grad_accum: return number(c.grad_accum);
        case Knob::seq_len: return number(c.seq_len);
        case Knob::method: return c.method ? std::optional(std::string(accounting::name(*c.method))) : std::nullopt;
        case Knob::model: return c.model;
        case Knob::output_dir: return request.output_dir;
        case Knob::resume: return request.resume_from;
        default: return std::nullopt;
    }
}

}  // namespace

CommandKnobs read_command_knobs(const TrainerProfile& profile, const std::vector<std::string>& argv) {
    CommandKnobs knobs;
    knobs.config.batch_size = integer_knob(profile, Knob::batch_size, argv);
    knobs.config.grad_accum = integer_knob(profile, Knob::grad_accum, argv);
    knobs.config.seq_len = integer_knob(profile, Knob::seq_len, argv);
    knobs.config.method = method_from_flags(profile, argv);
    knobs.config.model = string_knob(profile, Knob::model, argv);
    knobs.output_dir = string_knob(profile, Knob::output_dir, argv);
    knobs.save_steps = integer_knob(profile, Knob::save_steps, argv);
    knobs.logging_steps = integer_knob(profile, Knob::logging_steps, argv);
    knobs.eval_steps = integer_knob(profile, Knob::eval_steps, argv);
    return knobs;
}

bool knob_reaches_trainer(const TrainerProfile& profile, Knob knob, const std::vector<std::string>& argv) {
    const KnobBinding& binding = profile.knob(knob);
    return !binding.flags.empty() || binding.env || (binding.placeholder && uses_placeholder(argv, *binding.placeholder));
}

LaunchCommand render_command(const TrainerProfile& profile, const std::vector<std::string>& original_argv,
                             const RenderRequest& request) {
    LaunchCommand command{original_argv, {}};
    const CommandKnobs original = read_command_knobs(profile, original_argv);
    if (original.config.method == Method::qlora && request.config.method != Method::qlora)
        remove_flags(command.argv, profile.quant_switches, profile.quant_valued);

    for (Knob knob : kAllKnobs) {
        const KnobBinding& binding = profile.knob(knob);
        std::optional<std::string> value = knob_value(knob, request);
        if (binding.placeholder && uses_placeholder(command.argv, *binding.placeholder)) {
            if (!value && knob != Knob::resume)
                throw UsageError("trainer command", "uses {" + *binding.placeholder + "} but sparkguard has no value for it (" +
                                                        std::string(to_string(knob)) + ": give it with a run option)");
            substitute(command.argv, *binding.placeholder, value.value_or(""));
        }
        if (binding.env && value) command.env.emplace_back(*binding.env, *value);
        if (binding.flags.empty() || !value || knob == Knob::method || knob == Knob::output_dir) continue;
        const bool unchanged = [&] {
            switch (knob) {
                case Knob::batch_size: return original.config.batch_size == request.config.batch_size;
                case Knob::grad_accum: return original.config.grad_accum == request.config.grad_accum;
                case Knob::seq_len: return original.config.seq_len == request.config.seq_len;
                case Knob::model: return original.config.model == request.config.model;
                default: return false;
            }
        }();
        if (!unchanged) set_flag(command.argv, binding, *value);
    }
    return command;
}

}  // namespace sg
