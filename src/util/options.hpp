#pragma once
// A small table-driven command-line parser. Each subcommand declares its options once; the same
// table produces --help, and tests check the man page against it.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sg {

struct OptionSpec {
    std::string name;        // long name without the dashes: "batch"
    std::string metavar;     // "N" for an option taking a value; empty for a flag
    std::string help;
    char short_name = 0;     // 'o' for -o, 0 for none
    bool repeatable = false; // may be given more than once (values accumulate)
};

class ParsedArgs {
public:
    bool has(std::string_view name) const;
    std::optional<std::string> get(std::string_view name) const;
    std::vector<std::string> all(std::string_view name) const;
    const std::vector<std::string>& positionals() const { return positionals_; }
    // Everything after "--" (or after the first positional when the parser was told to stop there).
    const std::vector<std::string>& rest() const { return rest_; }
    bool saw_dashdash() const { return saw_dashdash_; }

    // Typed accessors; a malformed or out-of-range value throws UsageError naming the option.
    std::optional<long long> get_int(std::string_view name, long long min, long long max) const;
    std::optional<double> get_double(std::string_view name, double min, double max) const;
    // --NAME / --no-NAME pairs: the one given last wins; nullopt when neither was given.
    std::optional<bool> get_switch(std::string_view name) const;

private:
    friend ParsedArgs parse_args(std::span<const OptionSpec>, std::span<const std::string>, bool);
    std::vector<std::pair<std::string, std::string>> values_;  // in command-line order
    std::vector<std::string> positionals_;
    std::vector<std::string> rest_;
    bool saw_dashdash_ = false;
};

// Throws UsageError for unknown options, missing values, values given to flags and repeated
// non-repeatable options. "--help"/"-h" is always accepted.
ParsedArgs parse_args(std::span<const OptionSpec> specs, std::span<const std::string> args,
                      bool stop_at_first_positional = false);

std::string format_help(std::string_view usage, std::string_view summary,
                        std::span<const OptionSpec> specs, std::string_view epilog = {});

}  // namespace sg
