"""The decision record's optional public-information block (issue 13): lossless round trip, old records without
the block still load, a tampered block is refused."""

from __future__ import annotations

import json

import pytest

from engine.decision_record import (
    SCHEMA_VERSION,
    load_decision_record,
    public_information_block,
)
from engine.errors import InvalidParameterError
from engine.public_info.guarantee import SEQUENTIAL_CAVEAT
from engine.public_info.results import CountStudyConfig
from tests.engine.test_decision_record import make_record, togo  # noqa: F401  (fixture)

STUDY = CountStudyConfig(methods=("postprocess", "wasserstein-prior"), epsilons=(0.25, 1.0), replicates=5,
                         alpha=2.0, highlight=("Region 01", "Region 67"))


def block():
    return public_information_block(STUDY, periods=24, data="counties-demo", model={"kind": "correlated", "n": 20,
                                                                                   "z0": 0.2, "z1": 0.6}, seed=9)


def test_block_states_scope_public_statistics_and_both_study_budgets():
    b = block()
    assert b["scope"] == "DP / ε-TP subject to the invariants Z"
    assert list(b["public"]) == ["last-period", "total", "subcount"]
    assert b["epsilon_per_period"] == [0.25, 1.0] and b["periods"] == 24
    assert b["epsilon_total"] == [{"per_period": 0.25, "parallel": 0.25, "sequential": 6.0},
                                  {"per_period": 1.0, "parallel": 1.0, "sequential": 24.0}]
    assert b["composition_caveat"] == SEQUENTIAL_CAVEAT
    assert [r["method"] for r in b["releases"]] == ["postprocess"] * 2 + ["wasserstein"] * 2
    assert b["releases"][3]["base"] == "prior" and b["releases"][3]["alpha"] == 2.0
    assert b["seed_warning"] == "seeded output is NOT private"


def test_round_trip_with_the_block(togo):  # noqa: F811
    record = make_record(togo, public_information=block())
    again = load_decision_record(record.to_json())
    assert again == record
    assert CountStudyConfig.from_dict(again.public_information["study"]) == STUDY


def test_old_record_without_the_block_still_loads(togo):  # noqa: F811
    data = json.loads(make_record(togo).to_json())
    data.pop("public_information")
    assert data["schema_version"] == SCHEMA_VERSION
    assert load_decision_record(json.dumps(data)).public_information is None


def test_other_missing_fields_are_still_refused(togo):  # noqa: F811
    data = json.loads(make_record(togo).to_json())
    data.pop("rationale")
    with pytest.raises(InvalidParameterError, match="missing the field.*rationale"):
        load_decision_record(json.dumps(data))


@pytest.mark.parametrize("edit, message", [
    (lambda b: b.update(epsilon_per_period=[0.5, 1.0]), "differ from its study"),
    (lambda b: b["study"].update(epsilons=[-1.0]), "epsilons"),
    (lambda b: b.pop("scope"), "missing scope"),
])
def test_tampered_block_is_refused(togo, edit, message):  # noqa: F811
    data = json.loads(make_record(togo, public_information=block()).to_json())
    edit(data["public_information"])
    with pytest.raises(InvalidParameterError, match=message):
        load_decision_record(json.dumps(data))
