"""Benchmarks (``make bench``): figures printed beside the baseline measured in the same run.

Each benchmark is a callable taking a :class:`bench.context.BenchContext`; the
list of them is :data:`bench.__main__.BENCHMARKS`.
"""
