"""The pre-launch budget check of `sparkguard run`: a catalog model whose estimate does not fit the
budget (--budget-gb, or a --platform's) blocks the launch with exit 3 and the trainer never runs;
--force launches it anyway; --fit starts the trainer from the largest packing length and batch the
estimate says fit, with the effective batch kept. llama-3.1-8b LoRA at batch 8 x 1024 tokens is
estimated at about 36 GB; batch 4 x 1024 at about 28 GB."""
import json
import pytest

from conftest import HF_TRAIN, PYTHON, read_attempts, read_events, read_report, sparkguard


def trainer(out):
    return [PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 8, "--max_seq_length", 1024,
            "--max_steps", 2, "--save_steps", 2, "--width", 2]


def plan_events(run):
    return [e for e in read_events(run) if e["event"] == "plan"]


@pytest.mark.parametrize("budget", [["--budget-gb", 24], ["--platform", "gpu-24gb"]])
def test_does_not_fit_blocks_the_launch_with_exit_3(tmp_path, budget):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--model", "llama-3.1-8b", *budget, "--", *trainer(out), cwd=tmp_path)
    assert result.returncode == 3, result.stderr.decode()[-2000:]
    assert not out.exists(), "the trainer ran although the estimate does not fit"
    assert b"does not fit the budget" in result.stderr and b"--force" in result.stderr and b"--fit" in result.stderr
    report = read_report(run)
    assert report["outcome"] == "blocked" and report["exit_code"] == 3 and report["attempts"] == []
    assert [e["verdict"] for e in plan_events(run)] == ["does-not-fit"]


def test_force_launches_what_does_not_fit(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--model", "llama-3.1-8b", "--budget-gb", 24, "--force", "--",
                        *trainer(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert b"launching anyway (--force)" in result.stderr
    assert [e["verdict"] for e in plan_events(run)] == ["does-not-fit"]
    ran = read_attempts(out)
    assert [(r["batch"], r["accum"], r["seq"]) for r in ran] == [(8, 1, 1024)]  # as the command said
    assert read_report(run)["outcome"] == "succeeded"


def test_fit_starts_the_trainer_from_what_fits(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--model", "llama-3.1-8b", "--budget-gb", 32, "--fit", "--",
                        *trainer(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    # what `plan --fit` finds for the same workload is what the trainer ran with
    fit = json.loads(sparkguard("plan", "--model", "llama-3.1-8b", "--budget-gb", 32, "--batch", 8, "--seq", 1024,
                                "--fit", "--json", cwd=tmp_path).stdout)["fit"]
    assert fit["found"] and fit["batch"] < 8
    ran = read_attempts(out)
    assert len(ran) == 1
    assert (ran[0]["batch"], ran[0]["accum"], ran[0]["seq"]) == (fit["batch"], fit["grad_accum"], fit["seq"])
    assert ran[0]["batch"] * ran[0]["accum"] == 8  # the effective batch kept
    report = read_report(run)
    config = report["attempts"][0]["config"]
    assert (config["batch_size"], config["grad_accum"], config["seq_len"]) == (fit["batch"], fit["grad_accum"], fit["seq"])
    assert report["plan"]["verdict"] in ("fits", "tight")
    assert [e["verdict"] for e in plan_events(run)] == [report["plan"]["verdict"]]


def test_fit_that_finds_nothing_blocks_with_exit_3(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--model", "llama-3.1-8b", "--budget-gb", 8, "--fit", "--",
                        *trainer(out), cwd=tmp_path)
    assert result.returncode == 3, result.stderr.decode()[-2000:]
    assert not out.exists()
    assert b"--fit: no packing length and batch fit the budget" in result.stderr
    assert read_report(run)["outcome"] == "blocked"
