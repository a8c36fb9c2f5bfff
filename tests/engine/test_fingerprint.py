"""Keyed fingerprints (review finding: a plain SHA-256 published with a release lets anyone test guesses)."""

from __future__ import annotations

import hashlib

import pandas as pd

from engine import fingerprint as fp
from engine.data.preparation import fingerprint


def test_keyed_digest_depends_on_the_key_and_is_not_a_plain_hash(monkeypatch):
    content = b"calls_out\n66\n"
    monkeypatch.setenv(fp.KEY_ENV, "key-one")
    one = fp.keyed_digest(content)
    assert one == fp.keyed_digest(content)  # stable under one key
    assert one != hashlib.sha256(content).hexdigest()
    monkeypatch.setenv(fp.KEY_ENV, "key-two")
    assert fp.keyed_digest(content) != one


def test_table_fingerprint_cannot_be_matched_without_the_key(monkeypatch):
    frame = pd.DataFrame({"x": [66.0, 2.0, 3.0]})
    monkeypatch.setenv(fp.KEY_ENV, "holder-secret")
    with_key = fingerprint(frame)
    # An adversary who knows rows 1–2 tries candidates for row 0 under a key it guesses: no match.
    monkeypatch.setenv(fp.KEY_ENV, "adversary-guess")
    guesses = {fingerprint(pd.DataFrame({"x": [float(v), 2.0, 3.0]})) for v in range(100)}
    assert with_key not in guesses
    # The holder, with the key, recognises the data.
    monkeypatch.setenv(fp.KEY_ENV, "holder-secret")
    assert fingerprint(frame) == with_key


def test_installation_key_file_is_created_once_with_private_permissions(monkeypatch, tmp_path):
    monkeypatch.delenv(fp.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    fp._installation_key.cache_clear()
    key = fp.fingerprint_key()
    path = tmp_path / "privacy-parameter-studio" / "fingerprint.key"
    assert path.read_bytes() == key and len(key) == 32
    assert (path.stat().st_mode & 0o777) == 0o600
    fp._installation_key.cache_clear()
    assert fp.fingerprint_key() == key  # read back, not regenerated
