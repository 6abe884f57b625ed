"""Servers the host can run for itself on one machine (tests, benchmarks, a demo floor)."""
