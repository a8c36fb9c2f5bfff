"""Turning seeds into generators. Only the CLI, the UI, sweeps and tests call this; mechanisms take a Generator.

A fixed seed makes output reproducible and therefore NOT private (anyone with the seed can regenerate the
noise). The UI and the CLI label seeded output accordingly; ``seed=None`` draws from OS entropy.
"""

from __future__ import annotations

import numpy as np

from engine.validation import check_integer

SEEDED_WARNING = (
    "Simulation — not private: this output is seeded, and anyone who knows the seed can regenerate the noise and "
    "undo it. Use a seed only for simulations and tests, never for a real release."
)


def make_rng(seed: int | None) -> np.random.Generator:
    """``np.random.default_rng(seed)`` after validating the seed (None = OS entropy)."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(check_integer("seed", seed, 0, None))


def spawn_seeds(seed: int | None, n: int) -> list[np.random.SeedSequence]:
    """Independent child seed sequences, one per cell of a sweep (same seed → same children)."""
    root = np.random.SeedSequence(None if seed is None else check_integer("seed", seed, 0, None))
    return root.spawn(check_integer("n", n, 0, None))


def fresh_seed() -> int:
    """A random 63-bit seed from OS entropy, for runs the user wants to be able to repeat later."""
    return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
