"""Client side of local differential privacy: randomized response on word-presence bits.

Each data owner (client) turns their document into the binary word-presence vector over
the public vocabulary of V words (bit ``t`` is 1 when word ``t`` occurs at least once) and
sends the server a randomized version of it (Zhao et al. 2021, Section V-A): every bit is

* kept as it is with probability ``1 - f``,
* set to 1 with probability ``f / 2``,
* set to 0 with probability ``f / 2``,

independently of the other bits. Equivalently each bit is flipped with probability
``f / 2``; :func:`randomize` draws the number of flipped positions from Binomial(V, f/2) and
then the positions uniformly without replacement, so its cost is O(number of flips +
number of words in the document) and it never materialises a dense V-vector unless the
flips are dense. Nothing here needs the server: a client runs :func:`randomize` on its own
machine. Its randomness is secret: every call draws from a fresh cryptographically secure
generator keyed from the operating system (:func:`dptm.noise.secret.secret_generator`); whoever
could replay a client's draws could undo its flips. A seed is a labelled test mode
(:class:`~dptm.exceptions.SeededPrivacyWarning`).

What the server sees: only the noisy V-bit presence vector. Word counts (how often a word
occurs), word order and words outside the vocabulary are never sent.

Privacy (local DP, Zhao et al. 2021 Theorem 4). Let ``eps_w = log((1 - f/2) / (f/2))``.

* Two inputs that differ in one presence bit (a word added to or removed from the set of
  words of the document): ``eps_w``-LDP. This is the paper's "per word" privacy level.
* Replacing one word by another word the document did not contain changes two bits:
  ``2 * eps_w``.
* Two arbitrary documents differ in up to V bits: ``V * eps_w``-LDP, which is the standard
  local DP guarantee for the whole document (tight: the likelihood ratio of the all-ones
  output between the all-ones and all-zeros inputs is exactly ``exp(V * eps_w)``).

:func:`epsilon_from_f` and :func:`f_from_epsilon` convert with a number of differing bits
``n_bits`` (1, 2 or V for the three cases above).
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._utils import check_probability
from ..accounting.events import epsilon_from_flip, flip_from_epsilon
from .secret import private_fit, private_generator

__all__ = ["randomize", "randomize_matrix", "epsilon_from_f", "f_from_epsilon",
           "presence_bits"]


def _check_n_bits(n_bits):
    if isinstance(n_bits, bool) or not isinstance(n_bits, numbers.Integral):
        raise TypeError(f"n_bits must be an integer, got {type(n_bits).__name__}")
    if n_bits < 1:
        raise ValueError(f"n_bits must be >= 1, got {n_bits}")
    return int(n_bits)


def epsilon_from_f(f, n_bits=1):
    """Local epsilon of randomized response with flip parameter ``f`` over ``n_bits`` bits.

    Parameters
    ----------
    f : float in (0, 1]
        Flip parameter of the clients' randomizer.
    n_bits : int, default=1
        How many presence bits two neighbouring inputs may differ in: 1 per word (the
        paper's privacy level), 2 for replacing one word by another, V (the vocabulary
        size) for a whole document.

    Returns
    -------
    float
        ``n_bits * log((1 - f/2) / (f/2))`` (Zhao et al. 2021, Theorem 4).
    """
    return _check_n_bits(n_bits) * epsilon_from_flip(f)


def f_from_epsilon(epsilon, n_bits=1):
    """Flip parameter giving local ``epsilon`` over ``n_bits`` differing bits.

    Inverse of :func:`epsilon_from_f`: ``f = 2 / (1 + exp(epsilon / n_bits))``.
    """
    n_bits = _check_n_bits(n_bits)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
    return flip_from_epsilon(float(epsilon) / n_bits)


def _vocabulary_size_and_index(vocabulary):
    """(V, word -> id mapping or None) from an int, a sequence of words or a dict."""
    if isinstance(vocabulary, bool):
        raise TypeError("vocabulary must be an int (V), a sequence of words or a dict word -> id")
    if isinstance(vocabulary, numbers.Integral):
        if vocabulary < 1:
            raise ValueError(f"vocabulary size must be >= 1, got {vocabulary}")
        return int(vocabulary), None
    if isinstance(vocabulary, dict):
        ids = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(vocabulary))
        V = len(vocabulary)
        if V == 0:
            raise ValueError("vocabulary is empty")
        if ids.min() < 0 or ids.max() >= V or np.unique(ids).size != V:
            raise ValueError("a vocabulary dict must map its V words to the ids 0..V-1")
        return V, vocabulary
    if isinstance(vocabulary, str):
        raise TypeError("vocabulary must be an int (V), a sequence of words or a dict word -> id, "
                        "got a single string")
    try:
        words = list(vocabulary)
    except TypeError:
        raise TypeError("vocabulary must be an int (V), a sequence of words or a dict word -> id, "
                        f"got {type(vocabulary).__name__}") from None
    if not words:
        raise ValueError("vocabulary is empty")
    index = {w: i for i, w in enumerate(words)}
    if len(index) != len(words):
        raise ValueError("vocabulary contains duplicate words")
    return len(words), index


def presence_bits(doc, vocabulary):
    """Word ids present in one document, sorted and unique.

    Parameters
    ----------
    doc : bool array of length V, sparse (1, V) row, sequence of str or sequence of int
        A boolean array or a sparse row is read as presence bits (non-zero = present); a
        sequence of strings as tokens, looked up in ``vocabulary`` (tokens outside it are
        dropped: the vocabulary is public, other words are never sent); a sequence of
        integers as word ids (repeats allowed: only presence matters). Integer 0/1 arrays
        are word ids, not bits: pass bits as ``dtype=bool``.
    vocabulary : int, sequence of str or dict str -> int
        The public vocabulary, or just its size V when ``doc`` is bits or ids.

    Returns
    -------
    ids : ndarray of int64
    n_words : int
        V.
    """
    V, index = _vocabulary_size_and_index(vocabulary)
    if sp.issparse(doc):
        if doc.ndim == 2 and doc.shape[0] != 1:
            raise ValueError(f"doc must be a single row (1, V), got shape {doc.shape}")
        if doc.shape[-1] != V:
            raise ValueError(f"doc has {doc.shape[-1]} columns, the vocabulary has {V} words")
        row = sp.csr_matrix(doc)
        row.eliminate_zeros()
        return np.unique(row.indices.astype(np.int64)), V
    if isinstance(doc, str):
        raise TypeError("doc must be a token list, not a single string (tokenize it first, "
                        "e.g. with dptm.text)")
    arr = np.asarray(doc) if not isinstance(doc, (list, tuple)) or len(doc) else np.zeros(0, np.int64)
    if arr.ndim != 1:
        raise ValueError(f"doc must be one document (a 1-D sequence), got {arr.ndim} dimensions")
    if arr.dtype == bool:
        if arr.size != V:
            raise ValueError(f"doc has {arr.size} presence bits, the vocabulary has {V} words")
        return np.flatnonzero(arr).astype(np.int64), V
    if arr.dtype.kind in "US" or (arr.dtype == object and arr.size and isinstance(arr[0], str)):
        if index is None:
            raise TypeError("doc holds tokens (strings): pass the vocabulary as a sequence of "
                            "words or a dict word -> id, not its size")
        ids = [index[w] for w in arr.tolist() if w in index]
        return np.unique(np.asarray(ids, dtype=np.int64)), V
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64), V
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"doc must be presence bits (bool), tokens (str) or word ids (int), "
                            f"got dtype {arr.dtype}")
    ids = arr.astype(np.int64)
    if ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"word ids in doc must lie in [0, {V}), got range "
                         f"[{ids.min()}, {ids.max()}]")
    return np.unique(ids), V


# reset=False: no estimator to unfit; a failure's traceback keeps neither the generator nor
# the flips drawn so far (which, with the true bits, would undo the randomization)
@private_fit(reset=False)
def randomize(doc, vocabulary, f, rng=None):
    """Randomized response on one document's word-presence vector (client side).

    Each of the V presence bits is kept with probability ``1 - f`` and otherwise replaced by
    a fair coin, i.e. flipped with probability ``f/2`` independently (Zhao et al. 2021
    Section V-A, Step 2). The number of flips is drawn from Binomial(V, f/2), then the
    flipped positions uniformly without replacement: O(flips + words in the document).

    Parameters
    ----------
    doc : bool array of length V, sparse (1, V) row, sequence of str or sequence of int
        The document; see :func:`presence_bits`. Only presence is used: counts and order
        are discarded before randomizing.
    vocabulary : int, sequence of str or dict str -> int
        The public vocabulary (or its size V when ``doc`` is bits or word ids).
    f : float in (0, 1]
        Flip parameter; the local epsilon per word is ``log((1 - f/2) / (f/2))``.
    rng : None, int, SeedSequence or numpy.random.Generator
        None (default): a fresh secret generator for this call. Anything else is a test
        mode (reproducible, :class:`~dptm.exceptions.SeededPrivacyWarning`): the flips can
        be replayed by whoever knows the seed.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (1, V), dtype int8
        The noisy presence bits (the only thing sent to the server).

    Privacy
    -------
    Local DP, each client randomizes on its own device. ``eps_w`` per presence bit
    (a word added to or removed from the document's word set), ``2 eps_w`` for replacing a
    word by a new one, ``V eps_w`` for the whole document (any two documents). Counts,
    order and out-of-vocabulary words are not released.

    Examples
    --------
    >>> from dptm.local import randomize
    >>> noisy = randomize(["vote", "senate", "vote"], ["poll", "senate", "vote"], f=0.2)
    >>> noisy.shape
    (1, 3)
    """
    f = check_probability(f, "f")
    ids, V = presence_bits(doc, vocabulary)
    rng, _ = private_generator(rng, "dptm.local.randomize")
    n_flips = int(rng.binomial(V, f / 2.0))
    flips = np.sort(rng.choice(V, size=n_flips, replace=False)) if n_flips else ids[:0]
    out = np.setxor1d(ids, flips, assume_unique=True).astype(np.int32)
    return sp.csr_matrix((np.ones(out.size, dtype=np.int8), out, np.array([0, out.size])),
                         shape=(1, V))


def _bernoulli_positions(n, p, rng):
    """Sorted positions in [0, n) of independent Bernoulli(p) successes, by geometric gaps:
    O(number of successes)."""
    if n == 0 or p <= 0.0:
        return np.zeros(0, dtype=np.int64)
    chunks = []
    last = -1
    while True:
        remaining = n - 1 - last
        k = int(remaining * p + 6.0 * np.sqrt(remaining * p + 1.0) + 16)
        pos = last + np.cumsum(rng.geometric(p, size=k), dtype=np.int64)
        if pos[-1] >= n:
            chunks.append(pos[pos < n])
            break
        chunks.append(pos)
        last = int(pos[-1])
    return np.concatenate(chunks)


@private_fit(reset=False)
def randomize_matrix(X, f, random_state=None):
    """Randomize every row of a document-term matrix, as if each row's owner ran
    :func:`randomize` (simulation of many clients; same distribution, vectorised).

    The flips of all rows are drawn together from one stream (geometric gaps between the
    independent Bernoulli(f/2) flips of the flattened n_docs x V bit matrix), so a row is
    distributed exactly as ``randomize`` would produce, but is not the same draw. For a
    real deployment every client calls :func:`randomize` with its own randomness.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_docs, n_words)
        Counts or bits; only presence (non-zero) is used.
    f : float in (0, 1]
    random_state : None, int, SeedSequence or numpy.random.Generator
        None (default): a fresh secret generator. Anything else: test mode (warned).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_docs, n_words), dtype int8
        Noisy presence bits, one row per document.

    Privacy
    -------
    As :func:`randomize`, for every row independently.
    """
    f = check_probability(f, "f")
    X = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X))
    if X.ndim != 2:
        raise ValueError("X must be a 2-D (n_docs, n_words) matrix")
    M, V = X.shape
    if M == 0 or V == 0:
        raise ValueError(f"X must have at least one document and one word, got shape {X.shape}")
    if X.data.size and not np.all(np.isfinite(X.data.astype(np.float64))):
        raise ValueError("X contains NaN or infinity")
    if X.data.size and np.any(X.data < 0):
        raise ValueError("X must be non-negative counts or bits")
    X = X.copy()
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    rng, _ = private_generator(random_state, "dptm.local.randomize_matrix")
    rows = np.repeat(np.arange(M, dtype=np.int64), np.diff(X.indptr))
    truth = rows * V + X.indices.astype(np.int64)
    flips = _bernoulli_positions(M * V, f / 2.0, rng)
    out = np.setxor1d(truth, flips, assume_unique=True)
    out_rows = out // V
    indptr = np.zeros(M + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_rows, minlength=M), out=indptr[1:])
    return sp.csr_matrix((np.ones(out.size, dtype=np.int8), (out % V).astype(np.int32), indptr),
                         shape=(M, V))
