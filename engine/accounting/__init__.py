"""Privacy accounting: the targeted-DP calculus (composition, switch lemma) and unit conversions."""
