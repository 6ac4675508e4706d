"""Stand-in for the `axolotl` package, written for sparkguard's tests: only what `axolotl train` and
`python -m axolotl.cli.train` do with the configuration, checkpoints, resume and progress output
(see standin_config.py). No datasets or models are loaded."""

__version__ = "0.18.0+standin"
