"""Mutation testing of dptm's privacy-relevant code.

Each mutant in ``mutants.py`` is a small hand-made bug (a noise scale halved, a sensitivity
understated, a sampler fed the true counts...): exact source substrings (each occurring once)
replaced by others. The runner copies the repository to a scratch directory, applies one mutant at a
time, rebuilds the kernels when a ``.pyx``, ``.pxi`` or ``.h`` changed, runs the mutant's test files and records
whether the suite caught it ("killed": a test failed) or not ("survived").

    python tools/mutation/run.py                 # every mutant
    python tools/mutation/run.py --only M03 M07  # some
    python tools/mutation/run.py --list
    python tools/mutation/run.py --prebuilt --only R2-01   # reuse dptm/*.so (no .pyx mutant)
    python tools/mutation/run.py --set fresh --prebuilt     # the fresh round (mutants_fresh.py)
    python tools/mutation/run.py --set user --prebuilt      # user level (mutants_user.py)
    python tools/mutation/run.py --set user-e2e --prebuilt  # the user-level pipeline and CLI
    python tools/mutation/run.py --set fresh2               # the second blind round
    python tools/mutation/run.py --set fresh3               # the third blind round
    python tools/mutation/run.py --set fresh4               # the fourth blind round
    python tools/mutation/run.py --set fresh4 --confirm     # survivors rerun on the whole suite
    python tools/mutation/run.py --set fresh5 --prebuilt   # the fifth blind round
    python tools/mutation/run.py --set fresh6 --prebuilt   # the sixth blind round
    python tools/mutation/run.py --set fresh7 --prebuilt   # the seventh blind round
    python tools/mutation/run.py --set counts --prebuilt   # public word counts (2026-12-04)

A mutant's test files are chosen by the names of the files (by someone who has not read them, for
a blind round), so a test elsewhere may kill what they miss: ``--confirm`` runs every survivor of
its listed files once more against the whole suite and reports both counts.

A mutant whose original text is not found is reported as "stale" (the code moved on: update
the mutant). The kill rate and the survivors with their reasons are kept in DEVELOPING.md.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from mutants import MUTANTS  # noqa: E402
from mutants_fresh import FRESH_MUTANTS  # noqa: E402
from mutants_user import USER_MUTANTS  # noqa: E402
from mutants_user_e2e import E2E_MUTANTS  # noqa: E402
from mutants_fresh2 import FRESH2_MUTANTS  # noqa: E402
from mutants_fresh3 import FRESH3_MUTANTS  # noqa: E402
from mutants_fresh4 import FRESH4_MUTANTS  # noqa: E402
from mutants_fresh5 import FRESH5_MUTANTS  # noqa: E402
from mutants_fresh6 import FRESH6_MUTANTS  # noqa: E402
from mutants_fresh7 import FRESH7_MUTANTS  # noqa: E402
from mutants_counts import COUNTS_MUTANTS  # noqa: E402

SETS = {"main": MUTANTS, "fresh": FRESH_MUTANTS, "fresh2": FRESH2_MUTANTS, "fresh3": FRESH3_MUTANTS,
        "fresh4": FRESH4_MUTANTS, "fresh5": FRESH5_MUTANTS, "fresh6": FRESH6_MUTANTS,
        "fresh7": FRESH7_MUTANTS, "counts": COUNTS_MUTANTS,
        "user": USER_MUTANTS,
        "user-e2e": E2E_MUTANTS,
        "all": MUTANTS + FRESH_MUTANTS + FRESH2_MUTANTS + FRESH3_MUTANTS + FRESH4_MUTANTS
        + FRESH5_MUTANTS + FRESH6_MUTANTS + FRESH7_MUTANTS + COUNTS_MUTANTS + USER_MUTANTS
        + E2E_MUTANTS}


def _run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return "timeout", ""


def _build(work):
    code, out = _run([sys.executable, "setup.py", "build_ext", "--inplace"], work, 1200)
    if code != 0:
        raise RuntimeError(f"build failed:\n{out[-3000:]}")


def _pytest(tests, work, timeout):
    return _run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                work, timeout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="mutant ids to run")
    ap.add_argument("--set", choices=sorted(SETS), default="main",
                    help="which list: mutants.py (main), mutants_fresh.py (fresh), "
                         "mutants_fresh2.py (fresh2), mutants_fresh3.py (fresh3), "
                         "mutants_fresh4.py (fresh4), mutants_fresh5.py (fresh5), "
                         "mutants_fresh6.py (fresh6), "
                         "mutants_fresh7.py (fresh7), "
                         "mutants_user.py (user), "
                         "mutants_user_e2e.py (user-e2e) or all")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per mutant's tests")
    ap.add_argument("--why", action="store_true",
                    help="print the failing tests of each killed mutant")
    ap.add_argument("--confirm", action="store_true",
                    help="run each survivor of its listed test files again on the whole suite")
    ap.add_argument("--prebuilt", action="store_true",
                    help="copy the working tree's built kernels (dptm/*.so) instead of building "
                         "(no .pyx mutant may be selected)")
    args = ap.parse_args(argv)
    mutants = [m for m in SETS[args.set] if not args.only or m["id"] in args.only]
    if args.list:
        for m in mutants:
            print(f"{m['id']}  {m['file']}: {m['what']}")
        return 0
    work = tempfile.mkdtemp(prefix="dptm-mutation-")
    try:
        subprocess.run(["git", "worktree", "add", "--detach", work, "HEAD"], cwd=ROOT,
                       check=True, capture_output=True)
        # the scratch copy cannot see ../shared/data beside the checkout: point the tests
        # that need a real corpus at it, or they skip and every mutant they kill survives
        # (beside this checkout, or beside the main checkout when this one is a worktree)
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute",
                                 "--git-common-dir"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        for base in (ROOT, os.path.dirname(common) if common else ROOT):
            shared = os.path.join(os.path.dirname(base), "shared", "data")
            if "DPTM_DATA" not in os.environ and os.path.isdir(shared):
                os.environ["DPTM_DATA"] = shared
        # Uncommitted edits of the working tree are part of what is tested.
        diff = subprocess.run(["git", "diff", "HEAD"], cwd=ROOT, capture_output=True).stdout
        if diff:
            subprocess.run(["git", "apply"], input=diff, cwd=work, check=True)
        if args.prebuilt:
            if any(m["file"].endswith(".pyx") for m in mutants):
                raise SystemExit("--prebuilt cannot run a .pyx mutant (it needs a rebuild)")
            import glob
            for so in glob.glob(os.path.join(ROOT, "dptm", "*.so")):
                shutil.copy2(so, os.path.join(work, "dptm"))
        else:
            _build(work)
        results = []
        kernel, dirty = (".pyx", ".pxi", ".h"), False
        for m in mutants:
            path = os.path.join(work, m["file"])
            with open(path, encoding="utf-8") as f:
                source = f.read()
            edits = m.get("edits") or [(m["old"], m["new"])]
            counts = [source.count(old) for old, _ in edits]
            if any(n != 1 for n in counts):
                bad = max(counts) if min(counts) == 1 else min(counts)
                results.append((m, "stale" if bad == 0 else f"ambiguous ({bad} matches)", 0.0))
                print(f"{m['id']}: {results[-1][1]}", flush=True)
                continue
            t0 = time.perf_counter()
            mutated = source
            for old, new in edits:
                mutated = mutated.replace(old, new)
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutated)
            try:
                if m["file"].endswith(kernel) or dirty:
                    _build(work)
                    dirty = False
                code, out = _pytest(m["tests"], work, args.timeout)
                listed = code
                if code == 0 and args.confirm:
                    code, out = _pytest(["tests"], work, 4 * args.timeout)
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(source)
                # the restored kernel is rebuilt before the next Python mutant (a kernel
                # mutant rebuilds anyway)
                dirty = dirty or m["file"].endswith(kernel)
            status = "survived" if code == 0 else ("killed (timeout)" if code == "timeout"
                                                   else "killed")
            if listed == 0 and code != 0:
                status += " (by the whole suite only)"
            results.append((m, status, time.perf_counter() - t0))
            print(f"{m['id']}: {status} ({results[-1][2]:.0f} s) - {m['what']}", flush=True)
            if args.why and code not in (0, "timeout"):
                for line in out.splitlines():
                    if line.startswith(("FAILED", "ERROR")):
                        print(f"    {line}", flush=True)
        scored = [r for r in results if r[1].startswith(("killed", "survived"))]
        killed = sum(r[1].startswith("killed") for r in scored)
        print(f"\nkilled {killed} of {len(scored)} mutants"
              + (f" ({100 * killed / len(scored):.1f}%)" if scored else ""))
        if args.confirm:
            by_listed = sum(r[1].startswith("killed") and "whole suite" not in r[1]
                            for r in scored)
            print(f"killed by their listed test files: {by_listed} of {len(scored)}")
        for m, status, _ in results:
            if not status.startswith("killed"):
                print(f"  {m['id']} {status}: {m['what']}"
                      + (f" - equivalent/harmless: {m['equivalent']}" if m.get("equivalent") else ""))
        return 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", work], cwd=ROOT,
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
