#include "accounting/history.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/plan.hpp"
#include "util/record_lines.hpp"
#include "util/strings.hpp"

namespace sg::accounting {
namespace {

constexpr int kNearestRuns = 3;
// Every entry starts so (nlohmann::json orders keys): how a record appended into a torn one is found.
constexpr std::string_view kRecordStart = "{\"architecture\":";

// Which measurement is the plan's peak: the trainer's own memory where there is no GPU, else the pool.
double measured_peak(const nlohmann::json& measured, const std::string& platform) {
    const char* key = platform == "host" ? "peak_trainer_rss_gb" : "peak_pool_used_gb";
    const auto it = measured.find(key);
    return it != measured.end() && it->is_number() ? it->get<double>() : 0;
}

HistoryRun run_of(const nlohmann::json& j) {
    HistoryRun r;
    const auto& w = j.at("workload");
    r.time = j.at("time").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.family = j.at("family").get<std::string>();
    r.platform = j.at("platform").get<std::string>();
    r.method = w.at("method").get<std::string>();
    r.weight_dtype = w.at("weight_dtype").get<std::string>();
    r.optimizer = w.at("optimizer").get<std::string>();
    r.batch = w.at("batch").get<long long>();
    r.seq = w.at("seq").get<long long>();
    r.grad_ckpt = w.at("grad_ckpt").get<bool>();
    r.estimated_peak_gb = j.at("estimate").at("peak_gb").get<double>();
    r.measured_peak_gb = j.value("measured_peak_gb", 0.0);
    r.oom = j.value("oom", false);
    if (j.contains("oom_step") && j["oom_step"].is_number()) r.oom_step = j["oom_step"].get<long>();
    return r;
}

double tokens_distance(const HistoryRun& r, const Workload& w) {
    return std::abs(std::log(double(r.batch * r.seq) / double(w.batch * w.seq)));
}

// An OOM of the same model and method at no more tokens, with no memory-saving knob the plan lacks.
bool smaller_oom(const HistoryRun& r, const Plan& plan) {
    const Workload& w = plan.workload;
    return r.oom && r.model == plan.model.name && r.platform == plan.platform.name && r.method == name(w.method) &&
           r.optimizer == name(w.optimizer) && r.weight_dtype == name(w.weight_dtype) && r.batch <= w.batch &&
           r.seq <= w.seq && (!r.grad_ckpt || w.grad_ckpt == r.grad_ckpt);
}

std::string signed_percent(double ratio) {
    const double pct = 100 * (ratio - 1);
    return (pct >= 0 ? "+" : "") + fixed(pct, 0) + "%";
}

}  // namespace

nlohmann::json history_entry(const Plan& plan, const nlohmann::json& measured, bool oom, std::optional<long> last_step,
                             const std::string& profile, const std::string& time) {
    Plan formula = plan;  // the uncorrected estimate, so that corrections do not compound
    formula.history.reset();
    formula.correction.reset();
    formula.estimate = estimate(plan.model.shape, plan.workload, plan.platform.traits);
    const nlohmann::json terms = to_json(formula);
    nlohmann::json estimate_json = nlohmann::json::object();
    for (const char* key : {"weights_gb", "adapter_gb", "optimizer_gb", "gradients_gb", "activations_gb", "logits_gb",
                            "step_transient_gb", "overhead_gb", "train_peak_gb", "load_peak_gb", "peak_gb"})
        estimate_json[key] = terms[key];
    nlohmann::json entry = {{"time", time},
                            {"model", plan.model.name},
                            {"family", plan.model.shape.arch.family},
                            {"params", static_cast<long long>(std::llround(plan.model.shape.params))},
                            {"architecture", terms["model"]},
                            {"platform", plan.platform.name},
                            {"profile", profile},
                            {"workload", terms["workload"]},
                            {"estimate", estimate_json},
                            {"measured", measured},
                            {"measured_peak_gb", measured_peak(measured, plan.platform.name)},
                            {"oom", oom}};
    entry["oom_step"] = oom && last_step ? nlohmann::json(*last_step) : nlohmann::json(nullptr);
    return entry;
}

HistoryFile parse_history(std::string_view text, std::string_view file_name) {
    HistoryFile file;
    auto read = [&](std::string_view record) {
        auto entry = nlohmann::json::parse(record);
        file.runs.push_back(run_of(entry));
        file.entries.push_back(std::move(entry));
    };
    for_each_record_line(text, [&](const RecordLine& line) {
        try {
            const size_t appended = line.text.find(kRecordStart, 1);  // written after a crash cut this one
            if (appended != std::string_view::npos || line.unterminated_last) {
                file.warnings.push_back(torn_warning(file_name, line.number));
                if (appended != std::string_view::npos) read(line.text.substr(appended));
            } else {
                read(line.text);
            }
        } catch (const std::exception& e) {
            file.warnings.push_back(line_error(file_name, line.number, "", std::string("skipped: ") + e.what()));
        }
        return true;
    });
    return file;
}

std::optional<HistoryCorrection> correction_for(const Plan& plan, const std::vector<HistoryRun>& runs) {
    HistoryCorrection c;
    for (const auto& r : runs)
        if (smaller_oom(r, plan) && (!c.oom || r.time > c.oom->time)) c.oom = r;
    const std::string method(name(plan.workload.method));
    std::vector<const HistoryRun*> measured;
    for (const auto& r : runs)
        if (!r.oom && r.measured_peak_gb > 0 && r.estimated_peak_gb > 0 && r.family == plan.model.shape.arch.family &&
            r.platform == plan.platform.name)
            measured.push_back(&r);
    auto rank = [&](const HistoryRun* r) {
        return std::tuple(r->method != method, r->model != plan.model.name, tokens_distance(*r, plan.workload));
    };
    std::stable_sort(measured.begin(), measured.end(), [&](auto* a, auto* b) { return rank(a) < rank(b); });
    if (!measured.empty() && measured.front()->method == method)  // same method first, and then only it
        std::erase_if(measured, [&](const HistoryRun* r) { return r->method != method; });
    if (measured.size() > kNearestRuns) measured.resize(kNearestRuns);
    if (measured.empty() && !c.oom) return std::nullopt;
    c.runs = static_cast<int>(measured.size());
    double sum = 0;
    for (const auto* r : measured) sum += r->measured_peak_gb / r->estimated_peak_gb;
    c.ratio = measured.empty() ? 1 : sum / double(measured.size());
    if (!measured.empty()) c.nearest = *measured.front();
    return c;
}

std::string describe(const HistoryCorrection& c) {
    std::string text;
    if (c.runs > 0)
        text = "corrected by " + std::to_string(c.runs) + (c.runs == 1 ? " run" : " runs") + " on this machine: " +
               signed_percent(c.ratio) + " (nearest: " + c.nearest.time.substr(0, 10) + ", " + c.nearest.model + " " +
               c.nearest.method + " batch " + std::to_string(c.nearest.batch) + " x seq " + std::to_string(c.nearest.seq) +
               ", measured peak " + fixed(c.nearest.measured_peak_gb, 2) + " GB)";
    if (c.oom)
        text += std::string(text.empty() ? "" : "; ") + "ran out of memory on this machine at batch " +
                std::to_string(c.oom->batch) + " x seq " + std::to_string(c.oom->seq) + " (" + c.oom->time.substr(0, 10) +
                (c.oom->oom_step ? ", step " + std::to_string(*c.oom->oom_step) : "") + "): no larger configuration fits";
    return text;
}

}  // namespace sg::accounting
