"""Online LiRA end to end on TweetRumors (k = 5, 128 shadow models, 2 cores): ours with
GibbsLDA and with scikit-learn's LDA as trainer, against the paper authors' public code
(nicomanzonelli/topic_model_attacks, run from a fetched checkout by
bench/_authors_lira_driver.py), in the same run. Also reports each run's attack metrics.

    python bench/bench_lira.py --authors /tmp/tma            # timing (about an hour)
    python bench/bench_lira.py --experiment --reps 3         # papers/manzonelli2024 Table 1
    python bench/bench_lira.py --quick --authors /tmp/tma    # smoke run

Get the authors' code with: git --git-dir=<mirror> archive HEAD | tar -x -C /tmp/tma
(their large data files are not needed).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402

PAPER_TABLE1 = {"online": 0.128, "max_posterior": 0.0019, "std": 0.0019, "neg_entropy": 0.0018}


def load_texts(max_docs=None):
    from dptm.datasets import load_json_texts
    texts = load_json_texts(data_path("tweetrumors", "tweetrumors_clean.json"))
    return texts[:max_docs] if max_docs else texts


def make_trainer(name, k):
    if name == "gibbs":
        from dptm import GibbsLDA
        return GibbsLDA(n_components=k)
    from sklearn.decomposition import LatentDirichletAllocation
    return LatentDirichletAllocation(n_components=k)  # scikit-learn defaults, as the paper


def run_ours(texts, trainer, k, n_shadows, seed, n_jobs=2):
    """Everything from the raw (pre-processed) texts: vectorize, target on a random half,
    shadows, statistics, scores, baselines."""
    from sklearn.feature_extraction.text import CountVectorizer
    from dptm.attacks import audit
    X = CountVectorizer().fit_transform(texts)
    res = audit(make_trainer(trainer, k), X, n_shadows=n_shadows, random_state=seed,
                n_jobs=n_jobs)
    m = res.metrics()
    out = {}
    for name, key in (("online", "LiRA online (zeta)"), ("offline", "LiRA offline (zeta)"),
                      ("max_posterior", "Huang et al. max posterior"),
                      ("std", "Huang et al. std"), ("neg_entropy", "Huang et al. neg entropy")):
        out[f"{name}_tpr@0.1%"] = m[key]["tpr@0.001"]
        out[f"{name}_tpr@1%"] = m[key]["tpr@0.01"]
        out[f"{name}_auc"] = m[key]["auc"]
    out["shadow_fit_s_mean"] = float(res.lira.fit_time_.mean())
    out["shadow_stats_s_mean"] = float(res.lira.stats_time_.mean())
    return out


def run_authors(checkout, k, n_shadows, seed, max_docs=None, procs=2):
    from dptm.attacks.evaluation import attack_summary
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "_authors_lira_driver.py"), "--checkout", checkout,
           "--data", data_path("tweetrumors", "tweetrumors_clean.json"), "-k", str(k),
           "-N", str(n_shadows), "--seed", str(seed), "--procs", str(procs)]
    if max_docs:
        cmd += ["--max-docs", str(max_docs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    labels = np.array(res["labels"])
    out = {"their_target_s": res["target_s"], "their_shadows_s": res["shadows_s"],
           "their_lira_s": res["lira_s"]}
    for name in ("online", "offline"):
        s = np.nan_to_num(np.array(res[name], dtype=float), nan=0.0, posinf=1e308)
        m = attack_summary(labels, s)
        out[f"{name}_tpr@0.1%"] = m["tpr@0.001"]
        out[f"{name}_tpr@1%"] = m["tpr@0.01"]
        out[f"{name}_auc"] = m["auc"]
    return out


def _show(name, result):
    print(f"  [{name}] " + json.dumps(result), flush=True)
    return result


def timing(args):
    n_shadows = 16 if args.quick else args.n_shadows
    max_docs = 1000 if args.quick else None
    texts = load_texts(max_docs)
    cases = [Case("lira_tweetrumors_k5", "ours_gibbs",
                  lambda: run_ours(texts, "gibbs", args.k, n_shadows, args.seed),
                  work=len(texts), unit="docs")]
    if args.authors:
        cases.append(Case("lira_tweetrumors_k5", "authors_sklearn",
                          lambda: run_authors(args.authors, args.k, n_shadows, args.seed,
                                              max_docs), work=len(texts), unit="docs"))
    if not args.skip_sklearn:
        cases.append(Case("lira_tweetrumors_k5", "ours_sklearn",
                          lambda: run_ours(texts, "sklearn", args.k, n_shadows, args.seed),
                          work=len(texts), unit="docs"))
    print(f"TweetRumors ({len(texts)} docs), k={args.k}, {n_shadows} shadow models, 2 cores",
          flush=True)
    for c in cases:  # print each run's metrics as soon as it finishes (long runs)
        c.fn = (lambda f, name: lambda: _show(name, f()))(c.fn, c.name)
    rows = run_cases(cases, repeats=args.repeats)
    if args.authors:
        add_ratios(rows, "authors_sklearn")
    cols = [("name", ""), ("median_s", ".1f"), ("speed_vs_authors_sklearn", ".1f"),
            ("online_tpr@0.1%", ".4f"), ("online_tpr@1%", ".4f"), ("online_auc", ".4f"),
            ("offline_auc", ".4f")]
    report("bench_lira" + ("_quick" if args.quick else ""), rows, cols,
           meta={"k": args.k, "n_shadows": n_shadows, "n_docs": len(texts)})


def experiment(args):
    n_shadows = 16 if args.quick else args.n_shadows
    texts = load_texts(1000 if args.quick else None)
    for trainer in args.trainers.split(","):
        runs = []
        for rep in range(args.reps):
            t0 = time.perf_counter()
            r = run_ours(texts, trainer, args.k, n_shadows, seed=1000 + rep)
            r["seconds"] = time.perf_counter() - t0
            runs.append(r)
            print(f"[{trainer}] rep {rep}: " + ", ".join(
                f"{k}={v:.4f}" for k, v in r.items() if "tpr" in k or "auc" in k), flush=True)
        keys = [k for k in runs[0] if "tpr" in k or "auc" in k]
        print(f"\n{trainer} trainer, k={args.k}, {n_shadows} shadows, {args.reps} repetitions "
              "(mean +- sd); paper Table 1 TPR@0.1%: online 12.8%, Huang 0.19/0.19/0.18%")
        for k in keys:
            v = np.array([r[k] for r in runs])
            print(f"  {k:<24} {v.mean():.4f} +- {v.std(ddof=1) if len(v) > 1 else 0:.4f}")
        os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
                    exist_ok=True)
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                               f"lira_experiment_{trainer}.json"), "w") as fh:
            json.dump(runs, fh, indent=1)


if __name__ == "__main__":
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(repeats=1)
    p.add_argument("--authors", default=None, help="checkout of nicomanzonelli/topic_model_attacks")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--n-shadows", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-sklearn", action="store_true")
    p.add_argument("--experiment", action="store_true")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--trainers", default="sklearn,gibbs")
    a = p.parse_args()
    experiment(a) if a.experiment else timing(a)
