"""`sparkguard node` on the real two-node Slurm bed (slurm_bed.py): what `sparkguard run -- srun ...` runs on
every node. A memory guard on each node whose kill relaunches the whole job one rung down; each node's
telemetry in RUN_DIR/nodes/<host>/; the rank's exit status and signal passed through to srun unchanged;
the smallest node's budget before the first launch.

Both nodes of the bed are namespaces of one machine, so they read one /proc/meminfo: the guard test's
ranks (tests/trainers/mem_hog.py, batch x 0.4 GB each) both draw on the pool both guards watch, and
whichever guard reads the pool under its floor first kills its own rank. Which node that is, is the
machine's choice, not the test's. Each step holds its peak for HOLD_SECONDS: a shorter peak can pass
between two of the guard's readings. Run alone (ctest RUN_SERIAL): the floor is set from MemAvailable
at the test's start, once it has settled."""
import json
import signal

import pytest
from conftest import PYTHON, SPARKGUARD, TRAINERS, base_env, read_events, read_report, settled_mem_available

MEM_HOG = TRAINERS / "mem_hog.py"
GB_PER_SAMPLE = 0.4  # per rank: batch 8 maps 3.2 GB, batch 4 1.6 GB; two ranks: 6.4 and 3.2 GB
HEADROOM_GB = 4.8    # the floor this far under MemAvailable now
HOLD_SECONDS = 2     # each step holds its peak this long: longer than the guard's slowest reading interval (1 s)


def sparkguard_in(bed, *args, env=None, timeout=300):
    return bed.run([SPARKGUARD, *args], env=env or base_env(), capture_output=True, text=True, timeout=timeout)


def node_records(run, host):
    return [json.loads(line) for line in (run / "nodes" / host / "attempts.jsonl").read_text().splitlines()]


def thermal_attempts(run, host):
    lines = (run / "nodes" / host / "thermal.csv").read_text().splitlines()
    header = lines[0].split(",")
    return {int(row.split(",")[header.index("attempt")]) for row in lines[1:]}


def test_a_nodes_guard_kill_relaunches_the_whole_job_one_rung_down(slurm_bed, tmp_path):
    available = settled_mem_available()
    if available < (HEADROOM_GB + 4) * 1e9:
        pytest.skip("needs 8.8 GB of MemAvailable")
    floor_gb = available / 1e9 - HEADROOM_GB
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard_in(slurm_bed, "run", "--run-dir", run, "--memory-floor", f"{floor_gb:.3f}", "--ladder", "smaller-batch",
                           "--thermal-interval", 1, "--profile", "generic", "--batch", 8, "--grad-accum", 1, "--",
                           "srun", "-N2", "-n2", "--ntasks-per-node", "1", PYTHON, MEM_HOG, "--batch", "{batch_size}",
                           "--grad-accum", "{grad_accum}", "--gb-per-sample", GB_PER_SAMPLE, "--steps", 2,
                           "--hold-seconds", HOLD_SECONDS, "--output_dir", out)
    assert result.returncode == 0, result.stderr[-4000:]
    report = read_report(run)
    attempts = report["attempts"]
    assert [a["config"]["batch_size"] for a in attempts] == [8, 4], (f"MemAvailable {available / 1e9:.2f} GB at the start, "
                                                                     f"floor {floor_gb:.2f} GB", attempts)
    first = attempts[0]
    assert first["outcome"] == "oom" and first["oom_kind"] == "memory-guard" and first["confidence"] == "certain", first
    assert (first["node"], first["rank"]) in (("node1", "0"), ("node2", "1")), first
    assert first["evidence"].startswith(f"sparkguard-node: {first['node']}: memory-guard: ") and "under the floor" in first["evidence"]
    node_at = first["argv"].index("node")
    assert first["argv"][node_at - 1] == SPARKGUARD and first["argv"][node_at + 1:node_at + 3] == ["--run-dir", str(run)]
    assert attempts[1]["outcome"] == "succeeded"
    # the run's own guard stood down: srun's ranks are not in its tree
    assert not any(e["event"] == "memory-guard" for e in read_events(run))
    for host in ("node1", "node2"):
        records = node_records(run, host)
        assert [r["attempt"] for r in records] == [1, 2], records
        assert records[1]["exit_code"] == 0 and "death" not in records[1]
        assert records[0]["memory_guard"]["lowest_available_gb"] < floor_gb + 1.0
        assert thermal_attempts(run, host) == {1, 2}
        assert host in report["nodes"] and report["nodes"][host]["rows"] >= 2
    killer = node_records(run, first["node"])[0]
    assert killer["death"]["kind"] == "memory-guard" and killer["signal"] == signal.SIGKILL
    morning = sparkguard_in(slurm_bed, "report", run)
    assert "OOM memory-guard while " in morning.stdout and f" on {first['node']} (task {first['rank']})" in morning.stdout, morning.stdout
    assert "nodes" in morning.stdout and "node1: pool peak" in morning.stdout and "node2: pool peak" in morning.stdout, morning.stdout


def test_a_ranks_exit_status_and_signal_pass_through_sparkguard_node(slurm_bed, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "state.json").write_text("{}")  # a run directory on the shared filesystem
    script = "import os, signal; r = int(os.environ['SLURM_PROCID']); print('rank', r, flush=True); " \
             "os.kill(os.getpid(), signal.SIGKILL) if r == 1 else exit(3)"
    result = slurm_bed.run(["srun", "-N2", "-n2", "--ntasks-per-node", "1", "--kill-on-bad-exit=0", SPARKGUARD, "node",
                            "--run-dir", run, "--", PYTHON, "-c", script],
                           env=base_env(), capture_output=True, text=True, timeout=120)
    assert "rank 0" in result.stdout and "rank 1" in result.stdout  # output passes through
    assert "node1: task 0: Exited with exit code 3" in result.stderr, result.stderr
    assert "node2: task 1: Killed" in result.stderr, result.stderr
    assert "sparkguard-node:" not in result.stderr  # no memory evidence: nothing added
    assert node_records(run, "node1")[0]["exit_code"] == 3
    assert node_records(run, "node2")[0]["signal"] == signal.SIGKILL


def test_a_run_directory_not_on_the_node_is_named_and_nothing_is_lost(slurm_bed, tmp_path):
    state = tmp_path / "state"
    env = base_env()
    env["XDG_STATE_HOME"] = str(state)
    result = slurm_bed.run(["srun", "-N1", "-w", "node2", SPARKGUARD, "node", "--run-dir", tmp_path / "elsewhere", "--",
                            "true"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    local = state / "sparkguard" / "nodes" / "elsewhere" / "node2"
    assert f"sparkguard-node: node2: files in {local} on this node" in result.stderr, result.stderr
    assert (local / "attempts.jsonl").exists() and (local / "thermal.csv").exists()


def test_the_plan_is_judged_against_the_smallest_nodes_budget(slurm_bed, tmp_path):
    """node1 an 80 GB A100, node2 a 24 GB RTX 4090 (the fake nvidia-smi, by host name), the batch host an A100
    too: an 8B LoRA at batch 2 x 2048 (30 GB by the estimate) fits this machine and node1, not node2."""
    run = tmp_path / "run"
    env = base_env(SPARKGUARD_FAKE_GPU="a100-80", SPARKGUARD_FAKE_GPU_node2="rtx4090")
    result = sparkguard_in(slurm_bed, "run", "--run-dir", run, "--model", "llama-3.1-8b", "--method", "lora", "--batch", 2,
                           "--seq", 2048, "--", "srun", "-N2", "-n2", "--ntasks-per-node", "1", PYTHON, "-c", "print('launched')",
                           env=env)
    assert result.returncode == 3, result.stderr[-3000:]  # blocked before the first launch
    assert "launched" not in result.stdout
    budgets = {n["host"]: n["budget_gb"] for e in read_events(run) if e["event"] == "node-budgets" for n in e["nodes"]}
    assert set(budgets) == {"node1", "node2"} and budgets["node2"] < 25 < 70 < budgets["node1"], budgets
    plan = read_report(run)["plan"]
    assert plan["budget_gb"] == pytest.approx(budgets["node2"], abs=0.001)
    assert plan["budget_source"].startswith("node2, the smallest of 2 nodes: "), plan["budget_source"]
    assert any(a.startswith("per rank, DDP assumed: each of 2 ranks holds a full replica") for a in plan["assumptions"]), plan
    # sharded over the two ranks (FSDP), each rank's share fits node2
    fsdp = sparkguard_in(slurm_bed, "run", "--run-dir", tmp_path / "fsdp", "--model", "llama-3.1-8b", "--method", "lora",
                         "--batch", 2, "--seq", 2048, "--", "srun", "-N2", "-n2", "--ntasks-per-node", "1", PYTHON, "-c",
                         "print('launched')", "--fsdp", "full_shard auto_wrap", env=env)
    assert fsdp.returncode == 0 and fsdp.stdout.count("launched") == 2, fsdp.stderr[-3000:]
    sharded = read_report(tmp_path / "fsdp")["plan"]
    assert any(a.startswith("per rank, sharded (--fsdp full_shard auto_wrap): weights, gradients and optimizer states split "
                            "over 2 ranks") for a in sharded["assumptions"]), sharded["assumptions"]
    assert sharded["weights_gb"] == pytest.approx(plan["weights_gb"] / 2, rel=0.01)
    # the same job where every node is an A100 launches
    env["SPARKGUARD_FAKE_GPU_node2"] = "a100-80"
    fits = sparkguard_in(slurm_bed, "run", "--run-dir", tmp_path / "fits", "--model", "llama-3.1-8b", "--method", "lora",
                         "--batch", 2, "--seq", 2048, "--", "srun", "-N2", "-n2", "--ntasks-per-node", "1", PYTHON, "-c",
                         "print('launched')", env=env)
    assert fits.returncode == 0 and fits.stdout.count("launched") == 2, fits.stderr[-3000:]
