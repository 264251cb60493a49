"""How the benchmarks write their figures: one ratio format for every table and line."""

from __future__ import annotations


def ratio(a: float, b: float, digits: int = 2) -> str:
    """``a / b`` as ``1.23x`` (thousands separated), ``-`` when ``b`` is zero."""
    return f"{a / b:,.{digits}f}x" if b else "-"
