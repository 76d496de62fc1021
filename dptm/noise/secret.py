"""The secret randomness of private mechanisms.

A private mechanism's guarantee holds only against an adversary who cannot predict its
random draws. Every private estimator therefore draws its noise, initial topics, sampling
decisions and token order from :func:`secret_generator`: AES-128 in counter mode
(``randomgen.AESCounter``, AES-NI where the CPU has it) keyed with 128 bits from the
operating system's entropy (``os.urandom``). AES-CTR is the standard construction of a
cryptographically secure generator (NIST SP 800-90A's CTR_DRBG is built on it): its output
reveals nothing about its key or about its other outputs, so releasing one draw (for
example a noisy count) does not expose any other. The key is never stored on an estimator,
pickled, printed or derived from anything released; the generator is dropped when ``fit``
returns, and :func:`private_fit` drops it (with the noise drawn so far) from the traceback
of a fit that fails.

A seed given to a private estimator is a labelled **test mode**: the same AES generator
keyed from the seed (reproducible), a :class:`~dptm.exceptions.SeededPrivacyWarning`, and a
report whose first line says that the guarantee holds only while the seed stays secret.
"""
import functools
import inspect
import numbers
import os
import sys
import traceback
import warnings

import numpy as np
from randomgen import AESCounter

from .._utils import check_random_state
from ..exceptions import SeededPrivacyWarning, user_stacklevel

__all__ = ["secret_generator", "private_generator", "public_seed", "shuffle_within_segments",
           "private_fit"]


def secret_generator():
    """A fresh ``numpy.random.Generator`` over AES-128-CTR keyed from ``os.urandom``.

    Kernels draw from it through ``gen.bit_generator`` (numpy's BitGenerator C API), like
    any other generator; ``gen.spawn(n)`` gives independent child streams.
    """
    key = int.from_bytes(os.urandom(16), "little")
    return np.random.Generator(AESCounter(key=key))


def private_generator(random_state, owner):
    """The generator a private mechanism draws from, and whether it is in test mode.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        None (the default of every private estimator): the secret generator. Anything else:
        test mode, reproducible, with a :class:`~dptm.exceptions.SeededPrivacyWarning`.
    owner : str
        Name of the estimator or function, for the warning.

    Returns
    -------
    generator : numpy.random.Generator
        Use it within the call; never store it (or a seed drawn from it) on an object.
    seeded : bool
        True in test mode; pass it to ``PrivacyReport(seeded=...)``.
    """
    if random_state is None:
        return secret_generator(), False
    if isinstance(random_state, np.random.Generator):
        gen = random_state
    elif isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) \
            and not isinstance(random_state, bool):
        check_random_state(random_state)          # same validation as everywhere
        if isinstance(random_state, np.random.SeedSequence):
            # a copy: spawning children from the generator must not advance the caller's
            # SeedSequence (the same seed would give another model on the next fit)
            random_state = np.random.SeedSequence(
                random_state.entropy, spawn_key=random_state.spawn_key,
                pool_size=random_state.pool_size,
                n_children_spawned=random_state.n_children_spawned)
        gen = np.random.Generator(AESCounter(seed=random_state))
    else:
        gen = check_random_state(random_state)    # raises the usual TypeError
    warnings.warn(
        f"{owner} was given random_state={_describe(random_state)}: test mode. Whoever knows "
        "the seed can regenerate and subtract the noise, so the privacy guarantee holds only "
        "while the seed stays secret; leave random_state=None for a model you publish.",
        SeededPrivacyWarning, stacklevel=user_stacklevel())
    return gen, True


def _describe(random_state):
    if isinstance(random_state, numbers.Integral):
        return "<an integer seed>"
    return f"<a {type(random_state).__name__}>"


def public_seed(gen, seeded):
    """A seed for randomness that only post-processes released values (e.g. the fold-in
    sampler of ``transform``): fresh OS entropy, unrelated to the secret stream; in test
    mode drawn from ``gen`` so that a seeded fit stays reproducible."""
    if seeded:
        return int(gen.integers(2**63))
    return int.from_bytes(os.urandom(8), "little") >> 1


def shuffle_within_segments(ptr, values, gen):
    """``values`` with each segment ``values[ptr[i]:ptr[i+1]]`` uniformly permuted.

    Exact: one uniformly random permutation per segment (Fisher-Yates with unbiased bounded
    integers, in C), drawn from ``gen``. Used to visit a document's tokens in a secret
    random order instead of by word id. Returns a new array; ``values`` is not modified.
    """
    from .. import _cgs
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    out = np.array(values, copy=True, order="C")
    if ptr.ndim != 1 or ptr.size < 1 or ptr[0] != 0 or ptr[-1] != out.shape[0] \
            or np.any(np.diff(ptr) < 0):
        raise ValueError("ptr must start at 0, be non-decreasing and end at len(values)")
    perm = np.arange(out.shape[0], dtype=np.int64)
    _cgs.shuffle_segments(ptr, perm, gen.bit_generator)
    return out[perm]


def private_fit(method=None, *, reset=True):
    """Decorator of a private estimator's ``fit`` (or a function whose first argument is the
    estimator; with ``reset=False``, any function that draws from a secret generator, such
    as the local randomizers): when it raises, the secrets it held do not outlive it.

    The locals of every frame the exception passed through below the decorated call (the
    secret generator, its child streams, the noise and the releases drawn so far) are
    cleared with :func:`traceback.clear_frames` before the exception leaves, also in its
    chained causes and contexts; an interactive session's ``sys.last_traceback`` or an
    error reporter that captures frames then finds nothing secret. With ``reset`` (the
    default, for ``fit``) the estimator is also left unfitted: every attribute but its
    constructor parameters is removed, so no partial release stays on it. ``partial_fit``
    uses ``reset=False`` (its earlier state is accounted already). Post-mortem debugging of
    a failed private fit therefore shows no locals below the call: they held the secret.
    """
    def decorate(fit):
        @functools.wraps(fit)
        def wrapper(*args, **kwargs):
            outer = sys.exc_info()[1]        # an exception being handled by the caller
            try:
                return fit(*args, **kwargs)
            except BaseException as exc:
                _forget_frames(exc, outer)
                if reset:
                    _unfit(args[0])          # the estimator (``self`` of ``fit``)
                raise
        return wrapper
    return decorate if method is None else decorate(method)


def _forget_frames(exc, outer):
    """Clear the frames of ``exc`` and of the exceptions chained to it, down to (not
    including) ``outer``, which belongs to the caller."""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or e is outer or id(e) in seen:
            continue
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)     # executing frames are skipped
        todo += [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]


def _unfit(est):
    """Remove every attribute of ``est`` that is not a constructor parameter."""
    try:
        keep = set(inspect.signature(type(est).__init__).parameters)
        state = vars(est)
    except (TypeError, ValueError):      # pragma: no cover - not an estimator object
        return
    for name in [k for k in state if k not in keep and not k.startswith("_sklearn")]:
        del state[name]          # set_output's configuration (_sklearn_*) is the user's
