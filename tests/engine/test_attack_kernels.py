"""The attacks' fast paths give exactly the results of the code before issue 11 (frozen outputs), and the shared
nearest-neighbour kernel (:mod:`engine.attacks._neighbours`) equals the canonical brute force on inputs large
enough to take its pruned path.

The frozen values were recorded with the implementation of commit 0f1fddc (before the speed-ups), same seeds:
per cell the numbers of successful main and control guesses of attribute inference (so every success share,
risk and protection follows exactly), and the rows singled out per net size plus the chance risk.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.attacks import _l1, _neighbours
from engine.attacks._neighbours import canonical_nearest, nearest_on_column_sets, query_groups
from engine.attacks.attribute_inference import AttributeInferenceConfig, attribute_inference, holdout_split
from engine.attacks.singling_out import SinglingOutConfig, singling_out
from engine.errors import InvalidParameterError

#: key "seed,n,d,noise,config" → {"ai": main successes per cell then control successes per cell,
#: "so": rows singled out per net size, "chance": chance risk}, recorded at commit 0f1fddc.
FROZEN = {
    '0,3000,6,0.3,default': {"ai": [2, 3, 5, 3, 3, 4, 1, 8, 7, 4, 5, 3, 9, 12, 1, 4, 4, 14, 4, 5, 2, 4, 6, 4, 0, 7, 5, 2, 7, 4, 3, 6, 3, 2, 4, 12], "so": [1, 25, 51, 77, 81], "chance": 0.0356},
    '1,6000,12,1.0,default': {"ai": [1, 1, 0, 0, 3, 0, 1, 0, 0, 0, 2, 0, 0, 0, 10, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 3, 0, 1, 0, 2, 0, 0, 0, 11, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0], "so": [0, 0, 1, 5, 36], "chance": 0.0047272727272727275},
    '2,6000,12,0.05,paper': {"ai": [234, 241, 241, 251, 252, 236, 246, 237, 211, 242, 261, 256, 254, 256, 269, 236, 254, 261, 251, 250, 245, 249, 269, 240, 248, 248, 257, 254, 232, 241, 233, 241, 269, 233, 250, 264, 244, 248, 254, 239, 243, 200, 247, 253, 195, 249, 251, 259, 239, 233, 234, 267, 245, 253, 256, 272, 248, 255, 253, 237, 253, 226, 239, 253, 256, 248, 239, 257, 231, 247, 238, 268], "so": [0, 0, 20, 246, 743], "chance": 0.12581818181818183},
    '3,4000,9,3.0,default': {"ai": [1, 0, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], "so": [0, 0, 0, 5, 9], "chance": 0.002857142857142857},
    '4,800,5,0.2,paper': {"ai": [153, 156, 163, 129, 107, 154, 147, 152, 139, 140, 153, 146, 171, 135, 137, 256, 265, 243, 203, 177, 252, 256, 265, 219, 238, 240, 233, 271, 224, 238], "so": [0, 26, 36, 28, 28], "chance": 0.12666666666666668},
}

#: Demos (prepared as benchmarks/bench_attacks.py does; private projection B = 0.25, seed 3; holdout seed 2):
#: "name,release,attack seed" → attribute-inference counts; "name,release,so" → singling out (chance rng 9).
FROZEN_DEMOS = {
    'togo-demo,paper,4': {"ai": [324, 325, 500, 500, 323, 0, 189, 325, 324, 176, 296, 202, 365, 199, 350, 146, 291, 243, 244, 302, 322, 318, 276, 191, 334, 160, 331, 228, 395, 198, 359, 329, 500, 500, 318, 0, 173, 329, 359, 141, 310, 183, 360, 213, 347, 156, 284, 251, 280, 308, 313, 314, 278, 179, 320, 155, 341, 210, 382, 208]},
    'togo-demo,paper,5': {"ai": [295, 173, 320, 180, 295, 0, 312, 295, 324, 500, 192, 292, 328, 236, 296, 220, 249, 127, 346, 309, 328, 311, 274, 162, 313, 169, 314, 226, 364, 204, 318, 166, 326, 174, 318, 0, 334, 318, 359, 500, 184, 307, 345, 251, 301, 213, 238, 123, 358, 336, 311, 322, 278, 161, 320, 155, 328, 202, 382, 208]},
    'togo-demo,paper,so': {"so": [0, 0, 2, 12, 50], "chance": 0.01459065117535801},
    'togo-demo,unbiased,4': {"ai": [3, 5, 4, 6, 6, 1, 3, 3, 3, 5, 8, 8, 4, 2, 13, 3, 3, 6, 4, 6, 3, 11, 12, 7, 11, 1, 1, 9, 12, 5, 3, 4, 1, 5, 6, 4, 4, 6, 3, 5, 6, 13, 4, 5, 13, 7, 0, 3, 7, 12, 10, 9, 18, 7, 6, 1, 3, 5, 8, 10]},
    'togo-demo,unbiased,5': {"ai": [1, 4, 7, 3, 6, 3, 3, 6, 3, 4, 6, 4, 10, 9, 10, 2, 6, 4, 12, 8, 7, 13, 10, 4, 6, 1, 3, 7, 13, 5, 9, 7, 4, 5, 6, 4, 3, 2, 3, 8, 11, 3, 9, 9, 14, 5, 10, 8, 7, 7, 10, 9, 18, 7, 6, 1, 3, 5, 8, 10]},
    'togo-demo,unbiased,so': {"so": [0, 0, 2, 12, 50], "chance": 0.01459065117535801},
    'nigeria-demo,paper,4': {"ai": [0, 333, 333, 500, 500, 119, 334, 196, 1, 135, 384, 2, 0, 2, 320, 208, 302, 333, 209, 230, 224, 273, 238, 227, 322, 231, 289, 327, 277, 261, 234, 292, 288, 282, 301, 276, 229, 237, 218, 263, 267, 297, 261, 230, 268, 0, 323, 313, 500, 499, 119, 321, 205, 1, 148, 381, 1, 0, 1, 326, 207, 311, 308, 213, 236, 193, 270, 235, 224, 335, 233, 288, 314, 259, 268, 242, 290, 311, 278, 303, 279, 237, 242, 219, 293, 289, 294, 258, 214, 291]},
    'nigeria-demo,paper,5': {"ai": [316, 128, 499, 306, 356, 0, 0, 0, 0, 0, 326, 316, 0, 500, 144, 207, 304, 328, 249, 219, 249, 232, 147, 212, 253, 260, 343, 292, 192, 228, 240, 290, 286, 261, 302, 258, 236, 211, 206, 275, 286, 298, 281, 232, 292, 313, 119, 499, 320, 352, 3, 2, 0, 0, 0, 327, 313, 0, 500, 155, 202, 309, 310, 241, 202, 206, 246, 184, 197, 245, 278, 338, 278, 216, 199, 243, 279, 306, 257, 303, 265, 241, 248, 218, 297, 281, 291, 271, 216, 291]},
    'nigeria-demo,paper,so': {"so": [0, 0, 2, 6, 74], "chance": 0.00340102523659306},
    'nigeria-demo,unbiased,4': {"ai": [3, 2, 2, 3, 3, 2, 3, 3, 7, 4, 1, 2, 3, 4, 0, 3, 0, 12, 5, 0, 1, 0, 1, 0, 0, 6, 3, 0, 1, 0, 2, 0, 0, 5, 2, 0, 1, 3, 2, 0, 2, 1, 3, 2, 1, 3, 4, 2, 4, 5, 1, 3, 2, 1, 1, 6, 5, 1, 7, 7, 4, 1, 6, 4, 3, 1, 1, 2, 1, 3, 5, 0, 0, 4, 0, 3, 2, 1, 3, 6, 2, 2, 1, 3, 0, 1, 1, 1, 2, 2]},
    'nigeria-demo,unbiased,5': {"ai": [2, 4, 4, 4, 1, 5, 2, 4, 5, 1, 2, 5, 7, 4, 6, 8, 2, 2, 3, 6, 0, 0, 1, 1, 1, 2, 5, 4, 3, 4, 4, 0, 0, 3, 5, 0, 1, 8, 0, 1, 6, 0, 1, 2, 0, 4, 0, 5, 4, 1, 0, 2, 1, 3, 3, 4, 7, 1, 6, 6, 6, 6, 3, 5, 4, 0, 3, 0, 0, 1, 5, 8, 3, 6, 1, 3, 2, 1, 3, 6, 2, 2, 1, 3, 0, 1, 1, 1, 2, 2]},
    'nigeria-demo,unbiased,so': {"so": [0, 0, 2, 6, 74], "chance": 0.00340102523659306},
}


def _unit_ball(rng, n, d):
    x = rng.lognormal(size=(n, d)) * rng.choice([-1, 1], size=(n, d))
    x = (x - x.mean(0)) / x.std(0)
    return x / np.linalg.norm(x, axis=1).max()


def _counts(ai):
    return [round(c.main_success * ai.n_attacks) for c in ai.cells] + [
        round(c.control_success * ai.n_control) for c in ai.cells
    ]


@pytest.mark.parametrize("key", sorted(FROZEN))
def test_attacks_reproduce_the_frozen_outputs(key):
    seed, n, d, noise, cfg_name = key.split(",")
    seed, n, d, noise = int(seed), int(n), int(d), float(noise)
    rng = np.random.default_rng(seed)
    x = _unit_ball(rng, n, d)
    x[::7, 1] = 0.0  # exact ties on a column
    rel, hold = holdout_split(n, 500, rng=rng)
    scale = 0.5
    release = scale * (x[rel] + rng.normal(scale=noise, size=(len(rel), d)))
    paper = cfg_name == "paper"
    ai = attribute_inference(x[rel], release, x[hold], AttributeInferenceConfig.paper() if paper else None,
                             release_scale=scale, rng=rng)
    so = singling_out(x[rel], release, SinglingOutConfig.paper() if paper else None, release_scale=scale, rng=rng)
    assert _counts(ai) == FROZEN[key]["ai"]
    assert list(so.n_singled_out) == FROZEN[key]["so"]
    assert so.chance_risk == FROZEN[key]["chance"]  # a ratio of two integers: exact


def _demo_case(name):
    from engine.data.demos import load_demo
    from engine.data.preparation import prepare
    from engine.mechanisms.private_projection import PrivateProjection

    demo = load_demo(name)
    x = prepare(demo.frame, demo.spec).x
    rel, hold = holdout_split(len(x), 500, rng=np.random.default_rng(2))
    releases = {}
    for scale in ("paper", "unbiased"):
        mech = PrivateProjection(b=0.25, output_scale=scale, covariance="centred", epsilon1=3.0, delta1=0.00015,
                                 epsilon2=0.9999, delta2=0.00008, k=10_000)
        out = mech.release(x[rel], rng=np.random.default_rng(3))
        releases[scale] = (out.value, float(out.details["output_scale"]))
    return x[rel], x[hold], releases


@pytest.mark.slow
@pytest.mark.parametrize("name", ["togo-demo", "nigeria-demo"])
def test_demo_attacks_reproduce_the_frozen_outputs(name):
    x_rel, x_hold, releases = _demo_case(name)
    # nigeria: the knows-scale release only (the paper adversary's as-printed release takes ~10 s there).
    kinds = ("paper", "unbiased") if name == "togo-demo" else ("unbiased",)
    for kind in kinds:
        value, scale = releases[kind]
        config = AttributeInferenceConfig() if kind == "unbiased" else AttributeInferenceConfig.paper()
        for seed in (4, 5):
            ai = attribute_inference(x_rel, value, x_hold, config, release_scale=scale,
                                     rng=np.random.default_rng(seed))
            assert _counts(ai) == FROZEN_DEMOS[f"{name},{kind},{seed}"]["ai"]
        so = singling_out(x_rel, value, release_scale=scale, rng=np.random.default_rng(9))
        assert list(so.n_singled_out) == FROZEN_DEMOS[f"{name},{kind},so"]["so"]
        assert so.chance_risk == FROZEN_DEMOS[f"{name},{kind},so"]["chance"]


# ------------------------------------------------------------------------------------ the kernel's pruned path
def _rows_and_queries(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 11))
    kind = seed % 4
    if kind == 3:  # integer lattice: exact ties everywhere and duplicate rows
        rows = rng.integers(-3, 4, size=(2500, d)).astype(float)
        queries = rng.integers(-3, 4, size=(300, d)).astype(float)
    else:
        x = _unit_ball(rng, 2800, d)
        noise = (0.0, 0.05, 2.0)[kind]  # the data itself, a mild and a very noisy release
        rows = x[:2500] + rng.normal(scale=noise, size=(2500, d)) if noise else x[:2500].copy()
        queries = np.vstack([x[2300:2450], x[2500:2650]])  # half of them are released rows
        rows[::5, 0] = 0.0  # ties on one column
        rows[7] = rows[3]  # a duplicate row
    return rng, rows, queries


#: Scan choices of the bounded search: its cost model, or always the joint / the separate scans.
SCANS = {"model": None, "joint": {"separate": 1e9, "all-but-one": 1e9, "joint": 0.0, "joint all-but-one": 0.0},
         "separate": {"separate": 0.0, "all-but-one": 0.0, "joint": 1e9, "joint all-but-one": 1e9}}


@pytest.mark.parametrize("scan", sorted(SCANS))
@pytest.mark.parametrize("group_size", [64, None])  # several query groups, and the default (one group here)
@pytest.mark.parametrize("seed", range(8))
def test_pruned_search_equals_the_canonical_brute_force(seed, group_size, scan, monkeypatch):
    if group_size is not None:
        monkeypatch.setattr(_neighbours, "_GROUP_SIZE", group_size)
    if SCANS[scan] is not None:
        monkeypatch.setattr(_neighbours, "_COSTS", SCANS[scan])
    chosen = []
    original = _l1.joint_nearest
    monkeypatch.setattr(_l1, "joint_nearest", lambda *a: chosen.append(1) or original(*a))
    rng, rows, queries = _rows_and_queries(seed)
    d = rows.shape[1]
    assert rows.shape[0] * queries.shape[0] > _neighbours._SCAN_PAIRS  # the bounded path is the one tested
    sets = [np.sort(rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False)) for _ in range(4)]
    sets += [np.delete(np.arange(d), int(j)) for j in rng.choice(d, size=2, replace=False)]
    sets.append(np.array([int(rng.integers(d))]))
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))
    if scan != "model":
        assert bool(chosen) == (scan == "joint")


@pytest.mark.parametrize("noise", [1e-4, 0.5])
def test_a_release_inside_the_targets_box_is_scanned_unbounded_with_the_same_answers(noise, monkeypatch):
    """When most released rows lie inside the first query group's box (little noise) their bounds are all 0 and
    bounding cannot pay: every target is scanned unbounded at once. With much noise most rows lie outside and the
    bounded path runs. The answers are the brute force's either way."""
    rng = np.random.default_rng(7)
    x = _unit_ball(rng, 3000, 6)
    rows = x[:2600] + rng.normal(scale=noise, size=(2600, 6))
    queries = x[2400:]  # 200 released rows' originals and 400 others: the box of the targets holds the data
    sets = [np.array([0, 2, 5]), np.array([1, 2, 3, 4]), np.array([0, 1, 2, 3, 4])]
    unbounded = []
    original = _neighbours._unbounded
    monkeypatch.setattr(_neighbours, "_unbounded", lambda r, q, subset, *a: unbounded.append(subset.size)
                        or original(r, q, subset, *a))
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))
    assert unbounded == ([queries.shape[0]] if noise < 0.01 else [])


def test_box_gaps_are_numpys_and_count_the_rows_inside():
    rng = np.random.default_rng(3)
    rows_t = np.round(rng.normal(size=(7, 900)), 1)  # values on the box's edges too
    lo, hi = np.full(7, -0.5), np.full(7, 0.7)
    lo[2] = hi[2] = 0.1
    gaps, inside = _l1.box_gaps(rows_t, lo, hi)
    expected = np.maximum(np.maximum(lo[:, None] - rows_t, rows_t - hi[:, None]), 0.0).astype(np.float32)
    np.testing.assert_array_equal(gaps, expected)
    assert gaps.dtype == np.float32 and inside == int(np.count_nonzero((expected == 0).all(axis=0))) > 0


def test_seed_rows_are_rows_with_the_smallest_bounds():
    rng = np.random.default_rng(4)
    for zeros in (0, 10, 64, 500):
        bound = rng.uniform(0.5, 2.0, size=3000).astype(np.float32)
        bound[rng.choice(3000, size=zeros, replace=False)] = 0.0
        seeds = _neighbours._seed_rows(bound)
        assert seeds.size == np.unique(seeds).size == _neighbours._SEED_ROWS
        assert bound[seeds].max() <= np.sort(bound)[_neighbours._SEED_ROWS - 1]


@pytest.mark.parametrize("seed", range(40))
def test_shared_pairs_plans_add_up_to_their_sets(seed):
    """Every set's plan, with each shared pair expanded into its two terms, adds exactly the set's columns once each;
    every pair is used; the plan never needs more additions than the sets themselves."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 40))
    sets = [sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
            for _ in range(int(rng.integers(1, 40)))]
    pairs, plan = _l1.shared_pairs(sets, d)

    def expand(term):
        return [term] if term < d else expand(int(pairs[term - d, 0])) + expand(int(pairs[term - d, 1]))

    for terms, columns in zip(plan, sets, strict=True):
        assert sorted(c for term in terms for c in expand(term)) == columns
    uses = np.zeros(len(pairs), dtype=int)
    for terms in plan:
        for term in terms:
            if term >= d:
                uses[term - d] += 1
    for p, (a, b) in enumerate(pairs.tolist()):
        for term in (a, b):
            if term >= d:
                uses[term - d] += 1
        assert a != b and max(a, b) < d + p  # built from earlier terms only
    assert np.all(uses >= 1)  # by a set or by a later pair
    assert sum(len(t) - 1 for t in plan) + len(pairs) <= sum(len(c) - 1 for c in sets)


def _joint_scan_is_canonical(rows, queries, sets):
    """The joint scan's rows for every set and every all-but-one set, asserted equal to the canonical brute force's."""
    per_set, every = _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, True)
    for known, found in zip(sets, per_set, strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))
    for j in range(rows.shape[1]):
        np.testing.assert_array_equal(every[:, j], canonical_nearest(rows, queries, np.delete(np.arange(rows.shape[1]), j)))
    return per_set, every


@pytest.mark.parametrize("seed", range(8))
def test_joint_scan_equals_the_canonical_brute_force(seed):
    """The joint scan (:func:`engine.attacks._l1.joint_nearest`) returns the canonical brute force's rows for every
    set and for every all-but-one set: on coarse grids with ties and duplicates, on a tight cloud at any magnitude,
    at 10³¹ (the 16-bit grid follows the spread, not the size), with tiles and query batches cut mid-way, and on a
    candidate subset holding the answers."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 12))
    n = int(rng.integers(2, 1500))
    kind = seed % 4
    if kind == 0:  # 0.1 steps: ties and sums that round differently by order
        rows = np.round(rng.normal(size=(n, d)), 1) * 0.1
        rows[rng.integers(0, n, size=n // 4)] = rows[0]
        queries = np.vstack([rows[: min(n, 40)], np.round(rng.normal(size=(90, d)), 1) * 0.1])
    elif kind == 1:  # a tight cloud at any magnitude
        base = rng.normal(size=(1, d)) * 10.0 ** rng.uniform(-3, 3)
        rows = base + np.abs(base) * 10.0 ** rng.uniform(-12, -5, size=(n, 1)) * rng.normal(size=(n, d))
        queries = base + np.abs(base) * 1e-6 * rng.normal(size=(70, d))
    elif kind == 2:  # huge values, ties
        rows = np.round(rng.normal(size=(n, d)), 1) * 1e31
        queries = np.vstack([rows[:10], np.round(rng.normal(size=(20, d)), 1) * 1e31])
    else:  # a noisy release of unit-ball data, half the queries released rows
        x = _unit_ball(rng, n + 100, d)
        rows = x[:n] + rng.normal(scale=0.05, size=(n, d))
        queries = np.vstack([rows[: min(n, 100)], x[n:]])
    sets = [np.sort(rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False)) for _ in range(12)]
    per_set, every = _joint_scan_is_canonical(rows, queries, sets)
    # On candidates holding every answer: the same rows; without the all-but-one part: the same per-set rows.
    subset = np.union1d(np.concatenate(per_set + [every.ravel()]), rng.choice(n, size=n // 3, replace=False))
    again, every_again = _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, True, subset)
    alone, nothing = _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, False)
    assert nothing is None
    for a, b, c in zip(per_set, again, alone, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(every, every_again)


@pytest.mark.parametrize("seed", range(6))
def test_the_16_bit_grid_is_within_one_unit_per_term_and_its_sums_fit(seed):
    """:func:`engine.attacks._l1.quantized_copies`: every integer term |t_q − v_q| is within 1 + 10⁻⁹ of λ|t − v| (the
    bound the joint scan's margins rest on), at any offset and spread, and a sum of d terms stays below 2¹⁶."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 40))
    offset = 10.0 ** rng.uniform(-3, 12) * rng.choice([-1.0, 1.0])
    spread = 10.0 ** rng.uniform(-9, 3, size=d)
    rows = offset + spread * rng.normal(size=(300, d))
    queries = offset + spread * rng.normal(size=(40, d))
    block_q, queries_q, lam, _ = _l1.quantized_copies(np.ascontiguousarray(rows.T), queries)
    assert block_q.dtype == queries_q.dtype == np.uint16 and lam > 0
    assert int(block_q.max()) * d <= 65535 and int(queries_q.max()) * d <= 65535
    terms_q = np.abs(queries_q.astype(np.int64)[:, None, :] - block_q.T.astype(np.int64)[None, :, :])
    exact = lam * np.abs(queries[:, None, :] - rows[None, :, :])
    # exact is itself rounded (relative 2⁻⁵² of at most 65,535 grid units): a margin of 10⁻⁹ covers it
    assert np.max(np.abs(terms_q - exact)) <= 1.0 + 1e-9
    assert _l1.quantized_copies(np.array([[1.0, np.inf]]), np.array([[0.0]])) is None
    constant_q, _, constant_lam, _ = _l1.quantized_copies(np.ones((3, 5)), np.ones((2, 3)))
    assert constant_lam == 0.0 and not constant_q.any()


@pytest.mark.parametrize("seed", range(4))
def test_joint_scan_keeps_the_canonical_rows_when_the_16_bit_grid_cannot_tell_them_apart(seed):
    """Rows nearer to each other than one unit of the 16-bit grid (a tight cluster around the queries, far outliers
    setting the grid's spread) have equal integer sums: the margin must keep all of them, and the canonical float64
    sums decide: the brute force's rows, the lowest index on exact ties; also with 40 columns (a coarser grid)."""
    rng = np.random.default_rng(seed)
    d = (6, 40)[seed % 2]
    n = 900
    rows = 1e-7 * rng.normal(size=(n, d))
    rows[rng.integers(0, n, size=60)] = rows[11]  # exact duplicates
    rows[:5] = 1e3 * rng.normal(size=(5, d))  # outliers: one grid unit is about 10⁻¹ · 65535⁻¹ · d wide
    queries = np.vstack([1e-7 * rng.normal(size=(50, d)), rows[[11, 20, 30]]])
    sets = [np.sort(rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False)) for _ in range(6)]
    _joint_scan_is_canonical(rows, queries, sets)


@pytest.mark.parametrize("seed", range(6))
def test_queries_equal_to_rows_get_the_lowest_row_equal_on_each_set(seed):
    """The data themselves as the release (the non-private reference): a target equal to a row is answered by
    sorting (:func:`engine.attacks._neighbours._at_distance_zero`) with the LOWEST row equal to it on the known
    columns — here often another row, as the columns take few values — and the search's answer for every other
    target; a column of few values in every set leaves its targets to the search. All as the canonical brute force."""
    rng = np.random.default_rng(seed)
    n, d = 2000, int(rng.integers(3, 9))
    rows = rng.normal(size=(n, d))
    levels = int(rng.integers(2, 40))
    rows[:, : d // 2] = rng.integers(0, levels, size=(n, d // 2))  # columns of few values: rows equal on them
    rows[rng.integers(0, n, size=50)] = rows[rng.integers(0, n, size=50)]  # repeated rows
    queries = np.vstack([rows[rng.choice(n, size=300, replace=False)], rng.normal(size=(100, d))])
    sets = [np.array([0]), np.arange(d // 2), np.delete(np.arange(d), 0), np.array([0, d - 1])]
    sets += [np.sort(rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False)) for _ in range(3)]
    settled, answers = _neighbours._at_distance_zero(rows, queries, sets)
    assert 0 < settled.size <= 300 and settled.max() < 300  # released rows only
    for i, known in enumerate(sets):
        np.testing.assert_array_equal(answers[i], canonical_nearest(rows, queries[settled], known))
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))


@pytest.mark.parametrize("n", [1, 255, 256, 257, 300, 511, 513])
def test_joint_scan_pads_its_last_tile_with_rows_that_are_never_nearest(n):
    """The joint scan reads whole tiles (``_JOINT_TILE`` rows), the last one padded. Queries at the grid's lowest
    corner are where padding rows of zeros would have the smallest sums and hide the real nearest rows (the tile's
    smallest sum sets every set's threshold): the padding gets the largest terms instead, and the answers are the
    brute force's for every row count around the tile's size."""
    assert _l1._JOINT_TILE == 256
    rng = np.random.default_rng(n)
    d = 5
    rows = rng.uniform(1.0, 2.0, size=(n, d))
    corner = np.vstack([rows.min(axis=0), rows.min(axis=0) - 0.5, rng.uniform(1.0, 2.0, size=(20, d))])
    _joint_scan_is_canonical(rows, corner, [np.array([0, 1]), np.array([1, 2, 4]), np.array([0, 2, 3, 4])])


def test_joint_scan_refuses_bad_column_sets():
    rows = np.zeros((5, 3))
    for sets in ([np.array([0])], [np.array([2, 1])], [np.array([0, 3])], [np.array([1, 1])]):
        with pytest.raises(InvalidParameterError, match="ascending column sets"):
            _l1.joint_nearest(rows, rows, sets, 1e-9, False)
    with pytest.raises(InvalidParameterError, match="queries must have"):
        _l1.joint_nearest(rows, rows[:, :2], [np.array([0, 1])], 1e-9, False)


def test_pruned_search_resolves_a_tie_across_query_groups_to_the_lowest_row(monkeypatch):
    # Two identical rows far apart in index, both nearest to every query of one group: the lower index wins.
    monkeypatch.setattr(_neighbours, "_GROUP_SIZE", 64)  # several groups
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(3000, 5)) * 5.0
    queries = rng.normal(size=(200, 5)) * 0.01
    rows[2900] = 0.0
    rows[17] = 0.0
    found = nearest_on_column_sets(rows, queries, [np.arange(5), np.array([1, 3])])
    assert set(found[0].tolist()) == {17}
    np.testing.assert_array_equal(found[1], canonical_nearest(rows, queries, np.array([1, 3])))


def test_query_groups_partition_the_queries():
    queries = np.random.default_rng(0).normal(size=(1000, 6))
    groups = query_groups(queries, size=64)
    assert max(g.size for g in groups) <= 64
    assert sorted(np.concatenate(groups).tolist()) == list(range(1000))


@pytest.mark.parametrize("fraction", [0.0, 1.0])
@pytest.mark.parametrize("seed", [0, 2, 3])
def test_bounded_and_unbounded_scans_give_the_canonical_rows(seed, fraction, monkeypatch):
    # fraction 0: every group after the first is scanned unbounded; 1: every group is bounded.
    monkeypatch.setattr(_neighbours, "_PRUNE_FRACTION", fraction)
    monkeypatch.setattr(_neighbours, "_GROUP_SIZE", 64)  # several groups
    calls = []
    original = _neighbours._unbounded
    monkeypatch.setattr(_neighbours, "_unbounded", lambda *a: calls.append(1) or original(*a))
    rng, rows, queries = _rows_and_queries(seed)
    d = rows.shape[1]
    sets = [np.sort(rng.choice(d, size=3, replace=False))] + [np.delete(np.arange(d), j) for j in range(d)]
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))
    assert len(calls) == (1 if fraction == 0.0 else 0)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("index", ["own", "scaled", "unfiltered"])
def test_chebyshev_two_nearest_equals_a_kd_tree(seed, index, monkeypatch):
    """The compiled column scan returns the k-d tree's L∞ distances, and its nearest row wherever that is unique:
    with its own index, with the index of the rows before a positive column scale (as the singling-out attack
    passes it), and without the byte filter (data beyond ``CODES_LIMIT``)."""
    from scipy.spatial import cKDTree

    from engine.attacks import _chebyshev
    from engine.attacks._chebyshev import ColumnIndex, two_nearest_chebyshev

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 400)), int(rng.integers(1, 8))
    raw = np.round(rng.normal(size=(n, d)), 1 + seed % 3)  # coarse grids: duplicates and exact ties
    scale = rng.uniform(0.1, 3.0, size=d) if index == "scaled" else np.ones(d)
    rows = raw / scale
    centres = np.vstack([rows[: n // 2], rows[: n // 3] + rng.normal(scale=0.3, size=(n // 3, d)),
                         rng.normal(scale=2.0, size=(50, d))])
    reach = float(rng.uniform(0.05, 1.5))
    if index == "unfiltered":
        monkeypatch.setattr(_chebyshev, "CODES_LIMIT", 0)
    built = ColumnIndex.build(raw) if index == "scaled" else None
    assert (ColumnIndex.build(raw).filtered, index) != (True, "unfiltered")
    dist, found = two_nearest_chebyshev(rows, centres, reach, built, scale if index == "scaled" else None)
    k = min(2, n)
    tree_dist, tree_index = cKDTree(rows).query(centres, k=2, p=np.inf)
    tree_dist = np.where(tree_dist.reshape(-1, 2) <= reach, tree_dist.reshape(-1, 2), np.inf)
    np.testing.assert_array_equal(dist[:, :k], tree_dist[:, :k])
    assert np.all(np.isinf(dist[:, k:]))
    unique = np.isfinite(dist[:, 0]) & (dist[:, 0] < dist[:, 1])
    np.testing.assert_array_equal(found[unique, 0], tree_index.reshape(-1, 2)[unique, 0])
    np.testing.assert_array_equal(found[~np.isfinite(dist)], n)


@pytest.mark.parametrize("seed", range(3))
def test_chebyshev_windows_from_the_table_brackets_equal_a_kd_tree(seed):
    """On thousands of skewed rows (most of them in a few of the position table's buckets) under a column scale, with
    centres near the data and far from it in one column only: the windows chosen from the table's brackets (bounds on
    each column's count, bucket bounds wider than the exact ones) give the k-d tree's distances and unique nearest
    rows."""
    from scipy.spatial import cKDTree

    from engine.attacks._chebyshev import ColumnIndex, two_nearest_chebyshev

    rng = np.random.default_rng(seed)
    n, d = 6000, 6
    raw = rng.lognormal(sigma=1.5, size=(n, d)) * rng.choice([-1.0, 1.0], size=(n, d))
    raw[rng.integers(0, n, size=300)] = raw[rng.integers(0, n, size=300)]  # exact duplicates
    scale = rng.uniform(0.1, 3.0, size=d)
    rows = raw / scale
    centres = rows[rng.integers(0, n, size=1500)] + rng.normal(scale=0.3, size=(1500, d))
    centres[::3, rng.integers(0, d)] += 50.0  # beyond every row in one column: an empty window there
    reach = float(rng.uniform(0.2, 1.0))
    dist, found = two_nearest_chebyshev(rows, centres, reach, ColumnIndex.build(raw), scale)
    tree_dist, tree_index = cKDTree(rows).query(centres, k=2, p=np.inf)
    np.testing.assert_array_equal(dist, np.where(tree_dist <= reach, tree_dist, np.inf))
    unique = np.isfinite(dist[:, 0]) & (dist[:, 0] < dist[:, 1])
    assert unique.sum() > 100
    np.testing.assert_array_equal(found[unique, 0], tree_index[unique, 0])


def test_chebyshev_byte_filter_keeps_every_row_at_the_radius():
    """Rows exactly at the radius in one column, and one ulp beyond, straddle a bucket boundary: the filter keeps the
    first (it is within reach) and the distance decides the second — as the brute force."""
    from engine.attacks._chebyshev import ColumnIndex, two_nearest_chebyshev

    rng = np.random.default_rng(3)
    rows = rng.uniform(-1.0, 1.0, size=(2000, 3))
    centre = np.array([0.1, -0.2, 0.3])
    reach = 0.25
    rows[0] = centre + np.array([reach, 0.0, 0.0])  # exactly at the radius in column 0
    rows[1] = centre + np.array([0.0, np.nextafter(reach, 1.0), 0.0])  # one ulp beyond in column 1
    rows[2:] = np.where(np.abs(rows[2:] - centre).max(axis=1, keepdims=True) <= 0.5, rows[2:] + 5.0, rows[2:])
    dist, found = two_nearest_chebyshev(rows, centre[None, :], reach, ColumnIndex.build(rows))
    brute = np.abs(rows - centre).max(axis=1)
    inside = np.flatnonzero(brute <= reach)
    assert inside.tolist() == [0]
    assert found[0].tolist() == [0, rows.shape[0]] and dist[0, 0] == brute[0] and np.isinf(dist[0, 1])


@pytest.mark.parametrize("seed", range(6))
def test_bracketed_search_is_numpys_searchsorted(seed):
    """The singling-out windows' binary search narrowed by the index's position table
    (:func:`engine.attacks._chebyshev._bracketed_search`) gives ``np.searchsorted``'s position on the scaled column for
    every target: inside and outside the range, on exact values and one ulp beside them, with repeated values, a
    skewed column (most rows in a few of the table's buckets), a constant column, and a scale whose rounding moves
    values across the table's bucket edges."""
    from engine.attacks._chebyshev import ColumnIndex, _bracketed_search

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    x = np.column_stack([
        np.round(rng.normal(size=n), int(rng.integers(0, 3))),  # repeated values
        rng.lognormal(sigma=3.0, size=n),  # skewed
        np.full(n, 2.5),  # constant
        rng.uniform(-1e-300, 1e-300, size=n) if seed % 2 else rng.normal(size=n) * 1e12,
    ])
    index = ColumnIndex.build(x)
    scale = np.array([10.0 ** rng.uniform(-3, 3) for _ in range(4)])
    scaled = index.sorted_values / scale[:, None]
    for j in range(4):
        values = np.ascontiguousarray(scaled[j])
        picks = values[rng.integers(0, n, size=200)]
        targets = np.concatenate([picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf),
                                  [values[0] - 1.0, values[-1] + 1.0, -np.inf, np.inf, 0.0],
                                  rng.uniform(values[0] - 1, values[-1] + 1, size=100)])
        for target in targets:
            for right in (False, True):
                expected = np.searchsorted(values, target, "right" if right else "left")
                found = _bracketed_search(values, index.tables[j], index.origins[j], index.inv_widths[j], scale[j],
                                          float(target), right)
                assert found == expected, (j, target, right)


def test_column_index_refuses_other_rows():
    from engine.attacks._chebyshev import ColumnIndex, two_nearest_chebyshev
    from engine.attacks.singling_out import singling_out
    from engine.errors import InvalidParameterError

    x = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(InvalidParameterError, match="index covers"):
        two_nearest_chebyshev(x, x[:2], 1.0, ColumnIndex.build(x[:40]))
    with pytest.raises(InvalidParameterError, match="centres must have as many columns"):
        two_nearest_chebyshev(x, x[:2, :2], 1.0)
    with pytest.raises(InvalidParameterError, match="ColumnIndex.build"):
        singling_out(x, x, index=ColumnIndex.build(x[:, :2]))
    with pytest.raises(InvalidParameterError, match="must be a matrix"):
        ColumnIndex.build(np.zeros(3))


def test_search_over_repeated_rows_returns_the_lowest_index_of_the_canonical_nearest():
    """A release that repeats rows (k-anonymity's group values) searches each distinct row once; the answer is still
    the canonical brute force's (the lowest row index among equally near rows), on the pruned path too."""
    rng = np.random.default_rng(21)
    groups = rng.normal(size=(150, 6))
    rows = groups[rng.integers(0, 150, size=3000)]  # every row repeated ~20 times, in random order
    queries = np.vstack([rows[:40], rng.normal(size=(260, 6))])
    sets = [np.array([0]), np.array([1, 4]), np.array([0, 2, 3, 5]), np.array([0, 1, 2, 3, 4]),
            np.array([1, 2, 3, 4, 5])]
    for found, known in zip(nearest_on_column_sets(rows, queries, sets), sets, strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_l1_scans_equal_the_canonical_brute_force_on_ties(seed):
    """The compiled scans (:mod:`engine.attacks._l1`) sum the canonical way themselves: on coarse grids (many rows
    at exactly the same distance, duplicates, sums whose rounding depends on the order) they return the canonical
    brute force's rows, lowest index on ties, with and without a candidate subset."""
    from engine.attacks._l1 import all_but_one_nearest, scan_nearest

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 600)), int(rng.integers(3, 9))
    rows = np.round(rng.normal(size=(n, d)), seed % 3) * 0.1  # 0.1 steps: sums that round differently by order
    rows[rng.integers(0, n, size=n // 4)] = rows[0]  # duplicates of one row, at random places
    queries = np.vstack([rows[: min(n, 40)], np.round(rng.normal(size=(60, d)), 1) * 0.1])
    every = all_but_one_nearest(rows, queries, _neighbours.SLACK)
    for j in range(d):
        known = np.delete(np.arange(d), j)
        canonical = canonical_nearest(rows, queries, known)
        np.testing.assert_array_equal(every[:, j], canonical)
        np.testing.assert_array_equal(scan_nearest(rows, queries, known), canonical)
    # Restricted to candidates that contain every canonical answer: the same rows.
    known = np.sort(rng.choice(d, size=2, replace=False))
    canonical = canonical_nearest(rows, queries, known)
    candidates = np.union1d(canonical, rng.choice(n, size=n // 2, replace=False))
    np.testing.assert_array_equal(scan_nearest(rows, queries, known, candidates), canonical)
    # The all-but-one scan on a subset holding every secret column's canonical rows (the joint per-group path).
    subset = np.union1d(every.ravel(), rng.choice(n, size=n // 3, replace=False))
    np.testing.assert_array_equal(all_but_one_nearest(rows, queries, _neighbours.SLACK, subset), every)


@pytest.mark.parametrize("seed", range(4))
def test_integer_first_passes_keep_the_canonical_rows_when_the_grid_cannot_tell_them_apart(seed):
    """The 16-bit first pass of the scans (:func:`engine.attacks._l1.quantized_copies`) cannot separate distances
    that differ by less than one grid unit: a tight cloud (rows 10⁻¹² … 10⁻⁵ of their size apart) next to a few far
    rows that set the grid's spread, so that most integer sums are equal. The float64 canonical sums of the survivors
    must still decide: the same rows as the brute force, the lowest index on exact ties, at any magnitude; with a
    spread beyond float64 the float64-only scans give them too."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 12))
    scale = 10.0 ** rng.uniform(-3, 3)
    base = rng.normal(size=(1, d)) * scale
    eps = scale * 10.0 ** rng.uniform(-12, -5, size=(400, 1))
    rows = base + eps * rng.normal(size=(400, d))  # a tight cloud
    rows[rng.integers(0, 400, size=40)] = rows[7]  # exact duplicates, at random places
    rows[:3] = base + scale * rng.normal(size=(3, d))  # far rows: the grid's unit is wider than the cloud
    queries = base + scale * 1e-6 * rng.normal(size=(30, d))
    # Beyond float64's spread (two rows near ±10³⁰⁸ in one column): not on the grid, the float64-only kernels.
    wide, wide_queries = rows.copy(), queries.copy()
    wide[0, 0], wide[1, 0] = -1e308, 1e308
    assert _l1.quantized_copies(np.ascontiguousarray(wide.T), wide_queries) is None
    for current, q in ((rows, queries), (rows * 1e31 / scale, queries * 1e31 / scale), (wide, wide_queries)):
        every = _l1.all_but_one_nearest(current, q, _neighbours.SLACK)
        for j in range(d):
            known = np.delete(np.arange(d), j)
            canonical = canonical_nearest(current, q, known)
            np.testing.assert_array_equal(_l1.scan_nearest(current, q, known), canonical)
            np.testing.assert_array_equal(every[:, j], canonical)
    # The bound itself: each integer sum of these rows is within d·(1 + 10⁻⁹) grid units of λ times the float64 sum.
    block_q, queries_q, lam, _ = _l1.quantized_copies(np.ascontiguousarray(rows.T), queries)
    exact = lam * np.abs(queries[:, None, :] - rows[None, :, :]).sum(axis=2)
    integer = np.abs(queries_q.astype(np.int64)[:, None, :] - block_q.T.astype(np.int64)[None, :, :]).sum(axis=2)
    assert np.max(np.abs(integer - exact)) <= d * (1.0 + 1e-9)
    assert np.count_nonzero(integer == integer.min(axis=1, keepdims=True)) > 10 * queries.shape[0]  # many ties


def test_scans_off_the_grid_overflowing_subnormal_and_empty_inputs_stay_canonical():
    """Edge cases of the float64-only path and of the grid (found by a review's fuzzing): terms that overflow to inf
    (values near ±10³⁰⁸) must not drop the nearest row from the all-but-one survivors (inf − inf is NaN); a spread of
    a few subnormals would make λ infinite and goes to the float64 path, without a floating-point warning (the suite
    makes warnings errors); no queries give empty answers."""
    rows = np.array([[-1e308, 5.0, 5.0], [-1e308, 0.0, 0.0]])
    queries = np.array([[1e308, 0.0, 0.0]])
    with np.errstate(over="ignore"):  # the reference's own differences overflow to inf
        expected = [int(canonical_nearest(rows, queries, np.delete(np.arange(3), j))[0]) for j in range(3)]
    assert expected == [1, 0, 0]
    assert _l1.all_but_one_nearest(rows, queries, _neighbours.SLACK).tolist() == [expected]
    per_set, every = _l1.joint_nearest(rows, queries, [np.array([1, 2])], _neighbours.SLACK, True)
    assert every.tolist() == [expected] and per_set[0].tolist() == [1]
    tiny = np.array([[0.0, 0.0], [5e-324, 0.0], [0.0, 1e-323]])
    assert _l1.quantized_copies(np.ascontiguousarray(tiny.T), tiny[:1]) is None
    target = np.array([[5e-324, 1e-323]])
    assert _l1.scan_nearest(tiny, target, np.array([0, 1])).tolist() == canonical_nearest(tiny, target, np.array([0, 1])).tolist()
    per_set, every = _l1.joint_nearest(tiny, np.empty((0, 2)), [np.array([0, 1])], _neighbours.SLACK, True)
    assert per_set[0].shape == (0,) and every.shape == (0, 2)


def test_a_column_far_from_zero_keeps_the_grid_fine_and_the_rows_canonical():
    """A column offset far from 0 (an income in units next to ratios): the grid starts at each column's smallest
    value, so its unit follows the largest spread (about 7 sd), not the offset of 10⁶, and the rows are still the
    brute force's."""
    from engine.attacks import _l1

    rng = np.random.default_rng(5)
    rows, queries = rng.normal(size=(2000, 6)), rng.normal(size=(40, 6))
    rows[:, 2] += 1e6
    queries[:, 2] += 1e6
    _, _, lam, _ = _l1.quantized_copies(np.ascontiguousarray(rows.T), queries)
    assert lam > (65535 // 6) / 10.0  # one grid unit is under a thousandth of a column sd, not 10⁶ / 10⁴
    every = _l1.all_but_one_nearest(rows, queries, _neighbours.SLACK)
    for j in range(6):
        known = np.delete(np.arange(6), j)
        canonical = canonical_nearest(rows, queries, known)
        np.testing.assert_array_equal(every[:, j], canonical)
        np.testing.assert_array_equal(_l1.scan_nearest(rows, queries, known), canonical)


def test_the_precompiled_kernels_are_the_ones_the_attacks_run():
    """``python -m engine.attacks.precompile`` (run by scripts/studio.sh) compiles each kernel for the argument types
    the attacks pass: after it, real attacks on a narrow and on a wide table (16-bit and 32-bit grids) add no
    compiled signature (one more would mean the attacks compile again at their first use in every new process);
    the integer scans hold one signature per grid, the others one."""
    from engine.attacks import _chebyshev, _l1
    from engine.attacks.precompile import compile_kernels

    compile_kernels()
    kernels = (_l1._scan, _l1._all_but_one, _l1._joint, _l1._joint_blocks, _l1._scan64, _l1._all_but_one64,
               _l1._largest_nearest, _l1._largest_nearest_without_each, _chebyshev._two_nearest)
    compiled = {kernel: list(kernel.signatures) for kernel in kernels}
    rng = np.random.default_rng(4)
    for d in (6, _l1.NARROW_COLUMNS + 4):
        x = _unit_ball(rng, 3000, d)
        released = x[:2500] + rng.normal(scale=0.05, size=(2500, d))
        attribute_inference(x[:2500], released, x[2500:], rng=rng)
        singling_out(x[:2500], released, SinglingOutConfig(), release_scale=1.0)
    for kernel in kernels:
        assert list(kernel.signatures) == compiled[kernel], (kernel, kernel.signatures)
        grids = 2 if kernel in (_l1._scan, _l1._all_but_one) else 1
        assert len(kernel.signatures) == grids, (kernel, kernel.signatures)


def test_compiled_scans_refuse_an_empty_candidate_set():
    from engine.attacks._l1 import all_but_one_nearest, scan_nearest
    from engine.errors import InvalidParameterError

    rows, queries = np.zeros((3, 3)), np.zeros((1, 3))
    with pytest.raises(InvalidParameterError, match="at least one candidate"):
        scan_nearest(rows, queries, np.array([0, 1]), np.array([], dtype=np.intp))
    with pytest.raises(InvalidParameterError, match="at least one candidate"):
        all_but_one_nearest(rows, queries, 1e-9, np.array([], dtype=np.intp))


@pytest.mark.parametrize("seed", range(3))
def test_tiled_scan_finds_ties_and_near_ties_across_tiles(seed):
    """The integer pass works in tiles of ``_l1._TILE`` rows and the survivors' pass skips tiles: exact copies of a
    query's nearest row, and rows a relative 1e-12 nearer, placed in later tiles, still give the canonical row (the
    smallest float64 sum, the lowest index on a tie)."""
    rng = np.random.default_rng(seed)
    n, d = 5 * _l1._TILE + 17, 6
    rows = rng.normal(size=(n, d))
    queries = rng.normal(size=(40, d))
    known = np.array([0, 2, 3, 5])
    nearest = canonical_nearest(rows, queries, known)
    for q, r in enumerate(nearest[:20]):  # an exact copy of the nearest row, in a later tile
        rows[(r + (q % 4 + 1) * _l1._TILE) % n] = rows[r]
    for q, r in enumerate(nearest[20:], start=20):  # a row nearer by a relative 1e-12, in another tile
        target = (r + 2 * _l1._TILE + q) % n
        rows[target] = rows[r] + (queries[q] - rows[r]) * 1e-12
    np.testing.assert_array_equal(_l1.scan_nearest(rows, queries, known), canonical_nearest(rows, queries, known))
    assert np.ptp(canonical_nearest(rows, queries, known) // _l1._TILE) > 0


@pytest.mark.parametrize("seed", range(4))
def test_largest_nearest_distance_is_cdists(seed):
    """The seeds' bound (max over queries of the nearest seed's L1 distance) is scipy's cdist value, to rounding."""
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(seed)
    h = int(rng.integers(1, 12))
    queries, seeds = rng.normal(size=(300, h)) * 10.0 ** seed, rng.normal(size=(64, h)) * 10.0 ** seed
    expected = cdist(queries, seeds, "cityblock").min(axis=1).max()
    assert _l1.largest_nearest_distance(queries, seeds) == pytest.approx(expected, rel=1e-13)
    with pytest.raises(InvalidParameterError, match="at least one query"):
        _l1.largest_nearest_distance(queries[:0], seeds)
    with pytest.raises(InvalidParameterError, match="same columns"):
        _l1.largest_nearest_distance(queries[:, :1], np.zeros((4, 2)))
