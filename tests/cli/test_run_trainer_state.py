"""The relaunch's trainer_state.json: a resumed checkpoint says the cadence the relaunch runs with
(save_steps, logging_steps, eval_steps), not the one it was written with. The Hugging Face Trainer
restores these from the checkpoint over the command line, so stale values would silently change
how often the relaunch saves, logs and evaluates."""
import json
import subprocess

from conftest import HF_TRAIN, PYTHON, base_env, read_attempts, read_report, sparkguard

CAP = 1010 * 1000 * 1000


def test_a_checkpoint_written_with_another_cadence_is_rewritten_to_the_relaunchs(tmp_path):
    out = tmp_path / "out"
    # An earlier run of the user's, with another cadence, left checkpoint-4 (warm-up steps only).
    earlier = subprocess.run([PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", "8",
                              "--max_seq_length", "1024", "--warmup_steps", "4", "--max_steps", "4", "--save_steps", "4",
                              "--logging_steps", "4", "--eval_steps", "4", "--width", "8"],
                             cwd=tmp_path, env=base_env(), capture_output=True, timeout=300)
    assert earlier.returncode == 0, earlier.stderr.decode()[-2000:]
    checkpoint = out / "checkpoint-4"
    written = json.loads((checkpoint / "trainer_state.json").read_text())
    assert (written["save_steps"], written["logging_steps"], written["eval_steps"]) == (4, 4, 4)

    # The user's command resumes from it with a new cadence; its first full-length step (5)
    # does not fit, before any checkpoint of its own, so the relaunch resumes from checkpoint-4.
    run = tmp_path / "run"
    result = sparkguard("run", "--run-dir", run, "--ladder", "smaller-batch", "--max-attempts", 2, "--",
                        "prlimit", f"--as={CAP}", PYTHON, HF_TRAIN, "--output_dir", out,
                        "--resume_from_checkpoint", checkpoint, "--per_device_train_batch_size", 8,
                        "--max_seq_length", 1024, "--warmup_steps", 4, "--max_steps", 8,
                        "--save_steps", 2, "--logging_steps", 1, "--eval_steps", 3, "--width", 8, cwd=tmp_path)
    assert result.returncode in (0, 4), result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert attempts[0]["outcome"] == "oom"
    assert attempts[1]["resumed_from"].endswith("checkpoint-4")
    assert read_attempts(out)[-1]["resumed_from"].endswith("checkpoint-4")

    state = json.loads((checkpoint / "trainer_state.json").read_text())
    assert (state["save_steps"], state["logging_steps"], state["eval_steps"]) == (2, 1, 3)
    assert state["train_batch_size"] == 4 and state["global_step"] == 4
    original = json.loads((checkpoint / "trainer_state.json.sparkguard-orig").read_text())
    assert (original["save_steps"], original["logging_steps"], original["eval_steps"]) == (4, 4, 4)
    notes = " ".join(attempts[1]["notes"])
    for change in ("save_steps 4 -> 2", "logging_steps 4 -> 1", "eval_steps 4 -> 3", "train_batch_size 8 -> 4"):
        assert change in notes, notes
