"""Private Gibbs samplers on KOS: cost of a noisy sweep, SUB-LDA speed-up, utility vs
epsilon, the efficiency-privacy function, and the topic-based attack.

0. Raw throughput of the secret generator (AES-128-CTR, ``dptm._random.secret_generator``)
   beside numpy's PCG64: ``Generator.random`` and the C API in a kernel loop.
1. Per-sweep time of NoisyGibbsLDA (snapshot + sweep) vs GibbsLDA, same corpus and K
   (kernel level, on one burnt-in state, and end to end through ``fit``). GibbsLDA's kernel
   is the estimator's one-thread choice (SparseLDA from K = 200, after a dense first
   sweep); the private sweep here is the single-stream kernel (linear word-bucket scan,
   one noise stream): section 6 times the estimator's block kernels. The private
   cases draw from the secret generator with the default exact noise (discrete Laplace,
   eps_L = 1); GibbsLDA draws from PCG64 as it does. The secret token order is drawn once
   per fit (timed on its own).
2. SUB-LDA per-sweep time against gamma (papers/huang2022 Fig. 2): speed-up t_hdp / t_sub
   and the paper's ratio |t_sub - t_hdp| / t_hdp.
3. Held-out perplexity against eps_L for HDP-LDA (eps_I = 10), CDP-LDA+ and non-private CGS
   (papers/zhao2021 Fig. 5; KOS, 1000 most frequent words, 3000 train / 430 test docs).
4. I = gamma exp((alpha - 1) eps_subsample(alpha)) against gamma (papers/huang2022 Fig. 1),
   and SUB-LDA's sound epsilon against gamma (sampling step amplified in Renyi DP or not,
   and the paper's claim).
5. Topic-based attack accuracy against iterations (papers/zhao2021 Fig. 4).
6. Thread scaling (#16), K = 50, 100, 500, 1000, n_jobs = 1, 2 and all cores: (a) kernel
   level from one burnt-in state: the private sweep (blocks, secret streams; its
   word-bucket search table built in the untimed setup, as NoisyGibbsLDA.fit and
   SubsampledGibbsLDA.fit get it from the snapshot kernel's factor pass, never from the
   sweep), the snapshot (single stream, and the fit's row blocks at each thread count,
   search table included; where fit leaves the true counts to the snapshot, rows counted
   from the topics there), snapshot + private sweep (one fit iteration), one SUB-LDA
   iteration (discrete Gaussian snapshot, sigma 7.07, by inversion and by the former
   alias-table sampler, + the gamma 0.5 sweep), and a plain GibbsLDA sweep (the estimator's
   choice: blocked dense, SparseLDA from K = 200, AD-LDA for n > 1); (b) end-to-end fits of
   NoisyGibbsLDA, SubsampledGibbsLDA (gamma 0.5), GibbsLDA and tomotopy (same workers)
   with held-out perplexity. Speed-ups against each model's single thread, ratios against
   tomotopy with the same number of workers. The load average is printed.

    python bench/bench_private_gibbs.py [--quick] [--repeats 5] [--sweeps-only]
    python bench/bench_private_gibbs.py --threads-only [--topics-list 50 500] [--jobs 1 2]
"""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Case, add_ratios, data_path, parser, report, run_cases  # noqa: E402

from dptm import GibbsLDA, NoisyGibbsLDA, SubsampledGibbsLDA, _cgs, _gauss_table  # noqa: E402
from dptm._random import secret_generator, shuffle_within_segments  # noqa: E402
from dptm.accounting import ComposedEvent, SelfComposedEvent, epsilon, recipes  # noqa: E402
from dptm.attacks import topic_based_attack  # noqa: E402
from dptm.attacks.topic_based import record_gibbs_trace  # noqa: E402
from dptm.corpus import Corpus  # noqa: E402
from dptm.exceptions import SeededPrivacyWarning  # noqa: E402
from dptm.datasets import load_uci_bow, make_lda_corpus  # noqa: E402
from dptm.models.gibbs import GibbsState  # noqa: E402
from dptm.models.private_gibbs import _Noise  # noqa: E402

NO_TABLE = np.zeros((0, 0))


def load_kos():
    return load_uci_bow(data_path("kos", "docword.kos.txt.gz"), data_path("kos", "vocab.kos.txt"))[0]


def sweep_timing(X, K, repeats, burn_in):
    """Per-sweep kernel times: plain, noisy (snapshot + sweep), and SUB-LDA sweeps at
    several gamma. Every timed sweep starts from the same burnt-in state (restored in the
    untimed setup), so the cases differ only in what they compute; repeats are interleaved
    so that load changes on a shared machine hit every case alike."""
    corpus = Corpus.from_matrix(X)
    rng = np.random.default_rng(0)
    alpha = beta = 1.0 / K
    # what the estimators draw: the secret generator, exact noise by default
    sec = secret_generator()
    # the private sweeps visit each document in a secret random order (drawn once per fit)
    pcorpus = Corpus(corpus.doc_ptr, shuffle_within_segments(corpus.doc_ptr, corpus.word_ids, sec),
                     corpus.n_words)
    states = []
    for c in (corpus, pcorpus):
        st = GibbsState(c, K, rng)
        for _ in range(burn_in):
            _cgs.gibbs_sweep(c.doc_ptr, c.word_ids, st.z, st.n_wk, st.n_dk, st.n_k, alpha, beta,
                             rng.bit_generator)
        states.append(st)
    state, pstate = states
    arrays = (state.z, state.n_wk, state.n_dk, state.n_k, pstate.z, pstate.n_wk, pstate.n_dk,
              pstate.n_k)
    saved = [a.copy() for a in arrays]
    dlap = _Noise("discrete_laplace", epsilon=1.0)       # NoisyGibbsLDA's default
    dgau = _Noise("discrete_gaussian", noise_multiplier=1.0)   # SubsampledGibbsLDA's default
    lap = _Noise("laplace", epsilon=1.0)
    gau = _Noise("gaussian", noise_multiplier=1.0)
    clip = 50.0

    buf = dlap.snapshot(pstate.n_wk, clip, beta, sec.bit_generator)    # reused by timed cases
    dgau.snapshot(pstate.n_wk, clip, beta, sec.bit_generator, buf)      # builds its table, untimed

    from dptm.models import gibbs as gibbs_mod
    # GibbsLDA.fit keeps its SparseLDA buffers between sweeps (ADLDAWorkspace): so does the
    # baseline, invalidated whenever the counts are restored
    ws1 = (_cgs.ADLDAWorkspace(1, corpus.n_words, K, True)
           if K >= gibbs_mod._SPARSE_MIN_TOPICS else None)

    def restore():
        for a, b in zip(arrays, saved):
            np.copyto(a, b)
        if ws1 is not None:
            ws1.invalidate()

    def restore_and_snapshot():
        restore()
        return dgau.snapshot(pstate.n_wk, clip, beta, sec.bit_generator)

    one = np.array([0, corpus.n_docs], dtype=np.int64)

    def plain(_):
        # the estimator's one-thread kernel: SparseLDA from _SPARSE_MIN_TOPICS, else dense
        if K >= gibbs_mod._SPARSE_MIN_TOPICS:
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk,
                                    state.n_dk, state.n_k, alpha, beta, one,
                                    [rng.bit_generator], 1, ws1)
        else:
            _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, state.z, state.n_wk, state.n_dk,
                             state.n_k, alpha, beta, rng.bit_generator)

    def sweep(gamma, snap):
        _cgs.noisy_gibbs_sweep(pcorpus.doc_ptr, pcorpus.word_ids, pstate.z, pstate.n_wk,
                               pstate.n_dk, pstate.n_k, snap[1], snap[2], alpha, gamma, NO_TABLE,
                               sec.bit_generator)

    def noisy(noise, gamma=1.0):
        return lambda _: sweep(gamma, noise.snapshot(pstate.n_wk, clip, beta, sec.bit_generator,
                                                     buf))

    n = corpus.n_tokens
    g = "sweep K=%d" % K
    cases = [Case(g, "GibbsLDA", plain, restore, work=n, unit="tokens"),
             Case(g, "NoisyGibbsLDA default (AES, discrete Laplace)", noisy(dlap), restore,
                  work=n, unit="tokens"),
             Case(g, "NoisyGibbsLDA discrete_gaussian (AES)", noisy(dgau), restore, work=n,
                  unit="tokens"),
             Case(g, "NoisyGibbsLDA laplace (AES, float)", noisy(lap), restore, work=n,
                  unit="tokens"),
             Case(g, "NoisyGibbsLDA gaussian (AES, float)", noisy(gau), restore, work=n,
                  unit="tokens"),
             Case(g, "snapshot only (discrete Laplace)",
                  lambda _: dlap.snapshot(pstate.n_wk, clip, beta, sec.bit_generator, buf),
                  restore, work=n, unit="tokens"),
             Case(g, "snapshot only (discrete Gaussian)",
                  lambda _: dgau.snapshot(pstate.n_wk, clip, beta, sec.bit_generator, buf),
                  restore, work=n, unit="tokens"),
             Case(g, "secret token order (once per fit)",
                  lambda _: shuffle_within_segments(corpus.doc_ptr, corpus.word_ids, sec),
                  restore, work=n, unit="tokens")]
    gammas = [0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    # SUB-LDA (default discrete Gaussian): the token sweep alone (snapshot drawn untimed in
    # setup) and snapshot + sweep
    sub = [Case("SUB-LDA sweep K=%d" % K, f"gamma={g}", lambda snap, g=g: sweep(g, snap),
                restore_and_snapshot, work=n * g, unit="tokens", extra={"gamma": g})
           for g in gammas]
    sub += [Case("SUB-LDA snapshot+sweep K=%d" % K, f"gamma={g}", noisy(dgau, g), restore,
                 work=n * g, unit="tokens", extra={"gamma": g}) for g in gammas]
    rows = {}
    for _ in range(repeats):
        for c in cases + sub:
            r = run_cases([c], repeats=1, verbose=False)[0]
            rows.setdefault(c.name + c.group, []).append(r)
    out = []
    for c in cases + sub:
        rs = rows[c.name + c.group]
        times = [r["median_s"] for r in rs]
        r = dict(rs[0])
        r["runs_s"] = times
        r["median_s"] = float(np.median(times))
        r["throughput"] = c.work / r["median_s"]
        out.append(r)
    add_ratios(out, "GibbsLDA")
    for r in out:
        if "gamma" in r:
            hdp = [x for x in out if x["group"] == r["group"] and x["name"] == "gamma=1.0"][0]["median_s"]
            r["time_vs_gamma1"] = r["median_s"] / hdp
            r["speedup_vs_gamma1"] = hdp / r["median_s"]
            r["paper_speedup_ratio"] = abs(r["median_s"] - hdp) / hdp
        if r["group"].startswith("sweep") and r["name"] != "GibbsLDA":
            r["cost_vs_GibbsLDA"] = 1.0 / r["speed_vs_GibbsLDA"]
    return out


def generator_throughput(n, repeats):
    """Raw speed of the secret generator beside PCG64: Generator.random (bulk, in numpy)
    and next_double through the C API in a kernel loop (how the sweeps draw)."""
    gens = {"AES-128-CTR (secret_generator)": secret_generator(),
            "PCG64 (numpy default)": np.random.default_rng(0)}
    cases = []
    for name, gen in gens.items():
        cases.append(Case("Generator.random", name, lambda gen=gen: gen.random(n), work=n,
                          unit="doubles"))
        cases.append(Case("C API kernel loop", name,
                          lambda gen=gen: _cgs.uniform_sum(n, gen.bit_generator), work=n,
                          unit="doubles"))
    rows = run_cases(cases, repeats=repeats, verbose=False)
    for r in rows:
        r["M_per_s"] = r["throughput"] / 1e6
    for group in {r["group"] for r in rows}:
        pcg = [r for r in rows if r["group"] == group and r["name"].startswith("PCG64")][0]
        for r in rows:
            if r["group"] == group:
                r["speed_vs_PCG64"] = r["throughput"] / pcg["throughput"]
    return rows


def proportionality(rows):
    """Least-squares line time/time(gamma=1) = a + b gamma over each SUB-LDA group's
    gamma < 1 (a: the fraction that does not scale with gamma; a = 0, b = 1 is exact
    proportionality)."""
    fits = []
    for group in sorted({r["group"] for r in rows if "gamma" in r}):
        pts = [(r["gamma"], r["time_vs_gamma1"]) for r in rows
               if r["group"] == group and r["gamma"] < 1]
        g, t = np.array(pts).T
        b, a = np.polyfit(g, t, 1)
        fits.append({"group": group, "intercept_a": a, "slope_b": b,
                     "max_abs_dev_from_gamma": float(np.max(np.abs(t - g)))})
    return fits


def fit_timing(X, K, iters, repeats):
    cases = [
        Case("fit K=%d" % K, "GibbsLDA", lambda: GibbsLDA(K, max_iter=iters, random_state=0).fit(X)),
        # private models as published: secret generator, default exact noise
        Case("fit K=%d" % K, "NoisyGibbsLDA", lambda: NoisyGibbsLDA(
            K, epsilon_per_iter=1.0, clip=50, max_iter=iters).fit(X)),
        Case("fit K=%d" % K, "SubsampledGibbsLDA g=0.3", lambda: SubsampledGibbsLDA(
            K, sample_rate=0.3, clip=50, max_iter=iters).fit(X)),
    ]
    rows = run_cases(cases, repeats=repeats)
    for r in rows:
        r["per_sweep_s"] = r["median_s"] / iters
    return add_ratios(rows, "GibbsLDA")


def _thread_counts(jobs):
    from dptm.models.gibbs import effective_n_jobs
    out = []
    for j in jobs:
        if effective_n_jobs(j) not in out:
            out.append(effective_n_jobs(j))
    return out


def thread_kernel_timing(X, Ks, threads, repeats, burn_in):
    """Section 6a: per-sweep kernel times at each K and thread count, interleaved repeats
    from one burnt-in state (restored untimed before each run)."""
    from dptm.models import gibbs as gibbs_mod
    from dptm.models import private_gibbs as pg
    corpus = Corpus.from_matrix(X)
    n = corpus.n_tokens
    sec = secret_generator()
    rows = []
    for K in Ks:
        alpha = beta = 1.0 / K
        rng = np.random.default_rng(0)
        st = GibbsState(corpus, K, rng)
        one = np.array([0, corpus.n_docs], dtype=np.int64)
        for _ in range(burn_in):
            _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                    st.n_k, alpha, beta, one, [rng.bit_generator], 1)
        arrays = (st.z, st.n_wk, st.n_dk, st.n_k)
        saved = [a.copy() for a in arrays]

        workspaces = []

        def restore():
            for a, b in zip(arrays, saved):
                np.copyto(a, b)
            for ws in workspaces:
                if ws is not None:
                    ws.invalidate()
        noise = _Noise("discrete_laplace", epsilon=1.0)
        snap = noise.snapshot(st.n_wk, 50.0, beta, sec.bit_generator)
        # SUB-LDA's discrete Gaussian (noise multiplier 5, sigma 7.07): the exact inversion
        # sampler SubsampledGibbsLDA uses, and the alias-table sampler it used before (#16)
        dgau = _Noise("discrete_gaussian", noise_multiplier=5.0)
        dgau_alias = _Noise("discrete_gaussian", noise_multiplier=5.0)
        dgau_alias.table = _gauss_table.table_for(dgau_alias.a, dgau_alias.b)
        dgau.snapshot(st.n_wk, 50.0, beta, sec.bit_generator, snap)   # builds its table, untimed
        block_ptr = gibbs_mod.token_blocks(corpus.doc_ptr, block_tokens=pg._BLOCK_TOKENS)
        gens = [g.bit_generator for g in pg._child_generators(sec, block_ptr.size - 1)]
        # the fit's word-bucket table (running sums at the end of each 16-topic block) and
        # its int32 clipped counts for the snapshots it does not release (every one but
        # the last): what NoisyGibbsLDA.fit passes to the snapshot kernel
        word_blocks = (np.empty((corpus.n_words, -(-K // 16)))
                       if K >= pg._WORD_SEARCH_MIN_TOPICS else None)
        clip_buf = noise.clipped_buffer(st.n_wk.shape, 50.0)
        # the true counts' update as the fits (schedule 'every', SUB-LDA) choose it, built
        # once per thread count (untimed): in place, per-thread buffers, or (where it would
        # be word by word) left to the next snapshot, which counts each row from the topics
        # as it draws its noise (_SnapshotGibbsBase._sweeper's recount)
        updates = {}

        def counts(t):
            """(the sweep's keywords, the snapshot's) for t threads."""
            if t not in updates:
                wp, wt, tc = pg._count_update_buffers(corpus, K, t)
                updates[t] = ({"thread_counts": tc, "recount": wp is not None},
                              {"recount": (st.z, wp, wt) if wp is not None else None})
            return updates[t]
        sgens = pg._snapshot_generators(sec, corpus.n_words, K)
        sparse = K >= gibbs_mod._SPARSE_MIN_TOPICS
        cases = []
        for t in threads:
            g = f"K={K} threads={t}"
            parts = gibbs_mod.token_blocks(corpus.doc_ptr, n_parts=t) if t > 1 else one
            pgens = [x.bit_generator for x in np.random.default_rng(1).spawn(parts.size - 1)]

            def sweep(t, rate):
                _cgs.noisy_gibbs_sweep_blocks(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk,
                                              st.n_dk, st.n_k, snap[1], snap[2], alpha, rate,
                                              NO_TABLE, block_ptr, gens, t,
                                              **counts(t)[0], word_blocks=word_blocks)

            def restore_and_table(t=t):
                # the fit's sweep reads the search table the snapshot kernel filled in its
                # factor pass (_Noise.snapshot(word_blocks=)) and never builds it: the
                # sweep-only cases build it here, untimed, from the current snapshot (the
                # snapshot cases below keep its cost)
                restore()
                if word_blocks is not None:
                    _cgs.word_block_sums(snap[1], word_blocks, t)

            def private(_, t=t):
                sweep(t, 1.0)

            def full(_, t=t):
                # one noisy iteration of NoisyGibbsLDA.fit: the snapshot (row blocks, one
                # secret child stream each, t threads) with its search table (filled by the
                # snapshot kernel, as in fit), the sweep
                noise.snapshot(st.n_wk, 50.0, beta, sgens, snap, t, word_blocks=word_blocks,
                               clipped=clip_buf, **counts(t)[1])
                sweep(t, 1.0)

            def sub_iteration(noise_, t):
                # one iteration of SubsampledGibbsLDA.fit (gamma 0.5): the discrete Gaussian
                # snapshot with its search table, then the subsampled sweep
                def run(_):
                    noise_.snapshot(st.n_wk, 50.0, beta, sgens, snap, t,
                                    word_blocks=word_blocks, clipped=clip_buf,
                                    **counts(t)[1])
                    sweep(t, 0.5)
                return run

            def sub(_, t=t):
                sweep(t, 0.5)

            # GibbsLDA.fit's kernels: AD-LDA in _SYNC_ROUNDS rounds (lag _SYNC_LAG) on several
            # threads, SparseLDA from _SPARSE_MIN_TOPICS, buffers kept between sweeps
            ws = (_cgs.ADLDAWorkspace(parts.size - 1, corpus.n_words, K, sparse)
                  if sparse or t > 1 else None)
            rounds = gibbs_mod.round_blocks(corpus.doc_ptr, parts, gibbs_mod._SYNC_ROUNDS)
            workspaces.append(ws)

            def plain(_, t=t, parts=parts, pgens=pgens, ws=ws, rounds=rounds):
                if t > 1:
                    _cgs.gibbs_sweep_rounds(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk,
                                            st.n_dk, st.n_k, alpha, beta, rounds, pgens, t,
                                            sparse, ws, gibbs_mod._SYNC_LAG)
                elif sparse:
                    _cgs.gibbs_sweep_sparse(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk,
                                            st.n_dk, st.n_k, alpha, beta, parts, pgens, t, ws)
                else:
                    _cgs.gibbs_sweep(corpus.doc_ptr, corpus.word_ids, st.z, st.n_wk, st.n_dk,
                                     st.n_k, alpha, beta, pgens[0])
            cases += [Case(g, "GibbsLDA sweep", plain, restore, work=n, unit="tokens",
                           extra={"K": K, "threads": t}),
                      Case(g, "private sweep (gamma=1)", private, restore_and_table, work=n,
                           unit="tokens", extra={"K": K, "threads": t}),
                      Case(g, "private sweep (gamma=0.5)", sub, restore_and_table, work=n,
                           unit="tokens", extra={"K": K, "threads": t}),
                      Case(g, "snapshot + private sweep (gamma=1)", full, restore, work=n,
                           unit="tokens", extra={"K": K, "threads": t}),
                      # the snapshot of fit alone: row blocks, search table from K = 64,
                      # int32 clipped counts (a snapshot that is not released), the rows
                      # counted from the topics where the fit's sweep leaves them
                      Case(g, "snapshot (row blocks, as fit)",
                           lambda _, t=t: noise.snapshot(st.n_wk, 50.0, beta, sgens, snap, t,
                                                         word_blocks=word_blocks,
                                                         clipped=clip_buf, **counts(t)[1]),
                           restore, work=n, unit="tokens", extra={"K": K, "threads": t}),
                      Case(g, "SUB-LDA snapshot + sweep (gamma=0.5, inversion)",
                           sub_iteration(dgau, t), restore, work=n, unit="tokens",
                           extra={"K": K, "threads": t}),
                      Case(g, "SUB-LDA snapshot + sweep (gamma=0.5, alias: before)",
                           sub_iteration(dgau_alias, t), restore, work=n, unit="tokens",
                           extra={"K": K, "threads": t})]
        cases.append(Case(f"K={K} threads=1", "snapshot (discrete Laplace)",
                          lambda _: noise.snapshot(st.n_wk, 50.0, beta, sec.bit_generator, snap),
                          restore, work=n, unit="tokens", extra={"K": K, "threads": 1}))
        for name, nz in (("inversion", dgau), ("alias: before", dgau_alias)):
            cases.append(Case(f"K={K} threads=1", f"snapshot (discrete Gaussian, {name})",
                              lambda _, nz=nz: nz.snapshot(st.n_wk, 50.0, beta,
                                                           sec.bit_generator, snap),
                              restore, work=n, unit="tokens", extra={"K": K, "threads": 1}))
        times = {}
        for _ in range(repeats):
            for c in cases:
                r = run_cases([c], repeats=1, verbose=False)[0]
                times.setdefault((c.group, c.name), []).append(r["median_s"])
        for c in cases:
            med = float(np.median(times[(c.group, c.name)]))
            rows.append({"group": c.group, "name": c.name, "K": K, "threads": c.extra["threads"],
                         "median_s": med, "runs_s": times[(c.group, c.name)],
                         "Mtokens_per_s": n / med / 1e6})
        print(f"  K={K} done", flush=True)
    one_t = {(r["K"], r["name"]): r["median_s"] for r in rows if r["threads"] == 1}
    plain_t = {(r["K"], r["threads"]): r["median_s"] for r in rows
               if r["name"] == "GibbsLDA sweep"}
    for r in rows:
        r["speedup_vs_1"] = one_t[(r["K"], r["name"])] / r["median_s"]
        pt = plain_t.get((r["K"], r["threads"]))
        r["cost_vs_GibbsLDA_sweep"] = r["median_s"] / pt if pt else None
    return rows


def thread_fit_timing(X, Ks, threads, iters, repeats):
    """Section 6b: end-to-end fits (same iterations) with held-out perplexity."""
    from bench_cgs import heldout_perplexity, split, tomotopy_case
    X_train, X_test = split(X)
    n = int(X_train.sum()) * iters
    rows = []
    for K in Ks:
        alpha, beta = 1.0 / K, 0.01
        for t in threads:
            g = f"K={K} threads={t}"
            setup, tomo = tomotopy_case(X_train, K, alpha, beta, iters, t)

            def fit(model):
                return lambda: {"topic_word": model.fit(X_train).topic_word_}
            cases = [
                Case(g, "GibbsLDA", fit(GibbsLDA(K, doc_topic_prior=alpha, topic_word_prior=beta,
                                                 max_iter=iters, random_state=0, n_jobs=t)),
                     work=n, unit="tokens"),
                # as published: secret generator, default exact noise
                Case(g, "NoisyGibbsLDA", fit(NoisyGibbsLDA(
                    K, epsilon_per_iter=1.0, clip=50, doc_topic_prior=alpha,
                    topic_word_prior=beta, max_iter=iters, n_jobs=t)), work=n, unit="tokens"),
                Case(g, "SubsampledGibbsLDA g=0.5", fit(SubsampledGibbsLDA(
                    K, sample_rate=0.5, clip=50, doc_topic_prior=alpha, topic_word_prior=beta,
                    max_iter=iters, n_jobs=t)), work=n, unit="tokens"),
                Case(g, "tomotopy", tomo, setup=setup, work=n, unit="tokens")]
            for r in run_cases(cases, repeats=repeats):
                r["heldout_perplexity"] = heldout_perplexity(r.pop("topic_word"), X_test, alpha)
                r["Mtokens_per_s"] = r["throughput"] / 1e6
                r["K"], r["threads"] = K, t
                rows.append(r)
    add_ratios(rows, "tomotopy")
    one_t = {(r["K"], r["name"]): r["median_s"] for r in rows if r["threads"] == 1}
    for r in rows:
        one = one_t.get((r["K"], r["name"]))
        r["speedup_vs_1"] = one / r["median_s"] if one else None
        tomo1 = one_t.get((r["K"], "tomotopy"))
        r["speed_vs_tomotopy_1"] = tomo1 / r["median_s"] if tomo1 else None
    return rows


def thread_scaling(X, args, meta):
    threads = _thread_counts(args.jobs)
    Ks = [50] if args.quick else args.topics_list
    load = os.getloadavg()
    print(f"\n== 6. thread scaling, threads {threads}, K {Ks}; load average before "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    Xs = X if not args.quick else X[:800]
    rows = thread_kernel_timing(Xs, Ks, threads, args.repeats, burn_in=5 if args.quick else 20)
    report("bench_private_gibbs_threads_sweeps", rows,
           [("group", ""), ("name", ""), ("median_s", ".4f"), ("Mtokens_per_s", ".2f"),
            ("speedup_vs_1", ".2f"), ("cost_vs_GibbsLDA_sweep", ".3f")],
           {**meta, "load_before": load, "load_after": os.getloadavg()})
    if args.no_fits:
        return
    iters = 5 if args.quick else args.fit_iters
    rows = thread_fit_timing(Xs, Ks, threads, iters, args.repeats)
    report("bench_private_gibbs_threads_fit", rows,
           [("group", ""), ("name", ""), ("median_s", ".3f"), ("Mtokens_per_s", ".2f"),
            ("speedup_vs_1", ".2f"), ("speed_vs_tomotopy", ".2f"),
            ("speed_vs_tomotopy_1", ".2f"), ("heldout_perplexity", ".1f")],
           {**meta, "iterations": iters, "load_before": load, "load_after": os.getloadavg(),
            "note": "speed_vs_tomotopy: tomotopy with the same number of workers"})
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def top_words(X, n):
    counts = np.asarray(X.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-counts, kind="stable")[:n])
    Xr = X[:, keep]
    return Xr[np.asarray(Xr.sum(axis=1)).ravel() > 0]


def perplexity_vs_epsilon(X, K, iters, epsilons, n_train, seed=0):
    """papers/zhao2021 Fig. 5: held-out perplexity against eps_L."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(X.shape[0])
    train, test = X[order[:n_train]], X[order[n_train:]]
    rows = []
    t0 = time.perf_counter()
    base = GibbsLDA(K, doc_topic_prior=1.0, topic_word_prior=0.01, max_iter=iters,
                    random_state=seed).fit(train)
    rows.append({"model": "non-private CGS", "eps_L": None, "eps_I": None,
                 "perplexity": base.perplexity(test), "fit_s": time.perf_counter() - t0})
    # HDP-LDA: inherent privacy limited to eps_I = 10 per iteration: C = beta (e^5 - 1), with
    # beta = 0.1 (C = 14.7) and beta = 1 (C = 147.4)
    beta_h = 0.1
    clip_h = beta_h * (np.exp(5.0) - 1.0)
    t0 = time.perf_counter()
    lim = NoisyGibbsLDA(K, epsilon_per_iter=1e6, clip=clip_h, doc_topic_prior=1.0,
                        topic_word_prior=beta_h, max_iter=iters, random_state=seed).fit(train)
    rows.append({"model": "limited inherent (no noise)", "eps_L": None, "eps_I": lim.epsilon_inherent_,
                 "perplexity": lim.perplexity(test), "fit_s": time.perf_counter() - t0})
    for eps in epsilons:
        for name, kw in [("HDP-LDA", dict(clip=clip_h, topic_word_prior=beta_h)),
                         ("HDP-LDA beta=1", dict(clip=np.exp(5.0) - 1.0, topic_word_prior=1.0)),
                         ("CDP-LDA+", dict(clip=None, topic_word_prior=0.01))]:
            t0 = time.perf_counter()
            m = NoisyGibbsLDA(K, epsilon_per_iter=eps, doc_topic_prior=1.0, max_iter=iters,
                              random_state=seed, **kw).fit(train)
            rows.append({"model": name, "eps_L": eps, "eps_I": m.epsilon_inherent_,
                         "perplexity": m.perplexity(test),
                         "total_eps_linear": m.privacy_.epsilon(0.0),
                         "total_eps_1e-5": m.privacy_.epsilon(1e-5),
                         "fit_s": time.perf_counter() - t0})
            print(f"  {name:<14} eps_L={eps:<6} perplexity {rows[-1]['perplexity']:.1f}", flush=True)
    return rows


def efficiency_privacy(alphas, gammas, eps_alpha=2.0, alpha0=14):
    """papers/huang2022 Fig. 1: I(gamma) for several alpha at the paper's noise
    (sigma^2 = alpha0 / (2 eps(alpha0)), alpha0 = 14, eps = 2)."""
    sigma = recipes.huang2022_sigma(alpha0, eps_alpha)
    rows = []
    for a in alphas:
        row = {"alpha": a}
        for g in gammas:
            row[f"g={g}"] = recipes.huang2022_efficiency_privacy(a, g, sigma)
        vals = [row[f"g={g}"] for g in gammas]
        row["argmax_gamma"] = gammas[int(np.argmax(vals))]
        rows.append(row)
    return rows, sigma


def sound_epsilon_vs_gamma(gammas, noise_multiplier=5.0, clip=1.0, beta=1.0, iters=100,
                           delta=1e-5):
    """SUB-LDA's sound epsilon against gamma, read from fitted models' reports: the
    sampling step credited by Renyi amplification (GatedEvent, the default) and charged
    eps_I in full (no amplification), next to the paper's (unsound) claim."""
    X, _, _ = make_lda_corpus(50, 30, 3, random_state=0)
    rows = []
    for g in gammas:
        m = SubsampledGibbsLDA(3, sample_rate=g, noise_multiplier=noise_multiplier, clip=clip,
                               topic_word_prior=beta, max_iter=iters, random_state=0).fit(X)
        gauss, sampling = [e for e, _, _, _ in m.privacy_.events]
        inner = getattr(sampling, "event", sampling)
        ungated = SelfComposedEvent(ComposedEvent((gauss, inner)), iters)
        rows.append({"gamma": g, "eps_I": m.epsilon_inherent_,
                     "sound_eps": m.privacy_.epsilon(delta),
                     "sound_eps_sampling_unamplified": epsilon(ungated, delta),
                     "paper_claim_eps": m.privacy_.paper_epsilon(delta)})
    return rows


def attack_vs_iterations(X, K, iters, n_docs, n_tokens, seed=0):
    """papers/zhao2021 Fig. 4: mean posterior probability of the true word and top-1 accuracy."""
    rng = np.random.default_rng(seed)
    Xs = X[np.sort(rng.choice(X.shape[0], n_docs, replace=False))]
    Xs = Xs[:, np.asarray(Xs.sum(axis=0)).ravel() > 0]
    corpus = Corpus.from_matrix(Xs)
    tokens = rng.choice(corpus.n_tokens, n_tokens, replace=False)
    truth = corpus.word_ids[tokens]
    results = {}
    tr = record_gibbs_trace(Xs, K, max_iter=iters, trace_tokens=tokens, doc_topic_prior=1.0,
                            topic_word_prior=0.01, random_state=seed)
    results["non-private CGS"] = topic_based_attack(tr, true_words=truth, smoothing=0.01)
    for name, kw in [("CDP-LDA+ eps_L=1", dict(epsilon_per_iter=1.0, clip=None, topic_word_prior=0.01)),
                     ("HDP-LDA eps_L=10, eps_I=1.39", dict(epsilon_per_iter=10.0, clip=1.0, topic_word_prior=1.0)),
                     ("HDP-LDA eps_L=1, eps_I=10", dict(epsilon_per_iter=1.0, clip=0.1 * (np.exp(5) - 1),
                                                         topic_word_prior=0.1))]:
        m = NoisyGibbsLDA(K, doc_topic_prior=1.0, max_iter=iters, record_trace=True,
                          trace_tokens=tokens, random_state=seed, **kw).fit(Xs)
        # the trace indexes tokens in the fit's secret visiting order: its own ground truth
        results[name] = topic_based_attack(m, true_words=m.trace_["words"])
    checkpoints = [i for i in (1, 5, 10, 20, 30, 50, 100) if i <= iters]
    rows = []
    for name, res in results.items():
        row = {"model": name}
        for c in checkpoints:
            row[f"p@{c}"] = float(res.mean_true_word_probability[c - 1])
            row[f"acc@{c}"] = float(res.accuracy[c - 1])
        rows.append(row)
    return rows, checkpoints, corpus.n_words


def main():
    p = parser(__doc__)
    p.add_argument("--topics", type=int, default=50)
    p.add_argument("--sweeps-only", action="store_true", help="only sections 1-2 (sweep times)")
    p.add_argument("--threads-only", action="store_true", help="only section 6 (threads)")
    p.add_argument("--topics-list", nargs="+", type=int, default=[50, 100, 500, 1000])
    p.add_argument("--jobs", nargs="+", type=int, default=[1, 2, -1])
    p.add_argument("--fit-iters", type=int, default=10)
    p.add_argument("--no-fits", action="store_true",
                   help="section 6: kernel-level sweep times only (no end-to-end fits)")
    args = p.parse_args()
    X = load_kos()
    K = args.topics
    quick = args.quick
    meta = {"corpus": "KOS", "docs": X.shape[0], "words": X.shape[1], "K": K, "quick": quick,
            "note": "shared 2-core machine; ratios from interleaved runs in the same process"}
    # sections 3-5 seed the private models (test mode) so that their figures reproduce
    warnings.filterwarnings("ignore", category=SeededPrivacyWarning)
    if args.threads_only:
        thread_scaling(X, args, meta)
        return

    print("== 0. raw generator throughput")
    report("bench_private_gibbs_generators", generator_throughput(10 ** 6 if quick else 10 ** 7,
                                                                  args.repeats),
           [("group", ""), ("name", ""), ("M_per_s", ".1f"), ("speed_vs_PCG64", ".3f")], meta)

    print(f"== 1-2. per-sweep time, KOS {X.shape}, {int(X.sum())} tokens, K={K}")
    rows = sweep_timing(X if not quick else X[:800], K, repeats=args.repeats,
                        burn_in=5 if quick else 20)
    report("bench_private_gibbs_sweeps", rows,
           [("group", ""), ("name", ""), ("median_s", ".4f"), ("cost_vs_GibbsLDA", ".3f"),
            ("time_vs_gamma1", ".3f"), ("speedup_vs_gamma1", ".2f"),
            ("paper_speedup_ratio", ".3f")],
           {**meta, "tokens": int(X.sum()) if not quick else int(X[:800].sum())})
    print("\ntime / time(gamma=1) ~ a + b gamma, fitted over gamma < 1")
    report("bench_private_gibbs_proportionality", proportionality(rows),
           [("group", ""), ("intercept_a", ".3f"), ("slope_b", ".3f"),
            ("max_abs_dev_from_gamma", ".3f")], meta)
    if args.sweeps_only:
        return

    print("\n== 1b. end-to-end fit time")
    iters = 5 if quick else 20
    rows = fit_timing(X if not quick else X[:800], K, iters, args.repeats)
    report("bench_private_gibbs_fit", rows,
           [("name", ""), ("median_s", ".3f"), ("per_sweep_s", ".4f"), ("speed_vs_GibbsLDA", ".3f")],
           {**meta, "iterations": iters})

    print("\n== 3. held-out perplexity vs eps_L (papers/zhao2021 Fig. 5)")
    X1000 = top_words(X, 1000)
    if quick:
        prows = perplexity_vs_epsilon(X1000[:600], min(K, 20), 20, [1.0, 10.0], n_train=500)
    else:
        prows = perplexity_vs_epsilon(X1000, K, 100, [0.1, 0.5, 1.0, 5.0, 10.0], n_train=3000)
    report("bench_private_gibbs_perplexity", prows,
           [("model", ""), ("eps_L", ".3g"), ("eps_I", ".3g"), ("perplexity", ".1f"),
            ("total_eps_linear", ".4g"), ("total_eps_1e-5", ".4g"), ("fit_s", ".1f")], meta)

    print("\n== 4. efficiency-privacy function I (papers/huang2022 Fig. 1)")
    gammas = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]
    irows, sigma = efficiency_privacy([2, 6, 10, 14, 20], gammas)
    print(f"sigma = {sigma:.4f} (alpha0 = 14, eps(alpha0) = 2, unit sensitivity as in the paper)")
    report("bench_private_gibbs_efficiency_privacy", irows,
           [("alpha", "")] + [(f"g={g}", ".4g") for g in gammas] + [("argmax_gamma", "")],
           {"sigma": sigma})

    print("\n== 4b. SUB-LDA sound epsilon (delta 1e-5) vs gamma: noise multiplier 5, C = 1, "
          "beta = 1, 100 iterations")
    report("bench_private_gibbs_sublda_epsilon", sound_epsilon_vs_gamma(gammas[2:]),
           [("gamma", ".2g"), ("eps_I", ".4g"), ("sound_eps", ".2f"),
            ("sound_eps_sampling_unamplified", ".2f"), ("paper_claim_eps", ".2f")], meta)

    print("\n== 5. topic-based attack vs iterations (papers/zhao2021 Fig. 4)")
    arows, cps, V = attack_vs_iterations(X, 10 if quick else 20, 20 if quick else 100,
                                         300 if quick else 1000, 300 if quick else 1000)
    print(f"vocabulary of the subsample: {V} words (prior probability of a word ~ {1 / V:.2g})")
    report("bench_private_gibbs_attack", arows,
           [("model", "")] + [(f"p@{c}", ".4f") for c in cps] + [(f"acc@{c}", ".3f") for c in cps],
           meta)

    thread_scaling(X, args, meta)


if __name__ == "__main__":
    main()
