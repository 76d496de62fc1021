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
