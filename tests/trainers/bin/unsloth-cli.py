#!/usr/bin/python3
"""A stand-in for Unsloth's starter script unsloth-cli.py (unslothai/unsloth@015bdef0d9:unsloth-cli.py), written
for sparkguard's tests. Its argparse flags and defaults are the real script's: --model_name,
--max_seq_length 2048, --dtype None, --load_in_4bit (store_true: there is no way to turn it off but to drop
it), --r 16, --lora_alpha 16, --per_device_train_batch_size 2, --gradient_accumulation_steps 4,
--max_steps 400, --optim adamw_8bit, --output_dir outputs, --packing, --logging_steps 1, ...
There is no resume and no save-steps flag: argparse rejects --resume_from_checkpoint with "unrecognized
arguments". The script builds SFTConfig(max_length=max_seq_length, ...) without save_steps, so the
Trainer keeps TrainingArguments' save_strategy "steps" / save_steps 500: checkpoint-N at every 500th step
and at the last step (HF saves at the end when the strategy is "steps").
The stand-in honours --max_steps when given; left at its default (400) it runs 8 steps instead.
Output: Unsloth's patch notices, "Data is formatted and ready!", the Unsloth banner (logger.warning, on
stderr), then the HF bar and log dicts.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/trainers, for standin/

from standin import hfargs  # noqa: E402


def banner(run):
    total = run.batch * run.accum
    sys.stderr.write(
        f"==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
        f"   \\\\   /|    Num examples = {run.max_steps * total:,} | Num Epochs = 1 | Total steps = {run.max_steps:,}\n"
        f"O^O/ \\_/ \\    Batch size per device = {run.batch:,} | Gradient accumulation steps = {run.accum}\n"
        f"\\        /    Data Parallel GPUs = 1 | Total batch size ({run.batch} x {run.accum} x 1) = {total:,}\n"
        f' "-____-"     Trainable parameters = 41,943,040 of 8,072,204,288 (0.52% trained)\n')
    sys.stderr.flush()


def parser():
    p = argparse.ArgumentParser(description="🦥 Fine-tune your llm faster using unsloth!")
    g = p.add_argument_group("🤖 Model Options")
    g.add_argument("--model_name", type=str, default="unsloth/llama-3-8b")
    g.add_argument("--max_seq_length", type=int, default=2048)
    g.add_argument("--dtype", type=str, default=None)
    g.add_argument("--load_in_4bit", action="store_true")
    g.add_argument("--dataset", type=str, default="yahma/alpaca-cleaned")
    g = p.add_argument_group("🧠 LoRA Options", "These options are used to configure the LoRA model.")
    g.add_argument("--r", type=int, default=16)
    g.add_argument("--lora_alpha", type=int, default=16)
    g.add_argument("--lora_dropout", type=float, default=0.0)
    g.add_argument("--bias", type=str, default="none")
    g.add_argument("--use_gradient_checkpointing", type=str, default="unsloth")
    g.add_argument("--random_state", type=int, default=3407)
    g.add_argument("--use_rslora", action="store_true")
    g.add_argument("--loftq_config", type=str, default=None)
    g.add_argument("--use_dora", action="store_true")
    g = p.add_argument_group("🎓 Training Options")
    g.add_argument("--per_device_train_batch_size", type=int, default=2)
    g.add_argument("--per_device_eval_batch_size", type=int, default=4)
    g.add_argument("--gradient_accumulation_steps", type=int, default=4)
    g.add_argument("--warmup_steps", type=int, default=5)
    g.add_argument("--max_steps", type=int, default=None, help="Maximum number of training steps (real default 400).")
    g.add_argument("--learning_rate", type=float, default=2e-4)
    g.add_argument("--optim", type=str, default="adamw_8bit")
    g.add_argument("--weight_decay", type=float, default=0.01)
    g.add_argument("--lr_scheduler_type", type=str, default="linear")
    g.add_argument("--seed", type=int, default=3407)
    g.add_argument("--packing", action="store_true")
    g = p.add_argument_group("📊 Report Options")
    g.add_argument("--report_to", type=str, default="tensorboard",
                   choices=["azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub", "dvclive", "flyte", "mlflow",
                            "neptune", "tensorboard", "wandb", "all", "none"])
    g.add_argument("--logging_steps", type=int, default=1)
    g = p.add_argument_group("💾 Save Model Options")
    g.add_argument("--output_dir", type=str, default="outputs")
    g.add_argument("--save_model", action="store_true")
    g.add_argument("--save_method", type=str, default="merged_16bit", choices=["merged_16bit", "merged_4bit", "lora"])
    g.add_argument("--save_gguf", action="store_true")
    g.add_argument("--save_path", type=str, default="model")
    g.add_argument("--quantization", type=str, default="q8_0", nargs="+")
    g = p.add_argument_group("🚀 Push Model Options")
    g.add_argument("--push_model", action="store_true")
    g.add_argument("--push_gguf", action="store_true")
    g.add_argument("--hub_path", type=str, default="hf/model")
    g.add_argument("--hub_token", type=str)
    p.add_argument("--raw_text_file", type=str)
    p.add_argument("--chunk_size", type=int, default=2048)
    p.add_argument("--stride", type=int, default=512)
    return p


def main():
    args = parser().parse_args()
    print("🦥 Unsloth: Will patch your computer to enable 2x faster free finetuning.")
    print("🦥 Unsloth Zoo will now patch everything to make training faster!")
    print("Data is formatted and ready!", flush=True)
    max_steps = args.max_steps if args.max_steps is not None else hfargs.STANDIN_MAX_STEPS
    run = hfargs.HfRun(trainer="unsloth-cli", output_dir=args.output_dir, batch=args.per_device_train_batch_size,
                       accum=args.gradient_accumulation_steps, seq=args.max_seq_length, packing=args.packing,
                       qlora=args.load_in_4bit, dtype=args.dtype or "auto", max_steps=max_steps,
                       save_steps=500, logging_steps=args.logging_steps, learning_rate=args.learning_rate,
                       log_style="new", banner=banner)
    run.train()
    if not args.save_model:
        print("Warning: The model is not saved!")


if __name__ == "__main__":
    main()
