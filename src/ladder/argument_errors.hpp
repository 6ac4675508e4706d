#pragma once
// A trainer that dies because its parser rejected an argument: after sparkguard rewrote the
// command, that is sparkguard's rewrite refused, not the trainer's failure. Pure: lines in.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sg {

// The last line of `lines` in which an argument parser refuses an argument (argparse's
// "unrecognized arguments", HfArgumentParser's "Some specified arguments are not used", click's
// "No such option", OmegaConf/torchtune override errors), or nullopt.
std::optional<std::string> argument_error(const std::vector<std::string>& lines);

}  // namespace sg
