"""What the Axolotl stand-in shares between `axolotl train` (click) and `python -m axolotl.cli.train`
(fire): load_cfg() resolves the configuration as Axolotl does, do_cli() runs it.

Sources (axolotl-ai-cloud/axolotl@067b021c8, v0.18.0 + 2026-07):
  src/axolotl/cli/config.py           load_cfg, _coerce_value: YAML, then CLI overrides, then validation
  src/axolotl/utils/config/__init__.py validate_config (pydantic, model_dump(exclude_none=True)),
                                       normalize_config (gradient_accumulation_steps / batch_size)
  src/axolotl/utils/schemas/*.py       defaults and validators quoted below
  src/axolotl/utils/train.py           determine_last_checkpoint (auto-resume)
  src/axolotl/utils/tee.py             OUTPUT_DIR/debug.log, appended on resume, else truncated
  src/axolotl/logging_config.py        log line formats
  src/axolotl/train.py                 execute_training: "Starting trainer...", trainer.train(resume_from_checkpoint=...)
Datasets and the model are not loaded (nothing is downloaded); base_model is only recorded.
"""
import datetime
import json
import os
import sys
import time
from pathlib import Path

import yaml

TRAINERS = Path(__file__).resolve().parents[2]  # tests/trainers
if str(TRAINERS / "standin") not in sys.path:
    sys.path.insert(0, str(TRAINERS / "standin"))

# Stand-in defaults where the real trainer derives the value from the dataset or the epoch length.
STANDIN_MAX_STEPS = 8  # real: num_epochs x len(dataloader) // gradient_accumulation_steps when max_steps is unset
STANDIN_SAVE_STEPS = 2  # real: save_strategy "epoch"-like cadence (saves_per_epoch / end of epoch) when unset


# --- errors as the real one raises them ---------------------------------------------------------

class ValidationError(ValueError):
    """Printed by the traceback as pydantic's: `pydantic_core._pydantic_core.ValidationError: 1 validation
    error for AxolotlConfigWCapabilities` then `  Value error, <message> [type=value_error, ...]`.
    (load_cfg always passes GPU capabilities, so the model is AxolotlConfigWCapabilities.)"""

    def __init__(self, message, data, kind="value_error", prefix="Value error, ", loc=None):
        shown = repr(data)
        if len(shown) > 50:  # pydantic truncates long input values in the middle
            shown = shown[:24] + "..." + shown[-24:]
        head = f"1 validation error for AxolotlConfigWCapabilities\n"
        if loc:
            head += f"{loc}\n"
        super().__init__(f"{head}  {prefix}{message} [type={kind}, input_value={shown}, "
                         f"input_type={type(data).__name__}]\n"
                         f"    For further information visit https://errors.pydantic.dev/2.11/v/{kind}")


ValidationError.__module__ = "pydantic_core._pydantic_core"
ValidationError.__qualname__ = ValidationError.__name__ = "ValidationError"


# --- logging -------------------------------------------------------------------------------------

def _asctime():
    now = datetime.datetime.now()
    return now.strftime("%Y-%m-%d %H:%M:%S") + f",{now.microsecond // 1000:03d}"


_debug_log = None  # the open OUTPUT_DIR/debug.log, once prepare_debug_log ran


def log(name, func, line, level, message):
    """Axolotl's logger. Console (stdout) since v0.13.0 (#3159, 4065bc14c): the "concise" format
    `[%(asctime)s] [%(levelname)s] [%(name)s] %(message)s`; debug.log gets the "simple" format with
    `[%(name)s.%(funcName)s:%(lineno)d] [PID:%(process)d]`. STANDIN_AXOLOTL_LOG_FORMAT=pid prints the
    pre-0.13 console format instead (`... [axolotl.train.execute_training:203] [PID:65109] [RANK:0] ...`,
    as in PR #3148's log)."""
    stamp = _asctime()
    detailed = f"[{stamp}] [{level}] [{name}.{func}:{line}] [PID:{os.getpid()}]"
    if os.environ.get("STANDIN_AXOLOTL_LOG_FORMAT") == "pid":
        console = f"{detailed} [RANK:0] {message}"
    else:
        console = f"[{stamp}] [{level}] [{name}] {message}"
    if _debug_log is not None:
        _debug_log.write_file_only(f"{detailed} {message}\n")
    print(console, flush=True)


def transformers_info(message):
    """transformers' own logger.info: hidden unless TRANSFORMERS_VERBOSITY=info|debug (axolotl leaves
    transformers at its default WARNING level); then a bare message on stderr."""
    if os.environ.get("TRANSFORMERS_VERBOSITY", "").lower() in ("info", "debug"):
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


def transformers_warning(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


class _Tee:
    """utils/tee.py _StreamTee: mirrors stdout and stderr into debug.log."""

    def __init__(self, stream, fh):
        self._stream, self._fh = stream, fh

    def write(self, s):
        n = self._stream.write(s)
        self._fh.write(s)
        return n

    def write_file_only(self, s):
        self._fh.write(s)
        self._fh.flush()

    def flush(self):
        self._stream.flush()
        self._fh.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def prepare_debug_log(cfg):
    """utils/tee.py prepare_debug_log: append when resume_from_checkpoint or auto_resume_from_checkpoints
    is set, otherwise start the file afresh."""
    global _debug_log
    if _debug_log is not None:
        return
    os.makedirs(cfg["output_dir"], exist_ok=True)
    path = Path(cfg["output_dir"]) / "debug.log"
    if not (cfg.get("resume_from_checkpoint") or cfg.get("auto_resume_from_checkpoints")):
        path.unlink(missing_ok=True)
    fh = open(path, "a", encoding="utf-8", buffering=1)
    if os.environ.get("AXOLOTL_TEE_STDOUT", "1").lower() not in {"0", "false", "no"}:
        sys.stdout = _Tee(sys.stdout, fh)
        sys.stderr = _Tee(sys.stderr, fh)
        _debug_log = sys.stdout
    else:
        _debug_log = _Tee(open(os.devnull, "w"), fh)


# --- load_cfg ------------------------------------------------------------------------------------

def _coerce_value(value, existing=None):
    """cli/config.py _coerce_value, verbatim in behaviour: a CLI string takes the type of the YAML value,
    else YAML-style inference."""
    if not isinstance(value, str):
        return value
    if existing is not None:
        if isinstance(existing, bool):
            return value.lower() in ("true", "1", "yes")
        if isinstance(existing, int):
            try:
                return int(value)
            except (ValueError, TypeError):
                return value
        if isinstance(existing, float):
            try:
                return float(value)
            except (ValueError, TypeError):
                return value
        return value
    lower = value.lower()
    if lower in ("true", "yes"):
        return True
    if lower in ("false", "no"):
        return False
    if lower in ("null", "none", "~"):
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        pass
    return value


INT_FIELDS = ("micro_batch_size", "gradient_accumulation_steps", "batch_size", "sequence_len", "max_steps",
              "save_steps", "logging_steps", "eval_batch_size", "save_total_limit")
BOOL_FIELDS = ("sample_packing", "load_in_4bit", "load_in_8bit", "auto_resume_from_checkpoints", "strict",
               "merge_lora")


def _as_int(key, value, data):
    """pydantic lax mode: int, integral float, or a numeric string."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ValidationError("Input should be a valid integer, unable to parse string as an integer", value,
                          kind="int_parsing", prefix="", loc=key)


def _as_bool(key, value):
    if value is None or isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("1", "on", "t", "true", "y", "yes"):
        return True
    if text in ("0", "off", "f", "false", "n", "no"):
        return False
    raise ValidationError("Input should be a valid boolean, unable to interpret input", value,
                          kind="bool_parsing", prefix="", loc=key)


def validate_config(data):
    """The validators of the schema that touch the knobs sparkguard changes, in the real messages, then
    the schema defaults (pydantic fills a default for every missing field; None values are dropped)."""
    # schemas/validation.py TrainingValidationMixin.check_batch_size_fields (mode="before")
    fields = ("micro_batch_size", "gradient_accumulation_steps", "batch_size")
    if sum(1 for f in fields if data.get(f)) < 2:
        raise ValidationError(f"At least two of {', '.join(fields)} must be set", data)
    # schemas/validation.py check_gas_bsz (mode="before")
    if data.get("gradient_accumulation_steps") and data.get("batch_size"):
        raise ValidationError("please set only one of gradient_accumulation_steps or batch_size", data)
    # schemas/peft.py LoraConfig.validate_adapter (mode="before"); the two sentences are joined without a space
    if not data.get("adapter") and not data.get("inference") and (data.get("load_in_8bit") or data.get("load_in_4bit")):
        raise ValidationError("load_in_8bit and load_in_4bit are not supported without setting an adapter for training."
                              "If you want to full finetune, please turn off load_in_8bit and load_in_4bit.", data)
    adapter = data.get("adapter")
    if adapter and adapter not in ("lora", "qlora", "llama-adapter"):
        raise ValidationError(f"Adapter '{adapter}' is not built in and was not registered by a plugin. "
                              "Add the plugin that provides this adapter to `plugins:`.", data)
    # schemas/deprecated.py
    if data.get("max_packed_sequence_len"):
        raise ValidationError("`max_packed_sequence_len` is no longer supported", data["max_packed_sequence_len"],
                              prefix="", loc="max_packed_sequence_len")
    cfg = dict(data)
    for key in INT_FIELDS:
        if key in cfg:
            cfg[key] = _as_int(key, cfg[key], data)
    for key in BOOL_FIELDS:
        if key in cfg:
            cfg[key] = _as_bool(key, cfg[key])
    # schemas/training.py HyperparametersConfig: micro_batch_size and gradient_accumulation_steps default
    # to 1 -- so with `batch_size` + `micro_batch_size` the validated config already has
    # gradient_accumulation_steps == 1 and normalize_config's `batch_size // micro_batch_size` never
    # applies (pydantic fills the default before normalize_config runs; true since the pydantic config,
    # cc3cebfa7, 2024-02).
    defaults = {"micro_batch_size": 1, "gradient_accumulation_steps": 1, "sequence_len": 512,
                "output_dir": "./model-out", "strict": False, "num_epochs": 1.0}
    for key, value in defaults.items():
        if cfg.get(key) is None:
            cfg[key] = value
    # schemas/peft.py validate_qlora (mode="after")
    if cfg.get("adapter") == "qlora" and not cfg.get("merge_lora"):
        if cfg.get("load_in_8bit"):
            raise ValidationError("Can't load qlora in 8bit", data)
        if not cfg.get("load_in_4bit"):
            raise ValidationError("Require cfg.load_in_4bit to be True for qlora", data)
    if cfg.get("sample_packing") and cfg.get("pad_to_sequence_len") is None:
        cfg["pad_to_sequence_len"] = True  # hint_sample_packing_padding
    return {k: v for k, v in cfg.items() if v is not None}  # model_dump(exclude_none=True)


def normalize_config(cfg):
    """utils/config/__init__.py normalize_config."""
    cfg["gradient_accumulation_steps"] = cfg.get("gradient_accumulation_steps") or (
        cfg["batch_size"] // cfg["micro_batch_size"])
    cfg["batch_size"] = cfg.get("batch_size") or cfg["micro_batch_size"] * cfg["gradient_accumulation_steps"]
    bf16 = cfg.get("bf16")
    # resolve_dtype: bf16 auto|true -> bfloat16 (the stand-in assumes a bf16-capable GPU), fp16, else float32
    cfg["torch_dtype"] = "bf16" if bf16 in (True, "auto", "true") else "fp16" if cfg.get("fp16") else "fp32"


def load_cfg(config, **kwargs):
    """cli/config.py load_cfg: YAML, then the CLI overrides (flat, and `parent__child` nested), each coerced
    to the type of the YAML value; with `strict: true` only keys already in the YAML may be overridden."""
    with open(config, encoding="utf-8") as f:
        cfg = yaml.safe_load(f) or {}
    cfg["axolotl_config_path"] = str(config)
    cfg_keys = list(cfg.keys())
    nested, flat = {}, {}
    for key, value in kwargs.items():
        if "__" in key:
            parent, child = key.split("__", 1)
            nested.setdefault(parent, {})[child] = value
        else:
            flat[key] = value
    for key, value in flat.items():
        if key in cfg_keys or not cfg.get("strict"):
            cfg[key] = _coerce_value(value, cfg.get(key))
    for parent, children in nested.items():
        if parent not in cfg_keys and cfg.get("strict"):
            continue
        if not isinstance(cfg.get(parent), dict):
            cfg[parent] = {}
        for child, value in children.items():
            cfg[parent][child] = _coerce_value(value, cfg[parent].get(child))
    cfg = validate_config(cfg)
    prepare_debug_log(cfg)
    normalize_config(cfg)
    log("axolotl.cli.config", "load_cfg", 335, "INFO",
        "config:\n" + json.dumps(cfg, indent=2, default=str, sort_keys=True))
    return cfg


# --- training -----------------------------------------------------------------------------------

def determine_last_checkpoint(cfg):
    """utils/train.py: the largest checkpoint-N in output_dir (no completeness check); used only when
    resume_from_checkpoint is unset and auto_resume_from_checkpoints is true."""
    checkpoints = sorted((p for p in Path(cfg["output_dir"]).glob("checkpoint-*") if p.name.split("-")[-1].isdigit()),
                         key=lambda p: int(p.name.split("-")[-1]))
    last = str(checkpoints[-1]) if checkpoints else None
    if cfg.get("resume_from_checkpoint") is None and cfg.get("auto_resume_from_checkpoints") and last is not None:
        cfg["resume_from_checkpoint"] = last
        log("axolotl.utils.train", "determine_last_checkpoint", 44, "INFO",
            f"Using auto-resume functionality to resume from checkpoint at {last}")
    return cfg.get("resume_from_checkpoint")


def _fmt(value):
    """Trainer log dicts: newer transformers print floats as f"{v:.4g}" strings; STANDIN_HF_LOG_FLOATS=1
    prints plain floats as older versions did."""
    if os.environ.get("STANDIN_HF_LOG_FLOATS") == "1" or not isinstance(value, float):
        return value
    return f"{value:.4g}"


def hf_train(cfg, resume_from_checkpoint):
    """transformers Trainer.train(resume_from_checkpoint=...) as Axolotl drives it."""
    import common

    output_dir = cfg["output_dir"]
    batch = cfg["micro_batch_size"]
    accum = cfg["gradient_accumulation_steps"]
    seq = cfg["sequence_len"]
    qlora = bool(cfg.get("load_in_4bit"))
    max_steps = cfg.get("max_steps") or STANDIN_MAX_STEPS
    save_steps = cfg.get("save_steps") or STANDIN_SAVE_STEPS
    # core/builders/base.py: logging_steps unset -> max(min(int(0.005 * total_num_steps), 10), 1)
    logging_steps = cfg.get("logging_steps") or max(min(int(0.005 * max_steps), 10), 1)
    start = 0
    if resume_from_checkpoint:
        state = common.load_hf_state(resume_from_checkpoint)  # "Can't find a valid checkpoint at ..."
        mismatches = [(name, mine, state.get(key)) for name, key, mine in
                      (("logging_steps", "logging_steps", logging_steps), ("save_steps", "save_steps", save_steps),
                       ("per_device_train_batch_size", "train_batch_size", batch))
                      if state.get(key) is not None and state.get(key) != mine]
        if mismatches:
            transformers_warning("Warning: The following arguments do not match the ones in the `trainer_state.json` "
                                 "within the checkpoint directory: " + "".join(
                                     f"\n\t{n}: {a} (from args) != {b} (from trainer_state.json)" for n, a, b in mismatches))
        # transformers >= 4.36 (PR #27568): the checkpoint's train_batch_size wins; save/logging steps too
        batch = state.get("train_batch_size") or batch
        save_steps = state.get("save_steps") or save_steps
        logging_steps = state.get("logging_steps") or logging_steps
        start = int(state["global_step"])
    common.record_attempt(output_dir, trainer="axolotl", batch=batch, accum=accum, seq=seq,
                          packing=bool(cfg.get("sample_packing")), qlora=qlora, dtype=cfg["torch_dtype"],
                          start_step=start, resumed_from=resume_from_checkpoint,
                          config_file=cfg.get("axolotl_config_path"), base_model=cfg.get("base_model"),
                          adapter=cfg.get("adapter"), batch_size_total=cfg.get("batch_size"))
    transformers_info("***** Running training *****")
    transformers_info(f"  Num examples = {max_steps * batch * accum:,}")
    transformers_info(f"  Num Epochs = {int(cfg.get('num_epochs') or 1)}")
    transformers_info(f"  Instantaneous batch size per device = {batch:,}")
    transformers_info(f"  Total train batch size (w. parallel, distributed & accumulation) = {batch * accum:,}")
    transformers_info(f"  Gradient Accumulation steps = {accum}")
    transformers_info(f"  Total optimization steps = {max_steps:,}")
    if resume_from_checkpoint:
        transformers_info("  Continuing training from checkpoint, will skip to saved global_step")
        transformers_info(f"  Continuing training from epoch {start // max_steps}")
        transformers_info(f"  Continuing training from global step {start}")
        transformers_info(f"  Will skip the first {start // max_steps} epochs then the first "
                          f"{(start % max_steps) * accum} batches in the first epoch.")
    common.warm_up_blas()
    started = time.time()
    common.hf_progress(0, max_steps, started)  # tqdm draws the bar at 0 when training begins, resumed or not
    loss = 0.0
    lr = float(cfg.get("learning_rate") or 2e-4)
    for step in range(start + 1, max_steps + 1):
        for _ in range(accum):
            loss = common.step_memory(batch, seq, qlora, step)
        common.hf_progress(step, max_steps, started)
        if step % logging_steps == 0:
            sys.stderr.write("\n")
            gib = batch * seq * common.kib_per_token() / (1 << 20)
            print({"loss": _fmt(round(loss, 4)), "grad_norm": _fmt(0.5), "learning_rate": _fmt(lr),
                   "memory/max_active (GiB)": _fmt(round(gib, 2)), "memory/max_allocated (GiB)": _fmt(round(gib, 2)),
                   "memory/device_reserved (GiB)": _fmt(round(gib * 1.1, 2)),
                   "epoch": _fmt(round(step / max_steps, 2))}, flush=True)
        if step % save_steps == 0 or step == max_steps:
            common.save_hf_checkpoint(output_dir, step, max_steps, batch, save_steps, logging_steps, loss)
        common.step_sleep()
    sys.stderr.write("\n")
    runtime = time.time() - started
    print({"train_runtime": _fmt(round(runtime, 4)), "train_samples_per_second": _fmt(round(
        (max_steps - start) * batch * accum / max(runtime, 1e-6), 3)), "train_steps_per_second": _fmt(round(
            (max_steps - start) / max(runtime, 1e-6), 3)), "train_loss": _fmt(round(loss, 4)), "epoch": _fmt(1.0)},
          flush=True)


def do_cli(config, **kwargs):
    """cli/train.py do_cli -> do_train -> train.py train / execute_training."""
    cfg = load_cfg(config, **kwargs)
    resume = determine_last_checkpoint(cfg)
    log("axolotl.train", "execute_training", 226, "INFO", "Starting trainer...")
    hf_train(cfg, resume)
    log("axolotl.train", "save_trained_model", 267, "INFO",
        f"Training completed! Saving trained model to {cfg['output_dir']}.")
    name = "adapter_model.safetensors" if cfg.get("adapter") else "model.safetensors"
    Path(cfg["output_dir"], name).write_bytes(b"standin")
    log("axolotl.train", "save_trained_model", 412, "INFO", f"Model successfully saved to {cfg['output_dir']}")
