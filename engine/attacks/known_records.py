"""The known-record adversary against a secret projection (JL + Laplace): reconstruction from known plaintext.

The secure-release paper argues that reconstruction is impossible because the projection P stays secret. That is
not a quantified guarantee: an adversary who knows a few original records and their released rows fits the
least-squares map from released rows back to records and applies it to every row. With at least k known records
this undoes the projection up to the noise, so the Studio's attacks (singling out, attribute inference) run on
the reconstruction X̂, never on the secret P (spec 002-jl-laplace.md; ``engine.analysis`` calls
:func:`known_record_view` for every projecting mechanism, in the Mechanisms run and in sweep cells alike).
"""

from __future__ import annotations

import numpy as np

from engine.errors import InvalidParameterError
from engine.validation import check_integer, check_matrix, check_rng

__all__ = ["known_record_reconstruction", "known_record_view"]


def known_record_reconstruction(z: np.ndarray, known_idx: np.ndarray, known_x: np.ndarray) -> np.ndarray:
    r"""What an adversary WITHOUT P recovers from Z when it knows a few original records (known plaintext).

    Least-squares map W (k × d) from the released rows of the known records to their originals, applied to all
    of Z: X̂ = Z W.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(50, 3))
    >>> p = rng.normal(size=(3, 5))  # the secret projection
    >>> x_hat = known_record_reconstruction(x @ p, np.arange(5), x[:5])
    >>> bool(np.allclose(x_hat, x))
    True
    """
    z = check_matrix("z", z)
    known_x = check_matrix("known_x", known_x)
    known_idx = np.asarray(known_idx, dtype=int)
    if known_idx.shape[0] != known_x.shape[0]:
        raise InvalidParameterError("known_idx and known_x must describe the same records")
    w, *_ = np.linalg.lstsq(z[known_idx], known_x, rcond=None)
    return z @ w


def known_record_view(z: np.ndarray, x: np.ndarray, n_known: int, *, rng: np.random.Generator) -> np.ndarray:
    """The adversary's reconstruction X̂ of all rows when it knows ``n_known`` records drawn at random (``rng``)
    among the released ones (``x`` holds the released records' original rows, in the order of ``z``)."""
    check_rng(rng)
    x = check_matrix("x", x)
    n_known = check_integer("n_known", n_known, 1, x.shape[0])
    idx = rng.choice(x.shape[0], size=n_known, replace=False)
    return known_record_reconstruction(z, idx, x[idx])
