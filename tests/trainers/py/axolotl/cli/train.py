"""Stand-in for the legacy Axolotl entry point, `accelerate launch -m axolotl.cli.train CONFIG --key=value`.

As in axolotl-ai-cloud/axolotl@067b021c8:src/axolotl/cli/train.py, python-fire parses the command line:
`fire.Fire(do_cli)`, CONFIG positional, every other `--name=value` (or `--name value`) a keyword override
named as in the YAML (`--micro_batch_size=2`; fire also accepts `--micro-batch-size=2`, which is what
`axolotl train` passes when it re-executes itself through accelerate). fire parses each value as a Python
literal (2 -> int, False -> bool, out/checkpoint-4 -> str) before load_cfg sees it.
"""
import sys
from pathlib import Path

_PY = Path(__file__).resolve().parents[2]  # tests/trainers/py
if str(_PY) not in sys.path:
    sys.path.insert(0, str(_PY))

import fire  # noqa: E402

from axolotl.standin_config import do_cli  # noqa: E402

if __name__ == "__main__":
    fire.Fire(do_cli)
