"""Seeded sweep tables pinned (issue 33 §4: the sweeps are made faster WITHOUT changing a number).

Two small seeded sweeps on the demos — togo-demo's quick grid with 2 runs, nigeria-demo's at two B values with 1
run, each with the private projection, the program scored and every attack run — must give the tables recorded in
``tests/engine/pinned/`` (written by the code before the speed work, 18fcfc5). Text columns must be equal; number
columns equal to 1e-9 relative (a different decision of any attack or of the program moves a rate by at least
1/4,000), so a faster attack, fit or program that changes a result fails here.

Regenerate only for a deliberate change of results (and say so in the commit)::

    python -m engine sweep --dataset togo-demo --preset quick --reps 2 --seed 7 --workers 1 \\
        --output tests/engine/pinned/sweep_togo_quick_reps2_seed7.csv
    python -m engine sweep --dataset nigeria-demo --preset quick --reps 1 --b-values 0.1,1 --seed 7 --workers 1 \\
        --output tests/engine/pinned/sweep_nigeria_quick_b0.1_1_reps1_seed7.csv
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.cli import main

PINNED = Path(__file__).resolve().parent / "pinned"

CASES = {
    "sweep_togo_quick_reps2_seed7.csv": ["--dataset", "togo-demo", "--preset", "quick", "--reps", "2"],
    "sweep_nigeria_quick_b0.1_1_reps1_seed7.csv": ["--dataset", "nigeria-demo", "--preset", "quick", "--reps", "1",
                                                   "--b-values", "0.1,1"],
}


@pytest.mark.parametrize(("name", "flags"), list(CASES.items()))
@pytest.mark.parametrize("workers", [1, 2])
def test_seeded_sweep_table_is_the_pinned_one(tmp_path, capsys, name, flags, workers):
    out = tmp_path / "sweep.csv"
    assert main(["sweep", *flags, "--seed", "7", "--workers", str(workers), "--output", str(out)]) == 0
    capsys.readouterr()
    got, pinned = pd.read_csv(out), pd.read_csv(PINNED / name)
    assert list(got.columns) == list(pinned.columns) and len(got) == len(pinned)
    for column in pinned.columns:
        if pd.api.types.is_numeric_dtype(pinned[column]):
            np.testing.assert_allclose(got[column].to_numpy(float), pinned[column].to_numpy(float), rtol=1e-9,
                                       atol=1e-12, equal_nan=True, err_msg=column)
        else:
            assert got[column].tolist() == pinned[column].tolist(), column
    assert pinned["protection_attribute_inference"].nunique() > 1  # the pinned values are not all alike
