r"""k-anonymity baseline: Mondrian multidimensional partitioning, each record released as its class mean.

The targeted-DP paper compares against k-anonymity built with the Mondrian algorithm (LeFevre, DeWitt &
Ramakrishnan 2006), every column a quasi-identifier, k ∈ {2, …, 10} (best: k = 2). This module is the one home of
that baseline and of the statement of what it protects, :class:`KAnonymityGuarantee`.

Algorithm (strict multidimensional partitioning, as in the widely used open-source Mondrian of Qiyuan Gong, which
the paper's source, Slijepčević et al. 2021, builds on):

1. Start with one partition holding every row.
2. For a partition of m ≥ 2k rows, order the features by normalised width (range in the partition divided by the
   range in the whole data), widest first. For the first feature that allows it, cut at the (lower) median value:
   rows with value ≤ median go left, the rest right; if a side would hold fewer than k rows (many ties at the
   median), try the cut "< median" instead. A cut is allowed only if both sides keep ≥ k rows. *Strict*: rows with
   the same value of the cut feature always stay on the same side.
3. A partition no feature can cut is an equivalence class (it has between k and, with heavy ties, more than 2k − 1
   rows).

Release: every row is replaced by the MEAN of its equivalence class (numerical generalisation that keeps the data
numeric for the downstream model), so each released row equals at least k − 1 others.

k-anonymity is a syntactic property of the output, NOT differential privacy: see :class:`KAnonymityGuarantee`.

References
----------
.. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional k-anonymity", ICDE 2006.
.. [2] D. Slijepčević et al., "k-anonymity in practice: How generalisation and suppression affect machine learning
       classifiers", Computers & Security 111, 2021.
.. [3] Kohli & Blumenstock, arXiv:2408.13424, Methods, "k-anonymity baseline".
.. [4] A. Cohen, K. Nissim, "Towards formalizing the GDPR's notion of singling out", PNAS 117(15), 2020.
"""

from __future__ import annotations

import collections
import hashlib
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from engine.constraints import Constraint, Integer, check_declared
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.guarantee import Release
from engine.mechanisms.base import (
    FormField,
    MechanismReport,
    MechanismTags,
    RecordMechanism,
    ReportMetric,
    register,
)
from engine.serialization import Serializable
from engine.validation import check_integer, check_matrix

if TYPE_CHECKING:
    from engine.mechanisms.samplers import NoiseSampler

#: Range of k the paper studies (and the dashboard offers).
K_MIN, K_MAX = 2, 10


@dataclass(frozen=True)
class KAnonymityGuarantee(Serializable):
    """What a k-anonymous release protects — and that it is not differential privacy.

    Duck-types the parts of :class:`engine.guarantee.Guarantee` that consumers read: ``epsilon`` is ``inf`` and
    ``delta`` is 1 (no (ε, δ) statement holds: the release is a deterministic, data-dependent function of every
    record), ``is_classic_dp`` is False, ``vacuous`` is True *as a DP statement*, and :meth:`headline` /
    :meth:`describe` say what k-anonymity does guarantee.

    Parameters
    ----------
    k : int
        Every released row is identical to at least k − 1 other released rows (k ≥ 2).
    quasi_identifiers : tuple of str
        Columns treated as quasi-identifiers; empty means every feature.
    mechanism : str
        Name of the mechanism.
    notes : tuple of str
        Further caveats.

    Examples
    --------
    >>> g = KAnonymityGuarantee(k=2, mechanism="k-anonymity (Mondrian)")
    >>> g.headline()
    'k-anonymity with k = 2 (every released row equals at least 1 other) — NOT differential privacy'
    >>> g.is_classic_dp, g.delta
    (False, 1.0)
    """

    KIND: ClassVar[str] = "k-anonymity"
    DERIVED_KEYS: ClassVar[tuple[str, ...]] = ("vacuous",)

    k: int
    quasi_identifiers: tuple[str, ...] = ()
    mechanism: str = ""
    notes: tuple[str, ...] = field(default=())

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {"k": Integer(2)}

    def __post_init__(self) -> None:
        check_declared(self)

    # Duck-typed DP view: no differential-privacy guarantee at all.
    @property
    def epsilon(self) -> float:
        return math.inf

    @property
    def delta(self) -> float:
        return 1.0

    @property
    def b(self) -> float:
        return 2.0

    @property
    def relation(self) -> str:
        return "row"

    @property
    def is_classic_dp(self) -> bool:
        return False

    @property
    def is_differentially_private(self) -> bool:
        return False

    @property
    def vacuous(self) -> bool:
        """True: as a differential-privacy statement it guarantees nothing."""
        return True

    def implied_dp(self) -> KAnonymityGuarantee:
        """There is no DP statement to convert; returns ``self``."""
        return self

    def loss_at_distance(self, distance: float) -> tuple[float, float]:
        """(inf, 1): no bound on the privacy loss of any record."""
        return math.inf, 1.0

    def headline(self) -> str:
        return (
            f"k-anonymity with k = {self.k} (every released row equals at least {self.k - 1} "
            f"other{'s' if self.k > 2 else ''}) — NOT differential privacy"
        )

    def describe(self) -> list[str]:
        qi = ", ".join(self.quasi_identifiers) if self.quasi_identifiers else "every feature"
        lines = [
            self.headline() + (f" — by {self.mechanism}" if self.mechanism else "") + ".",
            f"Quasi-identifiers: {qi}. Records are grouped into equivalence classes of at least {self.k} and each "
            "record is released as the mean of its class.",
            "This is not differential privacy: the grouping is a deterministic function of every record, so no "
            "(ε, δ) bound holds (δ = 1); changing one record can move class boundaries and class means.",
            "Known weaknesses: homogeneity and background-knowledge attacks, composition of several releases, and "
            "predicate singling-out (Cohen & Nissim 2020).",
        ]
        lines.extend(self.notes)
        return lines


#: Partitions of the last few (data, k) pairs: the algorithm is deterministic, and the Mechanisms page releases the
#: same rows five times (one per repetition) — the partition is computed once (0.65 s on 20,000 rows × 15).
_PARTITIONS: collections.OrderedDict[tuple[str, int], np.ndarray] = collections.OrderedDict()
_PARTITIONS_LOCK = threading.Lock()
_PARTITIONS_SIZE = 4


def _remembered_partition(x: np.ndarray, k: int) -> np.ndarray:
    """:func:`mondrian_partition` of ``x``, computed once per (data, k) among the last few (keyed by a BLAKE2 digest
    of the rows' bytes and shape, so equal data share it and changed data never do)."""
    x = check_matrix("x", x)
    digest = hashlib.blake2b(np.ascontiguousarray(x).tobytes(), digest_size=16)
    digest.update(repr(x.shape).encode())
    key = (digest.hexdigest(), int(k))
    with _PARTITIONS_LOCK:
        labels = _PARTITIONS.get(key)
        if labels is not None:
            _PARTITIONS.move_to_end(key)
            return labels
    labels = mondrian_partition(x, k)
    labels.flags.writeable = False  # shared between releases
    with _PARTITIONS_LOCK:
        _PARTITIONS[key] = labels
        while len(_PARTITIONS) > _PARTITIONS_SIZE:
            _PARTITIONS.popitem(last=False)
    return labels


def mondrian_partition(x: np.ndarray, k: int) -> np.ndarray:
    """Equivalence classes of strict Mondrian multidimensional partitioning, every column a quasi-identifier.

    Parameters
    ----------
    x : ndarray, shape (n, d)
        Finite numeric data, n ≥ k.
    k : int
        Minimum class size, ≥ 1.

    Returns
    -------
    labels : ndarray of int, shape (n,)
        Class index of every row, 0 … (number of classes − 1). Deterministic.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    >>> mondrian_partition(x, 2).tolist()
    [0, 0, 0, 1, 1]
    """
    x = check_matrix("x", x)
    n, d = x.shape
    k = check_integer("k", k, 1, None)
    if n < k:
        raise InsufficientDataError(f"k-anonymity with k = {k} needs at least {k} rows; got {n}")
    total_range = x.max(axis=0) - x.min(axis=0)
    total_range[total_range <= 0] = 1.0  # constant columns have width 0 everywhere
    labels = np.empty(n, dtype=np.int64)
    next_label = 0
    stack = [np.arange(n)]
    while stack:
        idx = stack.pop()
        cut = _best_cut(x[idx], total_range, k) if idx.size >= 2 * k else None
        if cut is None:
            labels[idx] = next_label
            next_label += 1
            continue
        stack.append(idx[~cut])  # right part, popped second
        stack.append(idx[cut])  # left part first: labels grow with the cut feature's value
    # Relabel in order of first appearance so that labels do not depend on the traversal order.
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return order[labels]


def _best_cut(sub: np.ndarray, total_range: np.ndarray, k: int) -> np.ndarray | None:
    """Boolean mask of the left side of the first allowable strict median cut, or None (a leaf)."""
    m = sub.shape[0]
    widths = (sub.max(axis=0) - sub.min(axis=0)) / total_range
    lower_median = (m - 1) // 2
    for j in np.argsort(-widths, kind="stable"):
        if widths[j] <= 0:
            break
        col = sub[:, j]
        median = np.partition(col, lower_median)[lower_median]
        for left in (col <= median, col < median):
            n_left = int(np.count_nonzero(left))
            if k <= n_left <= m - k:
                return left
    return None


@register
@dataclass(frozen=True)
class MondrianKAnonymity(RecordMechanism):
    r"""k-anonymity by Mondrian (strict multidimensional partitioning), records released as class means.

    Parameters
    ----------
    k : int
        Minimum equivalence-class size, 2 … 10 (the paper's range; it reports k = 2, the most accurate).

    Notes
    -----
    Every feature is a quasi-identifier (as in the paper). The algorithm is deterministic: ``release`` accepts an
    ``rng`` for the common interface and does not use it. The guarantee is a :class:`KAnonymityGuarantee`, not a
    :class:`~engine.guarantee.Guarantee`: k-anonymity gives no (ε, δ) bound.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.1, 0.0], [0.9, 0.1], [1.0, 0.1]])
    >>> MondrianKAnonymity(k=2).release(x, rng=np.random.default_rng(0)).value.round(2).tolist()
    [[0.05, 0.0], [0.05, 0.0], [0.95, 0.1], [0.95, 0.1]]
    """

    KIND: ClassVar[str] = "mondrian"
    LABEL: ClassVar[str] = "k-anonymity (Mondrian)"
    SHORT_LABEL: ClassVar[str] = "k-anonymity"
    TAGS: ClassVar[MechanismTags] = MechanismTags(
        unit_ball=False,
        noiseless=True,
        differentially_private=False,
        opendp_reason="it adds no noise (k-anonymity is not differential privacy)",
    )
    FORM: ClassVar[tuple[FormField, ...]] = (
        FormField("k", "k (smallest group size)", "Every released row equals at least k − 1 others. The paper reports "
                  "k = 2 (the most accurate). k-anonymity is NOT differential privacy: it gives no (ε, δ) bound."),
    )
    #: ``--k`` is the projection dimension of the other mechanisms; the class size has its own flag.
    FLAGS: ClassVar[Mapping[str, str]] = {"k": "anonymity_k"}

    k: int = 2

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "k": Integer(K_MIN, K_MAX, hint="the paper studies k = 2 … 10"),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        return {"mondrian": cls(k=2)}

    def partition_refusal(self, mode: str) -> str:
        return ("Mondrian k-anonymity cannot run under --engine dask: its median splits depend on all rows at once "
                "(every cut is chosen from the whole table), so it is not partition-local — use the in-memory engine")

    def report(self, details: Mapping[str, Any]) -> MechanismReport:
        return MechanismReport(metrics=(
            ReportMetric("Classes", details.get("classes"), "Equivalence classes formed."),
            ReportMetric("Smallest class", details.get("smallest_class"), "At least k rows each."),
            ReportMetric("Distortion (rms)", details.get("distortion_rms_per_coordinate"),
                         "Root mean square change of a value (class mean against the record)."),
        ))

    def guarantee(self) -> KAnonymityGuarantee:
        return KAnonymityGuarantee(
            k=self.k,
            mechanism=self.LABEL,
            notes=(
                "Strict Mondrian multidimensional partitioning (LeFevre et al. 2006): median cuts on the widest "
                "normalised feature; records with equal values of the cut feature stay together.",
            ),
        )

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        """Replace each row of ``x`` by the mean of its Mondrian equivalence class (no randomness: ``rng`` and
        ``sampler`` are not used)."""
        try:
            x = check_matrix("x", x)
        except InvalidParameterError as exc:
            raise DataValidationError(str(exc)) from None
        labels = _remembered_partition(x, self.k)
        counts = np.bincount(labels)
        means = np.empty((counts.size, x.shape[1]))
        for j in range(x.shape[1]):
            means[:, j] = np.bincount(labels, weights=x[:, j], minlength=counts.size) / counts
        value = means[labels]
        details = {
            "implementation": "mondrian-strict",
            "output_scale": 1.0,
            "noise_sd_per_coordinate": None,
            "k": int(self.k),
            "classes": int(counts.size),
            "smallest_class": int(counts.min()),
            "largest_class": int(counts.max()),
            "distortion_rms_per_coordinate": float(np.sqrt(np.mean((value - x) ** 2))),
        }
        return Release(value=value, guarantee=self.guarantee(), details=details)
