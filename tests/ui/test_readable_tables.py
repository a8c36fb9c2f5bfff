"""The sweep and frontier tables show readable headers and empty cells, not the engine's column names and "None"
(a new-user run read ``ci_low``, ``implied_classic_dp_epsilon`` and "None" in them)."""

from __future__ import annotations

import pandas as pd

from engine.recommend import FrontierPoint
from ui.common import readable_table


def test_frontier_headers_name_the_metric_and_the_implied_classic_dp():
    point = FrontierPoint("gaussian", 0.5, 1.0, 1e-5, (0.8, 0.82), 0.81, 0.79, 0.83, 7.5)
    shown, headers = readable_table(pd.DataFrame([point.to_dict()]), metric="accuracy")
    assert headers["mean"] == "Accuracy (mean)" and headers["ci_low"] == "Accuracy, 95 % interval: low"
    assert headers["implied_classic_dp_epsilon"] == "ε′ for any two records (classic DP implied)"
    assert set(headers) <= set(shown.columns)
    assert headers["delta"]["label"] == "δ" and headers["delta"]["type_config"]["format"] == "%.3g"  # not 0.00001
    assert shown.loc[0, "implied_classic_dp_epsilon"] == 7.5  # values are untouched


def test_missing_text_is_an_empty_cell_and_protection_columns_get_their_label():
    table = pd.DataFrame({"mechanism": ["projection", "gaussian"], "reference": [None, "classic DP"],
                          "profit_mean": [1.0, 2.0], "protection_singling_out_mean": [0.5, None]})
    shown, headers = readable_table(table, metric="profit", metric_label="Profit",
                                    protection_labels={"protection_singling_out": "Singling-out protection"})
    assert shown["reference"].tolist() == ["", "classic DP"]
    assert shown["mechanism"].tolist() == ["Private projection (Algorithm 1)", "Gaussian mechanism (targeted DP)"]
    assert pd.isna(shown.loc[1, "protection_singling_out_mean"])  # numbers stay numbers (an empty cell)
    assert headers == {"mechanism": "Mechanism", "reference": "Reference", "profit_mean": "Profit (mean)",
                       "protection_singling_out_mean": "Singling-out protection (mean)"}


def test_numbers_with_gaps_stay_a_numeric_column():
    shown, _ = readable_table(pd.DataFrame({"implied_epsilon": [None, 2.5, 3]}))
    assert pd.api.types.is_numeric_dtype(shown["implied_epsilon"]) and shown["implied_epsilon"].isna().tolist() == [
        True, False, False]


def test_grid_point_kinds_are_named():
    shown, _ = readable_table(pd.DataFrame({"reference": ["non-private", "tdp", "classic-dp"],
                                            "mechanism": ["none", "projection", "projection"]}))
    assert shown["reference"].tolist() == ["non-private (the data themselves)", "targeted DP", "classic DP (B = 2)"]
    assert shown["mechanism"].tolist() == ["—", "Private projection (Algorithm 1)", "Private projection (Algorithm 1)"]
