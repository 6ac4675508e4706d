#!/usr/bin/python3
"""A stand-in for a user's copy of TRL's scripts/sft.py (huggingface/trl@f2cd57710:trl/scripts/sft.py), run
as `python trl_sft.py --flags` or `python trl_sft.py args.json`, written for sparkguard's tests.

It parses exactly as `trl sft` does (standin/hfargs.py: ScriptArguments, SFTConfig, ModelConfig and
DatasetMixtureConfig under HfArgumentParser rules, `--config FILE.yaml` as defaults, `env:` exported), but
runs in one process, without accelerate: an unknown flag is HfArgumentParser's own error, "ValueError:
Some specified arguments are not used by the HfArgumentParser: ['--x']"; unknown YAML keys are ignored
(fail_with_unknown_args=False, as in TRL's script). A single `.json` argument holds every argument, as in
transformers' run_clm.py (parse_json_file; unknown keys: "Some keys are not used by the HfArgumentParser").

The difference from TRL's own script: this one models a user's script that passes the flag on, as modern
Hugging Face scripts do (`trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)`), so
--resume_from_checkpoint PATH resumes: step, save/logging steps and train_batch_size come from the
checkpoint's trainer_state.json (transformers >= 4.36), a path without one fails with "Can't find a valid
checkpoint at PATH" (and "True" is a path, since the field is a string).
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/trainers, for standin/

from standin import hfargs  # noqa: E402


def main():
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        parser = hfargs.HfParser(hfargs.trl_sft_groups())
        script_args, training_args, model_args, dataset_args = parser.parse_json_file(os.path.abspath(sys.argv[1]))
        hfargs.training_post_init(training_args, sft=True)
        hfargs.model_post_init(model_args)
        config_file = os.path.abspath(sys.argv[1])
    else:
        parser, (script_args, training_args, model_args, dataset_args) = hfargs.parse_trl_sft(
            fail_with_unknown_args=False)
        config_file = os.path.abspath(parser.config_file) if parser.config_file else None
    hfargs.trl_sft_main(script_args, training_args, model_args, dataset_args, trainer="trl_sft",
                        resume=training_args.resume_from_checkpoint, config_file=config_file)


if __name__ == "__main__":
    main()
