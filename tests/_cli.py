"""Helpers of the CLI refusal tests: a run and a one-line refusal (the fixture under which
reading the data or fitting fails the test, ``no_work``, is in conftest.py)."""
import io

from dptm.cli import main


def run(*argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


def refused(capsys, *argv):
    """The command's exit status is 2 with one line on stderr and nothing on stdout."""
    code, out = run(*argv)
    err = capsys.readouterr().err
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    return err
