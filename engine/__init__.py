"""Privacy Parameter Studio engine: pure Python, no UI imports.

Run ``python -m engine --help`` for the command line.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
