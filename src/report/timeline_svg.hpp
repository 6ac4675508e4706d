#pragma once
// The timeline as an SVG document: stacked panels (temperature, power, pool memory, step rate)
// on one time axis, attempts shaded, OOMs, rungs, stalls, throttling and the end marked.
// Plain SVG 1.1 that any browser renders; bounded size whatever the run's length (a series is
// reduced to its lowest and highest value per pixel column).

#include <string>

#include "report/timeline.hpp"

namespace sg {

std::string render_timeline_svg(const Timeline& timeline);

// Time-axis ticks for a span: the step (seconds) from 1-2-5-like human steps (10 s ... 1 day)
// that gives at most `max_ticks`, aligned to the run's local clock.
double tick_step(double span_s, int max_ticks);

}  // namespace sg
