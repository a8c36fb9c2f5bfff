"""Keyed fingerprints of data: identify a dataset without letting anyone test guesses about it.

A plain SHA-256 of a table published next to a private release is an exact function of the data: an adversary
who knows every row but one can hash candidate tables until one matches and so recover the missing value — the
release's (B, ε, δ) guarantee does not cover that. The Studio therefore fingerprints data with HMAC-SHA256 under
a secret key that stays with the data holder:

* ``STUDIO_FINGERPRINT_KEY`` (any text) if set — share it only with whoever must verify that a decision record
  matches the data;
* otherwise a random 256-bit key created once per installation at
  ``$XDG_CONFIG_HOME/privacy-parameter-studio/fingerprint.key`` (``~/.config/…``; file mode 0600);
* if that file cannot be written, a random key for this process only (fingerprints then match only within it).

With the key, the data holder can check that a record was made on their data; without it, the fingerprint
reveals nothing testable about the rows. It is still an identifier: treat decision records as internal documents.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
from pathlib import Path

#: Environment variable holding the data holder's fingerprint key.
KEY_ENV = "STUDIO_FINGERPRINT_KEY"

#: What the UI and records say about the fingerprint.
FINGERPRINT_TEXT = (
    "keyed fingerprint (HMAC-SHA256 under the data holder's secret key): it identifies the data for whoever holds "
    "the key, and lets no one else test guesses about the rows"
)


def _key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "privacy-parameter-studio" / "fingerprint.key"


@functools.lru_cache(maxsize=4)
def _installation_key(path: str) -> bytes:
    file = Path(path)
    try:
        if file.is_file():
            data = file.read_bytes()
            if len(data) >= 32:
                return data
        file.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key
    except OSError:
        return _process_key()


@functools.lru_cache(maxsize=1)
def _process_key() -> bytes:
    return secrets.token_bytes(32)


def fingerprint_key() -> bytes:
    """The secret key in use (see the module docstring for where it comes from)."""
    text = os.environ.get(KEY_ENV)
    if text:
        return text.encode("utf-8")
    return _installation_key(str(_key_file()))


def keyed_hasher() -> hmac.HMAC:
    """A fresh HMAC-SHA256 object under :func:`fingerprint_key` (``update`` it, then ``hexdigest()``)."""
    return hmac.new(fingerprint_key(), digestmod=hashlib.sha256)


def keyed_digest(content: bytes) -> str:
    """Hex HMAC-SHA256 of ``content`` under the fingerprint key (e.g. an uploaded file's bytes)."""
    h = keyed_hasher()
    h.update(content)
    return h.hexdigest()
