#include <catch2/catch.hpp>

#include <random>

#include "util/literal_set.hpp"
#include "util/printable.hpp"

using namespace sg;

namespace {

// The obvious answer, one find() per literal.
LiteralSet::Bits naive(const std::vector<std::string>& literals, std::string_view text) {
    LiteralSet::Bits found = 0;
    for (size_t i = 0; i < literals.size(); ++i)
        if (text.find(literals[i]) != std::string_view::npos) found |= LiteralSet::Bits{1} << i;
    return found;
}

}  // namespace

TEST_CASE("LiteralSet finds the same literals as one find() each", "[literal_set]") {
    const std::vector<std::string> literals = {"emory", "ALLOC_FAILED", "illed", "exit", "%|", "ab", "abab"};
    const LiteralSet set(literals);
    for (std::string_view text : {"", "a", "CUDA out of memory", "Killed", "xxALLOC_FAILEDxx", " 5%|▌ | 5/9",
                                  "ababab", "exit code 137", "emor", "memorY", "ab"})
        CHECK(set.find(text) == naive(literals, text));
    std::mt19937 random(42);
    std::uniform_int_distribution<int> pick(0, 5);
    const std::string alphabet = "abemoryx";
    for (int trial = 0; trial < 2000; ++trial) {
        std::string text;
        for (int i = 0; i < 40; ++i) text += alphabet[static_cast<size_t>(pick(random))];
        INFO(text);
        CHECK(set.find(text) == naive(literals, text));
    }
}

TEST_CASE("LiteralSet finds literals past the 64th", "[literal_set]") {
    std::vector<std::string> literals;
    for (int i = 0; i < 128; ++i) literals.push_back("w" + std::to_string(i) + "#");
    const LiteralSet set(literals);
    for (std::string_view text : {"w0#", "w63# w64#", "x w127# y", "w100#w3#", "w128#"})
        CHECK(set.find(text) == naive(literals, text));
    CHECK(set.find("w127#") == LiteralSet::Bits{1} << 127);
}

TEST_CASE("LiteralSet rejects what it cannot do", "[literal_set]") {
    CHECK_THROWS(LiteralSet({}));
    CHECK_THROWS(LiteralSet({"x"}));
    CHECK_THROWS(LiteralSet(std::vector<std::string>(129, "ab")));
}

TEST_CASE("printable keeps text, drops escapes, replaces the rest", "[printable]") {
    CHECK(printable("plain text") == "plain text");
    CHECK(printable("\x1b[1;31mred\x1b[0m") == "red");
    CHECK(printable(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
    CHECK(printable("tab\there") == "tab here");
    CHECK(printable("\xff\xc3\x28") == "\xEF\xBF\xBD\xEF\xBF\xBD(");
    CHECK(printable("█▌ 已杀死") == "█▌ 已杀死");
    CHECK(printable("\xed\xa0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate is not UTF-8
    CHECK(printable("abcdef", 3) == "abc\xE2\x80\xA6");
    CHECK(printable("ééé", 3) == "é\xE2\x80\xA6");  // never cut inside a character
}
