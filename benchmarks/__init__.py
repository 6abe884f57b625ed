"""Benchmarks: `make bench` runs `python -m benchmarks` and prints figures for docs/benchmarks.md."""
