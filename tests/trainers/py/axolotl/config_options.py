"""The options the stand-in's `axolotl train` takes, as (declaration, parameter name, click type).

Written by hand for the fields sparkguard's tests touch, in the form Axolotl's CLI generates from
its config schema (axolotl-ai-cloud/axolotl@067b021c8:src/axolotl/cli/config_options.py, read, not
copied): `--foo-bar/--no-foo-bar` for bool fields, `--foo-bar VALUE` (a string, typed later by
load_cfg's coercion) for the rest. An option not listed here is treated like any option the real
CLI does not know: it goes to the launcher's arguments."""

_BOOL_FIELDS = ("sample_packing", "load_in_4bit", "load_in_8bit", "auto_resume_from_checkpoints", "strict",
                "gradient_checkpointing", "pad_to_sequence_len", "bf16", "fp16", "tf32")
_VALUE_FIELDS = ("base_model", "adapter", "micro_batch_size", "gradient_accumulation_steps", "batch_size",
                 "sequence_len", "output_dir", "resume_from_checkpoint", "max_steps", "save_steps", "logging_steps",
                 "learning_rate", "num_epochs", "lora_r", "lora_alpha", "lora_dropout", "optimizer",
                 "dataset_num_proc", "val_set_size", "seed", "lora_model_dir", "eval_steps")


def _dashed(name):
    return name.replace("_", "-")


AXOLOTL_CONFIG_CLI_OPTIONS = tuple(
    [(f"--{_dashed(n)}/--no-{_dashed(n)}", n, None) for n in _BOOL_FIELDS] +
    [(f"--{_dashed(n)}", n, None) for n in _VALUE_FIELDS])
