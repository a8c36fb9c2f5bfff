"""What the attacker knows about the release: the one home of the attacks' threat model.

The targeted-DP paper assumes the adversary knows the algorithm and its parameters. A mechanism whose output is
a known multiple of the data (``Release.details["output_scale"]`` = s with E[value] = s·X; s = 1/k for the
private projection as printed) therefore gives the adversary ``value / s`` for free (post-processing). The
authors' replication code attacks the release as printed instead; that behaviour is kept behind
``adversary="paper"`` for the paper-faithful mode only.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (privacy attacks). Digest: ``shared/spec/000-targeted-dp.md``;
       replication notes: ``shared/reference/tdp-replication/NOTES.md``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from engine.validation import check_choice, check_interval

Adversary = Literal["knows-scale", "paper"]

#: Adversary → one-line description for the UI and reports.
ADVERSARY_TEXT: dict[str, str] = {
    "knows-scale": (
        "knows the algorithm and its parameters (the paper's assumption): undoes the known output scale "
        "before attacking"
    ),
    "paper": "attacks the release exactly as printed, without undoing its scale (the authors' replication code)",
}


def check_release_scale(release_scale: object) -> float:
    """Validate ``release_scale`` (the factor s with E[release] = s·X): a finite number > 0."""
    return check_interval(
        "release_scale",
        release_scale,
        0,
        None,
        closed="neither",
        hint="pass Release.details['output_scale'] (1.0 for an unbiased release)",
    )


def adversary_view(x_priv: np.ndarray, *, release_scale: float = 1.0, adversary: Adversary = "knows-scale") -> np.ndarray:
    """The release as the adversary uses it.

    Parameters
    ----------
    x_priv : ndarray, shape (m, d)
        The released matrix (already validated by the caller).
    release_scale : float
        s with E[x_priv] = s·X (``Release.details["output_scale"]``), > 0.
    adversary : {"knows-scale", "paper"}
        ``"knows-scale"`` returns ``x_priv / s`` (free post-processing for an adversary who knows the
        algorithm); ``"paper"`` returns ``x_priv`` unchanged (the authors' code).

    Examples
    --------
    >>> adversary_view(np.array([[1e-4, 2e-4]]), release_scale=1e-4).tolist()
    [[1.0, 2.0]]
    >>> adversary_view(np.array([[1e-4, 2e-4]]), release_scale=1e-4, adversary="paper").tolist()
    [[0.0001, 0.0002]]
    """
    s = check_release_scale(release_scale)
    check_choice("adversary", adversary, ADVERSARY_TEXT)
    if adversary == "paper" or s == 1.0:
        return x_priv
    return x_priv / s


#: Upper ends of the bands of :func:`protection_in_words` (protection in [0, 1]; 1 = the attack does no better
#: than without the release, 0 = it always succeeds), with the words for attacks on people and for telling two
#: records apart.
PROTECTION_BANDS: tuple[tuple[float, str, str], ...] = (
    (0.01, "almost none — the attack nearly always succeeds",
     "almost none — two records are told apart almost without error"),
    (0.25, "low — the attack succeeds for many people", "low — two records are told apart with few errors"),
    (0.75, "partial — the attack succeeds for some people", "partial — telling two records apart errs often"),
    (0.99, "high — the attack rarely succeeds", "high — telling two records apart is close to guessing"),
)


def protection_in_words(protection: float, *, records: bool = False, bound: bool = False) -> str:
    """A protection score (1 = the release helps the attack not at all, 0 = the attack always succeeds) in words,
    for a reader who should not have to read 2.72e-06 as "almost certain to be told apart".

    ``records``: the distinguishing score (the best test telling two records apart), not an attack on people.
    ``bound``: the score is a worst-case bound (the mechanism may protect more), said first.

    >>> protection_in_words(2.72e-06, records=True)
    'almost none — two records are told apart almost without error'
    >>> protection_in_words(0.5), protection_in_words(1.0)
    ('partial — the attack succeeds for some people', 'near complete — no better than without the release')
    >>> protection_in_words(0.0134, records=True, bound=True)
    'at worst (a bound): low — two records are told apart with few errors'
    """
    value = check_interval("protection", protection, 0, 1)
    words = next((records_text if records else people_text
                  for top, people_text, records_text in PROTECTION_BANDS if value < top),
                 "near complete — telling two records apart is guessing" if records
                 else "near complete — no better than without the release")
    return f"at worst (a bound): {words}" if bound else words
