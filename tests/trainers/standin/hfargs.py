"""What the Hugging Face-style stand-ins share (trl, trl_sft.py, trl_sft_v07.py, unsloth-cli.py, unsloth):
argument parsing the way transformers' HfArgumentParser and TRL's TrlParser do it, the field tables of
TrainingArguments / SFTConfig / ModelConfig, and the Trainer loop as sparkguard sees it (tqdm bar on
stderr, log dicts on stdout, OUTPUT_DIR/checkpoint-N, resume rules). Also a tqdm-format line for
torchtune's per-epoch bar. Written for sparkguard's tests; no transformers or TRL code is used.

The parser rules mirror transformers' hf_argparser.py (a copy ships as huggingface/trl@f2cd57710:
trl/scripts/_hf_argparser.py):
  - every field gets --name and, when it has an underscore, --name-with-dashes;
  - bool fields take `--flag`, `--flag VALUE` (yes/no/true/false/t/f/y/n/1/0); a bool whose default
    is True also gets --no_name / --no-name;
  - `bool | None` with default None needs a value; `int | None` / `float | None` accept "none"/"null";
  - Literal / Enum / metadata choices become argparse choices; list fields are nargs="+";
  - argparse's allow_abbrev stays on (unique prefixes parse), the last duplicate wins;
  - unknown arguments: ValueError("Some specified arguments are not used by the HfArgumentParser: [...]").
TrlParser (huggingface/trl@f2cd57710:trl/scripts/utils.py) adds `--config FILE.yaml`, found with
args.index("--config") (so `--config=FILE` is not recognised), whose values become parser defaults (CLI
flags override them), whose `env:` mapping is exported, and whose unknown keys come back as
["--key", "value"] strings.
"""
import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

MISSING = object()


# --- field tables -----------------------------------------------------------------------------

class F:
    """One dataclass field as HfArgumentParser sees it. kind: int, float, str, bool, optint, optfloat,
    optstr, optbool, list (of str). choices: the Literal/Enum/metadata choices."""

    def __init__(self, name, kind, default=MISSING, choices=None):
        self.name, self.kind, self.default, self.choices = name, kind, default, choices


SCHEDULERS = ["linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
              "inverse_sqrt", "reduce_lr_on_plateau", "cosine_with_min_lr", "cosine_warmup_with_min_lr",
              "warmup_stable_decay"]
OPTIMIZERS = ["adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adamw_apex_fused",
              "adafactor", "adamw_anyprecision", "adamw_torch_4bit", "adamw_torch_8bit", "ademamix", "sgd",
              "adagrad", "adamw_bnb_8bit", "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit",
              "paged_adamw_32bit", "paged_adamw_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit",
              "paged_lion_32bit", "paged_lion_8bit", "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit",
              "rmsprop_bnb_32bit", "galore_adamw", "galore_adamw_8bit", "galore_adafactor",
              "galore_adamw_layerwise", "galore_adamw_8bit_layerwise", "galore_adafactor_layerwise", "lomo",
              "adalomo", "grokadamw", "schedule_free_radam", "schedule_free_adamw", "schedule_free_sgd",
              "apollo_adamw", "apollo_adamw_layerwise", "stable_adamw"]
INTERVALS = ["no", "steps", "epoch"]
LOG_LEVELS = ["debug", "info", "warning", "error", "critical", "passive"]

# transformers v5 TrainingArguments (huggingface/transformers@00349ae87edd:src/transformers/training_args.py),
# in declaration order. `X | str` unions with an Enum parse as the Enum's choices; dict/str unions as str.
TRAINING_ARGUMENTS = [
    F("output_dir", "optstr", None),
    F("per_device_train_batch_size", "int", 8),
    F("num_train_epochs", "float", 3.0),
    F("max_steps", "int", -1),
    F("learning_rate", "float", 5e-5),
    F("lr_scheduler_type", "str", "linear", SCHEDULERS),
    F("lr_scheduler_kwargs", "optstr", None),
    F("warmup_steps", "float", 0),
    F("optim", "str", "adamw_torch", OPTIMIZERS),  # adamw_torch_fused with torch >= 2.8
    F("optim_args", "optstr", None),
    F("weight_decay", "float", 0.0),
    F("adam_beta1", "float", 0.9),
    F("adam_beta2", "float", 0.999),
    F("adam_epsilon", "float", 1e-8),
    F("optim_target_modules", "optstr", None),
    F("gradient_accumulation_steps", "int", 1),
    F("average_tokens_across_devices", "bool", True),
    F("max_grad_norm", "float", 1.0),
    F("label_smoothing_factor", "float", 0.0),
    F("bf16", "bool", False),
    F("fp16", "bool", False),
    F("bf16_full_eval", "bool", False),
    F("fp16_full_eval", "bool", False),
    F("tf32", "optbool", None),
    F("gradient_checkpointing", "bool", False),
    F("gradient_checkpointing_kwargs", "optstr", None),
    F("torch_compile", "bool", False),
    F("torch_compile_backend", "optstr", None),
    F("torch_compile_mode", "optstr", None),
    F("use_liger_kernel", "bool", False),
    F("liger_kernel_config", "optstr", None),
    F("use_cache", "bool", False),
    F("neftune_noise_alpha", "optfloat", None),
    F("torch_empty_cache_steps", "optint", None),
    F("auto_find_batch_size", "bool", False),
    F("logging_strategy", "str", "steps", INTERVALS),
    F("logging_steps", "float", 500),
    F("logging_first_step", "bool", False),
    F("log_on_each_node", "bool", True),
    F("logging_nan_inf_filter", "bool", True),
    F("include_num_input_tokens_seen", "bool", "no"),
    F("log_level", "str", "passive", LOG_LEVELS),
    F("log_level_replica", "str", "warning", LOG_LEVELS),
    F("disable_tqdm", "optbool", None),
    F("report_to", "optstr", "none"),
    F("run_name", "optstr", None),
    F("project", "str", "huggingface"),
    F("trackio_space_id", "optstr", "trackio"),
    F("eval_strategy", "str", "no", INTERVALS),
    F("eval_steps", "optfloat", None),
    F("eval_delay", "float", 0),
    F("per_device_eval_batch_size", "int", 8),
    F("prediction_loss_only", "bool", False),
    F("eval_on_start", "bool", False),
    F("eval_do_concat_batches", "bool", True),
    F("eval_use_gather_object", "bool", False),
    F("eval_accumulation_steps", "optint", None),
    F("include_for_metrics", "list", []),
    F("batch_eval_metrics", "bool", False),
    F("save_only_model", "bool", False),
    F("save_strategy", "str", "steps", ["no", "steps", "epoch", "best"]),
    F("save_steps", "float", 500),
    F("save_on_each_node", "bool", False),
    F("save_total_limit", "optint", None),
    F("enable_jit_checkpoint", "bool", False),
    F("push_to_hub", "bool", False),
    F("hub_token", "optstr", None),
    F("hub_private_repo", "optbool", None),
    F("hub_model_id", "optstr", None),
    F("hub_strategy", "str", "every_save", ["end", "every_save", "checkpoint", "all_checkpoints"]),
    F("hub_always_push", "bool", False),
    F("hub_revision", "optstr", None),
    F("load_best_model_at_end", "bool", False),
    F("metric_for_best_model", "optstr", None),
    F("greater_is_better", "optbool", None),
    F("ignore_data_skip", "bool", False),
    F("restore_callback_states_from_checkpoint", "bool", False),
    F("full_determinism", "bool", False),
    F("seed", "int", 42),
    F("data_seed", "optint", None),
    F("use_cpu", "bool", False),
    F("accelerator_config", "optstr", None),
    F("parallelism_config", "optstr", None),
    F("dataloader_drop_last", "bool", False),
    F("dataloader_num_workers", "int", 0),
    F("dataloader_pin_memory", "bool", True),
    F("dataloader_persistent_workers", "bool", False),
    F("dataloader_prefetch_factor", "optint", None),
    F("remove_unused_columns", "bool", True),
    F("label_names", "list", None),
    F("train_sampling_strategy", "str", "random", ["random", "sequential", "group_by_length"]),
    F("length_column_name", "str", "length"),
    F("ddp_find_unused_parameters", "optbool", None),
    F("ddp_bucket_cap_mb", "optint", None),
    F("ddp_broadcast_buffers", "optbool", None),
    F("ddp_backend", "optstr", None, ["nccl", "gloo", "mpi", "xccl", "hccl", "cncl", "mccl"]),
    F("ddp_timeout", "int", 1800),
    F("fsdp", "optstr", None),
    F("fsdp_config", "optstr", None),
    F("deepspeed", "optstr", None),
    F("debug", "str", ""),
    F("skip_memory_metrics", "bool", True),
    F("do_train", "bool", False),
    F("do_eval", "bool", False),
    F("do_predict", "bool", False),
    F("resume_from_checkpoint", "optstr", None),
    F("warmup_ratio", "optfloat", None),
    F("logging_dir", "optstr", None),
    F("local_rank", "int", -1),
]

# TRL's _BaseConfig and SFTConfig (huggingface/trl@f2cd57710:trl/trainer/{base_config,sft_config}.py):
# overridden defaults keep their TrainingArguments position, new fields follow.
SFT_OVERRIDES = {
    "logging_steps": F("logging_steps", "float", 10),
    "gradient_checkpointing": F("gradient_checkpointing", "bool", True),  # so --no_gradient_checkpointing exists
    "bf16": F("bf16", "optbool", None),  # None -> not fp16 in __post_init__; `--bf16` alone needs a value
    "learning_rate": F("learning_rate", "float", 2e-5),
}
SFT_FIELDS = [
    F("model_init_kwargs", "optstr", None),
    F("router_aux_loss_coef", "float", 0.001),
    F("trust_remote_code", "bool", False),
    F("chat_template_path", "optstr", None),
    F("dataset_text_field", "str", "text"),
    F("dataset_kwargs", "optstr", None),
    F("dataset_num_proc", "optint", None),
    F("eos_token", "optstr", None),
    F("max_length", "optint", 1024),
    F("truncation_mode", "str", "keep_start", ["keep_end", "keep_start"]),
    F("shuffle_dataset", "bool", False),
    F("packing", "bool", False),
    F("packing_strategy", "str", "bfd", ["bfd", "bfd_split", "wrapped"]),
    F("padding_free", "bool", False),
    F("pad_to_multiple_of", "optint", None),
    F("eval_packing", "optbool", None),
    F("completion_only_loss", "optbool", None),
    F("assistant_only_loss", "bool", False),
    F("loss_type", "optstr", None),
    F("activation_offloading", "bool", False),
    F("pad_token", "optstr", None),
]
SCRIPT_ARGUMENTS = [  # trl/scripts/utils.py ScriptArguments
    F("dataset_name", "optstr", None),
    F("dataset_config", "optstr", None),
    F("dataset_train_split", "str", "train"),
    F("dataset_test_split", "str", "test"),
    F("dataset_streaming", "bool", False),
    F("ignore_bias_buffers", "bool", False),
]
MODEL_CONFIG = [  # trl/trainer/model_config.py ModelConfig
    F("model_name_or_path", "optstr", None),
    F("model_revision", "str", "main"),
    F("dtype", "optstr", "float32", ["auto", "bfloat16", "float16", "float32"]),
    F("attn_implementation", "optstr", None),
    F("use_peft", "bool", False),
    F("lora_r", "int", 16),
    F("lora_alpha", "int", 32),
    F("lora_dropout", "float", 0.05),
    F("lora_target_modules", "list", None),
    F("lora_target_parameters", "list", None),
    F("lora_modules_to_save", "list", None),
    F("lora_task_type", "str", "CAUSAL_LM"),
    F("use_rslora", "bool", False),
    F("use_dora", "bool", False),
    F("load_in_8bit", "bool", False),
    F("load_in_4bit", "bool", False),
    F("bnb_4bit_quant_type", "str", "nf4", ["fp4", "nf4"]),
    F("use_bnb_nested_quant", "bool", False),
    F("bnb_4bit_quant_storage", "optstr", None),
]
DATASET_MIXTURE = [  # trl/scripts/utils.py DatasetMixtureConfig (datasets: list of dicts, YAML only in practice)
    F("datasets", "list", []),
    F("streaming", "bool", False),
    F("test_split_size", "optfloat", None),
]


def sft_config_fields():
    return [SFT_OVERRIDES.get(f.name, f) for f in TRAINING_ARGUMENTS] + SFT_FIELDS


def trl_sft_groups():
    """(ScriptArguments, SFTConfig, ModelConfig, DatasetMixtureConfig): trl/scripts/sft.py make_parser."""
    return [("script", SCRIPT_ARGUMENTS), ("training", sft_config_fields()), ("model", MODEL_CONFIG),
            ("dataset", DATASET_MIXTURE)]


# --- HfArgumentParser work-alike ---------------------------------------------------------------

def string_to_bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ("yes", "true", "t", "y", "1"):
        return True
    if v.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError(
        f"Truthy value expected: got {v} but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive).")


def _none_or(inner):
    def parse(v):
        return None if v.lower() in ("none", "null") else inner(v)
    parse.__name__ = inner.__name__
    return parse


def _choice(choices):
    table = {str(c): c for c in choices}
    return lambda arg: table.get(arg, arg)


class HfParser(argparse.ArgumentParser):
    """argparse built from field tables by HfArgumentParser's rules; groups: [(name, [F, ...])]."""

    def __init__(self, groups, **kwargs):
        kwargs.setdefault("formatter_class", argparse.ArgumentDefaultsHelpFormatter)
        super().__init__(**kwargs)
        self.groups = groups
        for _, fields in groups:
            for f in fields:
                self._add_field(f)

    def _add_field(self, f):
        options = [f"--{f.name}"] + ([f"--{f.name.replace('_', '-')}"] if "_" in f.name else [])
        kw = {}
        if f.choices is not None:
            kw.update(choices=f.choices, type=_choice(f.choices))
            kw["default"] = f.default
        elif f.kind in ("bool", "optbool"):
            kw["type"] = string_to_bool
            if f.kind == "bool" or f.default is not None:
                kw.update(default=False if f.default is MISSING else f.default, nargs="?", const=True)
            else:
                kw["default"] = None
        elif f.kind == "list":
            kw.update(type=str, nargs="+", default=f.default)
        else:
            base = {"int": int, "float": float, "str": str}[f.kind.replace("opt", "")]
            kw["type"] = _none_or(base) if f.kind in ("optint", "optfloat") else base
            kw["default"] = f.default
        self.add_argument(*options, dest=f.name, **kw)
        if f.kind in ("bool", "optbool") and f.default is True:
            self.add_argument(f"--no_{f.name}", f"--no-{f.name.replace('_', '-')}", action="store_false",
                              dest=f.name, default=False)

    def _split(self, namespace):
        values = vars(namespace)
        return [argparse.Namespace(**{f.name: values[f.name] for f in fields}) for _, fields in self.groups]

    def parse_args_into_dataclasses(self, args=None, return_remaining_strings=False, look_for_args_file=True):
        """Also reads ARGV0.args (whitespace-split) in front of the command line, as HfArgumentParser does."""
        args = list(sys.argv[1:] if args is None else args)
        if look_for_args_file and sys.argv:
            args_file = Path(sys.argv[0]).with_suffix(".args")
            if args_file.exists():
                args = args_file.read_text().split() + args
        namespace, remaining = self.parse_known_args(args=args)
        outputs = self._split(namespace)
        if return_remaining_strings:
            return (*outputs, remaining)
        if remaining:
            raise ValueError(f"Some specified arguments are not used by the HfArgumentParser: {remaining}")
        return tuple(outputs)

    def parse_dict(self, data, allow_extra_keys=False):
        unused = set(data)
        outputs = []
        for _, fields in self.groups:
            values = {f.name: f.default if f.default is not MISSING else None for f in fields}
            for f in fields:
                if f.name in data:
                    values[f.name] = data[f.name]
                    unused.discard(f.name)
            outputs.append(argparse.Namespace(**values))
        if not allow_extra_keys and unused:
            raise ValueError(f"Some keys are not used by the HfArgumentParser: {sorted(unused)}")
        return tuple(outputs)

    def parse_json_file(self, json_file, allow_extra_keys=False):
        with open(json_file, encoding="utf-8") as f:
            return self.parse_dict(json.loads(f.read()), allow_extra_keys=allow_extra_keys)

    # TrlParser
    def set_defaults_with_config(self, **config):
        used = set()
        for action in self._actions:
            if action.dest in config:
                action.default = config[action.dest]
                action.required = False
                used.add(action.dest)
        return [item for key, value in config.items() if key not in used for item in (f"--{key}", str(value))]

    def parse_args_and_config(self, args=None, return_remaining_strings=False, fail_with_unknown_args=True,
                              separate_remaining_strings=False):
        import yaml

        args = list(args) if args is not None else sys.argv[1:]
        config_file = None
        if "--config" in args:
            i = args.index("--config")
            args.pop(i)
            config_file = args.pop(i)  # IndexError when --config is last, as in TRL
            with open(config_file) as f:
                config = yaml.safe_load(f)
            if "env" in config:
                env = config.pop("env", {})
                if not isinstance(env, dict):
                    raise ValueError("`env` field should be a dict in the YAML file.")
                for key, value in env.items():
                    os.environ[key] = str(value)
            config_remaining = self.set_defaults_with_config(**config)
        else:
            config_remaining = []
        self.config_file = config_file
        output = self.parse_args_into_dataclasses(args=args, return_remaining_strings=return_remaining_strings)
        if return_remaining_strings:
            if separate_remaining_strings:
                return output[:-1] + (config_remaining, output[-1])
            return output[:-1] + (config_remaining + output[-1],)
        if fail_with_unknown_args and config_remaining:
            raise ValueError(
                f"Unknown arguments from config file: {config_remaining}. Please remove them, add them to the "
                "dataclass, or set `fail_with_unknown_args=False`.")
        return output


def training_post_init(t, sft=False):
    """The parts of TrainingArguments.__post_init__ (and _BaseConfig's) the stand-ins need."""
    if sft and t.bf16 is None:
        t.bf16 = not t.fp16
    if t.output_dir is None:
        t.output_dir = "trainer_output"
    t.output_dir = os.path.expanduser(t.output_dir)
    if t.fp16 and t.bf16:
        raise ValueError("At most one of fp16 and bf16 can be True, but not both")
    if t.warmup_ratio is not None:
        t.warmup_steps = t.warmup_ratio
    return t


def model_post_init(m):
    """trl ModelConfig.__post_init__."""
    if m.load_in_8bit and m.load_in_4bit:
        raise ValueError("You can't use 8 bit and 4 bit precision at the same time")
    if hasattr(m.lora_target_modules, "__len__") and len(m.lora_target_modules) == 1:
        m.lora_target_modules = m.lora_target_modules[0]
    return m


# --- the Trainer loop --------------------------------------------------------------------------

def absolute_steps(value, max_steps):
    """save_steps / logging_steps below 1 are a fraction of max_steps (TrainerState.compute_steps)."""
    if value is None:
        return None
    if value < 1:
        return max(1, int(-(-max_steps * value // 1)))
    return int(value)


def format_logs(logs, style):
    """style "new": floats as 4-significant-digit strings (current ProgressCallback); "old": raw floats."""
    if style == "new":
        return str({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in logs.items()})
    return str(logs)


class HfRun:
    """One Trainer.train(): what the trainer resolved, plus how it prints."""

    def __init__(self, trainer, output_dir, batch, accum, seq, packing, qlora, dtype, max_steps, save_steps,
                 logging_steps, save_strategy="steps", save_total_limit=None, learning_rate=2e-5,
                 log_style="new", extra_log_keys=(), config_file=None, banner=None, disable_tqdm=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def resolve_resume(self, resume_from_checkpoint):
        """Trainer.train(resume_from_checkpoint=...): False -> None, True -> newest checkpoint-N, else a path."""
        from standin import common

        if resume_from_checkpoint is False:
            return None, None
        if isinstance(resume_from_checkpoint, bool):
            resume_from_checkpoint = common.last_hf_checkpoint(self.output_dir)
            if resume_from_checkpoint is None:
                raise ValueError(f"No valid checkpoint found in output directory ({self.output_dir})")
        if resume_from_checkpoint is None:
            return None, None
        return resume_from_checkpoint, common.load_hf_state(resume_from_checkpoint)

    def train(self, resume_from_checkpoint=None):
        from standin import common

        checkpoint, state = self.resolve_resume(resume_from_checkpoint)
        start = 0
        if state is not None:
            # transformers >= 4.36: the dataloader is rebuilt with the checkpoint's train_batch_size, and
            # save/logging/eval steps come from the checkpoint's TrainerState; only a warning says so.
            mismatches = []
            for key, arg in (("logging_steps", self.logging_steps), ("eval_steps", None), ("save_steps", self.save_steps)):
                if arg is not None and state.get(key) is not None and arg != state[key]:
                    mismatches.append(f"\n\t{key}: {arg} (from args) != {state[key]} (from trainer_state.json)")
            if state.get("train_batch_size") is not None and state["train_batch_size"] != self.batch:
                mismatches.append(f"\n\tper_device_train_batch_size: {self.batch} (from args) != "
                                  f"{state['train_batch_size']} (from trainer_state.json)")
            if mismatches:
                sys.stderr.write("Warning: The following arguments do not match the ones in the `trainer_state.json` "
                                 "within the checkpoint directory: " + "".join(mismatches) + "\n")
            if state.get("train_batch_size") is not None:
                self.batch = state["train_batch_size"]
            self.save_steps = state.get("save_steps") or self.save_steps
            self.logging_steps = state.get("logging_steps") or self.logging_steps
            start = int(state["global_step"])
        common.record_attempt(self.output_dir, trainer=self.trainer, batch=self.batch, accum=self.accum,
                              seq=self.seq, packing=self.packing, qlora=self.qlora, dtype=self.dtype,
                              start_step=start, resumed_from=checkpoint, config_file=self.config_file)
        if self.banner:
            self.banner(self)
        common.warm_up_blas()
        started = time.time()
        if not self.disable_tqdm:  # tqdm draws the bar at 0 when training begins, resumed or not
            common.hf_progress(0, self.max_steps, started)
        loss = 0.0
        losses = []
        epochs = max(1, self.max_steps)  # the stand-in's synthetic dataset is one pass of max_steps steps
        for step in range(start + 1, self.max_steps + 1):
            loss = common.step_memory(self.batch, self.seq, self.qlora, step)
            losses.append(loss)
            if not self.disable_tqdm:
                common.hf_progress(step, self.max_steps, started)
            if self.logging_steps and step % self.logging_steps == 0:
                logs = {"loss": round(loss, 4), "grad_norm": 1.0 + loss / 10, "learning_rate": self.learning_rate}
                if self.log_style == "old":
                    logs.pop("grad_norm")
                for key in self.extra_log_keys:
                    logs[key] = {"entropy": 1.5 + loss / 100, "num_tokens": float(step * self.batch * self.accum * self.seq),
                                 "mean_token_accuracy": 0.5}[key]
                logs["epoch"] = round(step / epochs, 2) if self.log_style == "old" else step / epochs
                if not self.disable_tqdm:
                    sys.stderr.write("\n")
                print(format_logs(logs, self.log_style), flush=True)
            if self.save_strategy != "no" and ((self.save_strategy == "steps" and step % self.save_steps == 0)
                                                or step == self.max_steps):
                common.save_hf_checkpoint(self.output_dir, step, self.max_steps, self.batch, self.save_steps,
                                          self.logging_steps, loss)
                self.rotate_checkpoints()
            common.step_sleep()
        if not self.disable_tqdm:
            sys.stderr.write("\n")
        runtime = max(time.time() - started, 1e-3)
        done = self.max_steps - start
        summary = {"train_runtime": runtime, "train_samples_per_second": done * self.batch * self.accum / runtime,
                   "train_steps_per_second": done / runtime, "train_loss": sum(losses) / max(1, len(losses)),
                   "epoch": 1.0}
        if self.log_style == "old":
            summary = {k: round(v, 4) for k, v in summary.items()}
        print(format_logs(summary, self.log_style), flush=True)

    def rotate_checkpoints(self):
        from standin import common

        if not self.save_total_limit:
            return
        found = common.hf_checkpoints(self.output_dir)
        for _, path in found[:max(0, len(found) - self.save_total_limit)]:
            shutil.rmtree(path, ignore_errors=True)


# --- tqdm's format, for bars drawn without tqdm -------------------------------------------------

def _clock(seconds):
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tqdm_line(n, total, elapsed, desc=""):
    """tqdm.format_meter with no terminal (10-character bar): `desc: 19%|█▉        | 3/16 [00:21<01:30,  6.87s/it]`."""
    frac = n / total if total else 0.0
    width = 10
    full, part = divmod(int(frac * width * 8), 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if full < width else "")
    bar = bar.ljust(width)
    rate = n / elapsed if elapsed > 0 else None
    if rate is None or n == 0:
        rate_text, remaining = "?it/s", "?"
    else:
        rate_text = f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"
        remaining = _clock((total - n) / rate)
    return f"{desc + ': ' if desc else ''}{100 * frac:3.0f}%|{bar}| {n}/{total} [{_clock(elapsed)}<{remaining}, {rate_text}]"


# --- trl/scripts/sft.py main() ------------------------------------------------------------------

# A stand-in default where the real one would run for hours: num_train_epochs over a real dataset.
STANDIN_MAX_STEPS = 8
# With max_length None nothing truncates: the synthetic samples are this many tokens long.
STANDIN_SAMPLE_TOKENS = 2048


def purely_quantized_error():
    return ValueError("You cannot perform fine-tuning on purely quantized models. Please attach trainable adapters "
                      "on top of the quantized model to correctly perform fine-tuning. Please see: "
                      "https://huggingface.co/docs/transformers/peft for more details")


def trl_sft_main(script_args, training_args, model_args, dataset_args, trainer, resume=None, config_file=None):
    """huggingface/trl@f2cd57710:trl/scripts/sft.py main(): it calls trainer.train() with no argument, so
    --resume_from_checkpoint parses but is ignored; a user's script passes `resume` on."""
    if not dataset_args.datasets and not script_args.dataset_name:
        raise ValueError("Either `datasets` or `dataset_name` must be provided.")
    if (model_args.load_in_4bit or model_args.load_in_8bit) and not model_args.use_peft:
        raise purely_quantized_error()
    t = training_args
    max_steps = t.max_steps if t.max_steps > 0 else STANDIN_MAX_STEPS
    run = HfRun(trainer=trainer, output_dir=t.output_dir, batch=t.per_device_train_batch_size,
                accum=t.gradient_accumulation_steps,
                seq=t.max_length if t.max_length is not None else STANDIN_SAMPLE_TOKENS,
                packing=bool(t.packing), qlora=bool(model_args.load_in_4bit), dtype=model_args.dtype,
                max_steps=max_steps, save_steps=absolute_steps(t.save_steps, max_steps),
                logging_steps=absolute_steps(t.logging_steps, max_steps), save_strategy=t.save_strategy,
                save_total_limit=t.save_total_limit, learning_rate=t.learning_rate, log_style="new",
                extra_log_keys=("entropy", "num_tokens", "mean_token_accuracy"), config_file=config_file,
                disable_tqdm=bool(t.disable_tqdm))
    run.train(resume_from_checkpoint=resume)
    print("✅ Training completed.", flush=True)
    print(f"💾 Model saved to {t.output_dir}.", flush=True)


def parse_trl_sft(args=None, prog=None, **kwargs):
    """make_parser() + parse_args_and_config() + the dataclasses' __post_init__."""
    parser = HfParser(trl_sft_groups(), prog=prog)
    out = parser.parse_args_and_config(args, **kwargs)
    if kwargs.get("return_remaining_strings"):
        return parser, out
    script_args, training_args, model_args, dataset_args = out
    training_post_init(training_args, sft=True)
    model_post_init(model_args)
    return parser, (script_args, training_args, model_args, dataset_args)
