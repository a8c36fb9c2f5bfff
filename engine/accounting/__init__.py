"""Privacy accounting: the targeted-DP calculus (composition, switch lemma) and unit conversions."""

#: The package's modules (imported on use, not here: ``engine.guarantee`` imports ``tdp``, ``composition`` imports
#: ``engine.guarantee``).
__all__ = ["budget", "composition", "tdp"]
