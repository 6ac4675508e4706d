// The kernel evidence parsers over real kernel output (tests/data/kernel/SOURCES.md).
#include <catch2/catch.hpp>

#include "oom/kernel_evidence.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

using namespace sg;
using namespace sg::oom;

namespace {

std::string sample(const std::string& name) {
    auto text = read_file(fs::path(SPARKGUARD_TEST_DATA) / "kernel" / name);
    REQUIRE(text);
    return *text;
}

std::vector<OomKillRecord> scan(const std::string& text) {
    OomRecordScanner scanner;
    std::vector<OomKillRecord> kills;
    for (const auto& line : split(text, '\n'))
        if (auto record = scanner.feed(line)) kills.push_back(*record);
    return kills;
}

}  // namespace

TEST_CASE("the OOM killer's victims are found in every historical format", "[kernel]") {
    SECTION("5.x global: 'Out of memory: Killed process'") {
        auto kills = scan(sample("dmesg-global-oom-kill.txt"));
        REQUIRE(kills.size() == 1);
        CHECK(kills[0].pid == 698405);
        CHECK(kills[0].comm == "python");
        CHECK_FALSE(kills[0].memcg);
        CHECK(kills[0].text.find("Out of memory: Killed process 698405") != std::string::npos);
    }
    SECTION("5.x cgroup, syslog-prefixed: 'Memory cgroup out of memory: Killed process'") {
        auto kills = scan(sample("syslog-memcg-oom-kill.txt"));
        REQUIRE(kills.size() == 2);
        CHECK(kills[0].pid == 15617);
        CHECK(kills[1].pid == 15674);
        CHECK(kills[0].memcg);
        CHECK(kills[0].comm == "python3");
    }
    SECTION("old kernels: the cgroup on the line before a child's 'Killed process'") {
        auto kills = scan(sample("dmesg-old-memcg-kill-process.txt"));
        REQUIRE(kills.size() == 1);
        CHECK(kills[0].pid == 28438);  // the child that died, not 24572 that was chosen
        CHECK(kills[0].memcg);
    }
    SECTION("old kernels, global") {
        auto kills = scan(sample("dmesg-old-global-kill-process.txt"));
        REQUIRE(kills.size() == 1);
        CHECK(kills[0].pid == 25635);
        CHECK_FALSE(kills[0].memcg);
    }
    SECTION("dmesg --time-format iso") {
        auto kills = scan(sample("dmesg-iso-timestamps.txt"));
        REQUIRE(kills.size() == 1);
        CHECK(kills[0].pid == 1440763);
        CHECK(kills[0].comm == "perl");
    }
    SECTION("reaper lines and invocations are not kills") {
        CHECK(scan("oom_reaper: reaped process 15617 (python3), now anon-rss:0kB\npython invoked oom-killer: gfp_mask=0xcc0\n").empty());
    }
}

TEST_CASE("kmsg records are parsed, continuation lines dropped", "[kernel]") {
    auto record = parse_kmsg_record("6,1234,5678901,-;Out of memory: Killed process 4242 (python3) total-vm:1024kB\n SUBSYSTEM=memory\n");
    REQUIRE(record);
    CHECK(record->priority == 6);
    CHECK(record->sequence == 1234);
    CHECK(record->microseconds == 5678901);
    CHECK(record->message == "Out of memory: Killed process 4242 (python3) total-vm:1024kB");
    CHECK(parse_kmsg_record("3,99,12,c,more;x")->message == "x");
    CHECK_FALSE(parse_kmsg_record("no semicolon here"));
    CHECK_FALSE(parse_kmsg_record("a,b,c,d;text"));
    CHECK_THAT(parse_kmsg_record("6,1;text").error().message, Catch::Contains("4 fields"));
}

TEST_CASE("oom_kill counters from memory.events, memory.oom_control and vmstat", "[kernel]") {
    CHECK(*parse_oom_kill_counter("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n", "memory.events") == 2);
    CHECK(*parse_oom_kill_counter(sample("memory-oom_control-v1.txt"), "memory.oom_control") == 0);
    CHECK(*parse_oom_kill_counter("pgfault 100\noom_kill 7\n", "/proc/vmstat") == 7);
    auto old = parse_oom_kill_counter("oom_kill_disable 0\nunder_oom 0\n", "/sys/fs/cgroup/memory/x/memory.oom_control");
    REQUIRE_FALSE(old);
    CHECK_THAT(old.error().message, Catch::Contains("memory.oom_control") && Catch::Contains("no oom_kill field"));
    CHECK_THAT(parse_oom_kill_counter("oom_kill many\n", "memory.events").error().message, Catch::Contains("'many'"));
}

TEST_CASE("a process's memory cgroup and where its counter lives", "[kernel]") {
    SECTION("hybrid host (v1 memory controller beside cgroup2): v1 memory.oom_control") {
        const auto cgroups = parse_proc_cgroup(sample("proc-pid-cgroup-hybrid.txt"));
        CHECK(cgroups.memory_v1 == "/batch/job-42");
        CHECK(cgroups.unified == "/");
        const auto mounts = parse_cgroup_mounts(sample("mountinfo-hybrid.txt"));
        REQUIRE(mounts.size() == 2);
        CHECK(oom_counter_file(cgroups, mounts) == fs::path("/sys/fs/cgroup/memory/batch/job-42/memory.oom_control"));
        CHECK_FALSE(oom_counter_file(parse_proc_cgroup("4:memory:/\n0::/\n"), mounts));
    }
    SECTION("pure cgroup2: memory.events; the root has none") {
        const auto cgroups = parse_proc_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n");
        const auto mounts = parse_cgroup_mounts(
            "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n");
        CHECK(oom_counter_file(cgroups, mounts) ==
              fs::path("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.events"));
        CHECK_FALSE(oom_counter_file(parse_proc_cgroup("0::/\n"), mounts));
    }
    SECTION("a namespaced mount root is stripped; a path outside it has no counter") {
        const auto mounts = parse_cgroup_mounts("50 40 0:40 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n");
        CHECK(oom_counter_file(parse_proc_cgroup("5:memory:/docker/abc/train\n"), mounts) ==
              fs::path("/sys/fs/cgroup/memory/train/memory.oom_control"));
        CHECK_FALSE(oom_counter_file(parse_proc_cgroup("5:memory:/other\n"), mounts));
    }
    SECTION("escaped mount points and junk lines") {
        const auto mounts = parse_cgroup_mounts("garbage\n7 1 0:9 / /mnt/cg\\040two rw - cgroup2 none rw\n");
        REQUIRE(mounts.size() == 1);
        CHECK(mounts[0].mount_point == "/mnt/cg two");
        CHECK(parse_proc_cgroup("nonsense\n\x01\x02").memory_v1 == std::nullopt);
    }
}

// Records quoted in NVIDIA/dgx-spark-playbooks#116 and vllm-project/vllm#56824 (a DGX Spark's
// driver when the unified pool ran dry), and driver lines that are not about memory.
TEST_CASE("the NVIDIA driver's unified-memory allocation failures are recognised", "[kernel]") {
    CHECK(is_nvrm_memory_record("NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
                                "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359"));
    CHECK(is_nvrm_memory_record("NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate 0x176028 bytes for IOVA "
                                "mapping metadata"));
    CHECK_FALSE(is_nvrm_memory_record("NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.95.05"));
    CHECK_FALSE(is_nvrm_memory_record("NVRM: Xid (PCI:000f:01:00): 31, pid=4242, name=python3, Ch 00000008, intr 10000000"));
    CHECK_FALSE(is_nvrm_memory_record("Out of memory [NV_ERR_NO_MEMORY] in a user's log line, not the driver's"));
}
