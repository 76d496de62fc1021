"""The empirical DP tester (dptm.testing) on mechanisms whose exact epsilon is known."""
import numpy as np
import pytest

from dptm import mechanisms
from dptm.testing import audit_mechanism, epsilon_lower_bound

N = 100_000


def _shifted(sampler, scale, rng, n=N):
    return sampler(n, scale, rng), 1 + sampler(n, scale, rng)


@pytest.mark.parametrize("scale, true_eps", [(1.0, 1.0), (0.5, 2.0)])
def test_discrete_laplace_bound_is_below_and_close_to_the_truth(scale, true_eps):
    # Count 0 vs 1 (sensitivity 1): exact epsilon = 1 / scale. The bound never exceeds it
    # (at confidence 0.999) and, with 10^5 runs, gets within 10% of it.
    a, b = _shifted(mechanisms.discrete_laplace_noise, scale, np.random.default_rng(0))
    eps = epsilon_lower_bound(a, b, confidence=0.999)
    assert 0.9 * true_eps < eps <= true_eps


def test_halved_noise_is_caught():
    # A mechanism that claims epsilon = 1 but adds half the noise.
    a, b = _shifted(mechanisms.discrete_laplace_noise, 0.5, np.random.default_rng(1))
    assert epsilon_lower_bound(a, b) > 1.0


def test_continuous_outputs_are_binned():
    rng = np.random.default_rng(2)
    a, b = rng.laplace(0, 1, N), 1 + rng.laplace(0, 1, N)
    assert 0.8 < epsilon_lower_bound(a, b) <= 1.0


def test_identical_distributions_give_no_evidence():
    rng = np.random.default_rng(3)
    assert epsilon_lower_bound(rng.normal(size=20000), rng.normal(size=20000)) < 0.1


def test_delta_absorbs_a_rare_disclosure():
    # M(x1) reveals itself with probability 1e-3, otherwise the outputs agree: (0, 1e-3)-DP.
    rng = np.random.default_rng(4)
    a = np.zeros(N, dtype=int)
    b = (rng.random(N) < 1e-3).astype(int)
    assert epsilon_lower_bound(a, b) > 1                 # no pure-DP bound exists
    assert epsilon_lower_bound(a, b, delta=2e-3) == 0.0


def test_audit_mechanism_runs_the_mechanism():
    rng = np.random.default_rng(5)
    p = np.exp(1) / (1 + np.exp(1))

    def rr(bit):                                          # randomized response, eps = 1
        return bit if rng.random() < p else 1 - bit
    eps, details = audit_mechanism(rr, 0, 1, 40000, return_details=True)
    assert 0.85 < eps <= 1.0
    assert details["n_a"] == details["n_b"] == 20000


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(outputs0=[1, 2], outputs1=[1, 2, 3, 4]), ValueError, "outputs0"),
    (dict(outputs0=[1.0, 2, 3, np.nan], outputs1=[1, 2, 3, 4]), ValueError, "NaN"),
    (dict(outputs0=["a"] * 5, outputs1=[1, 2, 3, 4]), TypeError, "numbers"),
    (dict(outputs0=[1, 2, 3, 4], outputs1=[1, 2, 3, 4], delta=1.0), ValueError, "delta"),
    (dict(outputs0=[1, 2, 3, 4], outputs1=[1, 2, 3, 4], confidence=1.0), ValueError, "confidence"),
])
def test_bad_input(kwargs, err, match):
    with pytest.raises(err, match=match):
        epsilon_lower_bound(**kwargs)
