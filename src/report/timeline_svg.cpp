#include "report/timeline_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "util/strings.hpp"
#include "util/svg_canvas.hpp"

namespace sg {
namespace {

constexpr double kWidth = 1200;
constexpr double kLeft = 84;
constexpr double kRight = kWidth - 24;
constexpr double kAttemptRow = 72;        // baseline of the attempts' labels
constexpr double kMarkerRow = 88;         // baseline of the first row of marker labels
constexpr double kMarkerRowStep = 14;
constexpr int kMarkerRows = 4;
constexpr double kPanelsTop = kMarkerRow + kMarkerRows * kMarkerRowStep;
constexpr double kPanelHeight = 118;
constexpr double kPanelGap = 24;
constexpr double kPanelTitle = 20;      // the band at a panel's top kept for its title and legend
constexpr double kCharWidth = 6.6;        // a generous average for 11 px sans-serif text

constexpr std::string_view kFont = "font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"11\"";
constexpr std::string_view kHalo = "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\"";

struct Style {
    std::string_view stroke;
    double width = 1.5;
    std::string_view dash = {};  // a stroke-dasharray
};

std::string stroke_attributes(const Style& style) {
    std::string out = "stroke=\"" + std::string(style.stroke) + "\" stroke-width=\"" + svg_number(style.width) + "\"";
    if (!style.dash.empty()) out += " stroke-dasharray=\"" + std::string(style.dash) + "\"";
    return out;
}

struct Scale {
    double lo = 0, hi = 1;
    double top = 0, bottom = 0;
    double y(double value) const { return bottom - (value - lo) / (hi - lo) * (bottom - top); }
};

double text_width(std::string_view text) {
    const auto chars = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
    return static_cast<double>(chars) * kCharWidth;
}

class Frame {
public:
    explicit Frame(const Timeline& t) : start_(t.start), end_(std::max(t.end, t.start + 1)) {}
    double x(double time) const { return kLeft + (time - start_) / (end_ - start_) * (kRight - kLeft); }
    double start() const { return start_; }
    double end() const { return end_; }

private:
    double start_, end_;
};

// 1, 2, 2.5, 5 × 10^k: the smallest at or above `raw`.
double nice_step(double raw) {
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * magnitude >= raw) return m * magnitude;
    return 10 * magnitude;
}

std::optional<std::pair<double, double>> value_range(const std::vector<const Series*>& series) {
    std::optional<std::pair<double, double>> range;
    for (const Series* s : series)
        for (const auto& segment : *s)
            for (const auto& p : segment) {
                if (!range) range = {p.value, p.value};
                range->first = std::min(range->first, p.value);
                range->second = std::max(range->second, p.value);
            }
    return range;
}

// From zero (or, for temperatures, from a little under the coolest reading) to a round number above the highest.
Scale scale_for(double lo, double hi, bool from_zero, double top, double bottom) {
    if (from_zero) lo = 0;
    if (hi - lo < 1e-9) hi = lo + (from_zero ? 1 : 5), lo = from_zero ? 0 : lo - 5;
    const double step = nice_step((hi - lo) / 4);
    return {from_zero ? 0 : std::floor(lo / step) * step, std::ceil(hi * 1.02 / step) * step, top, bottom};
}

// Per pixel column, the lowest and the highest value in time order: the shape survives, the size is bounded.
SvgCanvas::Points reduce(const std::vector<TimePoint>& segment, const Frame& frame, const Scale& scale) {
    SvgCanvas::Points out;
    long column = -1;
    const TimePoint* low = nullptr;
    const TimePoint* high = nullptr;
    auto flush = [&] {
        if (!low) return;
        const TimePoint* a = low->time <= high->time ? low : high;
        const TimePoint* b = a == low ? high : low;
        out.emplace_back(frame.x(a->time), scale.y(a->value));
        if (b != a) out.emplace_back(frame.x(b->time), scale.y(b->value));
    };
    for (const auto& p : segment) {
        const long c = std::lround(frame.x(p.time));
        if (c != column) {
            flush();
            column = c;
            low = high = &p;
            continue;
        }
        if (p.value < low->value) low = &p;
        if (p.value > high->value) high = &p;
    }
    flush();
    return out;
}

void draw_series(SvgCanvas& svg, const Series& series, const Frame& frame, const Scale& scale, const Style& style) {
    const std::string attributes = stroke_attributes(style);
    for (const auto& segment : series) {
        const auto points = reduce(segment, frame, scale);
        if (points.size() == 1) svg.circle(points[0].first, points[0].second, 2.5, "fill=\"" + std::string(style.stroke) + "\"");
        else svg.polyline(points, attributes);
    }
}

std::string two_digits(long value) { return (value < 10 ? "0" : "") + std::to_string(value); }

// "22:40", "22:40:30", or at midnight the date "11-30".
std::string tick_label(double time, int offset_minutes, double step) {
    const long long local = static_cast<long long>(std::llround(time)) + offset_minutes * 60LL;
    const long long day_s = ((local % 86400) + 86400) % 86400;
    if (day_s == 0 && step < 86400) {
        const std::string date = format_local(time, offset_minutes);
        return date.substr(5, 5);
    }
    std::string label = two_digits(day_s / 3600) + ":" + two_digits(day_s % 3600 / 60);
    if (step < 60) label += ":" + two_digits(day_s % 60);
    return label;
}

// "+0", "+45s", "+2m05s", "+12m", "+1h05m": time since the run started, to the tick step's precision.
std::string elapsed_label(double seconds, double step) {
    const long long s = std::llround(std::max(0.0, seconds));
    if (s == 0) return "+0";
    if (s < 60) return "+" + std::to_string(s) + "s";
    if (step < 60) return "+" + std::to_string(s / 60) + "m" + two_digits(s % 60) + "s";
    const long long m = (s + 30) / 60;
    return m < 60 ? "+" + std::to_string(m) + "m" : "+" + std::to_string(m / 60) + "h" + two_digits(m % 60) + "m";
}

void draw_time_axis(SvgCanvas& svg, const Timeline& t, const Frame& frame, double top, double bottom) {
    const double step = tick_step(frame.end() - frame.start(), static_cast<int>((kRight - kLeft) / 95));
    const double offset = t.utc_offset_minutes * 60.0;
    double tick = std::ceil((frame.start() + offset) / step) * step - offset;
    for (; tick <= frame.end() + 1e-6; tick += step) {
        const double x = frame.x(tick);
        svg.line(x, top, x, bottom, "stroke=\"#dee2e6\" stroke-width=\"1\"");
        svg.line(x, bottom, x, bottom + 4, "stroke=\"#495057\"");
        if (x < kLeft + 30 || x > kWidth - 36) continue;  // its label would run into the axis caption or off the page
        svg.text(x, bottom + 16, tick_label(tick, t.utc_offset_minutes, step), "text-anchor=\"middle\" fill=\"#212529\"");
        svg.text(x, bottom + 29, elapsed_label(tick - t.start, step), "text-anchor=\"middle\" fill=\"#868e96\"");
    }
    svg.text(kLeft - 12, bottom + 16, format_utc_offset(t.utc_offset_minutes), "text-anchor=\"end\" fill=\"#495057\" font-size=\"10\"");
    svg.text(kLeft - 12, bottom + 29, "elapsed", "text-anchor=\"end\" fill=\"#868e96\" font-size=\"10\"");
}

void draw_attempts(SvgCanvas& svg, const Timeline& t, const Frame& frame, double bottom) {
    for (size_t i = 0; i < t.attempts.size(); ++i) {
        const AttemptBand& a = t.attempts[i];
        const double x0 = std::max(kLeft, frame.x(a.start)), x1 = std::min(kRight, frame.x(a.end));
        svg.begin_group("attempt " + std::to_string(a.n) + " \xC2\xB7 " + a.rung + ": " + a.outcome);
        svg.rect(x0, kAttemptRow - 13, std::max(1.0, x1 - x0), bottom - (kAttemptRow - 13),
                 i % 2 == 0 ? "fill=\"#e7f0fb\"" : "fill=\"#f1f3f5\"");
        const std::string n = std::to_string(a.n);
        for (const std::string& label : {"attempt " + n + " \xC2\xB7 " + a.rung, n + " \xC2\xB7 " + a.rung, n}) {
            if (text_width(label) + 8 > x1 - x0) continue;  // the longest label the band has room for
            svg.text(x0 + 4, kAttemptRow, label, "fill=\"#343a40\" font-weight=\"bold\"");
            break;
        }
        svg.end_group();
    }
}

std::string_view marker_color(const Marker& m) {
    switch (m.kind) {
        case MarkerKind::oom: return "#e03131";
        case MarkerKind::rung: return "#1c7ed6";
        case MarkerKind::stall: return "#f08c00";
        case MarkerKind::throttle: return "#9c36b5";
        case MarkerKind::power_cap: return "#c2255c";
        case MarkerKind::end: return m.failure ? "#e03131" : "#2b8a3e";
    }
    return "#495057";
}

std::string_view marker_dash(MarkerKind kind) {
    switch (kind) {
        case MarkerKind::rung: return "stroke-dasharray=\"5 3\"";
        case MarkerKind::throttle: case MarkerKind::power_cap: return "stroke-dasharray=\"2 2\"";
        default: return "";
    }
}

// Label rows filled left to right: a label goes to the row where it lands nearest its line (it
// may be pushed right, up to kMaxShift); a label that fits nowhere is left to the tooltip.
class LabelRows {
public:
    static constexpr double kMaxShift = 160;

    struct Place {
        int row;
        double from;
    };

    std::optional<Place> place(double from, double width) {
        std::optional<Place> best;
        for (int row = 0; row < kMarkerRows; ++row) {
            const double at = std::max(from, ends_[static_cast<size_t>(row)] + 8);
            if (at - from <= kMaxShift && at + width <= kRight && (!best || at < best->from)) best = Place{row, at};
        }
        if (best) ends_[static_cast<size_t>(best->row)] = best->from + width;
        return best;
    }

    // Ending at `to` (a line at the right edge labelled on its left), in the first row free there.
    std::optional<Place> place_before(double to, double width) {
        for (int row = 0; row < kMarkerRows; ++row) {
            double& end = ends_[static_cast<size_t>(row)];
            if (end + 8 > to - width || to - width < kLeft) continue;
            end = to;
            return Place{row, to - width};
        }
        return std::nullopt;
    }

private:
    std::array<double, kMarkerRows> ends_{};
};

void draw_markers(SvgCanvas& svg, const Timeline& t, const Frame& frame, double bottom) {
    std::vector<const Marker*> order;
    for (const auto& m : t.markers) order.push_back(&m);
    std::stable_sort(order.begin(), order.end(), [](const Marker* a, const Marker* b) { return a->time < b->time; });
    LabelRows rows;
    for (const Marker* m : order) {
        const double x = std::clamp(frame.x(m->time), kLeft, kRight);
        const std::string color(marker_color(*m));
        const double width = text_width(m->label);
        auto place = rows.place(x + 3, width);
        if (!place) place = rows.place_before(x - 3, width);
        const double baseline = place ? kMarkerRow + place->row * kMarkerRowStep : 0;
        svg.begin_group(m->label + (m->detail.empty() ? "" : ": " + m->detail));
        svg.line(x, place ? baseline - 10 : kPanelsTop, x, bottom,
                 "stroke=\"" + color + "\" stroke-width=\"" + (m->kind == MarkerKind::oom || m->kind == MarkerKind::end ? "2" : "1.3") +
                     "\" " + std::string(marker_dash(m->kind)));
        if (place && place->from > x + 3)  // pushed right: a leader above the row's glyphs, from the line to the label
            svg.line(x, baseline - 11, place->from, baseline - 11, "stroke=\"" + color + "\" stroke-width=\"1\"");
        if (place)
            svg.text(place->from, baseline, m->label, "fill=\"" + color + "\" font-weight=\"bold\" " + std::string(kHalo));
        svg.end_group();
    }
}

struct LegendItem {
    std::string label;
    Style style;
};

struct Panel {
    std::string title;
    std::vector<std::pair<const Series*, Style>> series;
    std::vector<LegendItem> legend;
    std::vector<std::pair<double, LegendItem>> levels;  // horizontal lines: the cap, the estimate
    std::string empty_note;
    bool from_zero = true;
};

void draw_legend(SvgCanvas& svg, const std::vector<LegendItem>& legend, double top) {
    double x = kRight - 6;
    for (auto it = legend.rbegin(); it != legend.rend(); ++it) {
        const double width = text_width(it->label);
        svg.text(x, top + 13, it->label, "text-anchor=\"end\" fill=\"#343a40\" " + std::string(kHalo));
        x -= width + 4;
        svg.line(x - 18, top + 9, x, top + 9, stroke_attributes(it->style));
        x -= 30;
    }
}

void draw_y_axis(SvgCanvas& svg, const Scale& scale) {
    const double step = nice_step((scale.hi - scale.lo) / 4);
    for (double v = scale.lo; v <= scale.hi + step * 1e-6; v += step) {
        const double y = scale.y(v);
        svg.line(kLeft, y, kRight, y, "stroke=\"#dee2e6\" stroke-width=\"1\"");
        svg.text(kLeft - 6, y + 4, step < 1 ? fixed(v, 1) : fixed(v, 0), "text-anchor=\"end\" fill=\"#495057\"");
    }
}

void draw_panel(SvgCanvas& svg, const Panel& panel, const Frame& frame, double top) {
    const double bottom = top + kPanelHeight;
    std::vector<const Series*> all;
    for (const auto& [series, style] : panel.series) all.push_back(series);
    auto range = value_range(all);
    for (const auto& [level, item] : panel.levels) {
        if (!range) range = {level, level};
        range->first = std::min(range->first, level);
        range->second = std::max(range->second, level);
    }
    svg.rect(kLeft, top, kRight - kLeft, kPanelHeight, "fill=\"none\" stroke=\"#adb5bd\"");
    if (range) {
        const Scale scale = scale_for(range->first, range->second, panel.from_zero, top + kPanelTitle, bottom);
        draw_y_axis(svg, scale);
        for (const auto& [level, item] : panel.levels) {
            svg.line(kLeft, scale.y(level), kRight, scale.y(level), stroke_attributes(item.style));
        }
        for (const auto& [series, style] : panel.series) draw_series(svg, *series, frame, scale, style);
    }
    if (!panel.empty_note.empty())
        svg.text((kLeft + kRight) / 2, top + kPanelHeight / 2 + 4, panel.empty_note,
                 "text-anchor=\"middle\" fill=\"#868e96\" font-style=\"italic\" " + std::string(kHalo));
    svg.text(kLeft + 6, top + 13, panel.title, "font-weight=\"bold\" fill=\"#212529\" " + std::string(kHalo));
    draw_legend(svg, panel.legend, top);
}

// Without thermal.csv, each attempt's measured peak as a flat line across its band.
Series attempt_peaks(const Timeline& t) {
    Series out;
    for (const auto& a : t.attempts)
        if (a.peak_pool_used_gb) out.push_back({{a.start, *a.peak_pool_used_gb}, {a.end, *a.peak_pool_used_gb}});
    return out;
}

std::vector<Panel> panels_of(const Timeline& t, const Series& peaks) {
    const Style temp{"#e8590c"}, power{"#1971c2"}, limit{"#868e96", 1.2, "6 3"}, cap{"#c2255c", 1.5, "3 3"};
    const Style used{"#2f9e44"}, total{"#495057", 1.2}, peak{"#2f9e44", 2.5, "1 3"}, estimate{"#f08c00", 1.5, "8 4"};
    const Style rate{"#7048e8"};

    Panel temperature{"GPU temperature (\xC2\xB0""C)", {{&t.temp_c, temp}}, {}, {}, t.temp_c.empty() ? t.thermal_note : "", false};
    Panel power_panel{"GPU power (W)", {{&t.power_w, power}, {&t.power_limit_w, limit}}, {}, {}, t.power_w.empty() ? t.thermal_note : ""};
    if (!t.power_w.empty()) power_panel.legend.push_back({"draw", power});
    if (!t.power_limit_w.empty()) power_panel.legend.push_back({"limit", limit});
    if (t.cap_w) power_panel.levels.push_back({*t.cap_w, {"cap " + fixed(*t.cap_w, 0) + " W", cap}}), power_panel.legend.push_back({"cap " + fixed(*t.cap_w, 0) + " W", cap});

    Panel memory{"pool memory (GB)", {{&t.pool_used_gb, used}, {&t.pool_total_gb, total}}, {}, {}, t.memory_note};
    if (!t.pool_used_gb.empty()) memory.legend = {{"used", used}, {"total", total}};
    else if (!peaks.empty()) memory.series = {{&peaks, peak}}, memory.legend = {{"peak per attempt", peak}};
    if (t.estimate_gb) {
        memory.levels.push_back({*t.estimate_gb, {"estimate", estimate}});
        memory.legend.push_back({"estimate " + fixed(*t.estimate_gb, 1) + " GB", estimate});
    }
    if (!memory.empty_note.empty() && !peaks.empty()) memory.empty_note.clear();

    Panel steps{"step rate (steps/min)", {{&t.step_rate, rate}}, {}, {}, t.steps_note};
    return {temperature, power_panel, memory, steps};
}

void draw_marker_key(SvgCanvas& svg, double y) {
    const std::array<std::pair<MarkerKind, std::string_view>, 6> key = {{{MarkerKind::oom, "OOM"},
                                                                         {MarkerKind::rung, "rung change"},
                                                                         {MarkerKind::stall, "stall"},
                                                                         {MarkerKind::throttle, "throttle"},
                                                                         {MarkerKind::power_cap, "power cap"},
                                                                         {MarkerKind::end, "end"}}};
    double x = kLeft;
    for (const auto& [kind, label] : key) {
        Marker sample;
        sample.kind = kind;
        svg.line(x, y - 4, x + 16, y - 4, "stroke=\"" + std::string(marker_color(sample)) + "\" stroke-width=\"2\" " + std::string(marker_dash(kind)));
        svg.text(x + 20, y, label, "fill=\"#495057\"");
        x += 20 + text_width(label) + 18;
    }
    svg.text(kRight, y, "hover a marker for its details", "text-anchor=\"end\" fill=\"#868e96\"");
}

}  // namespace

double tick_step(double span_s, int max_ticks) {
    static constexpr std::array<double, 18> kSteps = {1,    2,    5,    10,    15,    30,    60,    120,   300,
                                                      600,  900,  1800, 3600,  7200,  10800, 21600, 43200, 86400};
    for (double step : kSteps)
        if (span_s / step <= max_ticks) return step;
    return std::ceil(span_s / max_ticks / 86400) * 86400;
}

std::string render_timeline_svg(const Timeline& t) {
    const Frame frame(t);
    const Series peaks = attempt_peaks(t);
    const std::vector<Panel> panels = panels_of(t, peaks);
    const double panels_bottom = kPanelsTop + static_cast<double>(panels.size()) * (kPanelHeight + kPanelGap) - kPanelGap;
    const double height = panels_bottom + 64;
    SvgCanvas svg(kWidth, height, kFont);
    svg.rect(0, 0, kWidth, height, "fill=\"#ffffff\"");
    svg.text(kLeft, 24, t.title, "font-size=\"16\" font-weight=\"bold\" fill=\"#212529\"");
    svg.text(kLeft, 44, t.subtitle, "font-size=\"12\" fill=\"#495057\"");
    draw_attempts(svg, t, frame, panels_bottom);
    draw_time_axis(svg, t, frame, kPanelsTop, panels_bottom);
    for (size_t i = 0; i < panels.size(); ++i)
        draw_panel(svg, panels[i], frame, kPanelsTop + static_cast<double>(i) * (kPanelHeight + kPanelGap));
    draw_markers(svg, t, frame, panels_bottom);
    draw_marker_key(svg, height - 8);
    return svg.finish();
}

}  // namespace sg
