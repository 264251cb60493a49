"""Worlds the tests and the benchmarks both build: event shapes, synthetic clips, loaded
API worlds, a reference projection of the read model, inventory files, the Lambda-like
environment.

A top-level package so that ``bench/`` can share them without importing ``tests/``; the
pytest-only parts (fixtures, engines) stay in ``tests/support``.
"""
