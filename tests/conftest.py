"""Test-wide settings."""

import os

# A fixed fingerprint key, so that tests (and the Streamlit server the browser test starts, which inherits the
# environment) never create or read a key file in the user's home directory.
os.environ.setdefault("STUDIO_FINGERPRINT_KEY", "privacy-parameter-studio-tests")
