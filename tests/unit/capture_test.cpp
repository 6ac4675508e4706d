#include <catch2/catch.hpp>

#include "supervise/capture.hpp"

using namespace sg;

TEST_CASE("capture_output collects both streams and the exit status", "[capture]") {
    auto r = capture_output({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
    REQUIRE(r);
    CHECK(r->out == "out\n");
    CHECK(r->err == "err\n");
    CHECK(r->exit_code == 3);
    CHECK_FALSE(r->timed_out);
}

TEST_CASE("capture_output reports signals as 128+N and enforces its timeout", "[capture]") {
    auto killed = capture_output({"/bin/sh", "-c", "kill -KILL $$"}, 10);
    REQUIRE(killed);
    CHECK(killed->exit_code == 137);
    auto slow = capture_output({"sleep", "30"}, 0.2);
    REQUIRE(slow);
    CHECK(slow->timed_out);
}

TEST_CASE("capture_output names a missing command", "[capture]") {
    auto missing = capture_output({"sparkguard-no-such-command"}, 1);
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("sparkguard-no-such-command") &&
                                            Catch::Contains("not found"));
}
