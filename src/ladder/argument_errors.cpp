#include "ladder/argument_errors.hpp"

namespace sg {

std::optional<std::string> argument_error(const std::vector<std::string>& lines) {
    static const std::string_view kPhrases[] = {
        "error: unrecognized arguments:",                            // argparse
        "error: argument ",                                          // argparse: a bad value ("invalid int value")
        "Some specified arguments are not used by the HfArgumentParser",
        "Some keys are not used by the HfArgumentParser",            // HfArgumentParser.parse_dict (LLaMA-Factory)
        "Error: No such option:",                                    // click
        "Error: no such option:",
        "Command-line overrides must be in the form of key=value",   // torchtune
        "omegaconf.errors.ConfigKeyError",
        "Could not override '",                                      // Hydra-style OmegaConf
    };
    // From the end: a Python traceback quotes the raising source line before the message itself.
    for (auto line = lines.rbegin(); line != lines.rend(); ++line)
        for (auto phrase : kPhrases)
            if (line->find(phrase) != std::string::npos) return *line;
    return std::nullopt;
}

}  // namespace sg
