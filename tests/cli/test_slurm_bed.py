"""The Slurm test bed itself: two slurmd nodes in their own namespaces, reachable only through the bed,
up in seconds, and nothing of it left behind."""
import os
import subprocess
from pathlib import Path

import slurm_bed as bed_module


def test_a_step_spans_both_nodes(slurm_bed):
    assert slurm_bed.bring_up_seconds < 10
    out = slurm_bed.run(["srun", "-N2", "-n2", "--label", "sh", "-c", "echo $(hostname) $SLURM_PROCID $SLURM_NODELIST"],
                        capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.splitlines()) == ["0: node1 0 node[1-2]", "1: node2 1 node[1-2]"]


def test_the_nodes_reach_each_other_by_name_and_nothing_else(slurm_bed):
    out = slurm_bed.run(["srun", "-w", "node2", "-n1", "sh", "-c", "getent hosts node1 && ip -br addr show eth0"],
                        capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "10.77.0.11" in out.stdout and "10.77.0.12/24" in out.stdout
    routes = slurm_bed.run(["ip", "route"], capture_output=True, text=True).stdout
    assert "default" not in routes  # no way out of the bed


def test_srun_mem_is_enforced_in_each_nodes_own_memory_cgroup(slurm_bed):
    if slurm_bed.no_memory_cgroups:
        import pytest
        pytest.skip(f"the Slurm test bed {slurm_bed.no_memory_cgroups}")
    out = slurm_bed.run(["srun", "-N2", "-n2", "--mem=200M", "--label", "sh", "-c",
                         "c=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); echo $c; "
                         "cat /sys/fs/cgroup/memory/${c#*/$(hostname)}/../memory.limit_in_bytes"],
                        capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = sorted(out.stdout.splitlines())
    for rank, node in enumerate(("node1", "node2")):
        step = f"/{slurm_bed.cgroup.name}/{node}/slurm_{node}/uid_0/job_"
        assert lines[2 * rank].startswith(f"{rank}: {step}"), lines
        assert lines[2 * rank + 1] == f"{rank}: {200 << 20}", lines  # the step's limit: --mem


def test_stop_leaves_nothing_behind():
    if bed_module.available():
        import pytest
        pytest.skip(bed_module.available())
    bed = bed_module.SlurmBed()
    bed.start()
    namespaces = {os.readlink(f"/proc/{h.pid}/ns/net") for h in bed.holders.values()}
    running = bed.popen(["srun", "-N2", "sleep", "600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert bed.wait_for_steps(2)
    bed.stop()
    running.wait(timeout=10)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _net_ns(p) in namespaces]
    assert left == []
    assert not bed.base.exists()
    assert bed.cgroup is None or not bed.cgroup.exists()


def _net_ns(proc):
    try:
        return os.readlink(proc / "ns" / "net")
    except OSError:
        return None
