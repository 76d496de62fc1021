"""Private training on a Dask LocalCluster (issue #19) beside the single-process fit.

A synthetic LDA corpus (default 1,000,000 documents; ``--quick`` 50,000) is generated
*on the workers*, partition by partition (each partition from its own seed, topics shared),
and persisted there; the driver never holds it for the distributed fit. The same corpus is
then built in this process for the single-process fit (the anchor, same run).

Per model (NoisyGibbsLDA, HDP-LDA with the default exact discrete Laplace; PrivateBatchLDA,
private batch VB with its default schedule; ``--vb-docs``):

* wall time of the whole fit (median of ``--repeats``), documents/s = document visits /
  time (Gibbs: D x sweeps; VB: D x releases of its schedule),
  and the speed ratio distributed / single;
* payload bytes moved per step (``fit_distributed(transfer_log=...)``: the broadcast word
  factor or topics, counted once per worker, and the statistics gathered; sizes of
  fixed-shape arrays, independent of D) and, once, the D x K document-topic counts that
  NoisyGibbsLDA releases as ``doc_topic_``;
* peak resident memory of each worker process during the fit beside its idle memory
  (with its partitions loaded) and the bytes of its partitions, and the driver's peak
  during the single-process fit.

Both fits draw from the secret generator (no seed): the figures are those of a real run.
The machine is a shared 2-core box: ``uptime`` is printed before and after; two workers
with one thread each on 2 cores cannot beat one process by more than 2x, and lose to it
when other jobs take a core.

    python bench/bench_distributed.py [--quick] [--repeats 1] [--models gibbs,vb]
"""
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
os.environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
from _harness import parser, report  # noqa: E402

VB_EPSILON = 2.0   # PrivateBatchLDA's budget here (its default schedule: five passes)


def make_block(seed, n_docs, phi, doc_length, alpha):
    """One partition of the LDA generative process (token by token), as CSR int64."""
    rng = np.random.default_rng(seed)
    K, V = phi.shape
    cum_phi = np.cumsum(phi, axis=1)
    cum_phi[:, -1] = 1.0
    blocks = []
    for lo in range(0, n_docs, 20000):
        n = min(20000, n_docs - lo)
        theta = rng.dirichlet(np.full(K, alpha), size=n)
        cum_theta = np.cumsum(theta, axis=1)
        lengths = rng.integers(doc_length[0], doc_length[1] + 1, size=n)
        doc = np.repeat(np.arange(n), lengths)
        z = (rng.random(doc.size)[:, None] > cum_theta[doc]).sum(axis=1).clip(0, K - 1)
        u = rng.random(doc.size)
        w = np.empty(doc.size, dtype=np.int64)
        for k in range(K):
            idx = np.flatnonzero(z == k)
            w[idx] = np.searchsorted(cum_phi[k], u[idx], side="right").clip(0, V - 1)
        X = sp.csr_matrix((np.ones(doc.size, dtype=np.int64), (doc, w)), shape=(n, V))
        X.sum_duplicates()
        blocks.append(X)
    return sp.vstack(blocks, format="csr").astype(np.int64)


def rss(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class PeakRSS:
    """Samples the resident memory of some processes every 50 ms."""

    def __init__(self, pids):
        self.pids, self.peak, self._stop = list(pids), {p: 0 for p in pids}, threading.Event()

    def __enter__(self):
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            for p in self.pids:
                self.peak[p] = max(self.peak[p], rss(p))
            time.sleep(0.05)

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def partition_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def main():
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(repeats=1)
    p.add_argument("--docs", type=int, default=None, help="documents (default 1e6, quick 5e4)")
    p.add_argument("--vb-docs", type=int, default=None,
                   help="documents for PrivateBatchLDA (default 1e6, quick 5e4)")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--iters", type=int, default=5, help="Gibbs sweeps (VB: its default schedule)")
    p.add_argument("--models", default="gibbs,vb")
    args = p.parse_args()
    D = args.docs or (50_000 if args.quick else 1_000_000)
    D_vb = args.vb_docs or (50_000 if args.quick else 1_000_000)
    K, V, P = args.topics, args.words, args.partitions
    doc_length = (20, 60)
    models = args.models.split(",")

    from distributed import Client, LocalCluster, get_task_stream
    import dask
    import dask.array as da
    from dptm import NoisyGibbsLDA
    from dptm.distributed import fit_distributed
    from dptm.models.private_vb import PrivateBatchLDA

    print("uptime before:", uptime(), flush=True)
    phi = np.random.default_rng(0).dirichlet(np.full(V, 0.05), size=K)   # public synthetic topics
    rows, meta = [], {"uptime_before": uptime(), "docs": D, "vb_docs": D_vb, "partitions": P,
                      "workers": args.workers, "K": K, "V": V, "doc_length": doc_length,
                      "gibbs_iters": args.iters, "vb_iters": 2, "repeats": args.repeats}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit=0)
        client = Client(cluster)
    worker_pids = list(client.run(os.getpid).values())
    # import dptm (and build numpy/scipy state) on the workers before anything is timed
    client.run(lambda: __import__("dptm.distributed") and __import__("dptm.models.private_gibbs")
               and __import__("dptm.models.private_vb"))

    for model in models:
        n = D if model == "gibbs" else D_vb
        sizes = np.diff(np.linspace(0, n, P + 1).round().astype(np.int64))
        seeds = [1000 + i for i in range(P)]
        # the corpus, generated and persisted on the workers
        blocks = [da.from_delayed(dask.delayed(make_block)(s, int(m), phi, doc_length, 0.1),
                                  shape=(int(m), V), dtype=np.int64,
                                  meta=sp.csr_matrix((0, V), dtype=np.int64))
                  for s, m in zip(seeds, sizes)]
        arr = da.concatenate(blocks, axis=0).persist()
        from distributed import wait
        wait(arr)
        futs = client.futures_of(arr)
        sizes_b = client.gather([client.submit(partition_bytes, f) for f in futs])
        holder = client.who_has(futs)
        per_worker = {}
        for f, b in zip(futs, sizes_b):
            for addr in holder[f.key]:
                per_worker[addr] = per_worker.get(addr, 0) + b
        corpus_bytes = int(sum(sizes_b))
        if model == "gibbs":
            T = args.iters
        else:   # default schedule: every release is a pass over every document
            from dptm.models.private_vb import fit_plan
            # the plan's length does not depend on V (validated only); 1 stands in
            T = passes = len(fit_plan(VB_EPSILON, 1e-5, K, 1))

        def estimator():
            if model == "gibbs":
                return NoisyGibbsLDA(K, clip=200, epsilon_per_iter=1.0, max_iter=T)
            return PrivateBatchLDA(K, target_epsilon=VB_EPSILON)

        # distributed fit
        idle = {q: rss(q) for q in worker_pids}
        times, log, peaks = [], {}, {q: 0 for q in worker_pids}
        for _ in range(args.repeats):
            log = {}
            with warnings.catch_warnings(), PeakRSS(worker_pids) as mon, \
                    get_task_stream(client) as stream:
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                fit_distributed(estimator(), arr, client, transfer_log=log)
                times.append(time.perf_counter() - t0)
            busy = {}
            for rec in stream.data:     # compute seconds per worker (wall time in the task)
                busy[rec["worker"]] = busy.get(rec["worker"], 0.0) + sum(
                    ss["stop"] - ss["start"] for ss in rec["startstops"] if ss["action"] == "compute")
            busiest = max(busy.values())
            print("    busy per worker:", {k[-5:]: round(v, 2) for k, v in busy.items()}, flush=True)
            peaks = {q: max(peaks[q], mon.peak[q]) for q in worker_pids}
        t_dist = float(np.median(times))
        final = n * K * 4 if model == "gibbs" else 0
        steps = T
        per_step = (log.get("broadcast", 0) + log.get("gathered", 0) - final) / steps
        # single-process anchor: the same corpus built in this process
        X = sp.vstack([make_block(s, int(m), phi, doc_length, 0.1) for s, m in zip(seeds, sizes)],
                      format="csr")
        n_tokens = int(X.sum())
        del arr, blocks
        client.run(lambda: __import__("gc").collect())
        before = rss(os.getpid())
        t_single = []
        with PeakRSS([os.getpid()]) as mon:
            for _ in range(args.repeats):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    estimator().fit(X)
                    t_single.append(time.perf_counter() - t0)
        t_single = float(np.median(t_single))
        driver_peak = mon.peak[os.getpid()] - before
        del X
        common = {"group": model, "docs": n, "tokens": n_tokens, "iters": T}
        work = n * (T if model == "gibbs" else passes)     # document visits
        rows.append({**common, "name": "single process", "median_s": t_single,
                     "docs_per_s": work / t_single, "speed_vs_single": 1.0,
                     "bytes_per_step": 0, "peak_mem_MB": driver_peak / 2**20,
                     "data_MB": corpus_bytes / 2**20})
        rows.append({**common, "name": f"dask {args.workers} workers, {P} parts", "median_s": t_dist,
                     "docs_per_s": work / t_dist, "speed_vs_single": t_single / t_dist,
                     "bytes_per_step": per_step, "final_bytes": final,
                     "busiest_worker_s": busiest, "idle_share": 1.0 - busiest / t_dist,
                     "peak_mem_MB": max(peaks[q] - idle[q] for q in worker_pids) / 2**20,
                     "idle_mem_MB": max(idle.values()) / 2**20,
                     "data_MB": max(per_worker.values()) / 2**20})
        print(f"  {model}: single {t_single:.2f} s, dask {t_dist:.2f} s "
              f"({t_single / t_dist:.2f}x), {per_step / 1e6:.3f} MB/step", flush=True)

    client.close()
    cluster.close()
    meta["uptime_after"] = uptime()
    print("uptime after:", meta["uptime_after"])
    report("bench_distributed" + ("_quick" if args.quick else ""), rows,
           [("group", ""), ("name", ""), ("docs", "d"), ("tokens", "d"), ("iters", "d"),
            ("median_s", ".2f"), ("docs_per_s", ",.0f"), ("speed_vs_single", ".2f"),
            ("bytes_per_step", ",.0f"), ("busiest_worker_s", ".2f"), ("peak_mem_MB", ".0f"),
            ("data_MB", ".0f")], meta)
    print("busiest_worker_s: compute seconds inside the tasks of the busiest worker (the rest "
          "of the wall time is scheduling, transfers and the driver's noise); ")
    print("peak_mem_MB: dask row = max over workers of (peak RSS during the fit - RSS with "
          "the partitions loaded); single row = driver peak - RSS before the fit. data_MB: "
          "CSR bytes of the corpus (dask row: the largest per-worker share)")


if __name__ == "__main__":
    main()
