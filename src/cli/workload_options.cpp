#include "cli/workload_options.hpp"

#include <algorithm>

#include "util/errors.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

namespace sg::cli {
namespace {

namespace fs = std::filesystem;
using namespace sg::accounting;

template <class E>
E parse_choice(const ParsedArgs& args, const char* option, std::optional<E> (*parse)(std::string_view),
               std::string (*choices)()) {
    const std::string text = *args.get(option);
    auto value = parse(text);
    if (!value) throw UsageError(std::string("--") + option, "unknown value '" + text + "' (choose " + choices() + ")");
    return *value;
}

std::vector<std::string> parse_targets(const std::string& text) {
    std::string unknown;
    auto targets = canonical_lora_targets(split(text, ','), &unknown);
    if (!targets)
        throw UsageError("--lora-targets", "unknown module '" + unknown + "' (known: " + join(known_lora_targets(), ", ") + ")");
    return *targets;
}

// Sets the fields the flags name, leaving the others as they are.
void apply(const ParsedArgs& args, PlanRequest& r) {
    WorkloadSpec& w = r.workload;
    if (args.has("model")) r.model = *args.get("model");
    if (auto text = args.get("params")) {
        auto count = parse_count(*text);
        if (!count) throw UsageError("--params", count.error().message);
        r.params = *count;
    }
    if (args.has("method")) w.method = parse_choice<Method>(args, "method", parse_method, choices_of_method);
    if (args.has("weight-dtype")) w.weight_dtype = parse_choice<DType>(args, "weight-dtype", parse_dtype, choices_of_dtype);
    if (args.has("optimizer"))
        w.optimizer = parse_choice<Optimizer>(args, "optimizer", parse_optimizer, choices_of_optimizer);
    if (args.has("loss")) w.loss = parse_choice<LossKind>(args, "loss", parse_loss, choices_of_loss);
    if (auto v = args.get_int("batch", 1, 1 << 20)) w.batch = *v;
    if (auto v = args.get_int("seq", 1, 1 << 24)) w.seq = *v;
    if (auto v = args.get_int("grad-accum", 1, 1 << 20)) w.grad_accum = *v;
    if (auto v = args.get_int("lora-r", 1, 65536)) w.lora_r = *v;
    if (auto v = args.get_double("lora-dropout", 0, 0.99)) w.lora_dropout = *v;
    if (auto v = args.get_switch("grad-ckpt")) w.grad_ckpt = *v;
    if (auto v = args.get_switch("flash-attn")) w.flash_attn = *v;
    if (auto text = args.get("lora-targets")) w.lora_targets = parse_targets(*text);
    if (args.has("platform")) r.platform = *args.get("platform");
    if (auto v = args.get_double("budget-gb", 0.001, 1e6)) r.budget_gb = *v;
    if (args.has("no-history")) r.use_history = false;
}

// One TOML value as the command-line words that say the same thing.
std::vector<std::string> as_words(const std::string& key, const toml::node& node) {
    if (auto b = node.value<bool>(); b && node.is_boolean()) return {"--" + std::string(*b ? "" : "no-") + key};
    if (const auto* list = node.as_array()) {
        std::vector<std::string> items;
        for (const auto& item : *list)
            if (auto s = item.value<std::string>()) items.push_back(*s);
            else throw UsageError("'" + key + "'", "list items must be strings");
        return {"--" + key, join(items, ",")};
    }
    if (node.is_integer()) return {"--" + key, std::to_string(*node.value<long long>())};
    if (node.is_floating_point()) return {"--" + key, fixed(*node.value<double>(), 6)};
    if (auto s = node.value<std::string>()) return {"--" + key, *s};
    throw UsageError("'" + key + "'", "unsupported value type");
}

const std::vector<std::string>& switch_keys() {
    static const std::vector<std::string> keys = {"grad-ckpt", "flash-attn"};
    return keys;
}

}  // namespace

const std::vector<OptionSpec>& workload_options() {
    static const std::vector<OptionSpec> specs = {
        {"model", "PATH|NAME", "model directory or config.json, ORG/NAME in the Hugging Face cache, or a catalog name"},
        {"params", "N", "parameter count instead of a model (70e9, 70B); generic architecture"},
        {"method", "M", "full|lora|qlora (default lora)"},
        {"weight-dtype", "T", choices_of_dtype() + " (default bf16; nf4 for qlora)"},
        {"optimizer", "O", choices_of_optimizer() + " (default adamw, fp32 states)"},
        {"batch", "N", "per-device batch size (default 1)"},
        {"seq", "N", "sequence / packing length in tokens (default 2048)"},
        {"grad-accum", "N", "gradient accumulation steps (default 1)"},
        {"grad-ckpt", "", "gradient checkpointing on (default)"},
        {"no-grad-ckpt", "", "gradient checkpointing off"},
        {"flash-attn", "", "flash attention / SDPA memory-efficient kernels (default)"},
        {"no-flash-attn", "", "eager attention: the s x s score matrix is stored"},
        {"lora-r", "N", "LoRA rank (default 16)"},
        {"lora-targets", "LIST", "q_proj,k_proj,v_proj,o_proj (default), all-linear, or other module names"},
        {"lora-dropout", "P", "LoRA dropout (default 0.05; 0 saves the dropout copies)"},
        {"loss", "L", "full (HF Trainer/TRL, default) | chunked (torchtune) | fused (Liger, Unsloth)"},
        {"platform", "NAME", "platform profile (dgx-spark, gpu-24gb, ...); detected when absent"},
        {"budget-gb", "N", "memory budget in GB instead of reading the machine"},
        {"no-history", "", "do not correct the estimate by the runs measured on this machine"},
        {"workload", "FILE", "TOML file with the same keys as these flags; flags override it"},
    };
    return specs;
}

PlanRequest plan_request_from_file(const fs::path& file) {
    const toml::table table = parse_toml_file(file);
    std::vector<std::string_view> known;
    for (const auto& spec : workload_options())
        if (spec.name != "workload" && !spec.name.starts_with("no-")) known.push_back(spec.name);
    reject_unknown_keys(file, table, known, "a workload file");
    PlanRequest request;
    for (const auto& [key, node] : table) {
        const std::string k(key.str());
        const bool is_switch = std::find(switch_keys().begin(), switch_keys().end(), k) != switch_keys().end();
        try {
            if (is_switch != node.is_boolean()) throw UsageError("'" + k + "'", is_switch ? "must be true or false" : "must not be a boolean");
            const auto words = as_words(k, node);
            apply(parse_args(workload_options(), words), request);
        } catch (const UsageError& e) {
            throw UsageError(where(file, node), e.what());
        }
    }
    return request;
}

PlanRequest plan_request_from_args(const ParsedArgs& args) {
    PlanRequest request;
    if (auto file = args.get("workload")) request = plan_request_from_file(*file);
    apply(args, request);
    return request;
}

}  // namespace sg::cli
