"""The alias-table proposal of the exact discrete Gaussian (sigma >= 0.5).

``dptm._cgs.fill_discrete_gaussian_table`` samples the discrete Gaussian N_Z(0, sigma^2),
sigma^2 = p / q rational, by rejection. Write f(m) = exp(-m^2 / (2 sigma^2)) and
B = 2^bin_bits. The magnitude m >= 0 is proposed from a mixture whose weights are integers
summing to exactly 2^52, so that one 256-column alias table (Walker / Vose, in integer
arithmetic) picks a component with its exact probability from 60 uniform bits:

* bin j < n_bins, weight W_j >= c * max_{m in bin j} f(m) = c f(jB): m uniform in
  [jB, (j + 1)B), accepted with probability f(m) c / W_j <= 1;
* the tail, weight W_T: m = M + B J + uniform[0, B) with M = n_bins B and
  P(J = k) = 2^-(k + 1), accepted with probability f(m) c 2^(J + 1) / W_T, which is <= 1
  because f(M + BJ) <= f(M) exp(-M B J / sigma^2) <= f(M) 2^-J (M B / sigma^2 >= ln 2)
  and f(M) <= W_T / (2 c) (both checked in exact arithmetic when the table is built);
* the slack 2^52 - sum W: propose again.

Every component's proposal mass at m is (its weight / 2^52) * (its pmf at m); times the
acceptance probability it is f(m) c / (2^52 B) for every m >= 0 and every component that
can propose m. So an accepted m has pmf proportional to f(m), exactly; a uniform sign with
-0 rejected gives P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers.

The bins are sigma/16 to sigma/8 wide (one integer each below sigma = 16) and cover
[0, 13 sigma), so the proposal is accepted about nine times in ten (nearly always for small
sigma) and the tail is proposed with probability below 2^-100.
"""
import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .exact import exp_neg_bounds

COLUMNS = 256                 # alias columns (8 bits of a uniform word)
COLUMN_BITS = 52              # units per column: 2^52 (52 bits of the same word)
MIN_SIGMA = 0.5               # below, CKS20 (a bin of width 1 per integer down to here)
_COVER = 13                   # the bins cover [0, 13 sigma)


def table_for(p, q):
    """The default table of the discrete Gaussian of variance p / q, or None when sigma is
    below ``MIN_SIGMA`` (then CKS20's sampler, ``_cgs.fill_discrete_gaussian``, is used)."""
    return gauss_table(p, q) if p >= MIN_SIGMA ** 2 * q else None


def gauss_table(p, q, bin_bits=None, n_bins=None, tail_weight=1):
    """The alias-table proposal of the discrete Gaussian of variance p / q.

    Parameters
    ----------
    p, q : int
        sigma^2 = p / q (as from :func:`dptm.noise.mechanisms.discrete_gaussian_parameters`).
    bin_bits, n_bins : int, optional
        Bin width 2^bin_bits and number of bins; the defaults (bins sigma/16 to sigma/8
        wide covering 13 sigma) are for speed. Other values serve tests of the tail.
    tail_weight : int, default=1
        W_T. Any value satisfying the tail condition gives the same output distribution;
        tests raise it to exercise the tail.

    Returns
    -------
    dict with the arrays ``prob``, ``alias``, ``squeeze``, ``ratio``, ``weight`` (read-only,
    shared between calls) and the integers ``p``, ``q``, ``c``, ``bin_bits``: the table
    ``dptm._cgs.fill_discrete_gaussian_table`` and ``noisy_snapshot`` take.

    Raises
    ------
    ValueError
        When the parameters violate a condition of the construction (the module docstring).
    """
    return dict(_gauss_table(p, q, bin_bits, n_bins, tail_weight))   # the cached dict stays intact


@lru_cache(maxsize=32)
def _gauss_table(p, q, bin_bits, n_bins, tail_weight):
    var = Fraction(p, q)
    sigma = math.sqrt(p / q)
    if bin_bits is None:
        bin_bits = max(0, math.floor(math.log2(sigma / 8)))
    if n_bins is None:
        n_bins = math.ceil(_COVER * sigma / 2 ** bin_bits)
    B = 1 << bin_bits
    M = n_bins * B
    if not 1 <= n_bins <= COLUMNS - 2:
        raise ValueError(f"n_bins must be in [1, {COLUMNS - 2}], got {n_bins}")
    # The tail envelope: M B / sigma^2 >= 7/10 > ln 2, and f(M) <= W_T / (2 c) (below).
    if Fraction(M * B) / var < Fraction(7, 10):
        raise ValueError("the bins are too narrow for the tail envelope (M B < 0.7 sigma^2)")
    upper = [exp_neg_bounds((j * B) ** 2 * q, 2 * p)[1] for j in range(n_bins)]
    total = 1 << COLUMN_BITS
    c = math.floor((total - n_bins - tail_weight) / sum(upper))
    weights = [math.ceil(c * e) for e in upper] + [tail_weight]
    if c < 1 or sum(weights) > total or weights[0] >= total:
        raise ValueError("tail_weight leaves no room for the bins")
    if exp_neg_bounds(M * M * q, 2 * p)[1] > Fraction(tail_weight, 2 * c):
        raise ValueError(f"tail_weight={tail_weight} is too small for the tail envelope")
    # Per bin: the acceptance probability is smallest at the bin's last m (the kernel
    # accepts below it minus its 2^-36 margin, which covers this double's rounding).
    squeeze = [float(exp_neg_bounds(((j + 1) * B - 1) ** 2 * q, 2 * p)[0] * c / weights[j])
               for j in range(n_bins)]
    prob, alias = _alias_table(weights + [total - sum(weights)], total)
    table = {"prob": prob, "alias": alias,
             "squeeze": np.array(squeeze, dtype=np.float64),
             "ratio": np.array([c / w for w in weights[:n_bins]], dtype=np.float64),
             "weight": np.array(weights, dtype=np.uint64)}
    for arr in table.values():
        arr.setflags(write=False)          # cached and shared: never modified
    return {**table, "p": p, "q": q, "c": c, "bin_bits": bin_bits}


def _alias_table(weights, total):
    """Vose's alias method in integers: 256 columns of ``total`` units each; component i
    owns exactly 256 * weights[i] units (``sum(weights) == total``)."""
    scaled = [COLUMNS * w for w in weights] + [0] * (COLUMNS - len(weights))
    prob = [0] * COLUMNS
    alias = list(range(COLUMNS))
    small = [i for i, s in enumerate(scaled) if s < total]
    large = [i for i, s in enumerate(scaled) if s >= total]
    while small and large:
        lo, hi = small.pop(), large.pop()
        prob[lo], alias[lo] = scaled[lo], hi
        scaled[hi] -= total - scaled[lo]
        (small if scaled[hi] < total else large).append(hi)
    for i in small + large:        # exactly full by conservation of the integer units
        if scaled[i] != total:     # pragma: no cover - arithmetic invariant
            raise RuntimeError("alias table does not conserve its units")
        prob[i] = total
    return np.array(prob, dtype=np.uint64), np.array(alias, dtype=np.int32)
