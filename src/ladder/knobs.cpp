#include "ladder/knobs.hpp"

#include <algorithm>

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {

namespace fs = std::filesystem;

namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::optional<bool> bool_word(std::string_view text) {
    const std::string lower = to_lower(text);
    for (const char* word : {"true", "yes", "on", "t", "y", "1"})
        if (lower == word) return true;
    for (const char* word : {"false", "no", "off", "f", "n", "0"})
        if (lower == word) return false;
    return std::nullopt;
}

// Values compared the way a trainer would read them: booleans, integers, else the text.
std::string normalized(std::string_view text) {
    if (auto b = bool_word(text); b && !parse_int(text)) return *b ? "true" : "false";
    if (auto n = parse_int(text)) return std::to_string(*n);
    if (to_lower(text) == "true" || to_lower(text) == "false") return to_lower(text);
    return std::string(text);
}

std::optional<long> to_long(std::string_view text) {
    auto n = parse_int(text);
    return n ? std::optional(static_cast<long>(*n)) : std::nullopt;
}

bool is_config_path(std::string_view arg) {
    const std::string ext = to_lower(fs::path(arg).extension().string());
    return ext == ".yml" || ext == ".yaml" || ext == ".json";
}

// One occurrence of a flag or override in argv.
struct Hit {
    size_t index;
    std::string flag;                  // the flag or key as written
    enum class Form { separate, inline_value, bare, negated, dotlist, deleted } form;
    std::optional<std::string> value;  // what it sets; nullopt for a bare switch or a deletion
};

std::vector<Hit> find_hits(const std::vector<std::string>& argv, size_t begin, const std::vector<std::string>& flags,
                           const std::vector<std::string>& dotlist_keys, bool negations) {
    std::vector<Hit> hits;
    for (size_t i = begin; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg == "--") break;  // what follows belongs to a launcher (axolotl's `-- launcher args`)
        for (const auto& flag : flags) {
            if (arg == flag) {
                if (i + 1 < argv.size() && !starts_with(argv[i + 1], "--"))
                    hits.push_back({i, flag, Hit::Form::separate, argv[i + 1]});
                else
                    hits.push_back({i, flag, Hit::Form::bare, std::nullopt});
            } else if (starts_with(arg, flag + "=")) {
                hits.push_back({i, flag, Hit::Form::inline_value, arg.substr(flag.size() + 1)});
            } else if (negations && arg == "--no-" + flag.substr(2)) {
                hits.push_back({i, flag, Hit::Form::negated, "false"});
            }
        }
        for (const auto& key : dotlist_keys) {
            if (starts_with(key, "-")) continue;  // a flag among the keys
            if (starts_with(arg, key + "=")) hits.push_back({i, key, Hit::Form::dotlist, arg.substr(key.size() + 1)});
            else if (arg == "~" + key) hits.push_back({i, key, Hit::Form::deleted, std::nullopt});
        }
    }
    return hits;
}

// Every occurrence in the trainer's arguments of `keys` (as flags, and as key=value overrides
// where the trainer takes those) and of the extra `flags`.
std::vector<Hit> hits_of(const TrainerProfile& profile, const std::vector<std::string>& argv, size_t begin,
                         const std::vector<std::string>& keys, const std::vector<std::string>& flags) {
    const bool dotlist = profile.syntax.overrides == OverrideSyntax::dotlist;
    return find_hits(argv, begin, profile.flags_for_keys(keys, flags), dotlist ? keys : std::vector<std::string>{},
                     profile.syntax.bool_switches);
}

bool uses_placeholder(const std::vector<std::string>& argv, const std::string& placeholder) {
    const std::string token = "{" + placeholder + "}";
    return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(token) != std::string::npos; });
}

void substitute(std::vector<std::string>& argv, const std::string& placeholder, const std::string& value) {
    const std::string token = "{" + placeholder + "}";
    for (auto& arg : argv)
        for (size_t at = arg.find(token); at != std::string::npos; at = arg.find(token, at + value.size()))
            arg.replace(at, token.size(), value);
}

// Does the script the command runs mention the variable? (A module or a binary: sparkguard can't tell.)
bool script_mentions(const TrainerInvocation& trainer, const std::string& name) {
    if (trainer.module || trainer.path.empty()) return false;
    auto text = read_file(trainer.path);
    return text && text->size() < (64u << 20) && text->find(name) != std::string::npos;
}

std::string knob_words(Knob knob) {
    switch (knob) {
        case Knob::batch_size: return "batch size";
        case Knob::grad_accum: return "gradient accumulation";
        case Knob::seq_len: return "sequence (packing) length";
        case Knob::method: return "QLoRA switch";
        default: return std::string(to_string(knob));
    }
}

}  // namespace

TrainerCommand::TrainerCommand(const TrainerProfile& profile, std::vector<std::string> argv)
    : profile_(profile), argv_(std::move(argv)), trainer_(locate_trainer(argv_)) {
    read_config();
    read_knobs();
}

void TrainerCommand::read_config() {
    const Syntax& syntax = profile_.syntax;
    const size_t begin = trainer_.args_begin;
    for (size_t i = begin; i < argv_.size() && !config_arg_; ++i) {
        const std::string& arg = argv_[i];
        if (arg == "--") break;
        switch (syntax.config) {
            case ConfigLocation::positional: {
                const bool flag_value = i > begin && starts_with(argv_[i - 1], "--") &&
                                        argv_[i - 1].find('=') == std::string::npos &&
                                        syntax.overrides == OverrideSyntax::flags;
                if (!starts_with(arg, "-") && arg.find('=') == std::string::npos && is_config_path(arg) && !flag_value)
                    config_arg_ = i;
                break;
            }
            case ConfigLocation::flag:
                if (arg == syntax.config_flag && i + 1 < argv_.size()) config_arg_ = i + 1;
                else if (starts_with(arg, syntax.config_flag + "=")) config_arg_ = i, config_inline_ = true;
                break;
            case ConfigLocation::json_arg:
                if (i == begin && argv_.size() == begin + 1 && to_lower(fs::path(arg).extension().string()) == ".json")
                    config_arg_ = i;
                break;
            case ConfigLocation::none: break;
        }
    }
    if (!config_arg_) return;
    const std::string& arg = argv_[*config_arg_];
    const std::string path = config_inline_ ? arg.substr(syntax.config_flag.size() + 1) : arg;
    knobs_.config_file = path;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        knobs_.notes.push_back("the config '" + path + "' is not a file sparkguard can read (a built-in config name?): "
                               "the knobs it sets are unknown; copy it to a file (torchtune: `tune cp`) and pass that");
        config_arg_.reset();
        return;
    }
    auto loaded = ConfigFile::load(path);
    if (!loaded) throw UsageError("trainer config", loaded.error().message);
    config_ = std::move(*loaded);
}

std::optional<TrainerCommand::Found> TrainerCommand::lookup_argv(const std::vector<std::string>& keys,
                                                                 const std::vector<std::string>& flags) const {
    const auto hits = hits_of(profile_, argv_, trainer_.args_begin, keys, flags);
    if (hits.empty()) return std::nullopt;
    const Hit& last = hits.back();  // argparse, OmegaConf and click all let the last one win
    Found found;
    found.in_argv = true;
    found.where = last.form == Hit::Form::dotlist ? last.flag + "=" : last.flag;
    if (last.form == Hit::Form::deleted) found.null = true;
    else found.value = last.value.value_or("true");
    if (found.value == "null" && last.form == Hit::Form::dotlist) found.null = true;
    return found;
}

std::optional<TrainerCommand::Found> TrainerCommand::lookup(const std::vector<std::string>& keys,
                                                            const std::vector<std::string>& flags) const {
    if (auto found = lookup_argv(keys, flags)) return found;
    if (!config_) return std::nullopt;
    for (const auto& key : keys)
        if (auto scalar = starts_with(key, "-") ? std::nullopt : config_->get(key)) {
            Found found;
            found.value = resolve(scalar->text);
            found.null = scalar->null;
            found.where = config_->path().string() + ": " + key;
            return found;
        }
    return std::nullopt;
}

std::optional<TrainerCommand::Found> TrainerCommand::lookup_knob(Knob knob) const {
    return lookup(profile_.knob(knob).keys, profile_.knob(knob).flags);
}

// OmegaConf-style ${key} references (torchtune's checkpointer.output_dir: ${output_dir}).
std::string TrainerCommand::resolve(std::string text) const {
    for (int depth = 0; depth < 8; ++depth) {
        const size_t open = text.find("${");
        const size_t close = open == std::string::npos ? open : text.find('}', open);
        if (close == std::string::npos || !config_) break;
        auto scalar = config_->get(text.substr(open + 2, close - open - 2));
        if (!scalar) break;
        text.replace(open, close - open + 1, scalar->text);
    }
    return text;
}

bool TrainerCommand::holds(const Condition& condition) const {
    auto found = lookup(condition.keys, {});
    if (!found || found->null) return condition.absent;
    if (condition.equals && normalized(found->value) != normalized(*condition.equals)) return false;
    if (condition.contains && found->value.find(*condition.contains) == std::string::npos) return false;
    return true;
}

std::optional<accounting::Method> TrainerCommand::method() const {
    const MethodRules& rules = profile_.method;
    auto any = [&](const std::vector<Condition>& cs) {
        return std::any_of(cs.begin(), cs.end(), [&](const Condition& c) { return holds(c); });
    };
    if (any(rules.full)) return Method::full;  // a full fine-tune ignores 4-bit settings (unsloth train)
    if (any(rules.qlora)) return Method::qlora;
    if (any(rules.lora)) return Method::lora;
    return rules.otherwise;
}

void TrainerCommand::read_knobs() {
    auto integer = [&](Knob knob) -> std::optional<long> {
        auto found = lookup_knob(knob);
        const auto& fallback = profile_.knob(knob).default_value;
        if (!found || found->null) {
            if (fallback) knobs_.from[std::string(to_string(knob))] = "default of " + profile_.name;
            return fallback ? to_long(*fallback) : std::nullopt;
        }
        auto value = to_long(found->value);
        const bool cadence = knob == Knob::save_steps || knob == Knob::logging_steps || knob == Knob::eval_steps;
        if (cadence && (!value || *value < 1)) return std::nullopt;  // 0 or a fraction of the run: the trainer's own rule
        if (!value || *value < 1)
            throw UsageError(found->where, "expected a positive integer for " + knob_words(knob) + ", got '" + found->value + "'");
        knobs_.from[std::string(to_string(knob))] = found->where;
        return *value;
    };
    auto text = [&](Knob knob) -> std::optional<std::string> {
        auto found = lookup_knob(knob);
        if (!found || found->null) return profile_.knob(knob).default_value;
        knobs_.from[std::string(to_string(knob))] = found->where;
        return found->value;
    };
    knobs_.config.batch_size = integer(Knob::batch_size);
    knobs_.config.grad_accum = integer(Knob::grad_accum);
    if (auto total = lookup(profile_.knob(Knob::grad_accum).from_total, {}); total && !total->null &&
                                                                           !lookup_knob(Knob::grad_accum)) {
        auto value = to_long(total->value);
        if (!value || *value < 1) throw UsageError(total->where, "expected a positive integer total batch, got '" + total->value + "'");
        if (knobs_.config.batch_size) knobs_.config.grad_accum = std::max(1L, *value / *knobs_.config.batch_size);
        knobs_.from["grad_accum"] = total->where + " / batch size";
        total_batch_ = true;
        knobs_.notes.push_back(total->where + " is a total batch: sparkguard takes gradient accumulation as it divided by "
                               "the batch (" + std::to_string(knobs_.config.grad_accum.value_or(1)) +
                               "), as older trainers derived it; a trainer that ignores it (current Axolotl fills "
                               "accumulation 1 first) trains on another effective batch: give gradient_accumulation_steps instead");
    }
    knobs_.config.seq_len = integer(Knob::seq_len);
    knobs_.config.method = method();
    knobs_.config.model = text(Knob::model);
    knobs_.output_dir = text(Knob::output_dir);
    knobs_.save_steps = integer(Knob::save_steps);
    knobs_.logging_steps = integer(Knob::logging_steps);
    knobs_.eval_steps = integer(Knob::eval_steps);
    if (auto packing = text(Knob::packing)) knobs_.packing = bool_word(*packing);
    const auto& resume_keys = profile_.resume.keys.empty() ? profile_.knob(Knob::resume).keys : profile_.resume.keys;
    if (auto resume = lookup(resume_keys, profile_.knob(Knob::resume).flags); resume && !resume->null) {
        if (bool_word(resume->value) != false) knobs_.resume = resume->value;
    }
}

std::string TrainerCommand::unreachable(Knob knob) const {
    const KnobBinding& binding = profile_.knob(knob);
    for (const auto& condition : binding.locked_when)
        if (holds(condition)) {
            auto found = lookup(condition.keys, {});
            return (found ? found->where + " is " + found->value : condition.keys.front() + " is unset") + ": " +
                   profile_.name + " then refuses any change of the " + knob_words(knob);
        }
    if (knob == Knob::method && !profile_.method.to_lora.empty()) return "";
    if (knob == Knob::grad_accum && total_batch_) return "";
    const std::vector<std::string> flags = profile_.flags_for(knob);
    if (lookup_argv(binding.keys, binding.flags)) return "";
    if (config_ && !binding.keys.empty()) return "";
    const bool dotlist = profile_.syntax.overrides == OverrideSyntax::dotlist;
    if (binding.add && (!flags.empty() || (dotlist && !binding.keys.empty()))) return "";
    if (binding.placeholder && uses_placeholder(argv_, *binding.placeholder)) return "";
    if (binding.env && script_mentions(trainer_, *binding.env)) return "";
    std::vector<std::string> ways;
    if (!flags.empty()) ways.push_back(flags.front() + " in the command");
    if (!binding.keys.empty() && profile_.syntax.config != ConfigLocation::none) ways.push_back(binding.keys.front() + " in its config file");
    if (binding.placeholder) ways.push_back("{" + *binding.placeholder + "} in the command");
    if (binding.env) ways.push_back("$" + *binding.env + " read by the script");
    if (ways.empty()) return "trainer profile '" + profile_.name + "' has no " + knob_words(knob) + " knob";
    return "the " + knob_words(knob) + " reaches " + profile_.name + " only through " + join(ways, " or ") +
           (binding.env && !trainer_.path.empty() ? ", and " + trainer_.name() + " has none of these" : ", and the command has none");
}

namespace {

// Edits one command line and (lazily) one copy of its config file.
class Writer {
public:
    Writer(const TrainerProfile& profile, const TrainerInvocation& trainer, const std::optional<ConfigFile>& config,
           bool config_named, std::vector<std::string>& argv)
        : profile_(profile), trainer_(trainer), config_(config), config_named_(config_named), argv_(argv) {}

    // Sets a key wherever the trainer reads it: every occurrence in argv, else the config copy,
    // else (when `add`) a new flag or override.
    void set(const std::vector<std::string>& keys, const std::vector<std::string>& extra_flags, const std::string& value,
             bool null, bool add) {
        if (rewrite_argv(keys, extra_flags, value, null)) return;
        const bool file_key = std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return !starts_with(k, "-"); });
        if (config_ && file_key) {
            set_in_copy(keys, ConfigScalar{value, null, false});
            return;
        }
        if (add && !null) append(keys, extra_flags, value);
    }

    void remove(const std::vector<std::string>& keys) {
        auto hits = hits_for(keys, {});
        for (auto it = hits.rbegin(); it != hits.rend(); ++it) erase(*it);
        if (config_)
            for (const auto& key : keys)
                if (!starts_with(key, "-") && config_->get(key)) copy().remove(key);
    }

    std::optional<std::string> current(const std::vector<std::string>& keys) {
        auto hits = hits_for(keys, {});
        if (!hits.empty() && hits.back().value) return hits.back().value;
        const ConfigFile* doc = copy_ ? &*copy_ : config_ ? &*config_ : nullptr;
        for (const auto& key : keys)
            if (auto scalar = doc && !starts_with(key, "-") ? doc->get(key) : std::nullopt) return scalar->text;
        return std::nullopt;
    }

    const std::optional<ConfigFile>& changed_copy() const { return copy_; }

private:
    std::vector<Hit> hits_for(const std::vector<std::string>& keys, const std::vector<std::string>& extra) const {
        return hits_of(profile_, argv_, trainer_.args_begin, keys, extra);
    }

    bool rewrite_argv(const std::vector<std::string>& keys, const std::vector<std::string>& extra, const std::string& value,
                      bool null) {
        auto hits = hits_for(keys, extra);
        for (auto it = hits.rbegin(); it != hits.rend(); ++it) {
            const Hit& hit = *it;
            const auto b = bool_word(value);
            switch (hit.form) {
                case Hit::Form::dotlist:
                case Hit::Form::deleted: argv_[hit.index] = hit.flag + "=" + (null ? "null" : value); break;
                case Hit::Form::inline_value:
                    if (null) erase(hit);
                    else argv_[hit.index] = hit.flag + "=" + value;
                    break;
                case Hit::Form::separate:
                    if (null) erase(hit);
                    else argv_[hit.index + 1] = value;
                    break;
                case Hit::Form::bare:
                case Hit::Form::negated:
                    if (null) erase(hit);
                    else if (profile_.syntax.bool_switches && b)
                        argv_[hit.index] = *b ? hit.flag : "--no-" + hit.flag.substr(2);
                    else if (hit.form == Hit::Form::bare)
                        argv_.insert(argv_.begin() + static_cast<std::ptrdiff_t>(hit.index) + 1, value);
                    break;
            }
        }
        return !hits.empty();
    }

    void erase(const Hit& hit) {
        auto at = argv_.begin() + static_cast<std::ptrdiff_t>(hit.index);
        const bool with_value = hit.form == Hit::Form::separate;
        argv_.erase(at, with_value ? at + 2 : at + 1);
    }

    void append(const std::vector<std::string>& keys, const std::vector<std::string>& extra, const std::string& value) {
        auto end = std::find(argv_.begin() + static_cast<std::ptrdiff_t>(std::min(trainer_.args_begin, argv_.size())),
                             argv_.end(), "--");
        const auto flags = profile_.flags_for_keys(keys, extra);
        const bool dotlist = profile_.syntax.overrides == OverrideSyntax::dotlist && !keys.empty() && !starts_with(keys.front(), "-");
        if (dotlist && (config_named_ || flags.empty())) {
            argv_.insert(end, keys.front() + "=" + value);
            return;
        }
        if (flags.empty()) return;
        const auto b = bool_word(value);
        if (profile_.syntax.bool_switches && b && !parse_int(value))
            argv_.insert(end, *b ? flags.front() : "--no-" + flags.front().substr(2));
        else
            argv_.insert(end, {flags.front(), value});
    }

    void set_in_copy(const std::vector<std::string>& keys, const ConfigScalar& value) {
        std::vector<std::string> file_keys;
        for (const auto& key : keys)
            if (!starts_with(key, "-")) file_keys.push_back(key);
        for (const auto& key : file_keys)
            if (config_->get(key)) {  // a scalar there (never a whole section that shares a prefix)
                copy().set(key, value);
                return;
            }
        if (!file_keys.empty()) copy().set(file_keys.front(), value);
    }

    ConfigFile& copy() {
        if (!copy_) copy_ = *config_;
        return *copy_;
    }

    const TrainerProfile& profile_;
    const TrainerInvocation& trainer_;
    const std::optional<ConfigFile>& config_;
    bool config_named_;  // the command names a config file (readable or not): overrides go with it
    std::vector<std::string>& argv_;
    std::optional<ConfigFile> copy_;
};

void apply(Writer& writer, const KnobEdit& edit) {
    switch (edit.op) {
        case KnobEdit::Op::set: writer.set(edit.keys, {}, edit.value, edit.value == "null", true); break;
        case KnobEdit::Op::remove: writer.remove(edit.keys); break;
        case KnobEdit::Op::replace:
            if (auto value = writer.current(edit.keys); value && value->find(edit.from) != std::string::npos) {
                std::string changed = *value;
                changed.replace(changed.find(edit.from), edit.from.size(), edit.to);
                writer.set(edit.keys, {}, changed, false, false);
            }
            break;
    }
}

}  // namespace

LaunchCommand TrainerCommand::render(const RenderRequest& request) const {
    LaunchCommand command{argv_, {}, std::nullopt};
    Writer writer(profile_, trainer_, config_, knobs_.config_file.has_value(), command.argv);
    const TrainConfig& was = knobs_.config;
    const TrainConfig& now = request.config;
    auto number = [](const std::optional<long>& v) { return v ? std::optional(std::to_string(*v)) : std::nullopt; };
    auto write_knob = [&](Knob knob, const std::optional<std::string>& before, const std::optional<std::string>& after) {
        const KnobBinding& binding = profile_.knob(knob);
        if (after && before != after && (!binding.keys.empty() || !binding.flags.empty()))
            writer.set(binding.keys, binding.flags, *after, false, true);
    };
    write_knob(Knob::batch_size, number(was.batch_size), number(now.batch_size));
    if (!total_batch_)  // a total batch stays: halving the batch doubles the accumulation by itself
        write_knob(Knob::grad_accum, number(was.grad_accum), number(now.grad_accum));
    write_knob(Knob::seq_len, number(was.seq_len), number(now.seq_len));
    write_knob(Knob::model, was.model, now.model);
    if (was.method == Method::qlora && now.method != Method::qlora)
        for (const auto& edit : profile_.method.to_lora) apply(writer, edit);
    if (request.resume_from && profile_.resume.supported) {
        const KnobBinding& binding = profile_.knob(Knob::resume);
        const auto& keys = profile_.resume.keys.empty() ? binding.keys : profile_.resume.keys;
        if (!keys.empty() || !binding.flags.empty())
            writer.set(keys, binding.flags, profile_.resume.boolean ? "true" : *request.resume_from, false, true);
        for (const auto& edit : profile_.resume.also) apply(writer, edit);
    }

    auto value_of = [&](Knob knob) -> std::optional<std::string> {
        switch (knob) {
            case Knob::batch_size: return number(now.batch_size);
            case Knob::grad_accum: return number(now.grad_accum);
            case Knob::seq_len: return number(now.seq_len);
            case Knob::method: return now.method ? std::optional(std::string(accounting::name(*now.method))) : std::nullopt;
            case Knob::model: return now.model;
            case Knob::output_dir: return request.output_dir ? request.output_dir : knobs_.output_dir;
            case Knob::resume: return request.resume_from;
            default: return std::nullopt;
        }
    };
    for (Knob knob : kAllKnobs) {
        const KnobBinding& binding = profile_.knob(knob);
        const std::optional<std::string> value = value_of(knob);
        if (binding.placeholder && uses_placeholder(command.argv, *binding.placeholder)) {
            if (!value && knob != Knob::resume)
                throw UsageError("trainer command", "uses {" + *binding.placeholder + "} but sparkguard has no value for it (" +
                                                        std::string(to_string(knob)) + ": give it with a run option)");
            substitute(command.argv, *binding.placeholder, value.value_or(""));
        }
        if (binding.env && value) command.env.emplace_back(*binding.env, *value);
    }

    if (const auto& copy = writer.changed_copy()) {
        const fs::path path = request.config_dir / config_->path().filename();
        if (!request.config_dir.empty()) {  // empty: a dry run, to check the command renders
            std::error_code ec;
            fs::create_directories(request.config_dir, ec);
            if (auto written = write_file_atomic(path, copy->dump()); !written)
                throw Failure("cannot write the trainer's changed config", written.error().message);
        }
        command.argv[*config_arg_] = config_inline_ ? profile_.syntax.config_flag + "=" + path.string() : path.string();
        command.config_copy = path;
    }
    return command;
}

CommandKnobs read_command_knobs(const TrainerProfile& profile, const std::vector<std::string>& argv) {
    return TrainerCommand(profile, argv).knobs();
}

LaunchCommand render_command(const TrainerProfile& profile, const std::vector<std::string>& original_argv,
                             const RenderRequest& request) {
    return TrainerCommand(profile, original_argv).render(request);
}

}  // namespace sg
