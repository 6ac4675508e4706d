// The estimator against published peak-memory measurements (tests/data/calibration.toml, which
// names each source). Prints the error table; fails when the median error exceeds 10% or when a
// configuration measured to run out of memory would be called "fits".
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "accounting/catalog.hpp"
#include "accounting/estimator.hpp"
#include "util/strings.hpp"

using namespace sg::accounting;

namespace {

struct Point {
    std::string id;
    Estimate estimate;
    double predicted_gb = 0;
    double measured_gb = 0;
    bool oom = false;
    double card_gb = 0;
    std::string metric;
};

Workload workload_of(const toml::table& p) {
    Workload w;
    w.method = *parse_method(p["method"].value_or(std::string("lora")));
    w.weight_dtype = w.method == Method::qlora ? DType::nf4 : DType::bf16;
    if (auto dtype = p["weight_dtype"].value<std::string>()) w.weight_dtype = *parse_dtype(*dtype);
    w.optimizer = *parse_optimizer(p["optimizer"].value_or(std::string("adamw")));
    w.batch = p["batch"].value_or(1);
    w.seq = p["seq"].value_or(2048);
    w.lora_r = p["lora_r"].value_or(64);
    std::string unknown;
    w.lora_targets = *canonical_lora_targets(sg::split(p["lora_targets"].value_or(std::string("all-linear")), ','), &unknown);
    w.lora_dropout = 0.05;
    return w;
}

std::vector<Point> load_points() {
    const toml::table root = toml::parse_file(SPARKGUARD_TEST_DATA "/calibration.toml");
    std::map<std::string, ModelShape> models;
    for (const auto& [name, node] : *root["model"].as_table()) {
        auto arch = architecture_from_hf_config(config_json_from_toml(*node.as_table()), std::string(name.str()));
        INFO((arch ? std::string() : arch.error().message));
        REQUIRE(arch);
        models[std::string(name.str())] = ModelShape{*arch, total_params(*arch), 0, 0, false};
    }
    std::vector<Point> points;
    const PlatformTraits card;  // discrete card: allocator slack and CUDA context
    for (const auto& node : *root["point"].as_array()) {
        const toml::table& p = *node.as_table();
        Point point;
        point.id = *p["id"].value<std::string>();
        point.metric = p["metric"].value_or(std::string("device"));
        point.oom = p["outcome"].value_or(std::string("ran")) == "oom";
        point.card_gb = p["card_gb"].value_or(0.0);
        point.measured_gb = p["measured_gb"].value_or(0.0);
        point.estimate = estimate(models.at(*p["model"].value<std::string>()), workload_of(p), card);
        point.predicted_gb = point.metric == "reserved" ? point.estimate.reserved_gb(card) : point.estimate.train_peak_gb;
        points.push_back(point);
    }
    return points;
}

}  // namespace

TEST_CASE("estimator against published measurements", "[calibration]") {
    const auto points = load_points();
    std::vector<double> errors;
    std::printf("\n%-44s %-9s %9s %9s %8s\n", "measurement", "metric", "measured", "estimate", "error");
    for (const auto& p : points) {
        if (p.oom) {
            std::printf("%-44s %-9s %9s %9.1f %8s\n", p.id.c_str(), "oom", ("> " + sg::fixed(p.card_gb, 0)).c_str(),
                        p.predicted_gb, "-");
            continue;
        }
        const double error = (p.predicted_gb - p.measured_gb) / p.measured_gb;
        errors.push_back(std::abs(error));
        std::printf("%-44s %-9s %9.1f %9.1f %+7.1f%%\n", p.id.c_str(), p.metric.c_str(), p.measured_gb, p.predicted_gb,
                    100 * error);
    }
    std::sort(errors.begin(), errors.end());
    const double median = errors[errors.size() / 2];
    std::printf("median |error| %.1f%% over %zu measurements\n\n", 100 * median, errors.size());
    CHECK(errors.size() >= 15);
    CHECK(median <= 0.10);
}

TEST_CASE("configurations measured out of memory are never called fits", "[calibration]") {
    for (const auto& p : load_points()) {
        if (!p.oom) continue;
        INFO(p.id);
        const double budget = p.card_gb - 0.5;
        CHECK(p.predicted_gb > budget * 0.9);  // does-not-fit or at worst tight
    }
}
