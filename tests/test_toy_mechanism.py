"""The mechanism contract proved: a NEW mechanism, defined and registered in this one file at test time, appears on
the Mechanisms and Tradeoffs pages, in sweeps, the recommender, the honest comparison, the decision record, the
command line, the Dask release and the contract suite — with no other file changed (issue 32).

The toy is a deliberately wasteful Gaussian mechanism: it adds ``inflate`` (≥ 1) times the noise the analytic
calibration needs for (B, ε, δ), so its guarantee is still exactly (B, ε, δ)-TDP (more noise never hurts privacy).
It states its abilities in its tags and nothing else in the Studio names it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from engine.constraints import Constraint, Real, check_declared
from engine.guarantee import Guarantee, Release
from engine.mechanisms import MECHANISMS, register, unregister
from engine.mechanisms.base import FormField, MechanismReport, MechanismTags, RecordMechanism, ReportMetric
from engine.mechanisms.gaussian import gaussian_sigma
from engine.mechanisms.samplers import NumpySampler
from engine.validation import check_rng, check_unit_ball

KIND = "toy-inflated-gaussian"


@dataclass(frozen=True)
class InflatedGaussian(RecordMechanism):
    """x + N(0, (inflate·σ)² I), σ the analytic Gaussian calibration of (B, ε, δ): (B, ε, δ)-TDP."""

    KIND: ClassVar[str] = KIND
    LABEL: ClassVar[str] = "Inflated Gaussian (toy)"
    TAGS: ClassVar[MechanismTags] = MechanismTags(budgeted=True, sweep_options=(), partition_modes=("global",),
                                                  opendp_reason="a test mechanism")
    FORM: ClassVar[tuple[FormField, ...]] = (
        FormField("b", "Target distance B", format="%.4f", step=0.01),
        FormField("epsilon", "Privacy loss ε", format="%.4f", step=0.1),
        FormField("delta", "δ", format="%.3e", step=1e-6),
        FormField("inflate", "Noise inflation (≥ 1)", "Multiplies the calibrated σ.", format="%.2f", step=0.5),
    )

    b: float
    epsilon: float
    delta: float
    inflate: float = 2.0

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "b": Real(0, 2, closed="right"),
        "epsilon": Real(0, None, closed="neither"),
        "delta": Real(0, 1, closed="neither"),
        "inflate": Real(1, 100),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @property
    def sigma(self) -> float:
        return self.inflate * gaussian_sigma(self.b, self.epsilon, self.delta)

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        return {KIND: cls(b=0.5, epsilon=1.0, delta=1e-5)}

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, *, d: int | None = None, split: Any = None,
                    **options: Any) -> InflatedGaussian:
        return cls(b=float(b), epsilon=float(epsilon), delta=float(delta), **options)

    def guarantee(self) -> Guarantee:
        return Guarantee(self.epsilon, self.delta, b=self.b, mechanism=self.LABEL,
                         notes=(f"σ = {self.sigma:.6g}: {self.inflate:g} × the calibrated noise.",))

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None, sampler: Any = None) -> Release:
        if sampler is None:
            check_rng(rng)
            sampler = NumpySampler(rng)  # type: ignore[arg-type]
        arr = check_unit_ball(x, mechanism=self.LABEL)
        value, _ = sampler.add_gaussian(arr, self.sigma, sensitivity=self.b, epsilon=self.epsilon)
        return Release(value=value, guarantee=self.guarantee(),
                       details={"noise_sd_per_coordinate": self.sigma, "output_scale": 1.0})

    def report(self, details: Any) -> MechanismReport:
        return MechanismReport(metrics=(ReportMetric("σ (inflated)", self.sigma, "The toy's noise sd."),))


@pytest.fixture
def toy():
    """The toy registered for one test (and nothing else changed), then removed."""
    register(InflatedGaussian)
    try:
        yield InflatedGaussian
    finally:
        unregister(KIND)


@pytest.fixture(scope="module")
def togo():
    from engine.data.demos import load_demo
    from engine.data.preparation import prepare

    demo = load_demo("togo-demo")
    frame = demo.frame.head(400).reset_index(drop=True)
    return frame, demo.spec, prepare(frame, demo.spec), demo.program_config()


def test_the_contract_suite_runs_on_the_new_mechanism(toy):
    from tests.engine.test_mechanism_contract import check_contract

    check_contract(toy)


def test_sweeps_the_comparison_and_the_recommender_take_it(toy, togo):
    from engine.comparison import alternatives
    from engine.mechanisms.gaussian import GaussianMechanism
    from engine.recommend import RecommendConfig, Target, recommend
    from engine.sweeps import Budget, SweepConfig, run_sweep, sweep_mechanisms

    _, _, prepared, program = togo
    assert KIND in sweep_mechanisms()
    config = SweepConfig(budgets=(Budget(3.0, 1e-4, 0.9999, 5e-5),), b_values=(0.5, 2.0), mechanism=KIND,
                         repetitions=2, seed=3, program=program, attacks=("singling_out", "distinguishing"))
    table = run_sweep(prepared, config, use_cache=False).table
    private = table[table["reference"] != "non-private"]
    assert set(private["mechanism"]) == {KIND} and set(private["reference"]) == {"tdp", "classic-dp"}
    sigma = InflatedGaussian(b=0.5, epsilon=config.budgets[0].epsilon, delta=config.budgets[0].delta).sigma
    assert private[private["b"] == 0.5]["noise_sd"].tolist() == [sigma, sigma]
    # the honest comparison configures it at the same guarantee
    others = alternatives(GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5), d=prepared.d,
                          candidate=Guarantee(1.0, 1e-5, 0.5))
    assert InflatedGaussian(b=0.5, epsilon=1.0, delta=1e-5) in others
    # the recommender searches it
    rec = recommend(prepared, program, RecommendConfig(Target.parse("accuracy>=0.5"), mechanisms=(KIND,),
                                                       b_values=(2.0,), steps=2, max_repetitions=3))
    assert rec.recommended is not None and rec.recommended.mechanism == KIND
    assert rec.recommended.build_mechanism(prepared.d) == InflatedGaussian.from_budget(
        2.0, rec.recommended.epsilon, rec.recommended.delta)


def test_the_decision_record_the_command_line_and_the_dask_release_take_it(toy, togo, tmp_path, capsys):
    from engine.cli import main
    from engine.data.preparation import DataSpec, Normalization
    from engine.decision_record import build_decision_record, load_decision_record
    from engine.release import ReleaseConfig
    from engine.scale.cluster import dask_client
    from engine.scale.out_of_core import run_out_of_core_release

    frame, spec, prepared, program = togo
    mechanism = InflatedGaussian(b=0.5, epsilon=2.0, delta=1e-5, inflate=3.0)
    record = build_decision_record(
        prepared=prepared, source="demo", dataset="togo-demo", title="togo-demo", synthetic=True,
        columns=tuple(str(c) for c in frame.columns), candidate=mechanism.guarantee(), gammas=(0.9,), delta_is_default=False,
        mechanism=mechanism.to_dict(), seed=None, program=program, sweeps=(),
        created="2026-01-01T00:00:00+00:00",
    )
    again = load_decision_record(record.to_json())
    assert again == record and again.release.build_mechanism() == mechanism
    # the command line: privatize with its flags (a field without a flag of its own: --param)
    out = tmp_path / "p.csv"
    code = main(["privatize", "--dataset", "togo-demo", "--mechanism", KIND, "--b", "0.5", "--epsilon", "2",
                 "--delta", "1e-5", "--param", "inflate=3", "--seed", "1", "--output", str(out)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["mechanism"] == KIND and summary["sampler"]["name"] == "numpy"
    assert summary["noise_sd_per_coordinate"] == pytest.approx(mechanism.sigma)
    # the Dask release, partition by partition, through the one release function
    source = tmp_path / "in.parquet"
    frame[list(spec.features)].to_parquet(source)
    bounds = Normalization("maxnorm")
    config = ReleaseConfig(DataSpec(spec.features, normalization=bounds), mechanism.to_dict(), seed=5)
    with dask_client(None, n_workers=2, processes=False) as client:
        dask = run_out_of_core_release(client, str(source), str(tmp_path / "out"), config, partition_rows=150)
    assert dask["rows"] == len(frame) and dask["mechanism"] == KIND and dask["sampler"]["name"] == "numpy"
    assert dask["guarantee"]["headline"] == mechanism.guarantee().headline()
    assert dask["noise_sd_per_coordinate"] == pytest.approx(mechanism.sigma)


def test_the_mechanisms_page_offers_it_runs_it_and_compares_with_it(toy):
    from tests.app.conftest import assert_clean, start_on, studio

    at = start_on("mechanisms")
    assert InflatedGaussian.LABEL in at.radio(key="mechanisms.kind").options  # shown by its label
    at.radio(key="mechanisms.kind").set_value(KIND).run()
    assert_clean(at)
    at.number_input(key=f"mechanisms.{KIND}.inflate").set_value(4.0)
    at.text_input(key="mechanisms.seed").set_value("2")
    at.button(key="mechanisms.run").click().run()
    assert_clean(at)
    mechanism = studio(at).mechanism
    assert isinstance(mechanism, InflatedGaussian) and mechanism.inflate == 4.0
    assert any(m.label == "σ (inflated)" for m in at.metric)
    # another mechanism's honest comparison includes it at the same guarantee
    at.radio(key="mechanisms.kind").set_value("gaussian").run()
    at.button(key="mechanisms.run").click().run()
    assert_clean(at)
    table = next(df.value for df in at.dataframe if "noise sd per coordinate" in df.value.columns)
    assert InflatedGaussian.LABEL in table["mechanism"].tolist()


def test_the_tradeoffs_page_sweeps_it(toy):
    from tests.app.conftest import assert_clean, start_on, studio

    at = start_on("tradeoffs")
    assert InflatedGaussian.LABEL in at.multiselect(key="tradeoffs.mechanisms").options
    at.multiselect(key="tradeoffs.mechanisms").set_value([KIND])
    at.multiselect(key="tradeoffs.attacks").set_value(["distinguishing"])
    at.radio(key="tradeoffs.preset").set_value("custom")
    at.text_input(key="tradeoffs.b_values").set_value("0.5, 2")
    at.number_input(key="tradeoffs.reps").set_value(1)
    at.number_input(key="tradeoffs.workers").set_value(1)
    at.button(key="tradeoffs.run").click().run()
    assert_clean(at)
    (result,) = studio(at).sweeps
    assert result.config.mechanism == KIND and len(result.table) == 3  # non-private, B = 0.5, B = 2
    assert KIND not in MECHANISMS or MECHANISMS[KIND] is InflatedGaussian
