"""History of measured runs: real runs of the PyTorch test trainer under an address-space cap
record their measured peaks, and the next plan of the same workload moves toward them."""
import json

from conftest import HF_TRAIN, PYTHON, base_env, sparkguard

CAP = 1010 * 1000 * 1000  # fails 8x1024 and fits 4x512 at --width 8 (see test_run_ladder.py)
LLAMA = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "tie_word_embeddings": False}


def model_dir(tmp_path, name, model_type):
    path = tmp_path / name
    path.mkdir()
    (path / "config.json").write_text(json.dumps(dict(LLAMA, model_type=model_type)))
    return path


def trainer(out, batch, seq):
    return ["prlimit", f"--as={CAP}", PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", batch,
            "--max_seq_length", seq, "--max_steps", 12, "--save_steps", 100, "--width", 8, "--step_sleep", 0.15]


def plan(env, model, batch, seq, *extra):
    result = sparkguard("plan", "--model", model, "--platform", "host", "--batch", batch, "--seq", seq, "--json", *extra,
                        env=env)
    assert result.returncode in (0, 3), result.stderr
    return json.loads(result.stdout)


def test_a_measured_run_corrects_the_next_plan_of_its_family_only(tmp_path):
    env = base_env(XDG_STATE_HOME=str(tmp_path / "state"))
    llama, qwen = model_dir(tmp_path, "llama-tiny", "llama"), model_dir(tmp_path, "qwen-tiny", "qwen2")
    before = plan(env, llama, 4, 512)
    other_before = plan(env, qwen, 4, 512)
    assert before["history"] is None
    result = sparkguard("run", "--platform", "host", "--model", llama, "--run-dir", tmp_path / "run", "--",
                        *trainer(tmp_path / "out", 4, 512), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr.decode()
    lines = (tmp_path / "state" / "sparkguard" / "history.jsonl").read_text().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    measured = entry["measured_peak_gb"]
    assert 0.05 < measured < 1.1 and measured == entry["measured"]["peak_trainer_rss_gb"]
    assert entry["workload"]["batch"] == 4 and entry["workload"]["seq"] == 512 and entry["family"] == "llama"
    assert entry["estimate"]["peak_gb"] == before["peak_gb"] and entry["oom"] is False

    after = plan(env, llama, 4, 512)
    assert abs(after["peak_gb"] - measured) < abs(before["peak_gb"] - measured) * 0.05  # moved to the measured peak
    assert after["history"]["runs"] == 1 and after["history"]["nearest"]["measured_peak_gb"] == measured
    text = sparkguard("plan", "--model", llama, "--platform", "host", "--batch", 4, "--seq", 512, env=env).stdout.decode()
    assert "corrected by 1 run on this machine: -" in text and f"measured peak {measured:.2f} GB" in text
    assert plan(env, qwen, 4, 512)["peak_gb"] == other_before["peak_gb"]  # no leak across families
    assert plan(env, llama, 4, 512, "--no-history")["peak_gb"] == before["peak_gb"]

    listed = sparkguard("history", env=env).stdout.decode()
    assert "1 run" in listed and "llama-tiny (llama) lora batch 4 x seq 512 on host" in listed
    assert json.loads(sparkguard("history", "--json", env=env).stdout) == [entry]


def test_an_oom_on_this_machine_makes_a_larger_plan_does_not_fit(tmp_path):
    env = base_env(XDG_STATE_HOME=str(tmp_path / "state"))
    llama = model_dir(tmp_path, "llama-tiny", "llama")
    assert plan(env, llama, 8, 2048)["verdict"] == "fits"
    result = sparkguard("run", "--platform", "host", "--model", llama, "--max-attempts", 1, "--run-dir", tmp_path / "run",
                        "--", *trainer(tmp_path / "out", 8, 1024), cwd=tmp_path, env=env)
    assert result.returncode == 4, result.stderr.decode()
    entry = json.loads((tmp_path / "state" / "sparkguard" / "history.jsonl").read_text().splitlines()[0])
    assert entry["oom"] is True and entry["workload"]["batch"] == 8 and entry["workload"]["seq"] == 1024
    larger = plan(env, llama, 8, 2048)
    assert larger["verdict"] == "does-not-fit" and larger["history"]["oom"]["seq"] == 1024
    assert plan(env, llama, 4, 512)["verdict"] == "fits"
    assert plan(env, llama, 8, 2048, "--no-history")["verdict"] == "fits"


def test_a_torn_history_line_is_a_warning(tmp_path):
    state = tmp_path / "state" / "sparkguard"
    state.mkdir(parents=True)
    (state / "history.jsonl").write_text('{"time": "2026-1')
    env = base_env(XDG_STATE_HOME=str(tmp_path / "state"))
    result = sparkguard("history", env=env)
    assert result.returncode == 0 and "history.jsonl:1: torn line" in result.stderr.decode()
    assert "0 runs" in result.stdout.decode()
