"""Composition (engine.accounting.composition): the one home of Lemmas 2–3, used by the mechanisms, no import circle."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.accounting import composition, tdp
from engine.guarantee import Guarantee
from engine.mechanisms.private_projection import PrivateProjection


def test_composition_has_one_home_and_tdp_does_not_reexport_it():
    """One composition module (issue 32): the calculus module below the guarantee does not import it back."""
    assert not hasattr(tdp, "sequential_composition") and not hasattr(tdp, "parallel_composition")
    with pytest.raises(AttributeError):
        tdp.no_such_name  # noqa: B018
    assert {"sequential_composition", "parallel_composition"} <= set(composition.__all__)


def test_tdp_does_not_import_the_guarantee_module():
    # The circle accounting/tdp.py ↔ guarantee.py is gone: importing the calculus loads no Guarantee.
    code = "import sys, engine.accounting.tdp; print('engine.guarantee' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("partitions", [1, 6])
@pytest.mark.parametrize("rank", [None, 2])
def test_private_projection_guarantee_is_theorem_2_built_by_composition(partitions, rank):
    mech = PrivateProjection(b=0.25, epsilon1=3.0, delta1=2e-4, epsilon2=0.9999, delta2=1e-4, partitions=partitions,
                             rank=rank)
    g = mech.guarantee()
    # Theorem 2 by hand: (B, ε1 + ε2, δ1 + δ2); the disjoint parts (Lemma 3) keep it.
    assert (g.b, g.epsilon, g.delta, g.relation) == (0.25, 3.0 + 0.9999, 2e-4 + 1e-4, "row")
    assert g.mechanism == mech.LABEL
    assert g.notes[0].startswith("Theorem 2: steps 1–3")
    assert any("parallel composition (Lemma 3)" in n for n in g.notes) == (partitions > 1)
    # and it is exactly what the composition lemmas give for the two steps
    steps = [Guarantee(3.0, 2e-4, b=0.25), Guarantee(0.9999, 1e-4, b=0.25)]
    composed = composition.parallel_composition([composition.sequential_composition(steps)] * partitions)
    assert (composed.b, composed.epsilon, composed.delta) == (g.b, g.epsilon, g.delta)
