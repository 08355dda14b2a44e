"""The ``tammi-rl`` command line: one subcommand per module (`main` dispatches)."""

from tammi_rl.cli.main import COMMANDS, main

__all__ = ["COMMANDS", "main"]
