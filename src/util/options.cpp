#include "util/options.hpp"

#include <algorithm>
#include <sstream>

#include "util/errors.hpp"
#include "util/parse.hpp"

namespace sg {
namespace {

const OptionSpec kHelp{"help", "", "show this help and exit", 'h'};

const OptionSpec* find_long(std::span<const OptionSpec> specs, std::string_view name) {
    if (name == kHelp.name) return &kHelp;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == name; });
    return it == specs.end() ? nullptr : &*it;
}

const OptionSpec* find_short(std::span<const OptionSpec> specs, char c) {
    if (c == kHelp.short_name) return &kHelp;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.short_name == c; });
    return it == specs.end() ? nullptr : &*it;
}

std::string spelled(const OptionSpec& spec) { return "--" + spec.name; }

}  // namespace

bool ParsedArgs::has(std::string_view name) const {
    return std::any_of(values_.begin(), values_.end(), [&](const auto& kv) { return kv.first == name; });
}

std::optional<std::string> ParsedArgs::get(std::string_view name) const {
    for (auto it = values_.rbegin(); it != values_.rend(); ++it)
        if (it->first == name) return it->second;
    return std::nullopt;
}

std::vector<std::string> ParsedArgs::all(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& [key, value] : values_)
        if (key == name) out.push_back(value);
    return out;
}

std::optional<long long> ParsedArgs::get_int(std::string_view name, long long min, long long max) const {
    auto text = get(name);
    if (!text) return std::nullopt;
    auto value = parse_int(*text);
    if (!value) throw UsageError("--" + std::string(name), value.error().message);
    if (*value < min || *value > max)
        throw UsageError("--" + std::string(name),
                         "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + *text);
    return *value;
}

std::optional<double> ParsedArgs::get_double(std::string_view name, double min, double max) const {
    auto text = get(name);
    if (!text) return std::nullopt;
    auto value = parse_double(*text);
    if (!value) throw UsageError("--" + std::string(name), value.error().message);
    if (*value < min || *value > max) {
        std::ostringstream range;
        range << "must be between " << min << " and " << max << ", got " << *text;
        throw UsageError("--" + std::string(name), range.str());
    }
    return *value;
}

std::optional<bool> ParsedArgs::get_switch(std::string_view name) const {
    const std::string negated = "no-" + std::string(name);
    for (auto it = values_.rbegin(); it != values_.rend(); ++it) {
        if (it->first == name) return true;
        if (it->first == negated) return false;
    }
    return std::nullopt;
}

ParsedArgs parse_args(std::span<const OptionSpec> specs, std::span<const std::string> args,
                      bool stop_at_first_positional) {
    ParsedArgs out;
    auto record = [&](const OptionSpec& spec, std::string value) {
        if (!spec.repeatable && !spec.metavar.empty() && out.has(spec.name))
            throw UsageError(spelled(spec), "given more than once");
        out.values_.emplace_back(spec.name, std::move(value));
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            out.saw_dashdash_ = true;
            out.rest_.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') {
            if (stop_at_first_positional) {
                out.rest_.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
                break;
            }
            out.positionals_.push_back(arg);
            continue;
        }
        const OptionSpec* spec = nullptr;
        std::optional<std::string> inline_value;
        if (arg[1] == '-') {
            std::string_view body = std::string_view(arg).substr(2);
            auto eq = body.find('=');
            if (eq != std::string_view::npos) inline_value = std::string(body.substr(eq + 1));
            spec = find_long(specs, body.substr(0, eq));
        } else if (arg.size() == 2) {
            spec = find_short(specs, arg[1]);
        }
        if (!spec) throw UsageError(arg, "unknown option (see --help)");
        if (spec->metavar.empty()) {
            if (inline_value) throw UsageError(spelled(*spec), "takes no value");
            record(*spec, "");
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= args.size()) throw UsageError(spelled(*spec), "needs a value (" + spec->metavar + ")");
            inline_value = args[++i];
        }
        record(*spec, std::move(*inline_value));
    }
    return out;
}

std::string format_help(std::string_view usage, std::string_view summary, std::span<const OptionSpec> specs,
                        std::string_view epilog) {
    std::ostringstream out;
    out << "usage: " << usage << "\n\n" << summary << "\n\noptions:\n";
    auto left_column = [](const OptionSpec& spec) {
        std::string text = spec.short_name ? std::string("-") + spec.short_name + ", " : "    ";
        text += "--" + spec.name;
        if (!spec.metavar.empty()) text += " " + spec.metavar;
        return text;
    };
    size_t width = left_column(kHelp).size();
    for (const auto& spec : specs) width = std::max(width, left_column(spec).size());
    auto line = [&](const OptionSpec& spec) {
        std::string left = left_column(spec);
        out << "  " << left << std::string(width - left.size() + 2, ' ') << spec.help << "\n";
    };
    for (const auto& spec : specs) line(spec);
    line(kHelp);
    if (!epilog.empty()) out << "\n" << epilog << (epilog.back() == '\n' ? "" : "\n");
    return out.str();
}

}  // namespace sg
