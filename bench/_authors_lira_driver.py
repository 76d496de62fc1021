"""Run the paper authors' online LiRA (nicomanzonelli/topic_model_attacks) with THEIR
functions, imported from a checkout given on the command line; nothing of theirs is copied
here. Used by bench_lira.py as the anchor.

Their cli.py builds all N dense copies of the corpus before training (killed for memory
here); this driver does what their ``train_target_model`` / ``train_shadow_models`` /
``fit_lira`` do, step by step with their functions, but hands the shadow pool its training
sets lazily (one dense copy per task, built in the worker from a fork-shared matrix).

Prints one JSON line with timings and scores.

    python bench/_authors_lira_driver.py --checkout /tmp/tma --data tweets.json -k 5 -N 128
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

_X = None
_SPLITS = None
_K = None


def _train_one(i):
    from topic_models import train_lda_sklearn
    return train_lda_sklearn(_X[_SPLITS[i]], _K)


def main():
    global _X, _SPLITS, _K
    p = argparse.ArgumentParser()
    p.add_argument("--checkout", required=True, help="path of the authors' repository")
    p.add_argument("--data", required=True, help="JSON file {'text': [...]} (pheme_clean.json)")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("-N", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--max-docs", type=int, default=None, help="use only the first docs (smoke runs)")
    p.add_argument("--scores-out", default=None, help="save labels and scores to this .npz")
    args = p.parse_args()

    sys.path.insert(0, os.path.abspath(args.checkout))
    from data.utils import extract_features, load_data_json, split_data
    from model_stats import max_lda_logll
    from topic_mia import TopicLiRA
    from topic_models import train_lda_sklearn

    corpus = load_data_json(args.data)
    if args.max_docs:
        corpus = corpus[: args.max_docs]
    np.random.seed(args.seed)  # their code draws from numpy's global state
    t0 = time.perf_counter()
    # == train_target_model(data, out, .5, train_lda_sklearn, {"k": k})
    docs_in_target = split_data(corpus, 0.5)
    train_docs = np.array(corpus)[docs_in_target].tolist()
    X_tr, vocab = extract_features(train_docs)
    target_phi = train_lda_sklearn(X_tr, args.k)
    t1 = time.perf_counter()
    # == train_shadow_models(...): same splits, pool fed lazily
    X, _ = extract_features(corpus, vocab)
    splits = []
    for _ in range(args.N // 2):
        docs_in = np.random.choice(X.shape[0], X.shape[0] // 2, replace=False)
        splits.append(docs_in)
        splits.append(np.setdiff1d(np.arange(X.shape[0]), docs_in))
    _X, _SPLITS, _K = X, splits, args.k
    ctx = mp.get_context("fork")
    with ctx.Pool(args.procs) as pool:
        phis = pool.map(_train_one, range(args.N), chunksize=1)
    shadow_phis = np.array(phis).transpose(1, 2, 0)
    docs_in_shadow = np.array(splits, dtype=object) if X.shape[0] % 2 else np.array(splits)
    t2 = time.perf_counter()
    # == fit_lira(...): their TopicLiRA with their statistic max_lda_logll (mp.Pool inside)
    mia = TopicLiRA(target_phi, vocab)
    offline, online = mia.fit(corpus, shadow_phis, list(docs_in_shadow), [max_lda_logll],
                              enable_mp=True)
    t3 = time.perf_counter()
    labels = docs_in_target.astype(int)
    online = np.asarray(online, dtype=float)
    offline = np.asarray(offline, dtype=float)
    if args.scores_out:
        np.savez(args.scores_out, labels=labels, online=online, offline=offline)
    print(json.dumps({"target_s": t1 - t0, "shadows_s": t2 - t1, "lira_s": t3 - t2,
                      "total_s": t3 - t0, "n_docs": len(corpus), "n_words": len(vocab),
                      "labels": labels.tolist(), "online": online.tolist(),
                      "offline": offline.tolist()}))


if __name__ == "__main__":
    main()
