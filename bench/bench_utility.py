"""Held-out perplexity vs epsilon of PrivateBatchLDA (issue #15). --quick for a short run."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import warnings

import numpy as np

from dptm.datasets import make_lda_corpus
from dptm.models.private_vb import PrivateBatchLDA


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    D = 3000 if a.quick else 50000
    X = make_lda_corpus(D + 1000, 2000 if a.quick else 5000, 20, doc_length=80,
                        random_state=0)
    X = X[0] if isinstance(X, tuple) else X
    Xtr, Xte = X[:D], X[D:]
    V = X.shape[1]
    print(f"D={D} V={V} uniform perplexity={V}")
    warnings.simplefilter("ignore")
    for eps in [0.5, 1, 2, 4, 8]:
        m = PrivateBatchLDA(20, target_epsilon=eps).fit(Xtr)
        print(f"eps={eps}: PrivateBatchLDA perplexity={m.perplexity(Xte):.1f}", flush=True)


if __name__ == "__main__":
    main()
