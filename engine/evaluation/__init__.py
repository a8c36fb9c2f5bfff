"""Program effectiveness: what a privatized dataset costs the program that uses it."""

#: The package's modules (imported on use: the programs pull in scikit-learn).
__all__ = ["clustering", "lending", "metrics", "programs"]
