"""Findings of the session-5 privacy review (report: notes/s5/report-review.md).

Each test names its finding (R1, R2, ...). A finding still open is ``xfail(strict=True)``:
the test fails today and starts passing once the finding is fixed (strict: then the marker
must be removed). Fixed findings are plain regression tests.
"""
import math
import textwrap
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from dptm.accounting import (GaussianEvent, ParallelComposedEvent, PrivacyReport,
                             SelfComposedEvent)
from dptm.models.private_vb import _expected_counts, _within_norm
from _child import run_child


# --------------------------------------------------------------------------- R1
def test_R1_exact_path_failure_is_not_a_silent_reject():
    # Every Bernoulli(exp) decision is sent down the exact path (test hook) and that path
    # raises: the sampler must fail loudly (exception or abort), never return a sample.
    # Before the fix each failed decision was a silent "0": u != 0 always rejected, the
    # geometric count always 0, so the discrete Laplace of scale 10 returned 0 every time.
    code = textwrap.dedent("""
        import numpy as np
        from dptm import _cgs, _exact
        def boom(*a, **k):
            raise MemoryError("simulated failure in the exact path")
        _exact.uniform_below_exp = boom
        _cgs._set_lazy_margin(2.0)
        out = np.empty(20, dtype=np.int64)
        _cgs.fill_discrete_laplace(out, 10, 1, np.random.PCG64(1))
        print("SAMPLES", out.tolist())
    """)
    proc = run_child(code, cwd=_repo_root())
    assert "SAMPLES" not in proc.stdout, (
        "a failing exact path still produced noise samples: " + proc.stdout.strip())


def _repo_root():
    import dptm
    import os
    return os.path.dirname(os.path.dirname(os.path.abspath(dptm.__file__)))


# --------------------------------------------------------------------------- R2
def _dead_word_document(K, seed=1):
    """Topics thresholded to the prior except three live rows, and a document whose words
    are all outside the live entries: every pair's normaliser sits at its 1e-100 floor."""
    rng = np.random.default_rng(seed)
    V = 40
    beta = np.full((K, V), 1.0 / K)
    beta[rng.integers(0, K, size=3), :10] += rng.random((3, 10)) * 1e4
    x = np.zeros((1, V))
    x[0, rng.choice(np.arange(10, V), size=5, replace=False)] = rng.integers(1, 4, size=5)
    return sp.csr_matrix(x), beta


@pytest.mark.parametrize("K", [300, 350])
def test_R2_contribution_norm_never_exceeds_the_clip_with_subnormal_squares(K):
    # Before the fix the sum of squares was subnormal (~1e-311) and the scaled document
    # had norm 1 + 4.7e-11 > clip_norm = 1 (K = 300): its sensitivity was exceeded.
    X, beta = _dead_word_document(K)
    stat = _expected_counts(X, beta, 1.0 / K, 1.0)
    assert stat.max() > 0                                    # the document does contribute
    assert math.fsum((stat * stat).ravel()) <= 1.0


def test_R2_lattice_contributions_checked_exactly():
    # _within_norm: integer sum of squares against floor(bound^2), exactly, at the edge
    bound = 1000.5                                   # bound^2 = 1001000.25
    assert math.floor(Fraction(bound) ** 2) == 1001000
    on = np.array([[1000.0, 30.0], [10.0, 0.0]])     # 1000^2 + 30^2 + 10^2 = 1001000
    over = np.array([[1000.0, 30.0], [10.0, 1.0]])   # 1001001: one unit above
    far = 2.0 * over
    m = np.vstack([on, over, far])
    indptr = np.array([0, 2, 4, 6])
    np.testing.assert_array_equal(_within_norm(m, indptr, bound), [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="noise too small"):
        _within_norm(m, indptr, 2.0 ** 31)


# --------------------------------------------------------------------------- R5
def test_R5_report_says_which_mechanisms_are_parallel():
    # before the fix the mechanism list flattened the parts: "count=12" for two identical
    # parts of 6 releases each, with nothing saying that each document meets one part
    a = SelfComposedEvent(GaussianEvent(2.0, discrete=True), 6, label="stage")
    rep = PrivacyReport(ParallelComposedEvent((a, a)), "document", default_delta=1e-5)
    mech = str(rep).split("mechanisms :")[1].split("\n  guarantee")[0]
    assert "count=12" not in mech and mech.count("count=6") == 2
    assert "in parallel" in mech and "part 1:" in mech and "part 2:" in mech
    parts = rep.to_dict()["parallel_parts"]
    assert [[m["count"] for m in p] for p in parts] == [[6], [6]]
    # a sequential composition is still listed flat, merged
    from dptm.accounting import ComposedEvent
    flat = str(PrivacyReport(ComposedEvent((a, a)), "document", default_delta=1e-5))
    assert "count=12" in flat and "parallel" not in flat


# --------------------------------------------------------------------------- R4
def test_R4_fixed_size_partition_breaks_the_maximum_but_iid_assignment_does_not():
    # Why ParallelComposedEvent needs each record's part drawn independently. Two parts, each releasing its sum of contributions in
    # [0, 1] plus N(0, 1). D = {y = 1}; D' = D + {x = 0}.
    from scipy import integrate
    a = 10.0
    bound = a / 2.0                                  # RDP of one part at order a
    # (i) parts of prescribed sizes (floor(n/2), n - floor(n/2)): D puts y in part 2; D'
    # puts (x, y) in parts (1, 2) or (2, 1) with probability 1/2 each. The second case
    # changes both parts: w = z1 - z2 ~ N(-1, 2) under D, likelihood ratio 1/2 + e^w / 2.
    v, _ = integrate.quad(lambda w: (0.5 + 0.5 * np.exp(w)) ** a
                          * np.exp(-(w + 1) ** 2 / 4) / np.sqrt(4 * np.pi), -60, 60, limit=400)
    assert np.log(v) / (a - 1) > 1.8 * bound         # 9.23 vs 5.0: the maximum is unsound
    # (ii) i.i.d. assignment (each record in part 1 or 2 with probability 1/2): the
    # others' parts have the same law on D and D'. With y = 0 and x = 1, D releases
    # N(0, I) and D' moves the mean of x's part by 1: likelihood ratio
    # (e^(z1 - 1/2) + e^(z2 - 1/2)) / 2, within the one-part bound (quasi-convexity).
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    weights = weights / np.sqrt(2 * np.pi)
    z1, z2 = np.meshgrid(nodes, nodes)
    ratio = 0.5 * np.exp(z1 - 0.5) + 0.5 * np.exp(z2 - 0.5)
    v2 = (np.outer(weights, weights) * ratio ** a).sum()
    assert np.log((weights * np.exp(a * (nodes - 0.5))).sum()) / (a - 1) == pytest.approx(bound)
    assert np.log(v2) / (a - 1) <= bound              # 4.31 <= 5.0


# --------------------------------------------------------------------------- R3
def test_R3_duplicate_entries_do_not_multiply_the_sensitivity():
    # a non-canonical CSR row storing word 1 twice: before the fix its contribution had
    # norm sqrt(2) (the norm was taken per stored pair, the sum per cell)
    K, V = 3, 5
    beta = 1.0 + np.random.default_rng(0).random((K, V))
    X = sp.csr_matrix((np.array([2.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, V))
    assert not X.has_canonical_format
    data = X.data.copy()
    for g in (None, 2.0 ** -12):
        stat = _expected_counts(X, beta, 0.3, 1.0, granularity=g)
        assert math.fsum((stat * stat).ravel()) <= 1.0
    np.testing.assert_array_equal(X.data, data)             # the caller's matrix untouched
    assert not X.has_canonical_format
    canon = sp.csr_matrix(np.array([[0.0, 4.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(_expected_counts(X, beta, 0.3, 1.0),
                               _expected_counts(canon, beta, 0.3, 1.0), rtol=1e-12)
