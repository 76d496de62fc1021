"""Differentially private vocabulary selection: DP set union (DPSU).

Each user contributes the set of words in their documents; the release is a subset of the
union of these sets, (epsilon, delta)-DP with respect to adding or removing one user
(Manzonelli et al. 2024 Sec. 4.2). Mechanisms:

* ``"policy_laplace"`` / ``"policy_gaussian"`` - Gopi et al. 2020 (ICML), Algorithms
  "Policy Laplace" (l1-descent: water-filling of the user's words towards the cut-off
  Gamma with l1 budget 1) and "Policy Gaussian" (l2-descent: a step of l2 norm <= 1 towards
  Gamma), users in random order, at most ``max_contribution`` (Delta_0) distinct words per
  user (Gopi et al. pick them uniformly at random; by default dptm keeps the user's most
  frequent words, see ``selection``).
* ``"weighted_gaussian"`` - Gopi et al.'s Weighted Gaussian baseline (each user adds
  1/sqrt(|W_i|) to each of its words; no policy).
* ``"frequency_laplace"`` / ``"frequency_gaussian"`` - Carvalho, Wang & Gondara 2022
  (AAAI): the user's words are filled greedily towards Gamma in order of their frequency
  *in that user's own documents* (so repeated words count, at no privacy cost), l1 budget 1.
  The Laplace version is the one Manzonelli et al. 2024 runs; the Gaussian version adds
  Gaussian noise to the same histogram (its l2 sensitivity is <= its l1 sensitivity 1).

Then noise is added to the weight of every candidate word (every word some user
contributed after the cap) and the words above the threshold rho are released, sorted
alphabetically (never in an order that reveals counts).

Thresholds (the delta part). A word only the added user has can appear in the release only
through its noisy weight; rho makes the probability that any such word passes <= the
delta share of the threshold:

* policy / weighted Laplace: rho = max_{1<=t<=Delta_0} 1/t + b log(1 / (2 (1 - (1-delta)^{1/t})))
  with b = 1/epsilon (Gopi et al.);
* policy / weighted Gaussian: sigma calibrated so that sensitivity-1 Gaussian noise is
  (epsilon, delta/2)-DP (analytic Gaussian, Balle & Wang 2018), rho = max_t 1/sqrt(t) +
  sigma Phi^{-1}((1 - delta/2)^{1/t});
* frequency (greedy) mechanisms: the added user's budget reaches at most one word that no
  one else has (a new word costs Gamma > 1), but all its t <= Delta_0 exclusive words are
  candidates, so rho solves 1 - F(rho - 1) F(rho)^{t - 1} = delta (Laplace; delta/2 for
  Gaussian) at t = Delta_0, F the noise CDF. Carvalho et al.'s code uses the single-word
  value rho = 1 + b log(1/(2 delta)) without a cap; ``paper_threshold=True`` reproduces it,
  and the report then states the delta that actually holds for Delta_0 (the cap) exclusive
  candidate words.

Noise. The Laplace methods (the default) draw exact discrete Laplace noise on a fine
power-of-two lattice from the secret generator (:mod:`dptm.noise.secret`); the Gaussian methods
use a floating-point sampler and warn (``NotHardenedWarning``).

The cut-off is Gamma = rho + ``alpha`` x (noise scale) (Gopi et al.; alpha = 3 in
Manzonelli et al. 2024).
"""
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .noise import secret as _random
from ._utils import check_int, check_positive, check_probability
from .accounting import ApproxDPEvent, ComposedEvent, LaplaceEvent, PrivacyReport

# Public cap on the number of candidate words: the lattice's rounding slack is accounted
# over this many coordinates.
_MAX_CANDIDATES = 1 << 24

__all__ = ["DPVocabulary", "analytic_gaussian_sigma", "policy_laplace_threshold",
           "policy_gaussian_threshold", "frequency_threshold"]

METHODS = ("policy_laplace", "policy_gaussian", "weighted_gaussian", "frequency_laplace",
           "frequency_gaussian")

_CITATION = {
    "policy_laplace": "Gopi et al. 2020, Policy Laplace (l1-descent)",
    "policy_gaussian": "Gopi et al. 2020, Policy Gaussian (l2-descent)",
    "weighted_gaussian": "Gopi et al. 2020, Weighted Gaussian",
    "frequency_laplace": "Carvalho, Wang & Gondara 2022, frequency-ordered greedy policy, Laplace",
    "frequency_gaussian": "Carvalho, Wang & Gondara 2022, frequency-ordered greedy policy, "
                          "Gaussian noise",
}


# --------------------------------------------------------------------------------------
# Noise and thresholds
# --------------------------------------------------------------------------------------
def analytic_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    """Smallest sigma for which N(0, sigma^2) noise at L2 ``sensitivity`` is
    (epsilon, delta)-DP, from the exact condition of Balle & Wang 2018 (Theorem 8):
    Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta."""
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta", high_open=True)
    sensitivity = check_positive(sensitivity, "sensitivity")

    def excess(log_s):
        s = math.exp(log_s)
        a, c = 0.5 / s, epsilon * s
        d = math.exp(log_ndtr(a - c)) - math.exp(epsilon + log_ndtr(-a - c))
        return d - delta

    lo, hi = math.log(1e-6), math.log(1e6)
    log_s = brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13)
    s = math.exp(log_s)
    while excess(math.log(s)) > 0:  # never below the target: nudge up past round-off
        s *= 1 + 1e-12
    return s * sensitivity


def policy_laplace_threshold(epsilon, delta, max_contribution):
    """rho of Gopi et al.'s (policy / weighted) Laplace mechanism, noise scale 1/epsilon."""
    b = 1.0 / check_positive(epsilon, "epsilon")
    t = np.arange(1, check_int(max_contribution, "max_contribution") + 1, dtype=np.float64)
    tail = -np.expm1(np.log1p(-delta) / t)            # 1 - (1 - delta)^(1/t)
    return float(np.max(1.0 / t + b * np.log(1.0 / (2.0 * tail))))


def policy_gaussian_threshold(sigma, delta, max_contribution):
    """rho of Gopi et al.'s (policy / weighted) Gaussian mechanism with noise ``sigma``."""
    t = np.arange(1, check_int(max_contribution, "max_contribution") + 1, dtype=np.float64)
    tail = -np.expm1(np.log1p(-delta / 2.0) / t)      # 1 - (1 - delta/2)^(1/t)
    return float(np.max(1.0 / np.sqrt(t) + sigma * norm.isf(tail)))


def _log_cdf(noise, x, scale):
    if noise == "laplace":
        return math.log1p(-0.5 * math.exp(-x / scale)) if x >= 0 else math.log(0.5) + x / scale
    return float(log_ndtr(x / scale))


def frequency_threshold(noise, scale, delta, n_exclusive):
    """rho with P(some of ``n_exclusive`` candidate words, one of weight 1 and the rest of
    weight 0, passes rho) = ``delta``: 1 - F(rho - 1) F(rho)^(t - 1) = delta, F the CDF of
    the noise (``"laplace"`` scale b or ``"gaussian"`` std sigma)."""
    t = check_int(n_exclusive, "n_exclusive")

    def excess(rho):
        log_pass_none = _log_cdf(noise, rho - 1.0, scale) + (t - 1) * _log_cdf(noise, rho, scale)
        return -math.expm1(log_pass_none) - delta

    lo, hi = 1.0, 2.0
    while excess(hi) > 0:
        hi = 1.0 + 2.0 * (hi - 1.0)
    return brentq(excess, lo, hi, xtol=1e-12, rtol=1e-14)


def _paper_frequency_threshold(noise, scale, delta):
    if noise == "laplace":
        return 1.0 + scale * math.log(1.0 / (2.0 * delta))
    return 1.0 + scale * float(norm.isf(delta / 2.0))


def _true_delta_single(noise, scale, rho, t):
    """Probability that some of t exclusive candidates passes rho (one of weight 1)."""
    return -math.expm1(_log_cdf(noise, rho - 1.0, scale) + (t - 1) * _log_cdf(noise, rho, scale))


# --------------------------------------------------------------------------------------
# Histogram policies (one user's update, vectorised)
# --------------------------------------------------------------------------------------
def _water_fill(gaps, budget=1.0):
    """l1-descent: add the same amount to every word, each capped at its gap, total budget."""
    total = gaps.sum()
    if total <= budget:
        return gaps.copy()
    g = np.sort(gaps)
    t = g.size
    cums = np.cumsum(g)
    totals = np.concatenate(([0.0], cums[:-1])) + (t - np.arange(t)) * g
    i = int(np.searchsorted(totals, budget))
    prev = cums[i - 1] if i > 0 else 0.0
    level = (budget - prev) / (t - i)
    return np.minimum(gaps, level)


def _l2_step(gaps, budget=1.0):
    """l2-descent: move towards the cut-off by a step of l2 norm min(budget, ||gaps||)."""
    z = float(np.sqrt((gaps * gaps).sum()))
    return gaps * (min(budget, z) / z)


def _greedy_fill(gaps, budget=1.0):
    """Fill the words in the given order up to their gap until the budget is spent."""
    c = np.cumsum(gaps)
    inc = np.zeros_like(gaps)
    full = c < budget
    inc[full] = gaps[full]
    j = int(np.argmin(full)) if not full.all() else gaps.size
    if j < gaps.size:
        inc[j] = budget - (c[j - 1] if j > 0 else 0.0)
    return inc


# --------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------
def _check_token_lists(token_lists, name="token_lists"):
    """A list of documents, each a list (or tuple) of str tokens; returned as lists.

    A count matrix, an array or a list of strings is refused with a TypeError: printing a
    row of counts as a "token" would release a vocabulary of numbers."""
    import scipy.sparse as sp
    if isinstance(token_lists, (str, bytes)):
        raise TypeError(f"{name} must be a list of token lists, not a string")
    if sp.issparse(token_lists) or isinstance(token_lists, np.ndarray) \
            or hasattr(token_lists, "iloc"):
        raise TypeError(f"{name} must be a list of token lists (list of list of str), got "
                        f"{type(token_lists).__name__}: a document-term matrix is not a token "
                        "list (tokenize the texts, e.g. with dptm.text.preprocess)")
    try:
        items = list(token_lists)
    except TypeError:
        raise TypeError(f"{name} must be a list of token lists (list of list of str), got "
                        f"{type(token_lists).__name__}") from None
    docs = []
    for i, doc in enumerate(items):
        if isinstance(doc, (str, bytes)):
            raise TypeError(f"{name}[{i}] is a string; each document must be a list of tokens "
                            "(use dptm.text.preprocess to tokenize text)")
        if not isinstance(doc, (list, tuple)):
            raise TypeError(f"{name}[{i}] must be a list of str tokens, got "
                            f"{type(doc).__name__} (a count matrix is not a token list)")
        for j, t in enumerate(doc):
            if not isinstance(t, str):
                raise TypeError(f"{name}[{i}][{j}] must be a str token, got "
                                f"{type(t).__name__} {t!r:.40}")
        docs.append(list(doc))
    if not docs:
        raise ValueError(f"{name} is an empty corpus: it has 0 documents")
    return docs


class DPVocabulary(BaseEstimator):
    """Differentially private vocabulary selection (DP set union).

    Parameters
    ----------
    target_epsilon : float > 0, default=1.0
    target_delta : float in (0, 1), default=1e-5
    method : {"frequency_laplace", "frequency_gaussian", "policy_laplace", "policy_gaussian", \
"weighted_gaussian"}, default="frequency_laplace"
        See the module docstring. ``"frequency_laplace"`` is Carvalho et al. 2022, the
        mechanism Manzonelli et al. 2024 uses for FDPTM.
    max_contribution : int >= 1, default=100
        Delta_0: each user contributes at most this many distinct words; the threshold's
        delta is computed from it (never from the users of the data set).
    selection : {"frequent", "random"}, default="frequent"
        Which Delta_0 words a user with more contributes: its most frequent ones (counts in
        its own documents, ties broken at random) or a uniformly random subset (Gopi et
        al.'s choice). Either is a function of that user's data alone, which is all the
        DPSU analysis needs.
    alpha : float > 0, default=3.0
        Cut-off Gamma = rho + alpha x (noise scale).
    paper_threshold : bool, default=False
        Frequency methods only: use Carvalho et al.'s single-word threshold (see the module
        docstring); the report then gives the delta that actually holds for Delta_0
        candidate words of the added user.
    random_state : None, int, SeedSequence or numpy.random.Generator
        None (default): the user order, the subsets and the noise come from the secret
        generator. Anything else is a labelled test mode (``SeededPrivacyWarning``).

    Attributes
    ----------
    vocabulary_ : ndarray of str
        The released words, sorted alphabetically.
    threshold_ : float
        rho.
    cutoff_ : float
        Gamma.
    noise_scale_ : float
        Laplace scale b or Gaussian sigma actually drawn.
    lattice_granularity_ : float or None
        g of the exact Laplace noise (None for the floating-point Gaussian methods).
    privacy_ : dptm.accounting.PrivacyReport
        Its ``vocabulary`` field is the provenance string "DP-selected (epsilon=..,
        delta=.., ...)".

    Privacy
    -------
    Adjacency: ``user`` (add or remove all documents of one user) when ``users`` are
    given, else ``document`` (each document is a user). Each user's contribution is its set
    of distinct words (capped at Delta_0), entering a weighted histogram with l1 (or l2)
    budget 1; the histogram gets Laplace or Gaussian noise and only words above rho are
    released. Released: the vocabulary (sorted), nothing else; noisy weights and counts are
    not exposed. (epsilon, delta)-DP: the noise gives epsilon (Gaussian: (epsilon,
    delta/2)), the threshold bounds the probability of releasing a word no other user has
    (delta, or delta/2).

    Examples
    --------
    >>> from dptm import DPVocabulary
    >>> docs = [["cat", "dog"], ["dog"], ["cat", "dog", "fish"]] * 200
    >>> DPVocabulary(target_epsilon=1.0, random_state=0).fit(docs).vocabulary_.tolist()
    ['cat', 'dog', 'fish']
    """

    def __init__(self, target_epsilon=1.0, target_delta=1e-5, *, method="frequency_laplace",
                 max_contribution=100, selection="frequent", alpha=3.0, paper_threshold=False,
                 random_state=None):
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.method = method
        self.max_contribution = max_contribution
        self.selection = selection
        self.alpha = alpha
        self.paper_threshold = paper_threshold
        self.random_state = random_state

    def _check_params(self):
        eps = check_positive(self.target_epsilon, "target_epsilon")
        delta = check_probability(self.target_delta, "target_delta", high_open=True)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_positive(self.alpha, "alpha")
        if self.selection not in ("frequent", "random"):
            raise ValueError(f"selection must be 'frequent' or 'random', got {self.selection!r}")
        if not isinstance(self.paper_threshold, (bool, np.bool_)):
            raise TypeError(f"paper_threshold must be True or False, got {self.paper_threshold!r}")
        frequency = self.method.startswith("frequency")
        if self.paper_threshold and not frequency:
            raise ValueError("paper_threshold=True applies to the frequency_* methods only")
        if self.max_contribution is None:
            raise ValueError(
                "max_contribution must be an integer >= 1 (Delta_0, the per-user cap on distinct "
                "words); the threshold's delta is computed from this cap (also with "
                "paper_threshold=True), never from the users of the data set")
        cap = check_int(self.max_contribution, "max_contribution", minimum=1)
        return eps, delta, cap

    def _noise_and_threshold(self, eps, delta, cap):
        """(noise, scale, rho, true_delta, granularity, l1_sensitivity): all functions of
        the public parameters. Laplace methods draw exact discrete Laplace noise on the
        lattice g Z (g a power of two, at most scale / 2^39): the L1 sensitivity 1 grows by
        the rounding slack g per coordinate over at most ``_MAX_CANDIDATES`` candidate
        words, and rho by 2 g (rounding of the added user's weight, discrete tail)."""
        noise = "laplace" if self.method.endswith("laplace") else "gaussian"
        g = None
        sens = 1.0
        if noise == "laplace":
            g = 2.0 ** math.ceil(math.log2(2.0 / eps * 2.0 ** -40))
            sens = 1.0 + g * _MAX_CANDIDATES
            scale = sens / eps
        else:
            scale = analytic_gaussian_sigma(eps, delta / 2.0)
        delta_thr = delta if noise == "laplace" else delta / 2.0
        true_delta = delta
        if self.method.startswith("frequency"):
            if self.paper_threshold:
                rho = _paper_frequency_threshold(noise, scale, delta)
                # every one of the added user's Delta_0 words is a candidate
                true_delta = (delta - delta_thr) + _true_delta_single(noise, scale, rho, cap)
            else:
                rho = frequency_threshold(noise, scale, delta_thr, cap)
        elif noise == "laplace":
            rho = policy_laplace_threshold(1.0 / scale, delta, cap)
        else:
            rho = policy_gaussian_threshold(scale, delta, cap)
        if g is not None:
            rho += 2.0 * g
        return noise, scale, rho, true_delta, g, sens

    @_random.private_fit
    def fit(self, token_lists, groups=None, *, users=None):
        """Select the vocabulary.

        Parameters
        ----------
        token_lists : list of list of str
            One token list per document (e.g. from :func:`dptm.text.preprocess`). A count
            matrix is refused (TypeError).
        groups : array-like of shape (n_docs,), optional
            The user (author) of each document; each document is its own user when None.
        users : deprecated name of ``groups``.

        Returns
        -------
        self
        """
        import warnings

        from .noise.secret import private_generator
        from .exceptions import NotHardenedWarning, user_stacklevel

        from ._utils import groups_argument
        users = groups_argument(groups, users, "DPVocabulary")
        eps, delta, cap = self._check_params()
        docs = _check_token_lists(token_lists)
        n_docs = len(docs)
        if users is None:
            uidx = np.arange(n_docs)
        else:
            # the model stage's definition of a user (ids compared like dict keys)
            from .models.user_contributions import check_groups
            uidx = check_groups(users, n_docs)

        # words -> ids; per-user distinct words with their counts in the user's documents
        index = {}
        tok_user, tok_word = [], []
        for d, doc in enumerate(docs):
            for t in doc:
                tok_word.append(index.setdefault(t, len(index)))
            tok_user.extend([uidx[d]] * len(doc))
        words = np.array(list(index), dtype=object)
        n_words = len(index)
        if n_words > _MAX_CANDIDATES:
            # the count of the private text is not named: the error message is seen
            raise ValueError(f"token_lists has more than {_MAX_CANDIDATES} distinct words, "
                             "the most the exact noise's accounting allows")
        noise, scale, rho, true_delta, g, sens = self._noise_and_threshold(eps, delta, cap)
        if noise == "gaussian":
            warnings.warn(f"DPVocabulary(method={self.method!r}) draws floating-point Gaussian noise "
                          "(not hardened: its tails are not exact); the Laplace methods draw exact "
                          "discrete noise", NotHardenedWarning, stacklevel=user_stacklevel())
        # One secret stream per fit (user order, tie-breaks, subsets, noise); not kept.
        gen, seeded = private_generator(self.random_state, "DPVocabulary")
        key = np.asarray(tok_user, dtype=np.int64) * n_words + np.asarray(tok_word, dtype=np.int64)
        ukey, counts = np.unique(key, return_counts=True)
        kuser, kword = ukey // n_words, ukey % n_words
        bounds = np.searchsorted(kuser, np.arange(int(uidx.max()) + 2 if n_docs else 1))
        users_present = np.flatnonzero(np.diff(bounds) > 0)

        gamma_cut = rho + float(self.alpha) * scale
        H = np.zeros(n_words)
        candidate = np.zeros(n_words, dtype=bool)
        method = self.method
        for user in gen.permutation(users_present):
            lo, hi = bounds[user], bounds[user + 1]
            w, c = kword[lo:hi], counts[lo:hi]
            if w.size > cap:
                if self.selection == "random":
                    pick = gen.choice(w.size, size=cap, replace=False)
                else:
                    order = gen.permutation(w.size)
                    pick = order[np.argsort(-c[order], kind="stable")[:cap]]
                w, c = w[pick], c[pick]
            candidate[w] = True
            if method == "weighted_gaussian":
                H[w] += 1.0 / math.sqrt(w.size)
                continue
            if method.startswith("frequency"):
                order = gen.permutation(w.size)                   # random tie-break
                order = order[np.argsort(-c[order], kind="stable")]
                w = w[order]
            gaps = gamma_cut - H[w]
            below = gaps > 0
            if not below.any():
                continue
            w, gaps = w[below], gaps[below]
            if method == "policy_laplace":
                H[w] += _water_fill(gaps)
            elif method == "policy_gaussian":
                H[w] += _l2_step(gaps)
            else:
                H[w] += _greedy_fill(gaps)

        cand = np.flatnonzero(candidate)
        noisy, eff = _noisy_weights(H[cand], noise, scale, g, gen)
        del gen
        released = cand[noisy > rho]
        self.vocabulary_ = np.array(sorted(words[released].tolist()), dtype=str)
        self.threshold_ = float(rho)
        self.cutoff_ = float(gamma_cut)
        self.noise_scale_ = float(eff)
        self.lattice_granularity_ = g
        self.privacy_ = self._report(eps, delta, true_delta, cap, users is None, sens, seeded)
        return self

    def _report(self, eps, delta, true_delta, cap, per_document, sens, seeded):
        adjacency = "document" if per_document else "user"
        noise = "Laplace" if self.method.endswith("laplace") else "Gaussian"
        notes = [
            f"{_CITATION[self.method]}: weighted histogram with per-user budget 1, "
            f"{noise} noise scale {self.noise_scale_:.6g}, threshold rho={self.threshold_:.6g}, "
            f"cut-off Gamma={self.cutoff_:.6g} (alpha={self.alpha:g})",
            f"each user contributes at most Delta_0={cap} distinct words "
            f"({'its most frequent' if self.selection == 'frequent' else 'a uniform random subset'})",
            "released words are sorted alphabetically; weights and counts are not released",
            f"the guarantee is for corpora of at most {_MAX_CANDIDATES} distinct words (more "
            "are refused, a refusal that one added user can cause)",
        ]
        if self.lattice_granularity_ is not None:
            notes.append(
                f"exact discrete Laplace noise on the lattice g Z, g = "
                f"2^{int(math.log2(self.lattice_granularity_))}; L1 sensitivity 1 + g x "
                f"{_MAX_CANDIDATES} (rounding slack over at most that many candidate words), rho "
                "raised by 2 g")
        else:
            notes.append("floating-point Gaussian sampler: not hardened")
        if per_document:
            notes.append("no user ids given: each document is its own user (document adjacency)")
        if self.paper_threshold:
            notes.append(
                f"paper_threshold=True: Carvalho et al.'s single-word threshold; it was claimed "
                f"to give delta={delta:g}, but with all Delta_0={cap} words of the added user "
                f"candidates the delta that holds is {true_delta:.3g} (reported below)")
        true_delta = min(true_delta, 1.0 - 1e-12)
        if self.lattice_granularity_ is not None:
            # epsilon from the noise actually drawn, delta from the threshold
            event = ComposedEvent((
                LaplaceEvent(self.noise_scale_, sensitivity=sens, discrete=True,
                             label=f"DP vocabulary noise ({self.method})"),
                ApproxDPEvent(0.0, true_delta, label="DP vocabulary threshold rho: a word only "
                              "the added user has passes with probability <= delta")))
        else:
            event = ApproxDPEvent(eps, true_delta, label=f"DP vocabulary ({self.method}, "
                                  f"Gaussian sigma={self.noise_scale_:.6g}, not hardened)")
        return PrivacyReport(
            event, adjacency, notes=notes, default_delta=min(true_delta, 0.5),
            description=f"vocabulary of {self.vocabulary_.size} words (DP set union)",
            seeded=seeded,
            vocabulary=f"DP-selected (epsilon={eps:g}, delta={true_delta:.3g}, {adjacency}-level "
                       f"DP set union, {self.method})")

    def transform(self, token_lists):
        """Keep only the released words in each token list (the SAN step of FDPTM)."""
        check_is_fitted(self, "vocabulary_")
        keep = set(self.vocabulary_.tolist())
        return [[t for t in doc if t in keep] for doc in _check_token_lists(token_lists)]

    def fit_transform(self, token_lists, groups=None, *, users=None):
        return self.fit(token_lists, groups, users=users).transform(token_lists)


def _noisy_weights(weights, noise, scale, granularity, gen):
    """``(noisy, effective_scale)``: the candidate words' weights plus the selection noise.

    Laplace: the weights rounded to the lattice g Z plus g times exact discrete
    Laplace(scale / g) noise (every value an exact multiple of g). Gaussian: floating-point
    N(0, scale^2) (not hardened)."""
    from .noise.mechanisms import gaussian_noise, lattice_laplace
    if noise == "laplace":
        out, _, eff = lattice_laplace(weights, scale, gen, granularity=granularity)
        return out, eff
    return np.asarray(weights, dtype=np.float64) + gaussian_noise(np.shape(weights), scale, gen), scale
