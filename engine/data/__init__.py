"""Loading, validating and preparing user data; built-in synthetic demo datasets."""

#: The package's modules (imported on use: reading data pulls in pandas and pyarrow).
__all__ = ["checks", "demos", "establishments", "io", "preparation", "profile", "spec"]
