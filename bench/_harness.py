"""Common bench runner: median of repeated runs, ratios against anchors, JSON + table.

A bench script builds a list of ``Case`` objects (ours and the anchors, same data, same
run), calls ``run_cases`` and then ``report``. Nothing here asserts on time: benches
measure and print, tests check correctness.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

SHARED_DATA = os.environ.get(
    "DPTM_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"))
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def data_path(*parts):
    """Path to a file under ../shared/data; exits with a clear message when absent."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        sys.exit(f"bench data not found: {path} (set DPTM_DATA to the shared data folder)")
    return path


@dataclass
class Case:
    """One timed thing. ``fn`` runs the work once and may return a dict of extra metrics
    (e.g. perplexity); ``setup`` (untimed) runs before each repeat and its return value
    is passed to ``fn``."""
    group: str
    name: str
    fn: object
    setup: object = None
    work: float = 1.0          # units of work per run (tokens, documents...) for throughput
    unit: str = "items"
    extra: dict = field(default_factory=dict)


def time_case(case, repeats):
    times, metrics = [], {}
    for _ in range(repeats):
        arg = case.setup() if case.setup is not None else None
        t0 = time.perf_counter()
        out = case.fn(arg) if case.setup is not None else case.fn()
        times.append(time.perf_counter() - t0)
        if isinstance(out, dict):
            metrics = out
    med = statistics.median(times)
    return {"group": case.group, "name": case.name, "median_s": med, "runs_s": times,
            "throughput": case.work / med if med > 0 else float("inf"), "unit": case.unit,
            **case.extra, **metrics}


def run_cases(cases, repeats=3, verbose=True):
    rows = []
    for case in cases:
        row = time_case(case, repeats)
        rows.append(row)
        if verbose:
            print(f"  {row['group']:<24} {row['name']:<28} {row['median_s']:9.4f} s", flush=True)
    return rows


def add_ratios(rows, reference):
    """Add ``ratio`` = reference median time / this median time (>1: faster than reference)
    within each group; ``reference`` is the case name to compare against."""
    by_group = {}
    for r in rows:
        by_group.setdefault(r["group"], []).append(r)
    for group_rows in by_group.values():
        ref = [r for r in group_rows if r["name"] == reference]
        for r in group_rows:
            r["speed_vs_" + reference] = (ref[0]["median_s"] / r["median_s"]) if ref else None
    return rows


def format_table(rows, columns):
    head = [c for c, _ in columns]
    lines = [head]
    for r in rows:
        line = []
        for c, fmt in columns:
            v = r.get(c)
            line.append("-" if v is None else (format(v, fmt) if fmt else str(v)))
        lines.append(line)
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(head))]
    out = ["  ".join(str(v).rjust(w) for v, w in zip(l, widths)) for l in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def report(name, rows, columns, meta=None):
    """Print the table and write ``bench/results/<name>.json``."""
    print(format_table(rows, columns))
    os.makedirs(RESULTS_DIR, exist_ok=True)
    payload = {"bench": name, "python": platform.python_version(), "machine": platform.machine(),
               "cpus": os.cpu_count(), "meta": meta or {}, "rows": rows}
    path = os.path.join(RESULTS_DIR, f"{name}.json")
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1, default=float)
    print(f"\nresults written to {os.path.relpath(path)}")


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--repeats", type=int, default=3, help="runs per case; the median is reported")
    p.add_argument("--quick", action="store_true", help="smaller problem, for a smoke run")
    return p
