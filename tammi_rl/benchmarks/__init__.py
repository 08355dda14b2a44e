"""Benchmark scripts: `python -m tammi_rl.benchmarks.<name>` prints figures (they are not tests)."""
