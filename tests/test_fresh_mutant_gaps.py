"""Tests for the gaps a fresh round of mutants (tools/mutation/mutants_fresh.py) found."""
import numpy as np
import pytest
from randomgen import AESCounter

import dptm.noise.secret as _random


def test_secret_key_takes_128_bits_of_os_entropy(monkeypatch):
    # A key from fewer bytes (say 4) can be brute-forced against a released noisy value: the
    # generator must equal AES keyed with all 128 bits the OS returned, whatever they are.
    requested = []

    def fake_urandom(n):
        requested.append(n)
        return bytes(range(1, n + 1))

    monkeypatch.setattr(_random.os, "urandom", fake_urandom)
    gen = _random.secret_generator()
    assert requested == [16]
    key = int.from_bytes(bytes(range(1, 17)), "little")
    ref = np.random.Generator(AESCounter(key=key))
    assert np.array_equal(gen.integers(2**63, size=8), ref.integers(2**63, size=8))


def test_zcdp_from_dp_target_inverts_bun_steinke_exactly():
    # rho = (sqrt(L + eps) - sqrt(L))^2 is the largest rho with rho + 2 sqrt(rho L) <= eps
    # (L = log(1/delta)); a larger rho calibrates too little noise for the target.
    import math

    from dptm.accounting import zcdp_from_dp_target, zcdp_to_dp
    for eps, delta in [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-8), (20.0, 1e-3)]:
        L = math.log(1.0 / delta)
        rho = zcdp_from_dp_target(eps, delta)
        assert rho == pytest.approx((math.sqrt(L + eps) - math.sqrt(L)) ** 2, rel=1e-12)
        assert zcdp_to_dp(rho, delta, method="bun-steinke") == pytest.approx(eps, rel=1e-12)
        assert zcdp_to_dp(rho * (1 + 1e-6), delta, method="bun-steinke") > eps


def _truncation_draws(monkeypatch, random_state):
    """The first draws of the generator a private VIPS fit truncates documents with."""
    import copy
    import warnings

    import scipy.sparse as sp

    import dptm.models.svi as svi_module
    from dptm import PrivateOnlineLDA

    seen = []
    real = svi_module.truncate_documents

    def spy(X, n, rng):
        seen.append(copy.deepcopy(rng).random(4))
        return real(X, n, rng)

    monkeypatch.setattr(svi_module, "truncate_documents", spy)
    X = sp.csr_matrix(np.random.default_rng(3).poisson(2.0, size=(30, 20)))   # rows of ~40
    model = PrivateOnlineLDA(n_components=2, batch_size=10, total_samples=30, max_doc_length=8,
                             noise_multiplier=1.0, max_iter=1, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    assert len(seen) == 1
    return seen[0]


def test_vips_truncation_draws_from_the_fits_secret_generator(monkeypatch):
    # Which tokens a long document keeps must be as secret as the noise: a fixed public
    # generator would let the adversary replay the truncation; the fit's generator (or the
    # seed, in test mode) decides it.
    a = _truncation_draws(monkeypatch, None)
    b = _truncation_draws(monkeypatch, None)
    assert not np.array_equal(a, b)
    assert np.array_equal(_truncation_draws(monkeypatch, 5), _truncation_draws(monkeypatch, 5))
    assert not np.array_equal(_truncation_draws(monkeypatch, 5), _truncation_draws(monkeypatch, 6))


def test_pld_route_of_a_discrete_laplace_keeps_its_sensitivity():
    # The Gibbs snapshots are discrete Laplace of L1 sensitivity 2; the report takes the PLD
    # route when it is tighter, so a PLD event built with sensitivity 1 would print about
    # half the epsilon. Reference: dp_accounting's own PLD of the same event.
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    from dptm.accounting import LaplaceEvent, PrivacyReport, SelfComposedEvent
    from dptm.accounting.pld import PLDAccountant
    scale, T, delta = 4.0, 10, 1e-5
    leaf = LaplaceEvent(scale=scale, sensitivity=2.0, discrete=True)
    ref = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dp_event.DiscreteLaplaceDpEvent(1.0 / scale, 2), T)
    want = ref.get_epsilon(delta)
    got = PLDAccountant().compose(leaf, T).get_epsilon(delta)
    assert got == pytest.approx(want, rel=1e-6)
    report = PrivacyReport(SelfComposedEvent(leaf, T), "word", default_delta=delta)
    assert report.epsilon() >= want * (1 - 1e-3)
    assert report.epsilon(0.0) == pytest.approx(T * 2.0 / scale, rel=1e-12)   # pure route


def test_merged_leaves_add_their_counts_in_the_report():
    # The report lists each distinct mechanism once with its count: merging identical
    # leaves must add the counts, or the printed ledger understates what was run.
    from dptm.accounting import (ComposedEvent, GaussianEvent, LaplaceEvent, PrivacyReport,
                                 SelfComposedEvent, leaf_events)
    g = GaussianEvent(sigma=2.0, sensitivity=1.0)
    lap = LaplaceEvent(scale=3.0, sensitivity=2.0)
    event = ComposedEvent((SelfComposedEvent(g, 3), lap, g, SelfComposedEvent(lap, 4)))
    assert [(e, c) for e, c, _, _ in leaf_events(event)] == [(g, 4), (lap, 5)]
    report = PrivacyReport(event, "document")
    assert [m["count"] for m in report.to_dict()["mechanisms"]] == [4, 5]
    assert "count=4" in str(report) and "count=5" in str(report)


def _n_candidates(monkeypatch, docs, cap):
    import dptm.vocab as vocab_module
    from dptm import DPVocabulary

    seen = []
    real = vocab_module._noisy_weights

    def spy(weights, *args):
        seen.append(np.array(weights, copy=True))
        return real(weights, *args)

    monkeypatch.setattr(vocab_module, "_noisy_weights", spy)
    DPVocabulary(target_epsilon=1.0, target_delta=1e-5, max_contribution=cap).fit(docs)
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("n_distinct", [4, 5, 12])
def test_vocabulary_user_cap_is_exact(monkeypatch, n_distinct):
    # The threshold's delta is computed for Delta_0 = max_contribution words per user: a
    # user contributing Delta_0 + 1 words breaks it. One user, n_distinct > cap words.
    cap = 3
    doc = [f"w{i}" for i in range(n_distinct)] * 2
    weights = _n_candidates(monkeypatch, [doc], cap)
    assert weights.size == cap
    assert weights.sum() <= 1.0 + 1e-12           # one user's L1 budget


def test_gaussian_vocabulary_threshold_gets_half_of_delta():
    # The Gaussian methods split delta: the noise is (epsilon, delta/2)-DP, so the threshold
    # may fail with probability delta/2 only. Checked by value: with F the N(0, sigma^2) CDF,
    # 1 - F(rho - 1) F(rho)^(cap - 1) = delta / 2 at the released threshold.
    import warnings

    from scipy.stats import norm

    from dptm import DPVocabulary
    from dptm.vocab import analytic_gaussian_sigma
    eps, delta, cap = 1.0, 1e-5, 5
    docs = [["a", "b", "c"], ["a", "b"], ["a", "d"]] * 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        voc = DPVocabulary(target_epsilon=eps, target_delta=delta, method="frequency_gaussian",
                           max_contribution=cap).fit(docs)
    sigma = voc.noise_scale_
    assert sigma == pytest.approx(analytic_gaussian_sigma(eps, delta / 2.0), rel=1e-12)
    rho = voc.threshold_
    fail = 1.0 - norm.cdf(rho - 1.0, scale=sigma) * norm.cdf(rho, scale=sigma) ** (cap - 1)
    assert fail == pytest.approx(delta / 2.0, rel=1e-4)


def test_private_cli_header_is_the_same_on_neighbouring_corpora(tmp_path):
    # What `dptm fit` prints before the topics (model, data name, budget) must not depend on
    # the private corpus: D and D + 1 documents give the same lines (a printed document or
    # token count would tell them apart).
    import io
    import json

    from dptm.cli import main
    rng = np.random.default_rng(3)
    words = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate"]
    docs = [" ".join(rng.choice(words, size=8)) for _ in range(201)]
    heads = []
    for n in (200, 201):
        path = tmp_path / f"private{n}.jsonl"
        path.write_text("".join(json.dumps({"body": t}) + "\n" for t in docs[:n]))
        out = io.StringIO()
        code = main(["fit", "--data", str(path), "--text-key", "body", "-k", "2",
                     "--iterations", "2"], out=out)
        assert code == 0, out.getvalue()
        text = out.getvalue().replace(str(path), "DATA")
        heads.append(text.split("\n\n")[0])
    assert heads[0] == heads[1]
    assert "200" not in heads[0] and "201" not in heads[1]


def test_raw_text_cli_guarantee_stays_within_the_requested_budget(tmp_path):
    # On raw text the command splits --epsilon and --delta between the DP vocabulary and the
    # model; the printed guarantee of the composition must be within (--epsilon, --delta) and
    # finite (the stages' deltas add up under basic composition).
    import io
    import json
    import re
    from argparse import Namespace

    from dptm._cli_data import budget_split
    from dptm.cli import main
    e_v, d_v, e_m, d_m = budget_split(Namespace(vocab_epsilon=None, vocab_share=0.5,
                                                epsilon=4.0, delta=1e-5))
    assert e_v + e_m == pytest.approx(4.0) and d_v + d_m == pytest.approx(1e-5)
    rng = np.random.default_rng(3)
    words = ["storm", "flood", "rain", "river", "vote", "poll", "senate", "candidate"]
    path = tmp_path / "private.jsonl"
    path.write_text("".join(json.dumps({"body": " ".join(rng.choice(words, size=8))}) + "\n"
                            for _ in range(200)))
    out = io.StringIO()
    code = main(["fit", "--data", str(path), "--text-key", "body", "-k", "2", "--iterations",
                 "2", "--epsilon", "4", "--delta", "1e-5"], out=out)
    assert code == 0, out.getvalue()
    m = re.search(r"guarantee  : epsilon = (\S+) at delta = (\S+) ", out.getvalue())
    eps, delta = float(m.group(1)), float(m.group(2))
    assert 0 < eps <= 4.0 and delta <= 1e-5 * (1 + 1e-9)


class _RecordingGenerator(np.random.Generator):
    """A test-mode generator that records what it was asked to permute."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.permuted = []

    def permutation(self, x, *args, **kwargs):
        out = super().permutation(x, *args, **kwargs)
        if not np.isscalar(x):
            self.permuted.append((np.array(x, copy=True), np.array(out, copy=True)))
        return out


def test_vocabulary_processes_users_in_a_secret_random_order():
    # The set-union algorithm visits users in a random order drawn from the fit's generator
    # (the module's contract); data order (users sorted by id) would make the greedy fills
    # depend on who comes first. Every user index is permuted once, differently per seed.
    import warnings

    from dptm import DPVocabulary
    docs = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", "a"], ["a", "c"]] * 5
    orders = []
    for seed in (1, 2):
        gen = _RecordingGenerator(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPVocabulary(target_epsilon=1.0, max_contribution=2, random_state=gen).fit(docs)
        users = [out for x, out in gen.permuted if np.array_equal(x, np.arange(len(docs)))]
        assert len(users) == 1
        orders.append(users[0])
    assert not np.array_equal(orders[0], orders[1])
