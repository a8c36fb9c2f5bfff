"""Theorem 1 of the targeted-DP paper and the questions a designer asks of it."""

#: The package's modules (imported on use).
__all__ = ["feasibility"]
