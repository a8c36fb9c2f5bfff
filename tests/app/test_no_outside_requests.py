"""No outside requests by default (issue 15 §5.9): local listening address, no IP detection, a local tab icon."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.app.conftest import start_app

ROOT = Path(__file__).resolve().parents[2]


def test_config_listens_on_localhost_and_skips_ip_detection():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    # A manually set browser.serverAddress makes Streamlit print that URL instead of looking up the external IP.
    assert config["browser"]["serverAddress"] == "localhost"
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"].get("port", 8501) == 8501  # README: http://localhost:8501


def test_the_tab_icon_is_not_fetched_from_a_font_service():
    at = start_app()
    source = (ROOT / "app.py").read_text()
    assert 'page_icon=":material' not in source
    assert (ROOT / "assets" / "favicon.svg").read_text().lstrip().startswith("<svg")
    assert not at.exception
