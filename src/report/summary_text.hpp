#pragma once
// The summary as text for a terminal: 80 columns where the content allows (the command line that
// reproduces the run is never cut, so it can be copied).

#include <string>

#include "report/run_summary.hpp"

namespace sg {

std::string format_summary_text(const RunSummary& summary);

}  // namespace sg
