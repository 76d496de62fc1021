"""The papers' own accounting (recipes), reproduced from their stated settings."""
import math

import numpy as np
import pytest

from dptm.accounting import (GaussianEvent, PoissonSampledEvent, SelfComposedEvent, dp_to_rdp,
                             epsilon, recipes)

D, SEEN, EPS, DELTA = 400_000, 160_000, 1.0, 1e-4


@pytest.mark.parametrize("S", [10, 100, 400])
def test_park2016_recipe_round_trip_and_ordering(S):
    """eqs. (3), (5), (6): the zCDP recipe needs less noise than advanced, which needs less
    than linear composition (as in the paper's Fig. 1); park2016_epsilon inverts it."""
    z = {c: recipes.park2016_noise_multiplier(EPS, DELTA, D, S, SEEN, c) for c in ("zcdp", "advanced", "linear")}
    assert z["zcdp"] < z["advanced"] < z["linear"]
    for c, zc in z.items():
        assert recipes.park2016_epsilon(zc, DELTA, D, S, SEEN, c) == pytest.approx(EPS, rel=1e-8)


def test_park2016_per_iteration_budget_closed_form():
    """Hand computation of eqs. (5)-(6) with delta' = delta_tot / J."""
    S = 100
    J, nu = SEEN // S, S / D
    L = math.log(1 / DELTA)
    rho = (math.sqrt(L + EPS) - math.sqrt(L)) ** 2
    eps_p = math.sqrt(2 * math.log(1.25 * J / DELTA) * 2 * rho / J)
    eps_iter, delta_iter = recipes.park2016_per_iteration_budget(EPS, DELTA, D, S, SEEN)
    assert eps_iter == pytest.approx(math.log(1 + (math.exp(eps_p) - 1) / nu))
    assert delta_iter == pytest.approx(DELTA / J / nu)


@pytest.mark.parametrize("n_seen, batch_size, J", [(160_000, 100, 1600), (160_001, 100, 1601),
                                                   (99, 100, 1), (1, 1, 1)])
def test_park2016_iterations_count_a_partial_last_batch(n_seen, batch_size, J):
    # J = ceil(n_seen / S): a partial last minibatch is an iteration that spends budget
    # (catches J rounded down, fresh round 6, M06: every iteration then gets too much)
    assert recipes.park2016_iterations(n_seen, batch_size) == J
    S = 100
    low, _ = recipes.park2016_per_iteration_budget(EPS, DELTA, D, S, SEEN)
    more, _ = recipes.park2016_per_iteration_budget(EPS, DELTA, D, S, SEEN + 1)
    assert more < low                    # one more (partial) iteration: a smaller share each


def test_park2016_tight_accounting_needs_less_noise():
    """The sound RDP guarantee of the recipe's noise is below the target (the recipe is
    conservative here), so the tight accountant needs less noise."""
    S = 100
    z = recipes.park2016_noise_multiplier(EPS, DELTA, D, S, SEEN)
    ev = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(z), S / D), SEEN // S)
    assert epsilon(ev, DELTA) < EPS


# papers/huang2022 Table 3 (NIPS, K = 100): gamma -> (Iter, eps_subsample(14), total)
TABLE3 = {0.1: (92, 0.05, 4.6), 0.3: (83, 0.73, 59.86), 0.5: (70, 1.18, 82.6),
          0.7: (66, 1.48, 97.86), 0.9: (61, 1.63, 99.43), 1.0: (42, 2.0, 84.0)}


def test_huang2022_table3_reproduction():
    """alpha = 14, eps(alpha) = 2 (Sec. 5.1), so sigma^2 = 14/4 (Sec. 4.1) and eq. (3).

    Reproduced: gamma = 1 (2.0) and gamma = 0.1 (0.046 -> 0.05), and each total is
    Iter x the per-iteration value. NOT reproduced: gamma = 0.3..0.9, where eq. (3) gives
    0.772, 1.281, 1.627, 1.889 against the printed 0.73, 1.18, 1.48, 1.63 - no single
    sigma reproduces the printed column (the sigma^2 that would fit each entry goes from
    3.43 to 4.03), and the printed value 1.63 at gamma = 0.9 is what eq. (3) gives at 0.7.
    The table is also internally inconsistent at gamma = 0.3 (59.86 / 83 = 0.721, not 0.73).
    The test pins our values so any change is deliberate.
    """
    ours = {g: recipes.huang2022_eps_subsample(14, g, eps_alpha=2.0) for g in TABLE3}
    assert ours[1.0] == pytest.approx(2.0)
    assert round(ours[0.1], 2) == 0.05
    expected = {0.1: 0.046457, 0.3: 0.771905, 0.5: 1.280934, 0.7: 1.627338, 0.9: 1.889464}
    for g, v in expected.items():
        assert ours[g] == pytest.approx(v, abs=2e-6)
    for g, (iters, printed, total) in TABLE3.items():
        # the paper's own arithmetic: total / Iter rounds to the printed value, except at
        # gamma = 0.3 where 59.86 / 83 = 0.721 (printed 0.73) - Table 3 is internally inconsistent
        if g != 0.3:
            assert round(total / iters, 2) == pytest.approx(printed)
        assert recipes.huang2022_total_rdp(14, g, iters, eps_alpha=2.0) == pytest.approx(iters * ours[g])


def test_huang2022_efficiency_privacy_unimodal():
    """Lemma 4.1: I(gamma) = gamma exp((alpha-1) eps_subsample(alpha)) increases then
    decreases on (0, 1] ... for the Gaussian at alpha = 14, sigma^2 = 3.5 we check the
    shape numerically: a single sign change of the discrete derivative at most."""
    gam = np.linspace(0.01, 1.0, 100)
    vals = np.array([recipes.huang2022_efficiency_privacy(14, g, eps_alpha=2.0) for g in gam])
    assert np.all(np.isfinite(vals)) and np.all(vals > 0)
    signs = np.sign(np.diff(vals))
    assert np.count_nonzero(np.diff(signs[signs != 0])) <= 1


def test_zhao2021_and_wang2022_recipes():
    assert recipes.zhao2021_inherent_epsilon(clip=10.0, beta=0.1) == pytest.approx(2 * math.log(101))
    assert recipes.zhao2021_linear_epsilon(5, 0.5, 10.0, 0.1) == pytest.approx(5 * (0.5 + 2 * math.log(101)))
    assert recipes.zhao2021_local_epsilon(0.5) == pytest.approx(math.log(3))
    s = recipes.wang2022_sigma(1.0, 1e-4, sensitivity=2.0)
    assert s == pytest.approx(math.sqrt(2 * 4 / (2 * dp_to_rdp(1.0, 1e-4, 2.0))))
    with pytest.raises(ValueError, match="composition"):
        recipes.park2016_noise_multiplier(1.0, 1e-4, D, 10, SEEN, "magic")
    with pytest.raises(ValueError, match="sigma or eps_alpha"):
        recipes.huang2022_eps_subsample(14, 0.5)
