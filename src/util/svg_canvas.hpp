#pragma once
// A minimal SVG writer: elements appended to a string, every piece of text escaped. Attributes
// are passed as written ("stroke=\"#888\" stroke-width=\"1\""): they come from the caller's
// constants, never from data.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sg {

class SvgCanvas {
public:
    using Points = std::vector<std::pair<double, double>>;

    SvgCanvas(double width, double height, std::string_view root_attributes = {});

    void rect(double x, double y, double width, double height, std::string_view attributes);
    void line(double x1, double y1, double x2, double y2, std::string_view attributes);
    void polyline(const Points& points, std::string_view attributes);
    void circle(double cx, double cy, double r, std::string_view attributes);
    void text(double x, double y, std::string_view content, std::string_view attributes = {});
    // A group whose <title> is the tooltip a browser shows for what it holds.
    void begin_group(std::string_view tooltip = {}, std::string_view attributes = {});
    void end_group();
    // The document, closed.
    std::string finish();

private:
    std::string out_;
    int open_groups_ = 0;
};

// A coordinate with one decimal and no trailing ".0".
std::string svg_number(double value);

}  // namespace sg
