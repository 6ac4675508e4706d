// A job through srun: the trainer behind srun's options, --kill-on-bad-exit added, and the death's
// cause read from srun's and slurmstepd's lines (formats as Slurm 22.05 prints them on the test bed;
// the slurmstepd oom-kill lines as sites quote them: nesi/support-docs "What does oom-kill mean",
// UNINETTSigma2/documentation jobs/common_job_failures.md).
#include <catch2/catch.hpp>

#include "ladder/command_line.hpp"
#include "oom/classifier.hpp"
#include "oom/log_diagnosis.hpp"
#include "oom/srun_output.hpp"

using namespace sg;
using namespace sg::oom;
using Args = std::vector<std::string>;

namespace {

LogDiagnosis diagnose(const std::vector<std::string>& lines, ExitStatus exit) {
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return diagnose_log(text, exit);
}

}  // namespace

TEST_CASE("the trainer is found behind srun, and srun's options are never its", "[srun][launchers]") {
    auto at = [](Args argv) {
        auto where = locate_trainer(argv);
        return where.name() + " @" + std::to_string(where.args_begin);
    };
    CHECK(at({"srun", "-N2", "--ntasks-per-node", "1", "--mem", "8G", "python3", "train.py", "--batch", "4"}) == "train.py @8");
    CHECK(at({"srun", "-N", "2", "-n", "2", "--label", "-o", "out.log", "torchrun", "--nproc-per-node", "1", "t.py"}) == "t.py @12");
    CHECK(at({"srun", "--kill-on-bad-exit=0", "--export=ALL", "-J", "job", "sparkguard", "node", "--", "python", "t.py", "-x"}) ==
          "t.py @10");
    CHECK(at({"env", "A=1", "srun", "-w", "node1,node2", "bash", "run.sh", "--x"}) == "run.sh @7");
}

TEST_CASE("srun is told to end the step when a task fails, unless the command says otherwise", "[srun]") {
    CHECK(with_kill_on_bad_exit({"srun", "-N2", "python", "t.py"}) == Args{"srun", "--kill-on-bad-exit=1", "-N2", "python", "t.py"});
    CHECK(with_kill_on_bad_exit({"env", "X=1", "srun", "python", "t.py"}) ==
          Args{"env", "X=1", "srun", "--kill-on-bad-exit=1", "python", "t.py"});
    for (const char* given : {"-K", "-K0", "--kill-on-bad-exit", "--kill-on-bad-exit=0"})
        CHECK(with_kill_on_bad_exit({"srun", given, "python", "t.py"}) == Args{"srun", given, "python", "t.py"});
    CHECK(with_kill_on_bad_exit({"python", "t.py", "-K"}) == Args{"python", "t.py", "-K"});
    CHECK(with_kill_on_bad_exit({"srun", "-N2", "python", "t.py", "--kill-on-bad-exit=0"})[1] == "--kill-on-bad-exit=1");
}

TEST_CASE("every rank runs under sparkguard node, inserted once after srun's options", "[srun][node]") {
    const Args node = {"/usr/bin/sparkguard", "node", "--run-dir", "/shared/runs/r1", "--"};
    CHECK(with_node_guard({"srun", "-N2", "--ntasks-per-node", "1", "python", "t.py", "--batch", "4"}, node) ==
          Args{"srun", "-N2", "--ntasks-per-node", "1", "/usr/bin/sparkguard", "node", "--run-dir", "/shared/runs/r1", "--",
               "python", "t.py", "--batch", "4"});
    CHECK(has_node_guard(with_node_guard({"srun", "python", "t.py"}, node)));
    // the user wrote it already, with options of their own: left as it is
    const Args written = {"srun", "-N2", "sparkguard", "node", "--memory-floor", "8", "--", "python", "t.py"};
    CHECK(with_node_guard(written, node) == written);
    CHECK(has_node_guard(written));
    // no srun: nothing to fan out
    CHECK(with_node_guard({"torchrun", "t.py"}, node) == Args{"torchrun", "t.py"});
    CHECK_FALSE(has_node_guard({"python", "t.py"}));
    // and the trainer is still found behind it, node's valued options skipped
    const Args inserted = with_node_guard({"srun", "-N2", "python", "t.py", "--batch", "4"}, node);
    auto where = locate_trainer(inserted);
    CHECK(where.name() == "t.py");
    CHECK(inserted[where.args_begin] == "--batch");
    auto behind = locate_trainer({"srun", "sparkguard", "node", "--run-dir", "d", "--thermal-interval", "5", "python", "t.py"});
    CHECK(behind.name() == "t.py");
}

TEST_CASE("the nodes' budgets are probed with the job's own placement, one task a node", "[srun][node]") {
    const Args probe = {"sparkguard", "node", "--probe"};
    CHECK(srun_probe_command({"srun", "-N2", "-n", "4", "--ntasks-per-node", "2", "-w", "a,b", "--mem=8G", "-l", "-o", "out-%t.log",
                              "python", "t.py", "-n", "3"},
                             probe) == Args{"srun", "-N2", "-w", "a,b", "--mem=8G", "--ntasks-per-node=1", "sparkguard", "node", "--probe"});
    CHECK(srun_probe_command({"env", "X=1", "srun", "-n2", "--output=o.log", "-p", "gpu", "sparkguard", "node", "--", "python", "t.py"},
                             probe) == Args{"env", "X=1", "srun", "-p", "gpu", "--ntasks-per-node=1", "sparkguard", "node", "--probe"});
    CHECK(srun_probe_command({"torchrun", "t.py"}, probe).empty());
}

TEST_CASE("srun's options give the step's shape", "[srun]") {
    auto layout = srun_layout({"srun", "-N2", "-n", "4", "--label", "python", "t.py", "-N", "9"});
    CHECK(layout.nodes == 2);
    CHECK(layout.tasks == 4);
    CHECK_FALSE(layout.tasks_per_node);
    layout = srun_layout({"env", "A=1", "srun", "--nodes=2-4", "--ntasks-per-node", "2", "torchrun", "t.py"});
    CHECK(layout.nodes == 2);
    CHECK(layout.tasks_per_node == 2);
    CHECK(srun_layout({"srun", "-N", "2", "python", "t.py"}).nodes == 2);
    CHECK_FALSE(srun_layout({"python", "t.py", "-N2"}).nodes);
}

TEST_CASE("sparkguard node's line on a memory death", "[srun][node]") {
    auto r = parse_node_report("sparkguard-node: node2: memory-guard: MemAvailable 1.2 GB under the floor 6.4 GB (task 1)");
    REQUIRE(r);
    CHECK(r->node == "node2");
    CHECK(r->task == "1");
    CHECK(r->kind == Kind::memory_guard);
    CHECK(r->evidence == "MemAvailable 1.2 GB under the floor 6.4 GB");
    auto labelled = parse_node_report("1: sparkguard-node: spark-b: cgroup-oom-kill: Memory cgroup out of memory: Killed process 7");
    REQUIRE(labelled);
    CHECK(labelled->kind == Kind::cgroup_oom_kill);
    CHECK_FALSE(labelled->task);
    CHECK(labelled->line.starts_with("sparkguard-node: spark-b"));
    CHECK_FALSE(parse_node_report("sparkguard-node: node2: probe: {\"budget_gb\": 100}"));
    CHECK_FALSE(parse_node_report("sparkguard-node: node2: files in /root/.local/state/sparkguard/nodes/r/node2 on this node"));
    CHECK_FALSE(parse_node_report("sparkguard-node: node2: none: x"));
    CHECK_FALSE(parse_node_report("sparkguard-node: memory-guard"));
}

TEST_CASE("a node's report decides the death, unless a rank's allocator said it in its own words", "[srun][node][classifier]") {
    SECTION("the guard on node2 killed its rank; srun saw a Killed task and the peers' cancellation") {
        auto d = diagnose({"0: step 3 loss 1.2", "1: sparkguard-node: node2: memory-guard: MemAvailable 1.2 GB under the floor 6.4 GB",
                           "srun: error: node2: task 1: Killed", "srun: launch/slurm: _step_signal: Terminating StepId=4.0",
                           "0: slurmstepd-node1: error: *** STEP 4.0 ON node1 CANCELLED AT 2026-12-01T04:57:58 ***",
                           "srun: error: node1: task 0: Terminated"},
                          ExitStatus::exited(143));
        CHECK(d.verdict.oom);
        CHECK(d.verdict.kind == Kind::memory_guard);
        CHECK(d.verdict.confidence == Confidence::certain);
        CHECK(d.verdict.evidence.starts_with("sparkguard-node: node2: memory-guard"));
        CHECK_FALSE(d.stopped_by);
        REQUIRE(d.node_report);
        CHECK(d.node_report->node == "node2");
    }
    SECTION("a kernel OOM kill on a node that srun reports only as an exit code") {
        auto d = diagnose({"sparkguard-node: node1: kernel-oom-kill: Out of memory: Killed process 4242 (python3)",
                           "srun: error: node1: task 0: Exited with exit code 1"},
                          ExitStatus::exited(1));
        CHECK(d.verdict.oom);
        CHECK(d.verdict.kind == Kind::kernel_oom_kill);
    }
    SECTION("the rank's own allocator message is the more precise account") {
        auto d = diagnose({"1: RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: not enough memory: "
                           "you tried to allocate 536870912 bytes.",
                           "sparkguard-node: node2: cgroup-oom-kill: Memory cgroup out of memory: Killed process 9 (pt_data_worker)",
                           "srun: error: node2: task 1: Exited with exit code 1"},
                          ExitStatus::exited(1));
        CHECK(d.verdict.kind == Kind::cpu_allocator);
    }
    SECTION("a job that succeeded is no OOM whatever a node said") {
        auto d = diagnose({"sparkguard-node: node2: memory-guard: MemAvailable 1.2 GB under the floor 6.4 GB"}, ExitStatus::exited(0));
        CHECK_FALSE(d.verdict.oom);
    }
}

TEST_CASE("srun's report of a task's end", "[srun]") {
    auto end = parse_srun_task_end("srun: error: node2: task 1: Exited with exit code 3");
    REQUIRE(end);
    CHECK(end->node == "node2");
    CHECK(end->tasks == "1");
    CHECK(end->exit_code() == 3);
    CHECK(parse_srun_task_end("srun: error: node1: task 0: Terminated")->exit_code() == 143);
    CHECK(parse_srun_task_end("srun: error: node2: tasks 0-1: Killed")->tasks == "0-1");
    CHECK(parse_srun_task_end("srun: error: node2: task 1: Killed")->exit_code() == 137);
    CHECK(parse_srun_task_end("srun: error: spark-2: task 1: Out Of Memory")->out_of_memory);
    CHECK(parse_srun_task_end("1: srun: error: node2: task 1: Exited with exit code 1"));
    CHECK(parse_srun_task_end(" 12%|#         | 1/8 [00:00<00:00, 14.19it/s]srun: error: node2: task 1: Exited with exit code 3")
              ->exit_code() == 3);
    CHECK_FALSE(parse_srun_task_end("srun: error: Unable to create step for job 5: Invalid generic resource"));
    CHECK_FALSE(parse_srun_task_end("srun: launch/slurm: _step_signal: Terminating StepId=1.0"));
}

TEST_CASE("across nodes, the task that ended first decides; its peers' ends are consequences", "[srun][classifier]") {
    SECTION("a rank's allocator message, with --label, while its peer lost the connection") {
        auto d = diagnose({"0: step 3 loss 1.2", "1: RuntimeError: [enforce fail at alloc_cpu.cpp:83] data. DefaultCPUAllocator: "
                           "not enough memory: you tried to allocate 536870912 bytes.",
                           "srun: error: node2: task 1: Exited with exit code 1",
                           "srun: launch/slurm: _step_signal: Terminating StepId=7.0",
                           "0: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.77.0.12]:39005",
                           "0: slurmstepd-node1: error: *** STEP 7.0 ON node1 CANCELLED AT 2026-12-01T04:57:57 ***",
                           "srun: error: node1: task 0: Exited with exit code 143"},
                          ExitStatus::exited(143));
        CHECK(d.verdict.oom);
        CHECK(d.verdict.kind == Kind::cpu_allocator);
        REQUIRE(d.srun_cause);
        CHECK(d.srun_cause->node == "node2");
    }
    SECTION("srun's Out Of Memory for a task Slurm's cgroup killed") {
        auto d = diagnose({"srun: error: node2: task 1: Out Of Memory", "srun: error: node1: task 0: Terminated"},
                          ExitStatus::exited(143));
        CHECK(d.verdict.oom);
        CHECK(d.verdict.kind == Kind::cgroup_oom_kill);
        CHECK(d.verdict.confidence == Confidence::certain);
    }
    SECTION("slurmstepd's oom-kill events on a remote node") {
        for (const char* line : {"slurmstepd: error: Detected 1 oom-kill event(s) in step 370626.batch cgroup",
                                 "slurmstepd-node2: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your processes "
                                 "may have been killed by the cgroup out-of-memory handler.",
                                 "1: slurmstepd-node2: error: Detected 2 oom_kill events in StepId=9.0. Some of the step tasks have been OOM Killed."}) {
            auto d = diagnose({line, "srun: error: node1: task 0: Terminated"}, ExitStatus::exited(143));
            CHECK(d.verdict.oom);
            CHECK(d.verdict.kind == Kind::cgroup_oom_kill);
        }
    }
    SECTION("a failure that is not OOM: its exit status, not the terminated peer's") {
        auto d = diagnose({"1: ValueError: bad dataset row", "srun: error: node2: task 1: Exited with exit code 3",
                           "srun: launch/slurm: _step_signal: Terminating StepId=1.0",
                           "0: slurmstepd-node1: error: *** STEP 1.0 ON node1 CANCELLED AT 2026-12-01T04:57:57 ***",
                           "srun: error: node1: task 0: Exited with exit code 143"},
                          ExitStatus::exited(143));
        CHECK_FALSE(d.verdict.oom);
        REQUIRE(d.srun_cause);
        CHECK(d.srun_cause->exit_code() == 3);
    }
    SECTION("a rank SIGKILLed with no word: the step's cancellation that followed does not clear it") {
        auto d = diagnose({"srun: error: node2: task 1: Killed", "srun: launch/slurm: _step_signal: Terminating StepId=2.0",
                           "slurmstepd-node1: error: *** STEP 2.0 ON node1 CANCELLED AT 2026-12-01T04:57:58 ***",
                           "srun: error: node1: task 0: Terminated", "srun: Force Terminated StepId=2.0"},
                          ExitStatus::exited(143));
        CHECK(d.verdict.oom);
        CHECK(d.verdict.kind == Kind::sigkill_probable);
    }
    SECTION("a step cancelled first (scancel, the time limit) is no OOM") {
        auto d = diagnose({"slurmstepd-node1: error: *** STEP 2.0 ON node1 CANCELLED AT 2026-12-01T04:57:58 DUE TO TIME LIMIT ***",
                           "srun: error: node2: task 1: Killed", "srun: error: node1: task 0: Killed"},
                          ExitStatus::exited(137));
        CHECK_FALSE(d.verdict.oom);
    }
}
