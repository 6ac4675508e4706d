#include "accounting/anchors.hpp"

#include <algorithm>
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

constexpr double kComparableSizeRatio = 3;
constexpr double kFarOff = 0.20;

const std::vector<std::string_view>& term_names() {
    static const std::vector<std::string_view> names = {"weights", "adapter", "optimizer and gradients", "activations",
                                                        "overhead"};
    return names;
}

std::vector<std::pair<std::string, double>> parse_terms(const fs::path& file, const toml::table& t) {
    std::vector<std::pair<std::string, double>> terms;
    reject_unknown_keys(file, t, term_names(), "an anchor's [anchor.terms]");
    for (const auto name : term_names())
        if (auto gb = t[name].value<double>()) terms.emplace_back(std::string(name), *gb);
    return terms;
}

Anchor parse_anchor(const fs::path& file, const toml::table& t) {
    reject_unknown_keys(file, t, {"name", "description", "platform", "params_b", "moe", "method", "observed_gb",
                                  "fits", "observed", "source", "terms"},
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
    if (const auto* terms = t["terms"].as_table()) a.terms = parse_terms(file, *terms);
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

bool AnchorMatch::far_off() const {
    return anchor && anchor->observed_gb && delta_gb && std::abs(*delta_gb) > kFarOff * *anchor->observed_gb;
}

std::vector<std::pair<std::string, double>> plan_terms(const Estimate& e) {
    return {{"weights", e.weights_gb},
            {"adapter", e.adapter_gb},
            {"optimizer and gradients", e.optimizer_gb + e.gradients_gb},
            {"activations", e.activations_gb},
            {"overhead", e.overhead_gb}};
}

namespace {

// The published terms that differ, largest first, up to those that explain the gap.
std::vector<TermDifference> differences(const Anchor& anchor, const Estimate& estimate) {
    std::vector<TermDifference> out;
    for (const auto& [term, plan_gb] : plan_terms(estimate))
        for (const auto& [name, observed] : anchor.terms)
            if (name == term) out.push_back({term, plan_gb, observed});
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return std::abs(a.delta_gb()) > std::abs(b.delta_gb()); });
    std::erase_if(out, [](const TermDifference& d) { return std::abs(d.delta_gb()) < 0.05; });
    return out;
}

}  // namespace

AnchorMatch nearest_anchor(const std::vector<Anchor>& anchors, double params_b, bool moe, Method method,
                           const Estimate& estimate) {
    AnchorMatch best;
    for (const auto& a : anchors) {
        if (a.method != method || a.moe != moe) continue;  // like with like, or nothing
        const double distance = std::abs(std::log(std::max(params_b, 1e-3) / a.params_b));
        if (distance > std::log(kComparableSizeRatio)) continue;
        if (!best.anchor || distance < best.distance) best = {&a, distance, std::nullopt, {}};
    }
    if (best.anchor && best.anchor->observed_gb) best.delta_gb = estimate.peak_gb - *best.anchor->observed_gb;
    if (best.far_off()) best.differences = differences(*best.anchor, estimate);
    return best;
}

}  // namespace sg::accounting
