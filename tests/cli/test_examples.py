"""scripts/examples/: the Slurm batch scripts, the systemd unit and the two-node torchrun launch are
valid, use only options sparkguard has, and do what their comments say: each batch script, run as
Slurm runs it, passes the time limit's SIGTERM on, requeues, and the requeued job continues the
run (the two-node one through one `srun ... torchrun` step, also under a real sbatch on the
two-node Slurm bed); the torchrun launch passes preflight's G10 check and runs under sparkguard."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SPARKGUARD, wait_for
from man_source import help_options, sparkguard_invocations

BINARY = Path(os.environ.get("SPARKGUARD", "sparkguard"))
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
EXAMPLES = SOURCE / "scripts" / "examples"
SBATCH = EXAMPLES / "sparkguard.sbatch"
SBATCH2 = EXAMPLES / "sparkguard-two-nodes.sbatch"
TORCHRUN = EXAMPLES / "torchrun-two-nodes.sh"
UNIT = EXAMPLES / "sparkguard-llama8b.service"
RESUME_UNIT = EXAMPLES / "sparkguard-resume@.service"
HF_TRAIN = SOURCE / "tests" / "trainers" / "hf_train.py"

# systemd.unit(5), systemd.service(5), systemd.exec(5), systemd.kill(5): the keys a unit may use here.
UNIT_KEYS = {
    "Unit": {"Description", "Documentation", "Wants", "Requires", "After", "Before", "ConditionPathExists"},
    "Service": {"Type", "User", "Group", "WorkingDirectory", "StateDirectory", "Environment", "EnvironmentFile",
                "ExecStart", "ExecStartPre", "ExecStop", "KillMode", "KillSignal", "TimeoutStopSec",
                "SuccessExitStatus", "Restart", "RestartSec", "RestartPreventExitStatus", "StandardOutput",
                "StandardError"},
    "Install": {"WantedBy", "RequiredBy"},
}


def write_executable(path, text):
    path.write_text(text)
    path.chmod(0o755)


def read_unit(path):
    """{section: {key: [values]}} with line continuations joined, as systemd reads a unit."""
    text = re.sub(r"\\\n", " ", path.read_text())
    unit, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            assert line.endswith("]"), line
            section = line[1:-1]
            assert section not in unit, f"[{section}] twice"
            unit[section] = {}
            continue
        assert section and "=" in line, f"not KEY=VALUE in a section: {line!r}"
        key, value = line.split("=", 1)
        unit[section].setdefault(key.strip(), []).append(value.strip())
    return unit


def grace_seconds(command_text):
    return float(re.search(r"--grace (\d+)", command_text).group(1))


@pytest.mark.parametrize("script", [SBATCH, SBATCH2, TORCHRUN], ids=lambda p: p.name)
def test_the_shell_examples_parse_and_are_executable(script):
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert os.access(script, os.X_OK)


def test_the_unit_has_only_known_keys_and_stops_and_restarts_as_its_comments_say():
    unit = read_unit(UNIT)
    for section, keys in unit.items():
        assert section in UNIT_KEYS, section
        assert set(keys) <= UNIT_KEYS[section], sorted(set(keys) - UNIT_KEYS[section])
    service = {key: values[-1] for key, values in unit["Service"].items()}
    exec_start = service["ExecStart"]
    assert service["KillMode"] == "mixed"
    assert float(service["TimeoutStopSec"]) > grace_seconds(exec_start)
    assert service["Restart"] == "on-abnormal"
    assert "143" in service["SuccessExitStatus"].split()
    assert "--resume-run \"$$STATE_DIRECTORY\"" in exec_start and "--run-dir \"$$STATE_DIRECTORY\"" in exec_start
    assert service["StateDirectory"] == "sparkguard/llama8b"


def test_the_resume_at_boot_unit_resumes_the_run_its_instance_names():
    unit = read_unit(RESUME_UNIT)
    for section, keys in unit.items():
        assert section in UNIT_KEYS, section
        assert set(keys) <= UNIT_KEYS[section], sorted(set(keys) - UNIT_KEYS[section])
    assert unit["Unit"]["ConditionPathExists"] == ["%f/state.json"]
    service = {key: values[-1] for key, values in unit["Service"].items()}
    assert "sparkguard run --resume-run \"$$1\"' sh %f" in service["ExecStart"]
    assert service["KillMode"] == "mixed" and "143" in service["SuccessExitStatus"].split()
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_resume_unit_instance(tmp_path):
    copy = tmp_path / "sparkguard-resume@srv-train-run.service"
    shutil.copy(RESUME_UNIT, copy)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_unit(tmp_path):
    copy = tmp_path / UNIT.name
    shutil.copy(UNIT, copy)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


@pytest.mark.parametrize("script", [SBATCH, SBATCH2], ids=lambda p: p.name)
def test_the_batch_script_leaves_sparkguard_time_to_stop_before_slurm_does(script):
    text = script.read_text()
    warning = int(re.search(r"^#SBATCH --signal=B:TERM@(\d+)$", text, re.M).group(1))
    assert grace_seconds(text) + 20 <= warning
    assert re.search(r"^#SBATCH --requeue$", text, re.M)


@pytest.mark.parametrize("example", [SBATCH, SBATCH2, TORCHRUN, UNIT, RESUME_UNIT], ids=lambda p: p.name)
def test_the_examples_use_only_options_that_exist(example):
    calls = sparkguard_invocations(example.read_text())
    assert calls
    for command, options in calls:
        help_text = subprocess.run([str(BINARY), command, "--help"], capture_output=True, text=True).stdout
        known = help_options(help_text)
        shorts = {f"-{short}" for short, _ in known.values() if short}
        for option in options:
            assert option in shorts or option[2:] in known, f"{example.name}: sparkguard {command} has no {option}"


def fake_tools(bin_dir, log):
    """python (train.py becomes the real PyTorch test trainer, short and slow enough to interrupt)
    and scontrol (records its arguments)."""
    bin_dir.mkdir()
    write_executable(bin_dir / "python", f"""#!/bin/sh
if [ "$1" = train.py ]; then
    shift
    exec /usr/bin/python3 {HF_TRAIN} "$@" --max_seq_length 64 --max_steps 30 --save_steps 5 --step_sleep 0.3
fi
exec /usr/bin/python3 "$@"
""")
    write_executable(bin_dir / "scontrol", f'#!/bin/sh\necho "$@" >> {log}\n')


def slurm_env(tmp_path):
    return dict(os.environ, SLURM_SUBMIT_DIR=str(tmp_path), SLURM_JOB_ID="4242", SLURM_JOB_NAME="llama8b-qlora",
                SPARKGUARD_PROFILES=str(SOURCE / "profiles"), SPARKGUARD_FAKE_GPU="a100-80", OPENBLAS_NUM_THREADS="1",
                PATH=os.pathsep.join([str(tmp_path / "bin"), str(BINARY.parent), str(SOURCE / "tests" / "fakes"),
                                      os.environ["PATH"]]))


def stop_before_the_limit(script, cwd, env, checkpoint):
    """Runs the batch script until the trainer saved `checkpoint`, then does what --signal=B:TERM does:
    SIGTERM to the batch shell alone. Returns the finished job and its output."""
    job = subprocess.Popen(["bash", str(script)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not checkpoint.exists() and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert checkpoint.exists(), "the trainer wrote no checkpoint"
        job.send_signal(signal.SIGTERM)  # what --signal=B:TERM does: the batch shell alone
        output, _ = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
    return job, output


def assert_continued(run_dir):
    """The requeued job resumed the interrupted run from a checkpoint and finished it."""
    report = json.loads((run_dir / "report.json").read_text())
    assert report["outcome"] == "succeeded"
    assert [a["outcome"] for a in report["attempts"]] == ["interrupted", "succeeded"]
    assert re.search(r"/checkpoint-\d+$", report["attempts"][1]["resumed_from"])
    events = [json.loads(line)["event"] for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert "resume-run" in events


def test_the_batch_script_passes_slurms_sigterm_on_requeues_and_the_requeued_job_continues(tmp_path):
    log = tmp_path / "scontrol.log"
    fake_tools(tmp_path / "bin", log)
    env = slurm_env(tmp_path)
    run_dir = tmp_path / "runs" / "llama8b-qlora-4242"
    checkpoint = tmp_path / "out" / "llama8b-qlora-4242" / "checkpoint-5" / "trainer_state.json"

    job, output = stop_before_the_limit(SBATCH, tmp_path, env, checkpoint)
    assert job.returncode == 143, output
    assert log.read_text() == "requeue 4242\n"
    report = json.loads((run_dir / "report.json").read_text())
    assert report["outcome"] == "interrupted" and report["exit_code"] == 143

    requeued = subprocess.run(["bash", str(SBATCH)], cwd=tmp_path, env=dict(env, SLURM_RESTART_COUNT="1"),
                              capture_output=True, text=True, timeout=300)
    assert requeued.returncode == 0, requeued.stdout + requeued.stderr
    assert f"continuing {run_dir} (restart 1)" in requeued.stdout
    assert log.read_text() == "requeue 4242\n"
    assert_continued(run_dir)


def fake_two_node_tools(bin_dir, log):
    """scontrol (the nodes of node[1-2] or node[3-4]; records anything else it is asked), srun (records its
    arguments, then runs the step's program once, here) and torchrun (records its arguments and the
    rendezvous it was given, then runs train.py as the PyTorch test trainer, short and slow enough
    to interrupt)."""
    bin_dir.mkdir()
    write_executable(bin_dir / "scontrol", f"""#!/bin/sh
if [ "$1 $2" = "show hostnames" ]; then
    case "$3" in
        "node[1-2]") printf 'node1\\nnode2\\n' ;;
        "node[3-4]") printf 'node3\\nnode4\\n' ;;
        *) exit 1 ;;
    esac
    exit 0
fi
echo "$@" >> {log}
""")
    write_executable(bin_dir / "srun", f"""#!/bin/sh
echo "srun $*" >> {log}
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
exec "$@"
""")
    write_executable(bin_dir / "torchrun", f"""#!/bin/sh
echo "torchrun $* (rendezvous $PET_RDZV_ENDPOINT)" >> {log}
while [ $# -gt 0 ] && [ "$1" != train.py ]; do shift; done
shift
exec /usr/bin/python3 {HF_TRAIN} "$@" --max_seq_length 64 --max_steps 30 --save_steps 5 --step_sleep 0.3
""")


def test_the_two_node_batch_script_runs_one_srun_step_passes_slurms_sigterm_on_requeues_and_continues(tmp_path):
    log = tmp_path / "slurm.log"
    fake_two_node_tools(tmp_path / "bin", log)
    env = dict(slurm_env(tmp_path), SLURM_JOB_NAME="llama8b-ddp", SLURM_JOB_NODELIST="node[1-2]",
               SLURM_CPUS_PER_TASK="8")
    run_dir = tmp_path / "runs" / "llama8b-ddp-4242"
    checkpoint = tmp_path / "out" / "llama8b-ddp-4242" / "checkpoint-5" / "trainer_state.json"

    job, output = stop_before_the_limit(SBATCH2, tmp_path, env, checkpoint)
    assert job.returncode == 143, output
    calls = log.read_text().splitlines()
    sparkguard = str(Path(shutil.which(SPARKGUARD)).resolve())
    # the nodes' budgets first (one task a node), then the step, every rank behind sparkguard node
    assert calls[0] == f"srun --kill-on-bad-exit=1 --nodes=2 --cpus-per-task=8 --ntasks-per-node=1 {sparkguard} node --probe", calls
    assert calls[1] == "srun --kill-on-bad-exit=1 --nodes=2 --ntasks-per-node=1 --cpus-per-task=8 " \
                       f"{sparkguard} node --run-dir {run_dir} -- torchrun --nnodes 2 " \
                       "--nproc-per-node 1 --rdzv-backend c10d --rdzv-id 4242 train.py " \
                       "--model_name_or_path meta-llama/Llama-3.1-8B --use_peft --per_device_train_batch_size 4 " \
                       f"--gradient_accumulation_steps 4 --max_seq_length 4096 --output_dir {tmp_path}/out/llama8b-ddp-4242 " \
                       "--save_steps 100", calls
    assert calls[2].endswith("(rendezvous node1:29500)"), calls
    assert calls[3:] == ["requeue 4242"], calls
    report = json.loads((run_dir / "report.json").read_text())
    assert report["outcome"] == "interrupted" and report["exit_code"] == 143

    # Requeued onto other nodes: the rendezvous moves to the new first node.
    requeued = subprocess.run(["bash", str(SBATCH2)], cwd=tmp_path,
                              env=dict(env, SLURM_RESTART_COUNT="1", SLURM_JOB_NODELIST="node[3-4]"),
                              capture_output=True, text=True, timeout=300)
    assert requeued.returncode == 0, requeued.stdout + requeued.stderr
    assert f"continuing {run_dir} on node[3-4] (restart 1)" in requeued.stdout
    calls = log.read_text().splitlines()
    assert calls[4].startswith("srun --kill-on-bad-exit=1 --nodes=2 ") and calls[3] == "requeue 4242", calls
    assert "--resume_from_checkpoint" in calls[4] and calls[5].endswith("(rendezvous node3:29500)"), calls
    assert len(calls) == 6, calls  # one step; no second requeue (nor a second probe)
    assert_continued(run_dir)


def test_the_two_node_launch_passes_g10_and_runs_each_nodes_part_under_sparkguard(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_executable(bin_dir / "torchrun", '#!/bin/sh\necho "torchrun $*"\nfor i in 1 2 3; do echo "Step $i/3 loss 1.0"; done\n')
    # The G1 check asks `python3` (torchrun's interpreter here) about PyTorch: no PyTorch, a skip.
    write_executable(bin_dir / "python3", "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    env = slurm_env(tmp_path)
    result = subprocess.run([str(TORCHRUN), "1", "spark1"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    env_report = json.loads((tmp_path / "env-report-node1.json").read_text())
    assert env_report["checks"]["G10"].startswith("info: 2 machines, data parallel"), env_report["checks"]["G10"]
    assert env_report["details"]["G10"]["machines"] == 2
    assert env_report["verdict"] != "blocked"
    report = json.loads((tmp_path / "runs" / "llama8b-ddp-node1" / "report.json").read_text())
    assert report["outcome"] == "succeeded"
    assert report["command"][:6] == ["torchrun", "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend"]
    assert "--rdzv-endpoint spark1:29500" in " ".join(report["command"])


def test_the_two_node_batch_script_under_a_real_sbatch_requeues_and_continues_on_the_slurm_bed(slurm_bed, tmp_path):
    """sbatch --wait on the two-node Slurm bed (slurm_bed.py): a real gloo DDP job (torchrun stands in:
    Debian's is broken on Python 3.11; the ranks meet by env:// from Slurm's variables), the batch shell
    alone signalled as --signal=B:TERM does (scancel --batch), Slurm requeues it, and the requeued job
    continues the run to its end. The bed has no GPUs and two CPUs a node: --gres and --cpus-per-task are
    overridden on sbatch's command line. It takes about 3.5 minutes, most of it Slurm's: a requeued job
    may not start before the job credential's lifetime (CredExpire, 120 s) has passed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write_executable(bin_dir / "torchrun", f"""#!/bin/sh
while [ $# -gt 0 ] && [ "$1" != train.py ]; do shift; done
shift
exec /usr/bin/python3 {HF_TRAIN} "$@" --max_seq_length 512 --width 8 --max_steps 40 --save_steps 2 --step_sleep 0.2
""")
    env = dict(slurm_env(tmp_path), HF_TRAIN_DDP="1", PYTHONUNBUFFERED="1")
    submit = f"cd {tmp_path} && exec sbatch --wait --parsable --gres=none --cpus-per-task=1 {SBATCH2}"
    job = slurm_bed.popen(["sh", "-c", submit], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        jobs = []
        deadline = time.monotonic() + 60
        while not jobs and time.monotonic() < deadline:
            jobs = slurm_bed.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()
            time.sleep(0.2)
        assert len(jobs) == 1, jobs
        job_id = jobs[0]
        run_dir = tmp_path / "runs" / f"llama8b-ddp-{job_id}"
        out = tmp_path / "out" / f"llama8b-ddp-{job_id}"
        assert wait_for(lambda: (out / "checkpoint-4" / "trainer_state.json").exists(), 120), \
            (tmp_path / f"llama8b-ddp-{job_id}.out").read_text(errors="replace")[-4000:]
        slurm_bed.run(["scancel", "--batch", "--signal=TERM", job_id], check=True)
        stdout, stderr = job.communicate(timeout=300)
    finally:
        if job.poll() is None:
            job.kill()
    slurm_log = (tmp_path / f"llama8b-ddp-{job_id}.out").read_text(errors="replace")
    assert job.returncode == 0, stderr + slurm_log[-4000:]
    assert f"requeueing to continue {run_dir}" in slurm_log and f"continuing {run_dir} on node[1-2] (restart 1)" in slurm_log
    report = json.loads((run_dir / "report.json").read_text())
    assert report["outcome"] == "succeeded", slurm_log[-4000:]
    assert [a["outcome"] for a in report["attempts"]] == ["interrupted", "succeeded"]
    assert report["attempts"][1]["resumed_from"].startswith(str(out))
    ran = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert sorted((r["host"], r["rank"]) for r in ran) == [("node1", 0), ("node1", 0), ("node2", 1), ("node2", 1)]
    assert (out / "checkpoint-40" / "trainer_state.json").exists()
    assert wait_for(lambda: slurm_bed.step_processes() == [], 15), slurm_bed.step_processes()
