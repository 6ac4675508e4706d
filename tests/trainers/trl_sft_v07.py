#!/usr/bin/python3
"""A stand-in for TRL 0.7-era examples/scripts/sft.py (huggingface/trl@v0.7.4:examples/scripts/sft.py), written
for sparkguard's tests: one ScriptArguments dataclass under HfArgumentParser (standin/hfargs.py rules), with
its own names for the knobs (--model_name, --batch_size, --seq_length, --gradient_accumulation_steps,
--load_in_4bit, --load_in_8bit, --use_peft, --output_dir, --save_steps, --max_steps, ...). It builds
TrainingArguments itself and calls trainer.train() with no argument: there is no resume, and an unknown
flag (e.g. --resume_from_checkpoint) is HfArgumentParser's "Some specified arguments are not used" error.
Defaults as in v0.7.4: batch_size 64, gradient_accumulation_steps 16, seq_length 512, save_steps 100,
save_total_limit 10, logging_steps 1, max_steps -1 (the stand-in then runs 8 steps instead of 3 epochs).
Log dicts in the transformers 4.3x form (raw floats, epoch rounded to 2 places).
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/trainers, for standin/

from standin import hfargs  # noqa: E402
from standin.hfargs import F  # noqa: E402

SCRIPT_ARGUMENTS = [  # every field is Optional[...] in v0.7.4; Optional[bool] with a default parses as a bool flag
    F("model_name", "optstr", "facebook/opt-350m"),
    F("dataset_name", "optstr", "timdettmers/openassistant-guanaco"),
    F("dataset_text_field", "optstr", "text"),
    F("log_with", "optstr", "none"),
    F("learning_rate", "float", 1.41e-5),
    F("batch_size", "int", 64),
    F("seq_length", "int", 512),
    F("gradient_accumulation_steps", "int", 16),
    F("load_in_8bit", "optbool", False),
    F("load_in_4bit", "optbool", False),
    F("use_peft", "optbool", False),
    F("trust_remote_code", "optbool", False),
    F("output_dir", "optstr", "output"),
    F("peft_lora_r", "int", 64),
    F("peft_lora_alpha", "int", 16),
    F("logging_steps", "int", 1),
    F("use_auth_token", "optbool", True),
    F("num_train_epochs", "int", 3),
    F("max_steps", "int", -1),
    F("save_steps", "int", 100),
    F("save_total_limit", "int", 10),
    F("push_to_hub", "optbool", False),
    F("gradient_checkpointing", "optbool", False),
    F("gradient_checkpointing_kwargs", "optstr", None),
    F("hub_model_id", "optstr", None),
]


def main():
    parser = hfargs.HfParser([("script", SCRIPT_ARGUMENTS)])
    args = parser.parse_args_into_dataclasses()[0]
    if args.load_in_8bit and args.load_in_4bit:
        raise ValueError("You can't load the model in 8 bits and 4 bits at the same time")
    quantized = args.load_in_8bit or args.load_in_4bit
    if quantized and not args.use_peft:
        raise hfargs.purely_quantized_error()
    max_steps = args.max_steps if args.max_steps > 0 else hfargs.STANDIN_MAX_STEPS
    run = hfargs.HfRun(trainer="trl_sft_v07", output_dir=args.output_dir, batch=args.batch_size,
                       accum=args.gradient_accumulation_steps, seq=args.seq_length, packing=False,
                       qlora=bool(args.load_in_4bit), dtype="bfloat16" if quantized else "float32",
                       max_steps=max_steps, save_steps=args.save_steps, logging_steps=args.logging_steps,
                       save_total_limit=args.save_total_limit, learning_rate=args.learning_rate, log_style="old")
    run.train()


if __name__ == "__main__":
    main()
