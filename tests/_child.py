"""A snippet run in a child Python process, for the tests whose child must abort at once
(a failing exact sampler stops the process rather than return wrong noise)."""
import subprocess
import sys

# A hang guard, not a speed check: a child that should abort at once but hangs fails its
# test instead of stalling the suite. Nothing in the tests depends on how long it takes.
_HANG_GUARD_S = 120


def run_child(code, **kwargs):
    """``python -c code`` in a child process; its CompletedProcess (text stdout / stderr)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=_HANG_GUARD_S, **kwargs)
