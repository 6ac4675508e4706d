#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "accounting/architecture.hpp"
#include "accounting/catalog.hpp"

using namespace sg::accounting;
using nlohmann::json;

namespace {

// meta-llama/Llama-3.1-8B config.json (the fields plan reads).
json llama31_8b() {
    return {{"model_type", "llama"}, {"hidden_size", 4096}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
            {"num_key_value_heads", 8}, {"intermediate_size", 14336}, {"vocab_size", 128256},
            {"tie_word_embeddings", false}, {"max_position_embeddings", 131072}};
}

}  // namespace

TEST_CASE("a Hugging Face config.json gives the published parameter count", "[architecture]") {
    auto arch = architecture_from_hf_config(llama31_8b(), "config.json");
    REQUIRE(arch);
    CHECK(arch->head_dim == 128);
    CHECK(total_params(*arch) == Approx(8.03e9).epsilon(0.002));
    CHECK(arch->max_positions == 131072);
}

TEST_CASE("a missing or malformed field is named with its file", "[architecture]") {
    json config = llama31_8b();
    config.erase("vocab_size");
    auto missing = architecture_from_hf_config(config, "/m/config.json");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message == "/m/config.json: field 'vocab_size' is missing");
    config = llama31_8b();
    config["hidden_size"] = "big";
    auto bad = architecture_from_hf_config(config, "c.json");
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("'hidden_size' must be a positive integer"));
    config = llama31_8b();
    config["num_key_value_heads"] = 5;
    CHECK_FALSE(architecture_from_hf_config(config, "c.json"));
    CHECK_FALSE(architecture_from_hf_config(json::array(), "c.json"));
}

TEST_CASE("multimodal configs are read from text_config", "[architecture]") {
    json gemma3 = {{"model_type", "gemma3"},
                   {"text_config", {{"hidden_size", 5376}, {"num_hidden_layers", 62}, {"num_attention_heads", 32},
                                    {"num_key_value_heads", 16}, {"head_dim", 128}, {"intermediate_size", 21504},
                                    {"vocab_size", 262208}}}};
    auto arch = architecture_from_hf_config(gemma3, "c.json");
    REQUIRE(arch);
    CHECK(arch->tied_embeddings);
    CHECK(total_params(*arch) == Approx(27.0e9).epsilon(0.01));
}

TEST_CASE("MoE: all experts are resident, only the active ones run", "[architecture]") {
    json mixtral = llama31_8b();
    mixtral["vocab_size"] = 32000;
    mixtral["num_local_experts"] = 8;
    mixtral["num_experts_per_tok"] = 2;
    auto arch = architecture_from_hf_config(mixtral, "c.json");
    REQUIRE(arch);
    CHECK(total_params(*arch) == Approx(46.7e9).epsilon(0.01));   // Mixtral-8x7B
    CHECK(active_params(*arch) == Approx(12.9e9).epsilon(0.01));
    mixtral["num_experts_per_tok"] = 9;
    CHECK_FALSE(architecture_from_hf_config(mixtral, "c.json"));
}

TEST_CASE("the generic architecture for --params is close to the size asked", "[architecture]") {
    for (double params : {1e9, 8e9, 70e9, 405e9}) {
        INFO(params);
        CHECK(total_params(generic_architecture(params)) == Approx(params).epsilon(0.12));
    }
}

TEST_CASE("the shipped catalog matches published model sizes", "[catalog]") {
    const Catalog& catalog = default_catalog();
    struct Size { const char* name; double params; };
    for (auto [name, params] : {Size{"llama-2-7b", 6.74e9}, Size{"llama-3.1-70b", 70.6e9}, Size{"llama-3.1-405b", 405.9e9},
                                Size{"llama-3.2-1b", 1.24e9}, Size{"qwen2.5-7b", 7.62e9}, Size{"qwen2.5-72b", 72.7e9},
                                Size{"qwen3-8b", 8.19e9}, Size{"qwen3-30b-a3b", 30.5e9}, Size{"qwen3-235b-a22b", 235e9},
                                Size{"mistral-7b", 7.25e9}, Size{"mixtral-8x22b", 140.6e9}, Size{"gemma-2-9b", 9.24e9},
                                Size{"gemma-2-27b", 27.2e9}, Size{"phi-3-mini", 3.82e9}, Size{"phi-4", 14.66e9},
                                Size{"gpt-oss-20b", 20.9e9}, Size{"gpt-oss-120b", 116.8e9}}) {
        INFO(name);
        const CatalogEntry* entry = catalog.find(name);
        REQUIRE(entry);
        CHECK(total_params(entry->arch) == Approx(params).epsilon(0.02));
    }
    CHECK(catalog.find("Qwen/Qwen2.5-7B") == catalog.find("qwen2.5-7b"));
    CHECK(catalog.find("LLAMA3.1-8B") == catalog.find("llama-3.1-8b"));
    CHECK(catalog.find("llama-9") == nullptr);
    CHECK(catalog.find("Qwen/Qwen2.5-7B-Instruct") == catalog.find("qwen2.5-7b"));
    CHECK(catalog.find("my-org/Llama-3.1-8B") == catalog.find("llama-3.1-8b"));
    CHECK_THAT(catalog.near_names("llama-3.1-7b").front(), Catch::StartsWith("llama-3.1"));
}
