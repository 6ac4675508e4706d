#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "util/line_splitter.hpp"

using namespace sg;

namespace {

std::vector<std::string> split_chunks(const std::vector<std::string>& chunks, size_t max_line = 64 * 1024) {
    LineSplitter splitter(max_line);
    std::vector<std::string> lines;
    auto emit = [&](std::string_view line, bool complete) { lines.push_back(std::string(line) + (complete ? "" : "…")); };
    for (const auto& chunk : chunks) splitter.feed(chunk, emit);
    splitter.finish(emit);
    return lines;
}

}  // namespace

TEST_CASE("lines end at newline and carriage return; CRLF is one end", "[lines]") {
    CHECK(split_chunks({"a\nb\r\nc\rd"}) == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(split_chunks({"a\r", "\nb\n"}) == std::vector<std::string>{"a", "b"});
    CHECK(split_chunks({"\n\n"}) == std::vector<std::string>{"", ""});
}

TEST_CASE("lines split across chunks are joined", "[lines]") {
    CHECK(split_chunks({"hel", "lo wo", "rld\nnext"}) == std::vector<std::string>{"hello world", "next"});
}

TEST_CASE("over-long lines come out in bounded pieces", "[lines]") {
    auto lines = split_chunks({std::string(10, 'x'), std::string(5, 'y') + "\nz"}, 4);
    CHECK(lines == std::vector<std::string>{"xxxx…", "xxxx…", "xxyy…", "yyy", "z"});
}

TEST_CASE("binary bytes pass through untouched", "[lines]") {
    std::string garbage("\x00\xff\xfe\x01", 4);
    auto lines = split_chunks({garbage + "\n"});
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == garbage);
}
