#include "util/svg_canvas.hpp"

#include <cmath>

#include "util/strings.hpp"
#include "util/xml.hpp"

namespace sg {

std::string svg_number(double value) {
    const double rounded = std::round(value * 10) / 10;
    if (rounded == std::floor(rounded)) return std::to_string(static_cast<long long>(rounded));
    return fixed(rounded, 1);
}

SvgCanvas::SvgCanvas(double width, double height, std::string_view root_attributes) {
    const std::string w = svg_number(width), h = svg_number(height);
    out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w +
           "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\"";
    if (!root_attributes.empty()) out_ += " " + std::string(root_attributes);
    out_ += ">\n";
}

void SvgCanvas::rect(double x, double y, double width, double height, std::string_view attributes) {
    out_ += "<rect x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" width=\"" + svg_number(width) + "\" height=\"" +
            svg_number(height) + "\" " + std::string(attributes) + "/>\n";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, std::string_view attributes) {
    out_ += "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" + svg_number(x2) + "\" y2=\"" +
            svg_number(y2) + "\" " + std::string(attributes) + "/>\n";
}

void SvgCanvas::polyline(const Points& points, std::string_view attributes) {
    if (points.empty()) return;
    out_ += "<polyline fill=\"none\" " + std::string(attributes) + " points=\"";
    for (size_t i = 0; i < points.size(); ++i) {
        if (i) out_ += ' ';
        out_ += svg_number(points[i].first) + "," + svg_number(points[i].second);
    }
    out_ += "\"/>\n";
}

void SvgCanvas::circle(double cx, double cy, double r, std::string_view attributes) {
    out_ += "<circle cx=\"" + svg_number(cx) + "\" cy=\"" + svg_number(cy) + "\" r=\"" + svg_number(r) + "\" " +
            std::string(attributes) + "/>\n";
}

void SvgCanvas::text(double x, double y, std::string_view content, std::string_view attributes) {
    out_ += "<text x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\"";
    if (!attributes.empty()) out_ += " " + std::string(attributes);
    out_ += ">" + xml_escape(content, 400) + "</text>\n";
}

void SvgCanvas::begin_group(std::string_view tooltip, std::string_view attributes) {
    out_ += attributes.empty() ? "<g>" : "<g " + std::string(attributes) + ">";
    if (!tooltip.empty()) out_ += "<title>" + xml_escape(tooltip, 1000) + "</title>";
    out_ += "\n";
    ++open_groups_;
}

void SvgCanvas::end_group() {
    if (open_groups_ == 0) return;
    out_ += "</g>\n";
    --open_groups_;
}

std::string SvgCanvas::finish() {
    while (open_groups_ > 0) end_group();
    return out_ + "</svg>\n";
}

}  // namespace sg
