"""The count-study builder behind the dashboard page: shapes, progress, cancel, error and contraction summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import CancelledError, InvalidParameterError
from engine.progress import CancelToken
from engine.public_info.count_table import count_table_from_frame, counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study, default_highlights


def _table():
    rng = np.random.default_rng(0)
    pop = np.array([500_000, 260_000, 90_000, 20_000, 3_000])
    counts = rng.poisson(pop[:, None] * np.linspace(1e-3, 4e-3, 6)[None, :])
    deaths = rng.binomial(counts, 0.02)
    frame = pd.DataFrame({"region": np.repeat([f"r{i}" for i in range(5)], 6), "period": np.tile(np.arange(6), 5),
                          "count": counts.ravel(), "sub": deaths.ravel(), "pop": np.repeat(pop, 6)})
    return count_table_from_frame(frame, subcount="sub", population="pop")


def test_default_highlights():
    assert default_highlights(_table()) == ("r0", "r1", "r4")
    demo = counties_demo()
    names = default_highlights(demo)
    pops = dict(zip(demo.regions, demo.population, strict=True))
    assert pops[names[0]] == 1_600_000 and pops[names[1]] == 270_000 and pops[names[2]] == 4_500


def test_study_shapes_progress_and_summaries():
    table = _table()
    config = CountStudyConfig(methods=("postprocess", "wasserstein-congenial", "wasserstein-prior"),
                              epsilons=(0.05, 2.0), replicates=10)
    seen = []
    res = build_count_study(table, config, rng=np.random.default_rng(1), progress=seen.append)
    assert len(res.cells) == 6 and len(seen) == 6 * 6 and seen[-1].done == seen[-1].total == 36
    assert [p.done for p in seen] == list(range(1, 37))
    for cell in res.cells:
        assert cell.released.shape == (10, 3, 6) and cell.released_rates.shape == (10, 3, 6)
        assert cell.guarantee.epsilon == cell.epsilon
        q = cell.error_quantiles
        assert 0 <= q["median"] <= q["p95"] <= q["max"]
        for effects in cell.contraction.values():
            assert all(0.0 <= v <= 1.0 for v in effects.values())
    for method in config.methods:  # more ε, less error
        assert res.cell(method, 2.0).error_quantiles["median"] < res.cell(method, 0.05).error_quantiles["median"]
    post = res.cell("postprocess", 0.05).contraction
    assert "stage1_polar" in post["r4"]
    # small regions suffer more contraction than large ones under post-processing at high privacy (Figure 3)
    assert post["r4"]["stage1_polar"] > post["r0"]["stage1_polar"]
    assert res.truth_rates[0] == pytest.approx(res.truth[0] * 1e5 / 500_000)
    assert CountStudyConfig.from_json(config.to_json()) == config


def test_study_cancel():
    token = CancelToken()

    def stop_after_first(p):
        token.cancel()

    with pytest.raises(CancelledError):
        build_count_study(_table(), CountStudyConfig(methods=("postprocess",), replicates=2),
                          rng=np.random.default_rng(0), progress=stop_after_first, cancel=token)


@pytest.mark.parametrize(("kwargs", "word"), [({"methods": ("bogus",)}, "methods"), ({"epsilons": (0.0,)}, "epsilons"),
                                              ({"methods": ("wasserstein-prior",), "public": ("total",)}, "last-period")])
def test_study_config_validation(kwargs, word):
    with pytest.raises(InvalidParameterError, match=word):
        CountStudyConfig(**kwargs)


def test_unknown_highlight():
    with pytest.raises(InvalidParameterError, match="highlight"):
        build_count_study(_table(), CountStudyConfig(methods=("postprocess",), replicates=2, highlight=("nope",)),
                          rng=np.random.default_rng(0))
