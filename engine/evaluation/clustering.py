"""Clustering accuracy on released data: the secure-release paper's experiment (its Table 1).

Two isotropic Gaussian blobs (centre distance 4, sd 1, so the Bayes accuracy is Φ(2) = 0.97725), k-means with two
clusters on the original data, on the projected data only, and on the element-wise and row-wise private releases
(ε = 4). Unspecified in the paper and therefore our explicit assumptions (digest §6–§8): N, t (row-wise: t_min,
the only choice consistent with the paper's orderings), k-means settings (k-means++ init, 10 restarts), and
accuracy = best label matching. Element-wise and row-wise releases of one repetition share the data, P and a
standard Laplace draw scaled by each calibration (common random numbers), so their comparison is paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans

from engine.mechanisms.jl_laplace import JLLaplace
from engine.progress import Progress, ProgressCallback
from engine.validation import check_integer, check_interval, check_real, check_rng


def clustering_accuracy(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """Share of points whose predicted cluster matches the true one under the best one-to-one label matching.

    >>> clustering_accuracy(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 1]))
    0.75
    """
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    classes = np.unique(labels_true)
    clusters = np.unique(labels_pred)
    counts = np.array([[np.sum((labels_true == a) & (labels_pred == b)) for b in clusters] for a in classes])
    rows, cols = linear_sum_assignment(-counts)
    return float(counts[rows, cols].sum() / labels_true.size)


def kmeans_accuracy(z: np.ndarray, labels: np.ndarray, *, n_clusters: int = 2, rng: np.random.Generator) -> float:
    """k-means (k-means++ init, 10 restarts) on ``z``, scored by :func:`clustering_accuracy`."""
    seed = int(rng.integers(0, 2**31 - 1))
    model = KMeans(n_clusters=n_clusters, n_init=10, random_state=seed)
    return clustering_accuracy(labels, model.fit_predict(z))


def make_two_blobs(n: int, d: int, *, rng: np.random.Generator, distance: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """Two isotropic unit-variance Gaussian blobs in d dimensions, centres 0 and (distance, 0, …, 0)."""
    n = check_integer("n", n, 4, None)
    d = check_integer("d", d, 1, None)
    distance = check_real("distance", distance)
    check_rng(rng)
    labels = rng.integers(0, 2, size=n)
    x = rng.normal(size=(n, d))
    x[:, 0] += distance * labels
    return x, labels


@dataclass(frozen=True)
class BlobExperimentResult:
    """Mean and sd over repetitions of the clustering accuracy for each release."""

    d: int
    k: int
    epsilon: float
    accuracies: dict[str, np.ndarray]

    def mean(self, name: str) -> float:
        return float(np.mean(self.accuracies[name]))

    def sd(self, name: str) -> float:
        return float(np.std(self.accuracies[name], ddof=1)) if self.accuracies[name].size > 1 else 0.0


def blob_experiment(
    d: int,
    k: int,
    *,
    n: int = 1000,
    epsilon: float = 4.0,
    repetitions: int = 20,
    rng: np.random.Generator,
    progress: ProgressCallback | None = None,
) -> BlobExperimentResult:
    """The paper's Table 1 experiment: accuracy of "none", "projection", "element" and "row" releases.

    Element-wise uses the paper's c = 2√k with change bound 1; row-wise uses α = 1 (b = 1) and t = t_min.
    """
    d = check_integer("d", d, 1, None)
    k = check_integer("k", k, 1, None)
    epsilon = check_interval("epsilon", epsilon, 0, None, closed="neither")
    repetitions = check_integer("repetitions", repetitions, 1, None)
    check_rng(rng)
    element = JLLaplace(k=k, epsilon=epsilon, d=d, relation="element")
    row = JLLaplace(k=k, epsilon=epsilon, d=d, relation="row", b=1.0)
    results: dict[str, list[float]] = {"none": [], "projection": [], "element": [], "row": []}
    for rep in range(repetitions):
        x, labels = make_two_blobs(n, d, rng=rng)
        p = rng.normal(0.0, 1.0 / np.sqrt(k), size=(d, k))
        y = x @ p
        noise = rng.laplace(0.0, 1.0, size=y.shape)
        results["none"].append(kmeans_accuracy(x, labels, rng=rng))
        results["projection"].append(kmeans_accuracy(y, labels, rng=rng))
        results["element"].append(kmeans_accuracy(y + element.laplace_scale * noise, labels, rng=rng))
        results["row"].append(kmeans_accuracy(y + row.laplace_scale * noise, labels, rng=rng))
        if progress is not None:
            progress(Progress(rep + 1, repetitions, f"blob experiment d={d}, k={k}"))
    return BlobExperimentResult(d, k, epsilon, {key: np.array(v) for key, v in results.items()})
