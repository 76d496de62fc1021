"""Privacy accounting for dptm: events, RDP / zCDP / pure-DP accountants, conversions,
noise calibration, the papers' own recipes, and the report every private model carries.

Quick use::

    from dptm.accounting import GaussianEvent, PoissonSampledEvent, SelfComposedEvent, epsilon
    step = PoissonSampledEvent(GaussianEvent(sigma=1.1), sampling_probability=0.01)
    epsilon(SelfComposedEvent(step, 1000), delta=1e-5)   # tightest built-in route (RDP here)

Everything here is pure Python (numpy / scipy). ``PLDAccountant`` needs the optional
extra ``dptm[pld]`` and imports ``dp_accounting`` only when created, as does
``DiscretePLDAccountant`` (the exact PLD of discrete-Gaussian count releases).
"""
from .events import (ApproxDPEvent, ComposedEvent, GatedEvent, GaussianEvent, LaplaceEvent,
                     PoissonSampledEvent, PrivacyEvent, PureDPEvent, RandomizedResponseEvent,
                     ParallelComposedEvent, SelfComposedEvent, ZCDPEvent, epsilon_from_flip,
                     flip_from_epsilon, leaf_events, randomized_response_epsilon)
from .rdp import (DEFAULT_ORDERS, rdp_gated, rdp_gaussian, rdp_laplace, rdp_pure_dp,
                  rdp_subsampled_bound, rdp_subsampled_gaussian, rdp_zcdp)
from .zcdp import zcdp_from_dp_target, zcdp_from_pure, zcdp_gaussian, zcdp_to_dp
from .conversions import (advanced_composition, amplify_dp_by_subsampling, dp_to_rdp,
                          linear_composition, rdp_to_dp)
from .accountants import (RDPAccountant, PureDPAccountant, ZCDPAccountant, epsilon,
                          epsilon_and_method)
from .calibration import calibrate_gaussian, calibrate_laplace, log_bisect
from .report import ADJACENCIES, PaperClaim, PrivacyReport
from .budget import BudgetAccountant, BudgetExceededError
from . import recipes


def __getattr__(name):
    if name in ("PLDAccountant", "pld_available"):
        from . import pld
        return getattr(pld, name)
    if name in ("DiscretePLDAccountant", "discrete_gaussian_pld"):
        from . import discrete_pld
        return getattr(discrete_pld, name)
    raise AttributeError(f"module 'dptm.accounting' has no attribute {name!r}")


__all__ = [
    "PrivacyEvent", "GaussianEvent", "LaplaceEvent", "PureDPEvent", "ApproxDPEvent", "ZCDPEvent",
    "RandomizedResponseEvent", "PoissonSampledEvent", "GatedEvent", "SelfComposedEvent",
    "ComposedEvent", "ParallelComposedEvent", "epsilon_from_flip", "flip_from_epsilon",
    "randomized_response_epsilon",
    "leaf_events", "DEFAULT_ORDERS", "rdp_gated", "rdp_gaussian", "rdp_laplace", "rdp_pure_dp",
    "rdp_zcdp",
    "rdp_subsampled_gaussian", "rdp_subsampled_bound",
    "zcdp_gaussian", "zcdp_from_pure", "zcdp_to_dp", "zcdp_from_dp_target",
    "rdp_to_dp", "dp_to_rdp", "amplify_dp_by_subsampling", "linear_composition",
    "advanced_composition",
    "RDPAccountant", "ZCDPAccountant", "PureDPAccountant", "PLDAccountant", "pld_available",
    "DiscretePLDAccountant", "discrete_gaussian_pld",
    "epsilon", "epsilon_and_method",
    "calibrate_gaussian", "calibrate_laplace", "log_bisect",
    "PaperClaim", "PrivacyReport", "ADJACENCIES", "recipes", "BudgetAccountant",
    "BudgetExceededError",
]
