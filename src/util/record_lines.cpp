#include "util/record_lines.hpp"

namespace sg {

std::string torn_warning(std::string_view file_name, size_t line_number) {
    return std::string(file_name) + ":" + std::to_string(line_number) +
           ": torn line ignored (the run was stopped while writing it)";
}

std::string line_error(std::string_view file_name, size_t line_number, std::string_view field, std::string_view why) {
    std::string out = std::string(file_name) + ":" + std::to_string(line_number) + ": ";
    if (!field.empty()) out += "field '" + std::string(field) + "': ";
    return out + std::string(why);
}

}  // namespace sg
