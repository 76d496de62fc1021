"""A snippet run in a child Python process, for the tests whose child must abort at once
(a failing exact sampler stops the process rather than return wrong noise)."""
import subprocess
import sys


def run_child(code, **kwargs):
    """``python -c code`` in a child process; its CompletedProcess (text stdout / stderr).
    No timeout: the tests assert what the child printed and how it ended, never how long
    it took."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          **kwargs)


def repo_root():
    """The folder holding the imported ``dptm`` package (a child's working directory)."""
    import os
    import dptm
    return os.path.dirname(os.path.dirname(os.path.abspath(dptm.__file__)))
