"""Golden values of the accountants for subsampled pure-DP mechanisms (closed forms)."""
import math

import numpy as np
import pytest

from dptm.accounting import (LaplaceEvent, PoissonSampledEvent, PureDPEvent, RDPAccountant,
                             rdp_pure_dp)


@pytest.mark.parametrize("eps, q", [(1.0, 0.1), (3.0, 0.01), (0.5, 0.5)])
def test_poisson_sampled_pure_dp_is_amplified_by_the_closed_form(eps, q):
    # Amplification by Poisson subsampling of an eps-DP mechanism: log(1 + q (e^eps - 1))
    # (Balle et al. 2018), then the tight RDP of a pure-DP mechanism of that epsilon.
    # (eps * q would be smaller than the truth: unsound.)
    amplified = math.log1p(q * math.expm1(eps))
    assert amplified > eps * q
    for event in (PureDPEvent(eps), LaplaceEvent(1.0 / eps)):
        acc = RDPAccountant().compose(PoissonSampledEvent(event, q))
        np.testing.assert_allclose(acc.rdp, rdp_pure_dp(amplified, acc.orders), rtol=1e-12)


def test_subsampled_discrete_gaussian_uses_integer_orders_only():
    # The moments of the discrete Gaussian's likelihood ratio equal the continuous one's at
    # integer orders (lattice shifts): the subsampled bound is kept there, dropped at the
    # fractional orders whose series assumes a continuous density.
    from dptm.accounting import GaussianEvent, rdp_subsampled_gaussian
    acc = RDPAccountant().compose(PoissonSampledEvent(GaussianEvent(2.0, discrete=True), 0.05))
    orders = np.asarray(acc.orders)
    integer = orders == np.floor(orders)
    np.testing.assert_allclose(acc.rdp[integer],
                               rdp_subsampled_gaussian(0.05, 2.0, orders[integer]), rtol=1e-12)
    assert np.all(np.isinf(acc.rdp[~integer]))
    # the exact moment identity behind it, numerically, for a lattice shift of 3 at sigma 2.5
    x = np.arange(-80, 81)
    p0 = np.exp(-x ** 2 / (2 * 2.5 ** 2))
    p0 /= p0.sum()
    p1 = np.exp(-(x - 3) ** 2 / (2 * 2.5 ** 2))
    p1 /= p1.sum()
    for j in (2, 3, 5):
        assert np.sum(p0 * (p1 / p0) ** j) == pytest.approx(math.exp(j * (j - 1) * 9 / (2 * 2.5 ** 2)),
                                                           rel=1e-9)
