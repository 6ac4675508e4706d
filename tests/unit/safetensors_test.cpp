#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "accounting/model_source.hpp"
#include "accounting/safetensors.hpp"
#include "util/errors.hpp"

using namespace sg::accounting;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("sg-safetensors-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// A real safetensors file: length, header, then zero-filled tensor data.
void write_safetensors(const fs::path& file, const nlohmann::json& tensors, size_t data_bytes) {
    const std::string header = tensors.dump();
    std::ofstream out(file, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    out << header << std::string(data_bytes, '\0');
}

nlohmann::json tensor(const char* dtype, std::vector<long long> shape, size_t begin, size_t end) {
    return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

}  // namespace

TEST_CASE("headers give exact parameter counts per dtype", "[safetensors]") {
    const fs::path dir = temp_dir("exact");
    write_safetensors(dir / "model.safetensors",
                      {{"__metadata__", {{"format", "pt"}}},
                       {"embed.weight", tensor("BF16", {100, 16}, 0, 3200)},
                       {"norm.weight", tensor("F32", {16}, 3200, 3264)}},
                      3264);
    auto stats = read_checkpoint(dir);
    REQUIRE(stats);
    CHECK(stats->params == 1616);
    CHECK(stats->bytes == 3264);
    CHECK(stats->params_by_dtype.at("BF16") == 1600);
    CHECK_FALSE(stats->prequantized);
}

TEST_CASE("packed 4-bit tensors count two parameters a byte", "[safetensors]") {
    const fs::path dir = temp_dir("packed");
    write_safetensors(dir / "model.safetensors",
                      {{"l.weight", tensor("U8", {32, 1}, 0, 32)},
                       {"l.weight.absmax", tensor("F32", {1}, 32, 36)},
                       {"e.gate_up_proj_blocks", tensor("U8", {2, 4, 16}, 36, 164)},
                       {"e.gate_up_proj_scales", tensor("U8", {2, 4}, 164, 172)}},
                      172);
    auto stats = read_checkpoint(dir);
    REQUIRE(stats);
    CHECK(stats->params == 64 + 256);
    CHECK(stats->prequantized);
}

TEST_CASE("a header that lies about its length or is not JSON is an error naming the file", "[safetensors]") {
    const fs::path dir = temp_dir("bad");
    std::ofstream(dir / "short.safetensors", std::ios::binary) << std::string("\xff\xff\xff\x00\x00\x00\x00\x00{}", 10);
    auto lie = read_safetensors_header(dir / "short.safetensors");
    REQUIRE_FALSE(lie);
    CHECK_THAT(lie.error().message, Catch::Contains("short.safetensors") && Catch::Contains("header claims"));
    std::ofstream(dir / "text.safetensors", std::ios::binary) << std::string("\x04\0\0\0\0\0\0\0oops", 12);
    auto text = read_safetensors_header(dir / "text.safetensors");
    REQUIRE_FALSE(text);
    CHECK_THAT(text.error().message, Catch::Contains("not a JSON object"));
    write_safetensors(dir / "past.safetensors", {{"w", tensor("F16", {4}, 0, 800)}}, 8);
    CHECK_FALSE(read_safetensors_header(dir / "past.safetensors"));
    write_safetensors(dir / "dtype.safetensors", {{"w", tensor("Q9", {4}, 0, 8)}}, 8);
    CHECK_THAT(read_safetensors_header(dir / "dtype.safetensors").error().message, Catch::Contains("unknown dtype 'Q9'"));
}

TEST_CASE("a sharded index names its shards; a missing one is an error", "[safetensors]") {
    const fs::path dir = temp_dir("index");
    write_safetensors(dir / "model-00001-of-00002.safetensors", {{"a", tensor("BF16", {10}, 0, 20)}}, 20);
    write_safetensors(dir / "model-00002-of-00002.safetensors", {{"b", tensor("BF16", {30}, 0, 60)}}, 60);
    write_safetensors(dir / "consolidated.safetensors", {{"a", tensor("BF16", {40}, 0, 80)}}, 80);
    nlohmann::json index = {{"metadata", {{"total_size", 80}}},
                            {"weight_map", {{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00002-of-00002.safetensors"}}}};
    std::ofstream(dir / "model.safetensors.index.json") << index.dump();
    auto stats = read_checkpoint(dir);
    REQUIRE(stats);
    CHECK(stats->files == 2);
    CHECK(stats->params == 40);
    fs::remove(dir / "model-00002-of-00002.safetensors");
    auto missing = read_checkpoint(dir);
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("shard 'model-00002-of-00002.safetensors' is missing"));
}

TEST_CASE("a model directory without config.json is a usage error", "[safetensors]") {
    const fs::path dir = temp_dir("noconfig");
    CHECK_THROWS_AS(model_from_directory(dir, "x"), sg::UsageError);
}
