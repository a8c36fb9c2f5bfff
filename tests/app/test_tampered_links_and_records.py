"""AppTest: links and decision records never change values silently and never crash a page (issue 15 §4, §5.4,
§5.5, §5.8).

Out-of-range values are refused with a message naming the value and the accepted range; tampered records are refused
at import with the session unchanged; bounds read from the data stay out of shareable links.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import (
    APP,
    TIMEOUT,
    assert_clean,
    element_after,
    open_page,
    shown,
    start_app,
    start_on,
    studio,
)
from tests.app.test_export_page import record_text


def open_link(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at.run()


def warnings(at) -> str:
    return shown(" ".join(w.value for w in at.warning))


@pytest.mark.parametrize("eps", ["60", "100"])
def test_a_link_with_epsilon_beyond_the_studio_range_is_refused_not_clamped(eps):
    at = open_link({"data": "togo-demo", "B": "0.4", "eps": eps, "cdelta": "1e-5"})
    assert_clean(at)
    text = warnings(at)
    assert f"ε = {eps}" in text and "[0.001, 50]" in text and "nothing is clamped" in text
    assert studio(at).candidate is None  # the default candidate, not ε = 0.001
    open_page(at, "feasibility")
    assert at.number_input(key="feasibility.epsilon").value == 1.0
    assert studio(at).candidate.epsilon == 1.0


def test_a_link_with_delta_above_the_studio_range_is_refused_not_zeroed():
    at = open_link({"data": "togo-demo", "delta": "0.9"})
    assert_clean(at)
    assert "δ = 0.9" in warnings(at) and "[0, 0.5]" in warnings(at)
    assert studio(at).delta is None
    open_page(at, "feasibility")
    assert studio(at).delta is None and studio(at).effective_delta() > 0


@pytest.mark.parametrize(("key", "value", "why"), [
    ("cdelta", "1e-400", "double precision cannot hold (it would become 0)"),
    ("cdelta", "1e-310", "must be 0 or at least 1e-300"),
    ("delta", "1e-400", "double precision cannot hold (it would become 0)"),
])
def test_a_link_with_a_delta_too_small_for_double_precision_is_refused_not_zeroed(key, value, why):
    """Issue 35 item 9: ``cdelta=1e-400`` used to become δ = 0 (pure DP: another guarantee) without a word."""
    params = {"data": "togo-demo", "B": "0.4", "eps": "1", key: value}
    at = open_link(params)
    assert_clean(at)
    text = warnings(at)
    assert value in text and why in text, text
    state = studio(at)
    assert state.delta is None  # nothing applied: neither δ = 0 …
    if key == "cdelta":
        assert state.candidate is None  # … nor a chosen point with δ = 0
    else:
        assert state.candidate.delta > 0
    open_page(at, "feasibility")
    assert studio(at).candidate.delta > 0


def test_a_link_with_deeply_nested_json_is_refused_without_a_crash():
    at = open_link({"data": "togo-demo", "mech": "[" * 5_000 + "]" * 5_000, "program": "{\"a\":" * 5_000, "spec": "[" * 3_000})
    assert_clean(at)
    assert "mechanism could not be restored" in warnings(at) and "program could not be restored" in warnings(at)
    assert "data settings could not be restored" in warnings(at)
    open_page(at, "mechanisms")


def test_a_link_with_a_mechanism_at_epsilon_1e300_is_refused_and_the_pages_work():
    mech = '{"kind":"gaussian","b":0.4,"epsilon":1e300,"delta":1e-5}'
    at = open_link({"data": "togo-demo", "mech": mech})
    assert_clean(at)
    assert "mechanism could not be restored" in warnings(at) and "1e+300" in warnings(at)
    assert studio(at).mechanism is None
    open_page(at, "mechanisms")
    open_page(at, "export")


# ---- decision records ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exported():
    """A configured session and its exported record (as a dict)."""
    from tests.app.test_export_page import configured_session

    at = configured_session()
    return json.loads(record_text(at))


def _import(record_bytes: bytes, name: str = "r.json"):
    """A fresh session with a chosen point; import ``record_bytes``; return the app and the state before."""
    at = start_app()
    open_page(at, "feasibility")
    at.number_input(key="feasibility.epsilon").set_value(3.0).run()
    open_page(at, "export")
    before = studio(at)
    snapshot = (before.candidate, before.gammas, before.delta, before.spec, before.mechanism, before.per_record,
                before.rationale)
    at.file_uploader(key="export.import").set_value((name, record_bytes, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at, snapshot


def _refused(at, snapshot) -> str:
    after = element_after(at, lambda e: getattr(e, "key", None) == "export.import")
    assert type(after).__name__ == "Error", after
    state = studio(at)
    assert (state.candidate, state.gammas, state.delta, state.spec, state.mechanism, state.per_record,
            state.rationale) == snapshot
    message = shown(after.value)
    assert "Nothing in your session was changed" in message
    return message


def _tampered(record: dict, path: tuple, value) -> bytes:
    data = copy.deepcopy(record)
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(data).encode()


def test_record_with_epsilon_60_is_refused_with_the_range(exported):
    at, snapshot = _import(_tampered(exported, ("candidate", "epsilon"), 60.0))
    message = _refused(at, snapshot)
    assert "ε = 60" in message and "[0.001, 50]" in message


def test_record_whose_specification_states_epsilon_60_is_refused(exported):
    """Issue 35 item 9: the specification's ε used to be ignored on import, so a record claiming ε = 60 beside a
    release at another ε was accepted."""
    assert exported["specification"]["epsilon"] != 60.0
    at, snapshot = _import(_tampered(exported, ("specification", "epsilon"), 60.0))
    message = _refused(at, snapshot)
    assert "specification states epsilon = 60.0" in message and "guarantees epsilon = " in message


def test_record_with_a_utf8_byte_order_mark_is_imported(exported):
    """Issue 35 item 9: a record saved by an editor that adds a byte-order mark is the same record."""
    at, _ = _import(b"\xef\xbb\xbf" + json.dumps(exported).encode(), "bom.json")
    assert_clean(at)
    assert not [e.value for e in at.error], [e.value for e in at.error]
    assert studio(at).candidate.epsilon == exported["candidate"]["epsilon"] != 3.0  # the record's, not the session's


def test_record_with_per_record_mechanisms_5_is_refused_and_the_page_works(exported):
    at, snapshot = _import(_tampered(exported, ("studio", "per_record"), {"mechanisms": 5}))
    message = _refused(at, snapshot)
    assert "per_record.mechanisms" in message
    open_page(at, "per_record")


TAMPERED = [
    ("candidate-b-missing", ("candidate", "b"), KeyError),
    ("candidate-epsilon-text", ("candidate", "epsilon"), "one"),
    ("candidate-epsilon-1e300", ("candidate", "epsilon"), 1e300),
    ("mechanism-epsilon-1e300", ("release", "mechanism", "epsilon"), 1e300),
    ("version-2", ("schema_version",), 2),
    ("version-true", ("schema_version",), True),
    ("extra-key", ("surprise",), {"x": 1}),
    ("gammas-a-string", ("targets", "gammas"), "0.99"),
    ("title-a-number", ("title",), 5),
    ("studio-a-list", ("studio",), [1, 2]),
    ("eps-max-huge", ("studio", "eps_max"), 1e308),
    ("per-record-target-negative", ("studio", "per_record"), {"target": -1}),
    ("per-record-unit-unknown", ("studio", "per_record"), {"unit": "furlongs"}),
    ("targets-delta-0.9", ("targets", "delta"), 0.9),
    ("specification-epsilon-60", ("specification", "epsilon"), 60.0),
    ("specification-delta-changed", ("specification", "delta"), 0.25),
]


@pytest.mark.slow
def test_tampered_records_are_refused_and_the_session_kept(exported):
    """Every tampered record, then a 20 MB file and deeply nested JSON, in one session."""
    at, snapshot = _import(json.dumps(exported).encode(), "valid.json")  # a valid record replaces the session …
    at = start_app()
    open_page(at, "feasibility")
    at.number_input(key="feasibility.epsilon").set_value(3.0).run()
    open_page(at, "export")
    state = studio(at)
    snapshot = (state.candidate, state.gammas, state.delta, state.spec, state.mechanism, state.per_record,
                state.rationale)
    cases = [(name, _tampered(exported, path, value)) for name, path, value in TAMPERED]
    cases.append(("twenty-mb", b'{"schema": "x", "pad": "' + b"a" * (20 * 1024 * 1024) + b'"}'))
    cases.append(("deeply-nested", b"[" * 200_000 + b"]" * 200_000))
    cases.append(("not-an-object", b"[1, 2, 3]"))
    cases.append(("utf16", json.dumps(exported).encode("utf-16")))
    refused = 0
    for name, content in cases:
        at.file_uploader(key="export.import").set_value((f"{name}.json", content, "application/json")).run()
        assert not at.exception, (name, [e.value for e in at.exception])
        _refused(at, snapshot)
        refused += 1
    assert refused == len(cases) >= 20


def test_bounds_read_from_the_data_stay_out_of_the_shareable_link():
    """§5.8: the data's own min and max reveal the most extreme records: never in a link."""
    at = start_on("data")
    at.radio(key="data.norm_method").set_value("bounds").run()
    at.button(key="data.fill_bounds").click().run()
    assert_clean(at)
    state = studio(at)
    assert state.bounds_from_data and state.spec.normalization.method == "bounds"
    params = dict(at.query_params)
    assert "spec" not in params and params["bounds"] == "data"
    lower = state.spec.normalization.lower
    assert not any(repr(float(v)) in "".join(map(str, params.values())) for v in lower if abs(v) > 1)
    assert "links leave these data settings out" in warnings(at)
    # The decision record keeps the bounds, flagged as read from the data.
    open_page(at, "export")
    record = json.loads(record_text(at))
    assert record["studio"]["bounds_from_data"] is True
    assert record["release"]["data"]["normalization"]["lower"] == list(lower)
    # Whoever opens the link is told why the data settings are missing.
    params.pop("sid", None)
    other = open_link(params)
    assert_clean(other)
    assert "Enter public bounds on the Data page" in warnings(other)
    assert studio(other).spec is None


def test_an_imported_record_title_and_rationale_are_shown_literally(exported):
    """§5.1: a record title cannot show bold "Approved by …" text or a link."""
    hostile = "**Approved by** the board ![px](http://127.0.0.1:9/t.png)"
    data = copy.deepcopy(exported)
    data["title"] = hostile
    data["rationale"] = hostile
    at, _ = _import(json.dumps(data).encode())
    assert_clean(at)
    notices = [w.value for w in at.warning]
    assert any(hostile in shown(n) for n in notices), notices
    for n in notices + [m.value for m in at.markdown]:  # no un-escaped bold or link/image syntax
        assert not re.search(r"(?<!\\)\*(?<!\\)\*Approved|(?<!\\)\]\(", n), n
    assert studio(at).rationale == hostile
