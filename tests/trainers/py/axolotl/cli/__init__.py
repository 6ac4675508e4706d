"""axolotl.cli: the command-line entry points (stand-in)."""
