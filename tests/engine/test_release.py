"""ReleaseConfig (the saved configuration) and run_release (the one release path of the CLI and the dashboard)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from engine.data.demos import load_demo
from engine.data.preparation import DataSpec, Normalization, prepare
from engine.errors import DataValidationError, InvalidParameterError
from engine.guarantee import Guarantee, Release
from engine.mechanisms import MECHANISMS, RecordMechanism
from engine.mechanisms.gaussian import GaussianMechanism, gaussian_sigma
from engine.release import ReleaseConfig, cli_command, release_summary, run_release
from engine.rng import SEEDED_WARNING, make_rng

SPEC = DataSpec(("calls_out", "sms_out", "data_mb"), "consumption")
GAUSS = {"kind": "gaussian", "b": 0.5, "epsilon": 1.0, "delta": 1e-5}


@dataclass(frozen=True)
class _Identity(RecordMechanism):
    """Test double: releases its input unchanged (lets the tests see exactly what run_release passes)."""

    KIND: ClassVar[str] = "test-identity"
    LABEL: ClassVar[str] = "identity (test only)"
    b: float = 2.0

    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=1.0, delta=1.0, b=self.b, mechanism=self.LABEL)

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None, sampler=None) -> Release:
        return Release(value=np.array(x), guarantee=self.guarantee(), details={"noise_sd_per_coordinate": 0.0})


@pytest.fixture
def identity(monkeypatch):
    monkeypatch.setitem(MECHANISMS, _Identity.KIND, _Identity)
    return _Identity


def test_config_round_trips_and_stores_the_canonical_mechanism_dict():
    config = ReleaseConfig(SPEC, dict(GAUSS), seed=7, dataset="togo-demo")
    assert config.mechanism == {**GAUSS, "calibration": "analytic"}  # defaults filled in
    assert ReleaseConfig.from_json(config.to_json()) == config
    assert ReleaseConfig.from_dict(config.to_dict()) == config
    assert set(config.to_dict()) == {"data", "mechanism", "seed", "dataset"}
    assert config.kind == "gaussian" and config.seeded
    assert config.build_mechanism() == GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    via_object = ReleaseConfig.of(SPEC, GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5))
    assert via_object.mechanism == config.mechanism and via_object.seed is None and not via_object.seeded
    assert ReleaseConfig(SPEC, GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)).mechanism == config.mechanism


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mechanism": {"b": 0.5}}, "must be a JSON object with a 'kind' field"),
        ({"mechanism": {"kind": "laplace"}}, "mechanism must be one of"),
        ({"mechanism": {**GAUSS, "b": 3.0}}, r"b must be in \(0, 2\]"),
        ({"mechanism": {**GAUSS, "sigma": 1.0}}, r"unknown field\(s\) \['sigma'\]"),
        ({"mechanism": GAUSS, "seed": -1}, "seed must be a whole number"),
        ({"mechanism": GAUSS, "dataset": ""}, "dataset must be a demo dataset name"),
    ],
)
def test_invalid_configs_are_rejected(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        ReleaseConfig(SPEC, **kwargs)


def test_config_from_a_hand_edited_file_is_validated():
    text = ReleaseConfig(SPEC, GAUSS).to_json().replace('"clip"', '"sphere"')
    with pytest.raises(InvalidParameterError, match=r"ReleaseConfig.data.normalization.method must be one of"):
        ReleaseConfig.from_json(text)


def test_run_release_passes_the_prepared_matrix(identity):
    demo = load_demo("togo-demo")
    config = ReleaseConfig(SPEC, {"kind": identity.KIND})
    prepared, release = run_release(demo.frame, config, rng=make_rng(0))
    expected = prepare(demo.frame, SPEC)
    np.testing.assert_array_equal(release.value, expected.x)
    assert prepared.fingerprint == expected.fingerprint


def test_run_release_gaussian_is_reproducible_under_a_seed_and_calibrated():
    demo = load_demo("togo-demo")
    config = ReleaseConfig(SPEC, GAUSS, seed=11)
    prepared, first = run_release(demo.frame, config, rng=make_rng(config.seed))
    _, second = run_release(demo.frame, config, rng=make_rng(config.seed))
    np.testing.assert_array_equal(first.value, second.value)
    _, other = run_release(demo.frame, config, rng=make_rng(12))
    assert not np.array_equal(first.value, other.value)
    sigma = gaussian_sigma(0.5, 1.0, 1e-5, "analytic")
    noise = first.value - prepared.x
    # 12,603 draws: the sample sd has relative standard error 1/sqrt(2N) = 0.63%; allow 5 standard errors
    assert noise.std() == pytest.approx(sigma, rel=5 / np.sqrt(2 * noise.size))
    assert abs(noise.mean()) < 5 * sigma / np.sqrt(noise.size)
    assert first.guarantee.b == 0.5 and first.noise_scale == pytest.approx(sigma)


def test_run_release_rejects_bad_data_and_bad_arguments():
    demo = load_demo("togo-demo")
    frame = demo.frame.copy()
    frame.loc[4, "sms_out"] = np.nan
    with pytest.raises(DataValidationError, match=r"'sms_out' has a missing value in data row 5 \(counting data rows from 1\)"):
        run_release(frame, ReleaseConfig(SPEC, GAUSS), rng=make_rng(0))
    with pytest.raises(InvalidParameterError, match="rng must be a numpy.random.Generator"):
        run_release(demo.frame, ReleaseConfig(SPEC, GAUSS), rng=0)
    with pytest.raises(InvalidParameterError, match="config must be a ReleaseConfig"):
        run_release(demo.frame, GAUSS, rng=make_rng(0))


def test_release_summary_states_guarantee_noise_data_and_seed():
    demo = load_demo("togo-demo")
    config = ReleaseConfig(DataSpec(SPEC.features, normalization=Normalization("maxnorm")), GAUSS, seed=3)
    prepared, release = run_release(demo.frame, config, rng=make_rng(3))
    summary = release_summary(prepared, release, config, seconds=0.5)
    assert summary["guarantee"]["headline"] == release.guarantee.headline()
    assert summary["guarantee"]["describe"] == release.guarantee.describe()
    assert summary["guarantee"]["implied_dp"]["epsilon"] == pytest.approx(4.0)  # s = ⌈2/0.5⌉ = 4 steps
    assert summary["noise_sd_per_coordinate"] == pytest.approx(release.noise_scale)
    assert summary["seeded"] is True and summary["warning"] == SEEDED_WARNING and summary["seed"] == 3
    assert summary["data"] == prepared.fingerprint_summary()
    assert summary["config"] == config.to_dict() and summary["seconds"] == 0.5
    assert "largest row norm" in summary["preparation"]["privacy_note"]
    unseeded = ReleaseConfig(config.data, {**GAUSS, "b": 2.0})
    _, classic = run_release(demo.frame, unseeded, rng=make_rng(None), sampler="numpy")
    plain = release_summary(prepared, classic, unseeded)
    assert plain["warning"] is None and plain["guarantee"]["implied_dp"] is None  # B = 2 is already DP
    # every summary names the sampler that ran, and says what follows from it
    assert summary["sampler"]["name"] == "numpy" and "simulation — not private" in summary["sampler"]["note"]
    assert plain["sampler"]["name"] == "numpy" and "not a vetted sampler" in plain["sampler"]["note"]


def test_cli_command_quotes_paths():
    assert cli_command("decision record.json", input_file="data.csv", output_file="out.parquet") == (
        "python -m engine privatize --config 'decision record.json' --input data.csv --output out.parquet"
    )
