#include "accounting/anchors.hpp"

#include <cmath>

#include "util/errors.hpp"
#include "util/paths.hpp"
#include "util/toml_file.hpp"

namespace sg::accounting {
namespace {

namespace fs = std::filesystem;

std::string required(const fs::path& file, const toml::table& t, const char* key) {
    auto value = t[key].value<std::string>();
    if (!value || value->empty()) throw UsageError(where(file, t), std::string("anchor needs a string '") + key + "'");
    return *value;
}

Anchor parse_anchor(const fs::path& file, const toml::table& t) {
    reject_unknown_keys(file, t, {"name", "description", "platform", "params_b", "moe", "method", "observed_gb",
                                  "fits", "observed", "source"},
                        "an [[anchor]] entry");
    Anchor a;
    a.name = required(file, t, "name");
    a.description = required(file, t, "description");
    a.platform = required(file, t, "platform");
    a.observed = required(file, t, "observed");
    a.source = required(file, t, "source");
    a.params_b = t["params_b"].value_or(0.0);
    if (a.params_b <= 0) throw UsageError(where(file, t), "anchor '" + a.name + "' needs a positive 'params_b'");
    a.moe = t["moe"].value_or(false);
    a.fits = t["fits"].value_or(true);
    auto method = parse_method(t["method"].value_or(std::string()));
    if (!method) throw UsageError(where(file, t), "anchor '" + a.name + "': 'method' must be " + choices_of_method());
    a.method = *method;
    if (auto observed = t["observed_gb"].value<double>()) a.observed_gb = *observed;
    return a;
}

}  // namespace

std::vector<Anchor> load_anchors(const fs::path& file) {
    const toml::table root = parse_toml_file(file);
    reject_unknown_keys(file, root, {"anchor"});
    std::vector<Anchor> anchors;
    if (const auto* list = root["anchor"].as_array())
        for (const auto& node : *list) {
            const auto* table = node.as_table();
            if (!table) throw UsageError(where(file, node), "[[anchor]] must be a table");
            anchors.push_back(parse_anchor(file, *table));
        }
    return anchors;
}

const std::vector<Anchor>& default_anchors() {
    static const std::vector<Anchor> anchors = [] {
        auto file = find_profile_file("anchors.toml");
        return file ? load_anchors(*file) : std::vector<Anchor>{};
    }();
    return anchors;
}

AnchorMatch nearest_anchor(const std::vector<Anchor>& anchors, double params_b, bool moe, Method method,
                           double estimate_gb) {
    AnchorMatch best;
    for (const auto& a : anchors) {
        const double distance = std::abs(std::log(std::max(params_b, 1e-3) / a.params_b)) +
                                (a.method == method ? 0 : 1) + (a.moe == moe ? 0 : 0.5);
        if (!best.anchor || distance < best.distance) best = {&a, distance, std::nullopt};
    }
    if (best.anchor && best.anchor->observed_gb) best.delta_gb = estimate_gb - *best.anchor->observed_gb;
    return best;
}

}  // namespace sg::accounting
