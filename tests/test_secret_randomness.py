"""The secret noise source, its test mode, and the exact lattice noise for real values."""
import math
import pickle
import warnings

import numpy as np
import pytest
from scipy import stats

from dptm import mechanisms
from dptm._random import (private_generator, public_seed, secret_generator,
                          shuffle_within_segments)
from dptm.exceptions import PrivacyWarning, SeededPrivacyWarning


def test_secret_generators_are_independent_and_unseeded():
    a, b = secret_generator(), secret_generator()
    assert type(a.bit_generator).__name__ == "AESCounter"
    # Two fresh secret generators never agree (a shared key would repeat every draw).
    assert not np.array_equal(a.integers(2**63, size=8), b.integers(2**63, size=8))


def test_default_private_generator_is_secret_and_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gen, seeded = private_generator(None, "Model")
    assert seeded is False
    assert type(gen.bit_generator).__name__ == "AESCounter"
    # ... and fresh on every call: a fixed key would let anyone replay the noise.
    other, _ = private_generator(None, "Model")
    assert not np.array_equal(gen.integers(2**63, size=4), other.integers(2**63, size=4))


@pytest.mark.parametrize("seed", [0, 7, np.random.SeedSequence(3)])
def test_seed_is_a_warned_reproducible_test_mode(seed):
    with pytest.warns(SeededPrivacyWarning, match="test mode.*seed stays secret"):
        g1, seeded = private_generator(seed, "Model")
    with pytest.warns(SeededPrivacyWarning):
        g2, _ = private_generator(seed, "Model")
    assert seeded is True
    assert np.array_equal(g1.random(5), g2.random(5))
    assert issubclass(SeededPrivacyWarning, PrivacyWarning)


def test_seed_value_is_not_printed_in_the_warning():
    with pytest.warns(SeededPrivacyWarning) as rec:
        private_generator(123456789, "Model")
    assert "123456789" not in str(rec[0].message)


def test_seed_sequence_of_the_caller_is_not_advanced():
    seed = np.random.SeedSequence(42)
    draws = []
    for _fit in range(2):
        with pytest.warns(SeededPrivacyWarning):
            gen, seeded = private_generator(seed, "Model")
        draws.append(gen.spawn(1)[0].random(3))
    assert seed.n_children_spawned == 0
    assert np.array_equal(draws[0], draws[1])      # same seed, same children, every fit


def test_given_generator_is_used_as_is_in_test_mode():
    gen = np.random.default_rng(1)
    with pytest.warns(SeededPrivacyWarning):
        out, seeded = private_generator(gen, "Model")
    assert out is gen and seeded


@pytest.mark.parametrize("bad, err", [(-1, ValueError), ("seed", TypeError), (1.5, TypeError),
                                      (np.random.RandomState(0), TypeError)])
def test_bad_random_state(bad, err):
    with pytest.raises(err, match="random_state"):
        private_generator(bad, "Model")


def test_public_seed_is_fresh_unless_seeded():
    gen = np.random.default_rng(0)
    assert public_seed(gen, False) != public_seed(gen, False)
    assert public_seed(np.random.default_rng(0), True) == public_seed(np.random.default_rng(0), True)


def test_shuffle_within_segments_is_uniform_and_keeps_segments():
    # Every one of the 4! orders of a 4-token document is equally likely: chi-square over
    # 24 cells, false-alarm rate 1e-6.
    gen = np.random.default_rng(5)
    ptr = np.array([0, 4, 4, 6])
    values = np.array([10, 11, 12, 13, 20, 21])
    counts = {}
    n = 24000
    for _ in range(n):
        out = shuffle_within_segments(ptr, values, gen)
        assert sorted(out[:4]) == [10, 11, 12, 13] and sorted(out[4:]) == [20, 21]
        counts[tuple(out[:4])] = counts.get(tuple(out[:4]), 0) + 1
    assert len(counts) == 24
    assert stats.chisquare(list(counts.values())).pvalue > 1e-6
    assert np.array_equal(values, [10, 11, 12, 13, 20, 21])     # input untouched


def test_shuffle_within_segments_bad_ptr():
    with pytest.raises(ValueError, match="ptr"):
        shuffle_within_segments(np.array([0, 5]), np.arange(3), np.random.default_rng())


# -- exact lattice noise -----------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-3, 0.7, 1.0, 3.0, 250.0, 1e5])
def test_lattice_granularity_is_a_power_of_two_fine_enough(scale):
    g = mechanisms.lattice_granularity(scale)
    assert math.frexp(g)[0] == 0.5
    assert 4096 <= scale / g < 8192


@pytest.mark.parametrize("sampler", [mechanisms.lattice_gaussian, mechanisms.lattice_laplace])
def test_lattice_outputs_are_exact_multiples_whatever_the_input(sampler):
    # Zeros, tiny values, values with many low bits: the output never carries the input's
    # low bits, only multiples of the lattice step (no Mironov-style distinguisher).
    rng = np.random.default_rng(0)
    x = np.concatenate([np.zeros(500), rng.random(500) * 1e-9, rng.random(500) * 37.123456789])
    out, g, eff = sampler(x, 1.5, rng)
    k = out / g
    assert np.array_equal(k, np.rint(k))
    assert eff >= 1.5 and eff / 1.5 - 1 < 1e-6


def test_lattice_gaussian_distribution_matches_the_discrete_gaussian():
    # Noise on the zero statistic, in lattice units, against the exact discrete Gaussian pmf
    # (chi-square, false-alarm rate 1e-6), and its standard deviation against sigma.
    rng = np.random.default_rng(1)
    sigma = 1.0
    out, g, eff = mechanisms.lattice_gaussian(np.zeros(200000), sigma, rng)
    assert abs(out.std() / eff - 1) < 0.01
    k = np.rint(out / g).astype(np.int64)
    edges = np.quantile(np.abs(k), np.linspace(0, 1, 21)[1:-1]).astype(np.int64)
    bins = np.digitize(np.abs(k), edges)
    support = np.arange(-int(12 * eff / g), int(12 * eff / g) + 1)
    pmf = mechanisms.discrete_gaussian_pmf(support, eff / g, support=support)
    expected = np.bincount(np.digitize(np.abs(support), edges), weights=pmf, minlength=20)
    observed = np.bincount(bins, minlength=20)
    keep = expected > 0
    assert stats.chisquare(observed[keep], expected[keep] / expected[keep].sum() * k.size).pvalue > 1e-6


def test_lattice_laplace_scale():
    rng = np.random.default_rng(2)
    out, g, eff = mechanisms.lattice_laplace(np.zeros(100000), 2.0, rng)
    # mean |X| of Laplace(b) is b; the discrete version on a fine lattice matches to 1e-6.
    assert abs(np.abs(out).mean() / eff - 1) < 0.02


def test_round_to_lattice_and_slack():
    g = 2.0 ** -3
    assert np.array_equal(mechanisms.round_to_lattice([0.06, 0.07, -1.01], g), [0.0, 0.125, -1.0])
    # rounding the statistic: 0.49 g and 0.51 g are 0.02 g apart but round to 0 and g
    a, b = np.array([0.49 * g]), np.array([0.51 * g])
    moved = np.abs(mechanisms.round_to_lattice(a, g) - mechanisms.round_to_lattice(b, g)) - np.abs(a - b)
    assert moved[0] <= mechanisms.lattice_rounding_slack(g, 1) and moved[0] > g / 2
    assert mechanisms.lattice_rounding_slack(g, 16) == pytest.approx(g * 4)
    assert mechanisms.lattice_rounding_slack(g, 16, norm=1) == pytest.approx(g * 16)
    # rounding each contribution: half of that
    assert mechanisms.lattice_rounding_slack(g, 16, rounded="contribution") == pytest.approx(g / 2 * 4)
    with pytest.raises(ValueError, match="rounded"):
        mechanisms.lattice_rounding_slack(g, 4, rounded="sum")
    with pytest.raises(ValueError, match="granularity"):
        mechanisms.round_to_lattice([1.0], 0.3)
    with pytest.raises(ValueError, match="finite"):
        mechanisms.round_to_lattice([np.nan], g)
    with pytest.raises(ValueError, match="too large"):
        mechanisms.round_to_lattice([1e300], g)
    with pytest.raises(ValueError, match="norm"):
        mechanisms.lattice_rounding_slack(g, 4, norm=3)


def test_secret_generator_does_not_pickle_into_a_model_by_accident():
    # The generator is an object like any other: the contract is that estimators never
    # keep it. Here we only check that a pickled generator would carry its key, which is
    # why that contract matters.
    gen = secret_generator()
    clone = pickle.loads(pickle.dumps(gen))
    assert np.array_equal(gen.random(3), clone.random(3))


def _binned_chisquare(draws, pmf_at, support):
    """p-value of a chi-square test of integer draws against a pmf, cells merged so each
    expects >= 20 draws."""
    pmf = pmf_at(support)
    expected = pmf / pmf.sum() * draws.size
    observed = np.bincount(np.clip(draws - support[0], 0, support.size - 1), minlength=support.size)
    cells_o, cells_e, acc_o, acc_e = [], [], 0, 0.0
    for o, e in zip(observed, expected):
        acc_o += o
        acc_e += e
        if acc_e >= 20:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
            acc_o, acc_e = 0, 0.0
    cells_o[-1] += acc_o
    cells_e[-1] += acc_e
    return stats.chisquare(cells_o, np.asarray(cells_e) * sum(cells_o) / sum(cells_e)).pvalue


@pytest.mark.parametrize("sigma", [1.3, 100.7, 1000.1, 7000.3])
def test_discrete_gaussian_exact_at_non_integer_variances(sigma):
    # sigma^2 = p/q with q > 1: the acceptance test's numerator exceeds 2^64 for large
    # draws and must be divided in 128 bits (a 64-bit truncation inflated the standard
    # deviation by up to 25%). Chi-square against the exact pmf, false-alarm rate 1e-6.
    p, q, t, eff = mechanisms.discrete_gaussian_parameters(sigma)
    draws = mechanisms.discrete_gaussian_noise(60000, sigma, np.random.default_rng(11))
    assert abs(draws.std() / eff - 1) < 0.015
    m = int(7 * eff) + 2
    support = np.arange(-m, m + 1)
    pval = _binned_chisquare(draws, lambda x: mechanisms.discrete_gaussian_pmf(x, eff, support=support),
                             support)
    assert pval > 1e-6


def test_lattice_gaussian_at_a_non_integer_lattice_variance():
    # sigma / g = 1.7 * 2^12 / 1 is not an integer's square root: q > 1 in the sampler
    rng = np.random.default_rng(12)
    out, g, eff = mechanisms.lattice_gaussian(np.zeros(50000), 1.7, rng)
    assert abs(out.std() / eff - 1) < 0.015


def test_secret_key_takes_128_bits_of_os_entropy(monkeypatch):
    from randomgen import AESCounter

    import dptm.noise.secret as _random
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
