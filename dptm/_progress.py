"""Progress reporting through :mod:`logging` (logger ``"dptm"``), with an optional tqdm bar.

The package logger has a ``NullHandler`` (set in ``dptm/__init__.py``): dptm never
configures logging. ``verbose`` keeps its meaning:

* ``verbose=0``: the estimator emits nothing;
* ``verbose>=1``: the estimator logs its progress at INFO on ``logging.getLogger("dptm")``.
  For the duration of that fit only, the logger's level is lowered to INFO if it was
  higher, and when the application configured no handler (neither on ``"dptm"`` nor on
  the root logger) a stderr handler is attached; both are undone when the fit returns.
  ``verbose>=2`` logs every iteration instead of every tenth.
* ``verbose=None`` (where an estimator allows it): the records are emitted but nothing
  is configured: they appear only if the application's logging lets INFO through.

Nesting: only the outermost fit reports. While a dptm estimator fits, every dptm
estimator it fits inside (TopicDP's refits, FDPTM's stages, LiRA's shadow models) is
silent whatever its own ``verbose``, and the outer one logs one line per inner model or
per chunk of them. Inner models fitted in other processes (joblib) are silenced by the
outer one (:func:`silenced`), since a context does not cross processes.

``set_progress("tqdm")`` replaces the lines of verbose fits by a tqdm bar (the optional
extra ``dptm[progress]``; tqdm is imported only then).

Privacy: the progress of a private model shows iteration numbers out of the public
``max_iter`` (or counts of public quantities) and the estimator's name: no likelihood,
perplexity or other metric of the private data, and no timing (the bar's format has no
elapsed time or rate: how long a private fit takes depends on the private data).
"""
import contextlib
import contextvars
import functools
import logging
import sys

logger = logging.getLogger("dptm")

__all__ = ["logger", "set_progress", "get_progress", "fit_scope", "silenced", "is_reporting",
           "log", "update_bar"]

_STYLES = ("log", "tqdm")
_style = "log"
# (owner, bar) of the outermost fit under way in this context, or None
_SCOPE = contextvars.ContextVar("dptm_progress_scope", default=None)
# tqdm's bar without elapsed time, remaining time or rate (timings of private fits leak)
_BAR_FORMAT = "{desc}: {n_fmt}/{total_fmt} |{bar}|"


def set_progress(style="log"):
    """Choose how verbose fits report progress: ``"log"`` (lines on the ``"dptm"``
    logger, the default) or ``"tqdm"`` (a progress bar on stderr; needs tqdm,
    ``pip install 'dptm[progress]'``). Returns the previous style.

    The bar shows counts only (no elapsed time, no rate), like the log lines.
    """
    global _style
    if style not in _STYLES:
        raise ValueError(f"style must be one of {list(_STYLES)}, got {style!r}")
    if style == "tqdm":
        try:
            import tqdm  # noqa: F401
        except ImportError as exc:
            raise ImportError("set_progress('tqdm') needs tqdm: pip install 'dptm[progress]'") \
                from exc
    previous, _style = _style, style
    return previous


def get_progress():
    """The current progress style (``"log"`` or ``"tqdm"``)."""
    return _style


def _user_handles():
    """True when the application configured a handler that would show dptm's records."""
    real = [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]
    return bool(real) or (logger.propagate and bool(logging.getLogger().handlers))


def _verbose(owner):
    v = getattr(owner, "verbose", 0)
    return v


@contextlib.contextmanager
def fit_scope(owner, total=None):
    """Context of one fit of ``owner``. Yields True when ``owner`` is the outermost
    fit (it reports; its nested fits do not). Re-entering for the same owner (a
    ``fit`` calling ``super().fit`` or ``fit_transform`` calling ``fit``) is a no-op.
    """
    current = _SCOPE.get()
    if current is not None:
        yield current[0] is owner
        return
    verbose = _verbose(owner)
    state = {"owner": owner, "bar": None, "total": total}
    token = _SCOPE.set((owner, state))
    handler = None
    old_level = logger.level
    try:
        if verbose:
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
            if not _user_handles():
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("%(message)s"))
                logger.addHandler(handler)
        yield True
    finally:
        bar = state["bar"]
        if bar is not None:
            bar.close()
        if handler is not None:
            logger.removeHandler(handler)
        logger.setLevel(old_level)
        _SCOPE.reset(token)


def is_reporting(owner):
    """Whether ``owner`` may report now: it has verbose set (or None: emit without
    configuring) and no other dptm fit encloses it."""
    if _verbose(owner) == 0:
        return False
    current = _SCOPE.get()
    return current is None or current[0] is owner


def log(owner, message, *args):
    """Log one INFO line ``[ClassName] message`` for ``owner`` unless it is nested or
    silent (or a tqdm bar replaces the lines)."""
    if not is_reporting(owner):
        return
    current = _SCOPE.get()
    if _style == "tqdm" and current is not None and _verbose(owner):
        return
    name = getattr(owner, "_progress_name", type(owner).__name__)
    logger.info("[%s] " + message, name, *args)


def update_bar(owner, n, total):
    """Advance the tqdm bar of ``owner``'s fit to ``n`` of ``total`` (style "tqdm"
    only; a no-op otherwise)."""
    current = _SCOPE.get()
    if _style != "tqdm" or current is None or current[0] is not owner or not _verbose(owner):
        return
    state = current[1]
    if state["bar"] is None:
        from tqdm.auto import tqdm
        state["bar"] = tqdm(total=total, desc=getattr(owner, "_progress_name",
                                                      type(owner).__name__), bar_format=_BAR_FORMAT,
                            file=sys.stderr, leave=False)
    bar = state["bar"]
    if bar.total != total:
        bar.total = total
    bar.n = n
    bar.refresh()


def silenced(estimator):
    """``estimator`` (an unfitted clone about to be fitted inside another model) with
    ``verbose=0`` when it has that parameter: a nested fit in another process does not
    see the enclosing fit's context."""
    get = getattr(estimator, "get_params", None)
    if get is not None and "verbose" in get(deep=False):
        estimator.set_params(verbose=0)
    return estimator


def wrap_fit(method, after=None, before=None):
    """``method`` (a fit-like method) run inside :func:`fit_scope`; ``before(self, args,
    kwargs)`` is called when the call is the estimator's outermost one, ``after(self, args,
    kwargs)`` once that call returns."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        outer_call = _SCOPE.get() is None
        current = _SCOPE.get()
        if before is not None and (current is None or current[0] is not self):
            before(self, args, kwargs)
        with fit_scope(self):
            result = method(self, *args, **kwargs)
        if outer_call and after is not None:
            after(self, args, kwargs)
        return result
    wrapper._dptm_scoped = True
    return wrapper
