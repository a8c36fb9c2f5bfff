"""Privacy accounting: the targeted-DP calculus (composition, switch lemma) and unit conversions."""

#: The package's modules (imported on use, not here). Layers: ``tdp`` (the calculus, below ``engine.guarantee``),
#: ``budget``; ``composition`` (above ``engine.guarantee``: the one module combining guarantees of any standard).
__all__ = ["budget", "composition", "tdp"]
