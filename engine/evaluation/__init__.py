"""Program effectiveness: what a privatized dataset costs the program that uses it."""

#: The package's modules (imported on use).
__all__ = ["clustering", "lending", "logistic", "metrics", "programs"]
