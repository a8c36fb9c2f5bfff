"""Loading, validating and preparing user data; built-in synthetic demo datasets."""
