"""sparkguard plan, driven through the built binary (env SPARKGUARD) as a user would."""
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import state_dir

BINARY = os.environ.get("SPARKGUARD", "sparkguard")
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
FAKES = SOURCE / "tests" / "fakes"

LLAMA_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
            "tie_word_embeddings": False, "max_position_embeddings": 131072}
TINY = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000, "tie_word_embeddings": False}


def run(*args, env=None, fake_gpu="a100-80"):
    full_env = dict(os.environ, PATH=f"{FAKES}:{os.environ['PATH']}", SPARKGUARD_FAKE_GPU=fake_gpu,
                    SPARKGUARD_PROFILES=str(SOURCE / "profiles"), XDG_STATE_HOME=state_dir())
    full_env.update(env or {})
    return subprocess.run([BINARY, "plan", *args], capture_output=True, text=True, env=full_env, timeout=60)


def plan_json(*args, **kwargs):
    result = run(*args, "--json", **kwargs)
    assert result.returncode in (0, 3), result.stderr
    return json.loads(result.stdout), result.returncode


def write_safetensors(path, tensors):
    """A real safetensors file: little-endian header length, JSON header, zero data."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = {"BF16": 2, "F32": 4, "U8": 1}[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def tiny_tensors():
    h, f, v = 64, 128, 1000
    tensors = {"model.embed_tokens.weight": ("BF16", [v, h]), "lm_head.weight": ("BF16", [v, h]),
               "model.norm.weight": ("BF16", [h])}
    for i in range(2):
        p = f"model.layers.{i}."
        tensors.update({p + "self_attn.q_proj.weight": ("BF16", [h, h]), p + "self_attn.k_proj.weight": ("BF16", [32, h]),
                        p + "self_attn.v_proj.weight": ("BF16", [32, h]), p + "self_attn.o_proj.weight": ("BF16", [h, h]),
                        p + "mlp.gate_proj.weight": ("BF16", [f, h]), p + "mlp.up_proj.weight": ("BF16", [f, h]),
                        p + "mlp.down_proj.weight": ("BF16", [h, f]), p + "input_layernorm.weight": ("BF16", [h]),
                        p + "post_attention_layernorm.weight": ("BF16", [h])})
    return tensors


REQUIRED_KEYS = ["params_b", "weights_gb", "optimizer_gb", "gradients_gb", "activations_gb", "adapter_gb",
                 "overhead_gb", "train_peak_gb", "load_peak_gb", "peak_gb", "budget_gb", "headroom_gb", "verdict",
                 "nearest_anchor"]


def test_catalog_name_prints_every_term_and_the_assumptions():
    # bf16 LoRA of an 8B at 2048 tokens is just over a 24 GB card with the full fp32 loss; 1024 fits
    result = run("--model", "llama-3.1-8b", "--platform", "gpu-24gb", "--seq", "1024")
    assert result.returncode == 0, result.stderr
    for word in ["weights", "optimizer state", "gradients", "activations", "LoRA adapter", "overhead", "budget",
                 "headroom", "verdict", "nearest anchor", "assumed", "LoRA rank 16"]:
        assert word in result.stdout


def test_json_has_the_documented_keys_and_consistent_totals():
    data, code = plan_json("--model", "qwen2.5-7b", "--method", "lora", "--platform", "gpu-24gb", "--seq", "1024")
    assert code == 0
    for key in REQUIRED_KEYS:
        assert key in data
    assert data["verdict"] in ("fits", "tight")
    assert data["peak_gb"] == pytest.approx(max(data["train_peak_gb"], data["load_peak_gb"]), abs=0.01)
    assert data["headroom_gb"] == pytest.approx(data["budget_gb"] - data["peak_gb"], abs=0.01)
    assert data["nearest_anchor"]["name"]


def test_spark_anchors_70b():
    qlora, code = plan_json("--model", "llama-3.3-70b", "--method", "qlora", "--platform", "dgx-spark")
    assert code == 0 and qlora["verdict"] == "fits"
    assert qlora["nearest_anchor"]["name"] == "spark-70b-qlora"
    bf16, code = plan_json("--model", "llama-3.3-70b", "--method", "lora", "--platform", "dgx-spark")
    assert code == 3 and bf16["verdict"] == "does-not-fit"


def test_config_json_directory_and_file(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B))
    from_dir, _ = plan_json("--model", str(tmp_path), "--budget-gb", "80")
    from_file, _ = plan_json("--model", str(tmp_path / "config.json"), "--budget-gb", "80")
    assert from_dir["params_b"] == pytest.approx(8.03, abs=0.01)
    assert from_file["weights_gb"] == from_dir["weights_gb"]
    assert from_dir["budget_gb"] == 80


def test_safetensors_headers_give_exact_counts(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    write_safetensors(tmp_path / "model.safetensors", tiny_tensors())
    data, _ = plan_json("--model", str(tmp_path), "--budget-gb", "10", "--method", "full")
    expected = sum(eval("*".join(map(str, shape))) for _, shape in tiny_tensors().values())
    assert data["trainable_params"] == expected  # full fine-tune: every parameter, counted from the headers
    assert "safetensors header" in data["model"]["source"]


def test_sharded_index_and_hf_cache(tmp_path):
    snapshot = tmp_path / "hub" / "models--acme--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (tmp_path / "hub" / "models--acme--tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--acme--tiny" / "refs" / "main").write_text("abc123")
    (snapshot / "config.json").write_text(json.dumps(TINY))
    tensors = list(tiny_tensors().items())
    write_safetensors(snapshot / "model-00001-of-00002.safetensors", dict(tensors[:10]))
    write_safetensors(snapshot / "model-00002-of-00002.safetensors", dict(tensors[10:]))
    index = {"metadata": {}, "weight_map": {n: f"model-0000{1 if i < 10 else 2}-of-00002.safetensors"
                                             for i, (n, _) in enumerate(tensors)}}
    (snapshot / "model.safetensors.index.json").write_text(json.dumps(index))
    data, _ = plan_json("--model", "acme/tiny", "--budget-gb", "10", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert "Hugging Face cache" in data["model"]["source"]
    assert "2 safetensors headers" in data["model"]["source"]
    (snapshot / "model-00002-of-00002.safetensors").unlink()
    result = run("--model", "acme/tiny", "--budget-gb", "10", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert result.returncode == 2
    assert "model-00002-of-00002.safetensors' is missing" in result.stderr


def test_moe_model_keeps_all_experts_resident():
    data, _ = plan_json("--model", "mixtral-8x7b", "--method", "qlora", "--platform", "gpu-48gb")
    assert data["model"]["moe"] is True
    assert data["params_b"] == pytest.approx(46.7, abs=0.2)


def test_json_carries_the_exact_parameter_count(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    write_safetensors(tmp_path / "model.safetensors", tiny_tensors())
    data, _ = plan_json("--model", str(tmp_path), "--budget-gb", "10")
    h, f, v, kv = 64, 128, 1000, 32
    exact = 2 * v * h + h + 2 * (2 * h * h + 2 * kv * h + 3 * f * h + 2 * h)
    assert isinstance(data["params"], int) and data["params"] == exact
    assert data["params_b"] == round(exact / 1e9, 3)


def test_no_comparable_anchor_means_no_anchor_line():
    moe, _ = plan_json("--model", "mixtral-8x7b", "--method", "lora", "--platform", "gpu-80gb")
    assert moe["nearest_anchor"] is None  # the only MoE anchor is QLoRA: not held against a dense one
    full = run("--model", "qwen2.5-0.5b", "--method", "full", "--platform", "gpu-24gb")
    assert full.returncode == 0 and "nearest anchor" not in full.stdout
    dense_qlora, _ = plan_json("--model", "llama-3.3-70b", "--method", "qlora", "--platform", "dgx-spark")
    assert dense_qlora["nearest_anchor"]["name"] == "spark-70b-qlora"


def test_fit_finds_packing_then_batch():
    data, code = plan_json("--model", "llama-3.1-8b", "--platform", "gpu-24gb", "--seq", "16384", "--batch", "8",
                           "--fit")
    assert code == 0
    fit = data["fit"]
    assert fit["found"] and fit["seq"] % 64 == 0 and fit["seq"] <= 16384
    assert fit["batch"] * fit["grad_accum"] == 8  # the effective batch kept: not more, not less
    assert fit["plan"]["workload"]["batch"] == fit["batch"] and fit["plan"]["workload"]["grad_accum"] == fit["grad_accum"]
    assert fit["plan"]["verdict"] == "fits"
    text = run("--model", "llama-3.1-8b", "--platform", "gpu-24gb", "--fit")
    assert text.returncode == 0 and "fit: seq" in text.stdout and "% of the budget free as margin" in text.stdout
    assert fit["margin_fraction"] == 0.1


def test_fit_keeps_the_effective_batch_when_the_largest_fitting_batch_does_not_divide_it():
    # at 30 GB batch 3 fits at seq 1024 but 3 does not divide 8: 3 x 3 would train on 9
    data, code = plan_json("--model", "llama-3.1-8b", "--batch", "8", "--seq", "1024", "--budget-gb", "30", "--fit")
    assert code == 0
    fit = data["fit"]
    assert fit["batch"] * fit["grad_accum"] == 8 and 8 % fit["batch"] == 0


def test_fit_that_finds_nothing_exits_3():
    result = run("--model", "llama-3.1-405b", "--platform", "gpu-24gb", "--fit")
    assert result.returncode == 3
    assert "nothing fits" in result.stdout


def test_workload_file_and_flag_override(tmp_path):
    workload = tmp_path / "w.toml"
    workload.write_text('model = "llama-3.1-8b"\nmethod = "qlora"\nbatch = 2\nseq = 1024\ngrad-ckpt = true\n'
                        'lora-targets = ["q_proj", "v_proj"]\nbudget-gb = 40\n')
    data, _ = plan_json("--workload", str(workload), "--batch", "4")
    assert data["workload"]["batch"] == 4 and data["workload"]["seq"] == 1024
    assert data["workload"]["lora_targets"] == ["q_proj", "v_proj"]
    workload.write_text('model = "llama-3.1-8b"\nbacth = 2\n')
    result = run("--workload", str(workload))
    assert result.returncode == 2 and "w.toml:2:1" in result.stderr and "did you mean 'batch'" in result.stderr


def test_platform_detected_from_nvidia_smi():
    data, _ = plan_json("--model", "llama-3.1-8b", fake_gpu="rtx4090")
    assert data["platform"] == "gpu-24gb"
    assert "nvidia-smi GPU 0" in data["budget_source"]


@pytest.mark.parametrize("args,message", [
    (["--model", "llama-3.1-7b"], "did you mean llama-3.1-"),
    (["--model", "llama-3.1-8b", "--batch", "0"], "--batch"),
    (["--model", "llama-3.1-8b", "--seq", "-5"], "--seq"),
    (["--model", "llama-3.1-8b", "--method", "dpo"], "full|lora|qlora"),
    (["--model", "llama-3.1-8b", "--lora-targets", "q_proj,bogus"], "unknown module 'bogus'"),
    (["--params", "lots"], "--params"),
    (["--model", "./nowhere"], "no such file"),
    ([], "name a model"),
])
def test_bad_input_exits_2_with_a_message(args, message):
    result = run(*args, "--budget-gb", "10")
    assert result.returncode == 2, result.stdout
    assert message in result.stderr
    assert "internal" not in result.stderr


def test_bad_config_and_headers_name_the_file(tmp_path):
    (tmp_path / "config.json").write_text("{ not json")
    result = run("--model", str(tmp_path), "--budget-gb", "10")
    assert result.returncode == 2 and "config.json: not valid JSON" in result.stderr
    broken = dict(TINY)
    del broken["num_hidden_layers"]
    (tmp_path / "config.json").write_text(json.dumps(broken))
    result = run("--model", str(tmp_path), "--budget-gb", "10")
    assert result.returncode == 2 and "field 'num_hidden_layers' is missing" in result.stderr
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 10 ** 9) + b"{}")
    result = run("--model", str(tmp_path), "--budget-gb", "10")
    assert result.returncode == 2 and "model.safetensors: safetensors header claims" in result.stderr
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 4) + b"oops")
    result = run("--model", str(tmp_path), "--budget-gb", "10")
    assert result.returncode == 2 and "not a JSON object" in result.stderr


def test_params_states_its_generic_architecture():
    data, code = plan_json("--params", "70B", "--method", "qlora", "--budget-gb", "122")
    assert code == 0
    assert data["params_b"] == pytest.approx(70, abs=0.01)
    assert any("generic dense architecture" in a for a in data["assumptions"])


@pytest.mark.parametrize("name,base", [("unsloth/Llama-3.2-3B-Instruct-bnb-4bit", "unsloth/Llama-3.2-3B-Instruct"),
                                       ("unsloth/Qwen2.5-7B-Instruct-unsloth-bnb-4bit", "Qwen/Qwen2.5-7B-Instruct"),
                                       ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct")])
def test_a_prequantised_name_plans_qlora_on_its_base_architecture(name, base):
    data, code = plan_json("--model", name, "--method", "lora", "--budget-gb", "100")
    assert code == 0
    assert data["workload"]["method"] == "qlora"  # 4-bit weights stay 4-bit whatever the flags say
    assert any("pre-quantised" in a for a in data["assumptions"])
    original, _ = plan_json("--model", base, "--method", "qlora", "--budget-gb", "100")
    assert data["params_b"] == original["params_b"]
    assert data["load_peak_gb"] < original["load_peak_gb"]  # it maps the 4-bit checkpoint, not the bf16 one


def test_when_nothing_fits_it_lists_what_would_each_with_its_peak():
    text = run("--model", "llama-3.1-8b", "--method", "full", "--platform", "gpu-24gb", "--fit")
    assert text.returncode == 3 and "nothing fits" in text.stdout
    listed = text.stdout.split("what would fit, best first:\n", 1)[1].splitlines()
    assert listed[0].split()[:2] == ["--method", "qlora"] and "peak" in listed[0]
    data, code = plan_json("--model", "llama-3.1-8b", "--method", "full", "--platform", "gpu-24gb", "--fit")
    alternatives = data["fit"]["would_fit"]
    assert [a["change"] for a in alternatives] == ["--method qlora", "--method lora --seq 1024"]
    for a in alternatives:  # each one, planned as written, fits with the peak it was listed with
        flags = {"--model": "llama-3.1-8b", "--method": "full", "--platform": "gpu-24gb"}
        words = a["change"].split()
        flags.update(zip(words[::2], words[1::2]))
        again, code = plan_json(*[word for pair in flags.items() for word in pair])
        assert code == 0 and again["verdict"] == "fits"
        assert again["peak_gb"] == pytest.approx(a["peak_gb"], abs=0.01)


def test_a_plan_that_does_not_fit_says_what_would():
    data, code = plan_json("--model", "llama-3.1-8b", "--method", "full", "--platform", "gpu-80gb")
    assert code == 3 and data["would_fit"][0]["change"] == "--optimizer adamw-8bit"
    fits, code = plan_json("--model", "llama-3.1-8b", "--method", "qlora", "--platform", "gpu-80gb")
    assert code == 0 and fits["would_fit"] == []
