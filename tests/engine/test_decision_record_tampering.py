"""Tampered decision records (issue 15 §4 and §5 items 4–5): refused on import with one clear message — wrong types,
missing and extra keys, huge numbers, another version, 20 MB, deep nesting; out-of-range values are refused, never
clamped or defaulted. ``privatize --config`` applies the same checks."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.decision_record import MAX_RECORD_BYTES, load_decision_record, parse_json_document
from engine.errors import InvalidParameterError
from tests.engine.test_decision_record import make_record


@pytest.fixture(scope="module")
def record_text():
    demo = load_demo("togo-demo")
    return make_record((demo, prepare(demo.frame, demo.spec))).to_json()


def _edit(text: str, path: list, value=None, *, delete: bool = False) -> str:
    data = json.loads(text)
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(data)


def _refused(text, *needles: str) -> str:
    with pytest.raises(InvalidParameterError) as err:
        load_decision_record(text)
    message = str(err.value)
    assert "\n" not in message and len(message) < 400, message
    for needle in needles:
        assert needle in message, message
    return message


HUGE = 10**400


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        (["candidate", "epsilon"], HUGE, "beyond ±2**63"),
        (["release", "mechanism", "b"], HUGE, "beyond ±2**63"),
        (["data", "n"], HUGE, "beyond ±2**63"),
        (["seeds", "release"], -HUGE, "beyond ±2**63"),
        (["candidate", "epsilon"], 1e308, "must be in [1e-09, 10000]"),
        (["release", "mechanism", "epsilon"], 1e300, "must be in [1e-09, 10000]"),
        (["release", "mechanism", "delta"], 1e-320, "at least 1e-300"),
        (["candidate", "epsilon"], "1", "epsilon"),
        (["candidate", "b"], [0.4], "b"),
        (["release", "seed"], 2.5, "seed"),
        (["targets", "gammas"], "0.99", "gamma"),
        (["specification"], [], "specification"),
        (["release", "mechanism", "delta"], 1.5, "delta"),  # refused, never clamped into range
        (["schema_version"], 2, "schema version 2"),
        (["schema_version"], "1", "schema version '1'"),
        (["schema_version"], True, "schema version True"),
        (["schema_version"], 1.0, "schema version 1.0"),
    ],
)
def test_wrong_types_huge_numbers_versions_and_out_of_range_values_are_refused(record_text, path, value, needle):
    _refused(_edit(record_text, path, value), needle)


@pytest.mark.parametrize(
    "path",
    [["candidate", "b"], ["release", "mechanism", "calibration"], ["release", "seed"], ["program"], ["rationale"],
     ["release", "data", "normalization"], ["specification", "conversions"], ["targets", "delta"]],
)
def test_missing_keys_are_refused_never_defaulted(record_text, path):
    _refused(_edit(record_text, path, delete=True), "missing the field", ".".join(path))


@pytest.mark.parametrize("path", [["surprise"], ["candidate", "surprise"], ["release", "mechanism", "colour"]])
def test_extra_keys_are_refused(record_text, path):
    _refused(_edit(record_text, path, 1), "unknown field")


def test_oversized_deeply_nested_and_non_standard_json_are_refused(record_text):
    padded = record_text[:-1] + ', "pad": "' + "x" * (20 * 1024 * 1024) + '"}'
    assert len(padded) > MAX_RECORD_BYTES
    _refused(padded, "MB; the limit is 10 MB")
    _refused(padded.encode(), "MB; the limit is 10 MB")
    _refused("[" * 100_000 + "]" * 100_000, "nested more than 64 levels")
    _refused('{"a":' * 50_000 + "1" + "}" * 50_000, "nested more than 64 levels")
    _refused(record_text.replace('"epsilon": 1.0', '"epsilon": NaN', 1), "NaN")
    _refused(record_text.replace('"epsilon": 1.0', '"epsilon": ' + "9" * 5000, 1), "cannot read")
    _refused(b"\xff\xfe{", "not UTF-8")


def test_the_untampered_record_still_loads(record_text):
    assert load_decision_record(record_text).to_json() == record_text
    assert parse_json_document(record_text) == json.loads(record_text)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda t: _edit(t, ["schema_version"], 7), "schema version 7"),
        (lambda t: _edit(t, ["candidate", "b"], delete=True), "missing the field"),
        (lambda t: "[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
        (lambda t: json.dumps({"data": json.loads(t)["release"]["data"],
                               "mechanism": json.loads(t)["release"]["mechanism"]}), "missing the field(s) seed"),
    ],
)
def test_privatize_config_validates_schema_version_and_fields_in_one_line(record_text, tmp_path, capsys, mutate,
                                                                           needle):
    config = tmp_path / "record.json"
    config.write_text(mutate(record_text), encoding="utf-8")
    out = tmp_path / "o.csv"
    code = main(["privatize", "--config", str(config), "--output", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2 and stdout == "" and err.count("\n") == 1 and needle in err, err
    assert not out.exists()


# ---- issue 35 item 9 ------------------------------------------------------------------------------------------

def test_a_record_with_a_utf8_byte_order_mark_is_accepted(record_text, tmp_path, capsys):
    """Windows editors save JSON with a byte-order mark: the record is the same record."""
    plain = load_decision_record(record_text)
    assert load_decision_record(b"\xef\xbb\xbf" + record_text.encode()) == plain
    assert load_decision_record("\ufeff" + record_text) == plain
    path = tmp_path / "record.json"
    path.write_bytes(b"\xef\xbb\xbf" + record_text.encode())
    code = main(["privatize", "--config", str(path), "--seed", "1", "--sampler", "numpy", "--output",
                 str(tmp_path / "o.csv")])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize(("field", "value"), [("epsilon", 60.0), ("epsilon", 1.5), ("delta", 0.01), ("b", 2.0),
                                              ("epsilon", None)])
def test_a_specification_that_disagrees_with_its_release_is_refused(record_text, field, value):
    """The specification states the claim a reviewer reads; the release is what runs. ε = 60 in the specification
    of a release at another ε used to be accepted and ignored."""
    stated = json.loads(record_text)["specification"][field]
    assert stated != value
    message = _refused(_edit(record_text, ["specification", field], value), f"specification states {field} = ",
                       f"guarantees {field} = {stated!r}", "export it again")
    assert repr(value) in message


def test_a_specification_that_agrees_is_accepted_to_the_last_bit(record_text):
    data = json.loads(record_text)
    assert load_decision_record(json.dumps(data)).specification.epsilon == data["specification"]["epsilon"]


@pytest.mark.parametrize("literal", ["1e-400", "-2.5e-999", "1e400"])
def test_a_number_double_precision_cannot_hold_is_refused_not_rounded(record_text, literal):
    """``1e-400`` used to be read as 0 (δ = 0: pure DP, another guarantee) and ``1e400`` as infinity."""
    data = json.loads(record_text)
    data["targets"]["delta"] = 0.123456789
    text = json.dumps(data).replace("0.123456789", literal)
    becomes = "infinite" if literal == "1e400" else "0"
    _refused(text, f"holds the number {literal}", f"it would become {becomes}")
