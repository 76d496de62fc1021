# cython: language_level=3
"""Collapsed Gibbs sampling kernels for LDA.

Data layout, shared by every kernel: tokens are flat arrays, document ``d`` owning
``words[doc_ptr[d]:doc_ptr[d+1]]`` with current topics ``z``; topic-word counts are
word-major ``n_wk[w, k]`` (the K counts of one word are contiguous), document-topic counts
``n_dk[d, k]``, topic totals ``n_k[k]``. Kernels take numpy's BitGenerator and draw from it
through its C API; they know nothing of estimators, privacy or I/O.
"""
from fractions import Fraction

import numpy as np

from libc.math cimport ceil, exp, log, log1p
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport abort, calloc, malloc, free
from libc.string cimport memcpy, memset
from cython.parallel cimport parallel, prange, threadid
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (random_interval, random_standard_exponential,
                                           random_standard_normal)

from dptm._bitgen cimport get_bitgen, next_uniform
from dptm import _exact


cdef inline Py_ssize_t sample_cumulative(const double* cum, Py_ssize_t K, double u) noexcept nogil:
    """Smallest k with cum[k] > u (cum non-decreasing, u < cum[K-1])."""
    cdef Py_ssize_t k = 0
    while k < K - 1 and cum[k] <= u:
        k += 1
    return k


# The O(K) part of a draw of gibbs_sweep's blocked search, in C with the exact operation
# order of its docstring (no FMA contraction, so any -march gives the same bits).
# DPTM_CGS_NB blocks; topic t belongs to block t % NB, so the sums over blocks are
# element-wise (vectorised) and the serial additions per draw are about K / NB + NB
# instead of K. The search has no data-dependent branch: a mispredicted loop exit costs about
# as much as the arithmetic, and it keeps the CPU from overlapping consecutive tokens.
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__GNUC__) && !defined(__clang__)
    #define DPTM_CGS_FP __attribute__((optimize("fp-contract=off")))
    #define DPTM_CGS_SCALAR __attribute__((optimize("fp-contract=off", "no-tree-vectorize", "no-tree-slp-vectorize")))
    #else
    #define DPTM_CGS_FP
    #define DPTM_CGS_SCALAR
    #endif
    #define DPTM_CGS_NB 8
    /* An AVX2 clone of the block prefix, chosen when the module loads (GCC target_clones,
       a glibc ifunc): 4 doubles an instruction instead of the baseline's 2, the same
       operations in the same order (no contraction), so the same bits on every CPU. Keep
       fp-contract=off on it and no "fma" target in the list: with both, the clone's sums
       differ in the last bits (review s12: 19,737 of 20,000 random rows). */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    #define DPTM_CGS_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define DPTM_CGS_CLONES
    #endif
    /* Bring a topic-word row into cache ahead of its token (rows are read in word order,
       not memory order, and n_wk outgrows L2 at large V K). */
    static inline void dptm_cgs_prefetch_row(const int32_t *row, Py_ssize_t K) {
        Py_ssize_t t;
        for (t = 0; t < K; t += 16) __builtin_prefetch(row + t);
        __builtin_prefetch(row + K - 1);                 /* rows need not start a line */
    }
    /* P[j NB + b] = x[b] + x[b + NB] + ... + x[b + j NB] (left to right) with
       x[t] = (wrow[t] + beta) * c[t], for j < K / NB; row K / NB holds the block totals
       (the partial last row added). P has K + NB entries. */
    static DPTM_CGS_CLONES DPTM_CGS_FP void dptm_cgs_block_prefix(const int32_t *__restrict wrow,
            const double *__restrict c, double *__restrict P, Py_ssize_t K, double beta) {
        double acc[DPTM_CGS_NB];
        Py_ssize_t j, b, rows = K / DPTM_CGS_NB, rem = K % DPTM_CGS_NB;
        for (b = 0; b < DPTM_CGS_NB; b++) acc[b] = 0.0;
        for (j = 0; j < rows; j++) {
            for (b = 0; b < DPTM_CGS_NB; b++) {
                acc[b] += ((double) wrow[j * DPTM_CGS_NB + b] + beta) * c[j * DPTM_CGS_NB + b];
                P[j * DPTM_CGS_NB + b] = acc[b];
            }
        }
        for (b = 0; b < rem; b++)
            acc[b] += ((double) wrow[rows * DPTM_CGS_NB + b] + beta) * c[rows * DPTM_CGS_NB + b];
        for (b = 0; b < DPTM_CGS_NB; b++) P[rows * DPTM_CGS_NB + b] = acc[b];
    }
    /* The topic for u = uniform * total, given P from dptm_cgs_block_prefix (K >= NB). */
    static inline DPTM_CGS_SCALAR Py_ssize_t dptm_cgs_block_search(const double *__restrict P,
            Py_ssize_t K, double uniform) {
        Py_ssize_t j, b, nb = 0, n = 0, rows = K / DPTM_CGS_NB, last;
        const double *__restrict s = P + rows * DPTM_CGS_NB;
        double cum[DPTM_CGS_NB], u, r;
        /* cumulative block sums as two groups of 4: the second group's prefix is offset
           by the first group's total, so cum is non-decreasing and its serial chain has 5
           additions instead of 7 */
        cum[0] = s[0];
        cum[1] = cum[0] + s[1];
        cum[2] = cum[1] + s[2];
        cum[3] = cum[2] + s[3];
        cum[4] = s[4];
        cum[5] = cum[4] + s[5];
        cum[6] = cum[5] + s[6];
        cum[7] = cum[6] + s[7];
        cum[4] = cum[3] + cum[4];
        cum[5] = cum[3] + cum[5];
        cum[6] = cum[3] + cum[6];
        cum[7] = cum[3] + cum[7];
        u = uniform * cum[7];
        for (b = 0; b < DPTM_CGS_NB; b++) nb += cum[b] <= u;
        nb = nb < DPTM_CGS_NB - 1 ? nb : DPTM_CGS_NB - 1;
        r = nb > 0 ? u - cum[nb - 1] : u;
        /* when block nb has no topic in row `rows`, P repeats its total there; the clamp
           to the block's last topic absorbs it */
        for (j = 0; j <= rows; j++) n += P[j * DPTM_CGS_NB + nb] <= r;
        last = (K - 1 - nb) / DPTM_CGS_NB;
        n = n < last ? n : last;
        return nb + n * DPTM_CGS_NB;
    }
    """
    const Py_ssize_t DPTM_CGS_NB
    void __builtin_prefetch(const void* p) noexcept nogil
    void dptm_cgs_prefetch_row(const int32_t* row, Py_ssize_t K) noexcept nogil
    void dptm_cgs_block_prefix(const int32_t* wrow, const double* c, double* P, Py_ssize_t K,
                               double beta) noexcept nogil
    Py_ssize_t dptm_cgs_block_search(const double* P, Py_ssize_t K, double uniform) noexcept nogil


# Below this many topics the plain sequential scan is faster (measured on KOS and NIPS).
cdef Py_ssize_t BLOCKED_MIN_TOPICS = 32


cdef void _gibbs_docs(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                      const int32_t* words, Py_ssize_t n_tokens, int32_t* z, int32_t* n_wk,
                      int32_t* n_dk, int64_t* n_k, Py_ssize_t V, Py_ssize_t K, double alpha,
                      double beta, bitgen_t* rng, double* c, double* cum) noexcept nogil:
    """The sweep of ``gibbs_sweep`` over documents [d_lo, d_hi) with the counts given
    (``c``: K doubles, ``cum``: K + NB doubles of scratch)."""
    cdef Py_ssize_t d, i, k, w, t
    cdef double beta_sum = V * beta, total
    cdef int32_t* wrow
    cdef int32_t* drow
    cdef bint blocked = K >= BLOCKED_MIN_TOPICS
    if not blocked:
        for t in range(K):
            c[t] = 1.0 / (n_k[t] + beta_sum)
    for d in range(d_lo, d_hi):
        if doc_ptr[d + 1] == doc_ptr[d]:
            continue
        drow = n_dk + d * K
        if blocked:
            for t in range(K):
                c[t] = (drow[t] + alpha) / (n_k[t] + beta_sum)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            k = z[i]
            wrow = n_wk + w * K
            wrow[k] -= 1
            drow[k] -= 1
            n_k[k] -= 1
            if blocked:
                c[k] = (drow[k] + alpha) / (n_k[k] + beta_sum)
                if i + 1 < n_tokens:
                    dptm_cgs_prefetch_row(n_wk + words[i + 1] * K, K)
                dptm_cgs_block_prefix(wrow, c, cum, K, beta)
                k = dptm_cgs_block_search(cum, K, next_uniform(rng))
            else:
                c[k] = 1.0 / (n_k[k] + beta_sum)
                total = 0.0
                for t in range(K):
                    total += (wrow[t] + beta) * (drow[t] + alpha) * c[t]
                    cum[t] = total
                k = sample_cumulative(cum, K, next_uniform(rng) * total)
            z[i] = <int32_t> k
            wrow[k] += 1
            drow[k] += 1
            n_k[k] += 1
            if blocked:
                c[k] = (drow[k] + alpha) / (n_k[k] + beta_sum)
            else:
                c[k] = 1.0 / (n_k[k] + beta_sum)


def gibbs_sweep(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                double alpha, double beta, object bit_generator):
    """One sweep of collapsed Gibbs sampling over every token (Griffiths & Steyvers 2004).

    Tokens are visited in order. Token ``i`` of document ``d`` with word ``w`` and topic
    ``k`` is removed from the counts (``n_wk[w, k]``, ``n_dk[d, k]``, ``n_k[k]`` decremented),
    its topic is redrawn from ``p_t ∝ (n_wk[w, t] + beta) * (n_dk[d, t] + alpha) /
    (n_k[t] + V beta)`` with one uniform ``U`` (the BitGenerator's ``next_double``), and the
    counts of the new topic are incremented. O(K) per token. In double precision, with the
    current counts, the draw is:

    ``K < 32`` (sequential scan)::

        cum[t] = sum_{t' <= t} (n_wk[w, t'] + beta) * (n_dk[d, t'] + alpha) * (1 / (n_k[t'] + V beta))
        u = U * cum[K - 1];  topic = first t with cum[t] > u  (K - 1 if none)

    (sums left to right, each product evaluated left to right).

    ``K >= 32`` (blocked search, 8 blocks; topic ``t`` is in block ``t % 8``)::

        x[t]    = (n_wk[w, t] + beta) * ((n_dk[d, t] + alpha) / (n_k[t] + V beta))
        P[b][j] = x[b] + x[b + 8] + ... + x[b + 8 j]      (left to right; topics < K)
        s[b]    = the last P[b][j] (block total)
        cum[b]  = s[0] + ... + s[b] for b < 4  (left to right),
                  cum[3] + (s[4] + ... + s[b]) for b >= 4
        u = U * cum[7]
        b* = min(#{b : cum[b] <= u}, 7);  r = u - cum[b* - 1]  (r = u if b* = 0)
        topic = b* + 8 j*,  j* = min(#{j : P[b*][j] <= r}, (last j of block b*))

    Both are the inverse-CDF draw (the second over topics ordered by block); the blocked form
    needs about K / 8 + 8 serial additions instead of K and no data-dependent branch.
    ``gibbs_sweep_parallel`` runs it on several threads (AD-LDA).
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    # sequential scan: c[t] = 1 / (n_k[t] + beta_sum), cum the running sums;
    # blocked: c[t] = (drow[t] + alpha) / (n_k[t] + beta_sum) for the current document,
    # cum the block prefix sums (K + NB entries)
    if D <= 0 or K <= 0 or words.shape[0] == 0:
        return
    cdef double* c = <double*> malloc(K * sizeof(double))
    cdef double* cum = <double*> malloc((K + DPTM_CGS_NB) * sizeof(double))
    if c == NULL or cum == NULL:
        free(c); free(cum)
        raise MemoryError()
    try:
        with bit_generator.lock, nogil:
            _gibbs_docs(&doc_ptr[0], 0, D, &words[0], words.shape[0], &z[0], &n_wk[0, 0],
                        &n_dk[0, 0], &n_k[0], V, K, alpha, beta, rng, c, cum)
    finally:
        free(c)
        free(cum)


def _check_partitions(const int64_t[::1] part_ptr, Py_ssize_t D, object bit_generators,
                      int n_threads):
    """Arguments shared by the AD-LDA kernels: threads, one generator per partition, and
    partition boundaries from 0 to D, non-decreasing."""
    cdef Py_ssize_t p, P = part_ptr.shape[0] - 1
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if P < 1 or len(bit_generators) != P:
        raise ValueError("need one bit generator per partition")
    if part_ptr[0] != 0 or part_ptr[P] != D:
        raise ValueError("part_ptr must start at 0 and end at the number of documents")
    for p in range(P):
        if part_ptr[p + 1] < part_ptr[p]:
            raise ValueError("part_ptr must be non-decreasing")


# A word's list (SparseLDA): its non-zero topics as (topic, count) int32 pairs, wl[2 j] and
# wl[2 j + 1], so the word bucket reads one contiguous run instead of gathering counts
# from the word's row (a cache line per topic at large K). Unordered: a topic whose count
# drops to zero is replaced by the last pair, a new one is appended.
cdef extern from *:
    """
    /* Index of topic k among the n (topic, count) pairs of wl, n if absent. Eight pairs
       a step without a branch per pair: a frequent word's list holds hundreds of topics
       (NIPS), and every move applied to a list searches it twice. Topics are unique in a
       list, so this is the index the pair-by-pair scan finds. */
    static inline Py_ssize_t dptm_find_topic(const int32_t *wl, Py_ssize_t n, int32_t k) {
        Py_ssize_t j = 0;
        for (; j + 8 <= n; j += 8) {
            unsigned m = (unsigned) (wl[2 * j] == k)
                | ((unsigned) (wl[2 * j + 2] == k) << 1)
                | ((unsigned) (wl[2 * j + 4] == k) << 2)
                | ((unsigned) (wl[2 * j + 6] == k) << 3)
                | ((unsigned) (wl[2 * j + 8] == k) << 4)
                | ((unsigned) (wl[2 * j + 10] == k) << 5)
                | ((unsigned) (wl[2 * j + 12] == k) << 6)
                | ((unsigned) (wl[2 * j + 14] == k) << 7);
            if (m) return j + __builtin_ctz(m);
        }
        for (; j < n; j++)
            if (wl[2 * j] == k) return j;
        return n;
    }
    /* The word bucket of the token being resampled, over the n >= 1 pairs of its word's
       list, which still counts the token (its old topic kold is in the list, at the index
       stored in *jk, and weighs count - 1 here): x_j = (count_j - [topic_j == kold])
       c[topic_j]. Four lanes, pair j in lane j % 4, so the serial additions per token are
       about n / 4 + 2 instead of n: P[j] = the sum of lane j % 4's x up to j (left to
       right), for j < 4 ceil(n / 4) (the pairs past n weigh 0: P repeats the lane's total
       there); cum[b] the cumulative lane totals (lanes 2 and 3 added first: two levels),
       non-decreasing; returns q = cum[3]. The last row's pairs past n are masked, not
       branched on: they read up to 3 pairs past the list (lists have that slack), topic 0
       and weight 0 in their place. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    static inline DPTM_CGS_FP double dptm_word_bucket(const int32_t *__restrict wl,
            Py_ssize_t n, const double *__restrict c, int32_t kold, double *__restrict P,
            double *__restrict cum, Py_ssize_t *jk) {
        Py_ssize_t j, end = 4 * ((n + 3) >> 2);
        double a[4];
    #if defined(__SSE2__)
        /* (SSE2 by hand: GCC's own vectorisation of the scalar loop below is poor) */
        __m128d a01 = _mm_setzero_pd(), a23 = _mm_setzero_pd();
        __m128i f = _mm_setzero_si128(), k4 = _mm_set1_epi32(kold);
        __m128i idx = _mm_setr_epi32(0, 1, 2, 3), four = _mm_set1_epi32(4);
        /* the full rows: the topics read again as scalars to index c (fewer instructions
           than taking them out of the vector) */
        for (j = 0; j < end - 4; j += 4) {
            __m128 v0 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *) (wl + 2 * j)));
            __m128 v1 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *) (wl + 2 * j + 4)));
            __m128i tv = _mm_castps_si128(_mm_shuffle_ps(v0, v1, 0x88));
            __m128i cv = _mm_castps_si128(_mm_shuffle_ps(v0, v1, 0xdd));
            __m128i e = _mm_cmpeq_epi32(tv, k4);
            f = _mm_or_si128(f, _mm_and_si128(e, idx));
            cv = _mm_add_epi32(cv, e);                              /* e = -1: count - 1 */
            a01 = _mm_add_pd(a01, _mm_mul_pd(_mm_cvtepi32_pd(cv),
                                             _mm_setr_pd(c[wl[2 * j]], c[wl[2 * j + 2]])));
            a23 = _mm_add_pd(a23, _mm_mul_pd(_mm_cvtepi32_pd(_mm_shuffle_epi32(cv, 0xee)),
                                             _mm_setr_pd(c[wl[2 * j + 4]], c[wl[2 * j + 6]])));
            _mm_storeu_pd(P + j, a01);
            _mm_storeu_pd(P + j + 2, a23);
            idx = _mm_add_epi32(idx, four);
        }
        {   /* the last row (n > 0), its pairs past n masked: topic 0, weight 0 */
            int32_t t[4] __attribute__((aligned(16)));
            __m128 v0 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *) (wl + 2 * j)));
            __m128 v1 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *) (wl + 2 * j + 4)));
            __m128i in = _mm_cmpgt_epi32(_mm_set1_epi32((int32_t) n), idx);
            __m128i tv = _mm_and_si128(_mm_castps_si128(_mm_shuffle_ps(v0, v1, 0x88)), in);
            __m128i cv = _mm_castps_si128(_mm_shuffle_ps(v0, v1, 0xdd));
            __m128i e = _mm_and_si128(_mm_cmpeq_epi32(tv, k4), in);
            f = _mm_or_si128(f, _mm_and_si128(e, idx));
            cv = _mm_and_si128(_mm_add_epi32(cv, e), in);
            _mm_store_si128((__m128i *) t, tv);
            a01 = _mm_add_pd(a01, _mm_mul_pd(_mm_cvtepi32_pd(cv),
                                             _mm_setr_pd(c[t[0]], c[t[1]])));
            a23 = _mm_add_pd(a23, _mm_mul_pd(_mm_cvtepi32_pd(_mm_shuffle_epi32(cv, 0xee)),
                                             _mm_setr_pd(c[t[2]], c[t[3]])));
            _mm_storeu_pd(P + j, a01);
            _mm_storeu_pd(P + j + 2, a23);
        }
        _mm_storeu_pd(a, a01);
        _mm_storeu_pd(a + 2, a23);
        f = _mm_or_si128(f, _mm_shuffle_epi32(f, 0x4e));
        f = _mm_or_si128(f, _mm_shuffle_epi32(f, 0xb1));
        *jk = _mm_cvtsi128_si32(f);
    #else
        Py_ssize_t b;
        int32_t f = 0;
        a[0] = a[1] = a[2] = a[3] = 0.0;
        for (j = 0; j < end; j += 4) {
            for (b = 0; b < 4; b++) {
                int32_t in = -(int32_t) (j + b < n);
                int32_t t = wl[2 * (j + b)] & in, e = -(int32_t) (t == kold) & in;
                f |= e & (int32_t) (j + b);
                a[b] += (double) ((wl[2 * (j + b) + 1] + e) & in) * c[t];
                P[j + b] = a[b];
            }
        }
        *jk = f;
    #endif
        cum[0] = a[0];
        cum[1] = a[0] + a[1];
        cum[2] = cum[1] + a[2];
        cum[3] = cum[1] + (a[2] + a[3]);
        return cum[3];
    }
    /* The pair whose interval of [0, q) holds u (u < q = cum[3]), given P, cum and jk from
       dptm_word_bucket: the lane by cum, then the row within the lane by its prefixes
       (branch-free but for the rows loop). The lane holds u, so its total is positive and
       it has a pair of positive weight; a row past the lane's interval by rounding is
       clamped to the lane's last pair of positive weight (the old topic's pair weighs 0
       if its count is 1). */
    static inline DPTM_CGS_SCALAR Py_ssize_t dptm_word_search(const int32_t *__restrict wl,
            Py_ssize_t n, const double *__restrict P, const double *__restrict cum,
            Py_ssize_t jk, double u) {
        Py_ssize_t nb = (cum[0] <= u) + (cum[1] <= u) + (cum[2] <= u);
        Py_ssize_t rows = (n + 3) >> 2, row = 0, r, last = (n - 1 - nb) >> 2;
        double rem = nb > 0 ? u - cum[nb - 1] : u;
        for (r = 0; r < rows; r++) row += P[4 * r + nb] <= rem;
        last -= (nb + 4 * last == jk) & (wl[2 * jk + 1] == 1);
        row = row < last ? row : last;
        return nb + 4 * row;
    }
    /* A token moved in its word's list: the pair at ja (topic a) loses a count, topic b
       (b != a) gains one, at jb if jb < *wn (then wl[2 jb] == b) else found: a pair
       emptied is replaced by the list's last (branch-free), a topic new to the list
       appended. prow (unless NULL): prow[t] is topic t's index in the list for every t
       in it (any value for the others: t is in the list iff prow[t] < n and that pair
       holds t), kept exact (stored only when a pair moves or is appended) and read
       instead of searching for b: O(1) a move. The sampler's draws and the rounds'
       exchange of the other parts' moves both edit the lists here (at K = 500 the two
       searches of a list per exchanged move were a third of a 2-part sweep's
       instructions). */
    static inline void dptm_list_move_at(int32_t *wl, int32_t *wn, Py_ssize_t ja,
                                         int32_t b, Py_ssize_t jb, int32_t *prow) {
        Py_ssize_t n = *wn, last;
        int32_t gone;
        if (jb < n) {
            wl[2 * jb + 1] += 1;          /* first: the last pair may be the one moved */
        }
        wl[2 * ja + 1] -= 1;
        gone = wl[2 * ja + 1] == 0;
        last = n - gone;                  /* the emptied pair takes the last's place */
        wl[2 * ja] = wl[2 * (gone ? n - 1 : ja)];
        wl[2 * ja + 1] = wl[2 * (gone ? n - 1 : ja) + 1];
        if (prow != NULL && gone) {
            prow[wl[2 * ja]] = (int32_t) ja;
        }
        n = last;
        if (jb >= *wn) {
            if (prow != NULL) {
                /* b is in the list iff its position points at a pair holding b */
                jb = (Py_ssize_t) (uint32_t) prow[b];
                if (jb >= n || wl[2 * jb] != b) jb = n;
            } else {
                jb = dptm_find_topic(wl, n, b);
            }
            if (jb < n) {
                wl[2 * jb + 1] += 1;
            } else {
                wl[2 * n] = b;
                wl[2 * n + 1] = 1;
                if (prow != NULL) {
                    prow[b] = (int32_t) n;
                }
                n += 1;
            }
        }
        *wn = (int32_t) n;
    }
    /* A word's list from its row of counts: the (topic, count) pairs of the row's positive
       entries in increasing topic order; returns their number. Four entries a test (SSE2),
       so a row's zeros cost about a quarter of an instruction each: the list rebuild at
       every sweep's end scans V K entries, most of them zero. */
    static inline Py_ssize_t dptm_row_list(const int32_t *__restrict row, Py_ssize_t K,
                                           int32_t *__restrict wl) {
        Py_ssize_t t = 0, cnt = 0;
    #if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; t + 4 <= K; t += 4) {
            unsigned m = (unsigned) _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(
                _mm_loadu_si128((const __m128i *) (row + t)), zero)));
            while (m) {
                Py_ssize_t b = __builtin_ctz(m);
                m &= m - 1;
                wl[2 * cnt] = (int32_t) (t + b);
                wl[2 * cnt + 1] = row[t + b];
                cnt++;
            }
        }
    #endif
        for (; t < K; t++) {
            if (row[t] > 0) {
                wl[2 * cnt] = (int32_t) t;
                wl[2 * cnt + 1] = row[t];
                cnt++;
            }
        }
        return cnt;
    }
    /* The smoothing bucket's topic: the smallest t with x[0] + ... + x[t] > u (x > 0),
       the sum taken by groups of 8 (a group's sum, a tree, added to the running sum: an
       eighth of the serial additions), then one by one inside the group that passes u;
       that group's last topic if its one-by-one sum falls short by rounding, K - 1 if no
       group passes u. */
    static inline DPTM_CGS_FP Py_ssize_t dptm_scan_smooth(const double *__restrict x,
                                                          Py_ssize_t K, double u) {
        double acc = 0.0, g;
        Py_ssize_t t = 0, e;
        for (; t + 8 <= K; t += 8) {
            g = ((x[t] + x[t + 1]) + (x[t + 2] + x[t + 3]))
                + ((x[t + 4] + x[t + 5]) + (x[t + 6] + x[t + 7]));
            if (acc + g > u) break;
            acc += g;
        }
        e = t + 8 < K ? t + 8 : K;
        for (; t < e; t++) {
            acc += x[t];
            if (acc > u) return t;
        }
        return e - 1;
    }
    /* The document bucket's topic, as dptm_scan_smooth over the n >= 1 topics dnz of the
       document with weights drow[t] inv[t] (> 0), by groups of 4; the passing group's
       last topic, or the list's last, as the fallbacks. */
    static inline DPTM_CGS_FP int32_t dptm_scan_doc(const int32_t *__restrict dnz,
            Py_ssize_t n, const int32_t *__restrict drow, const double *__restrict inv,
            double u) {
        double acc = 0.0, g;
        Py_ssize_t j = 0, e;
        for (; j + 4 <= n; j += 4) {
            int32_t t0 = dnz[j], t1 = dnz[j + 1], t2 = dnz[j + 2], t3 = dnz[j + 3];
            g = ((double) drow[t0] * inv[t0] + (double) drow[t1] * inv[t1])
                + ((double) drow[t2] * inv[t2] + (double) drow[t3] * inv[t3]);
            if (acc + g > u) break;
            acc += g;
        }
        e = j + 4 < n ? j + 4 : n;
        for (; j < e; j++) {
            acc += (double) drow[dnz[j]] * inv[dnz[j]];
            if (acc > u) return dnz[j];
        }
        return dnz[e - 1];
    }
    """
    Py_ssize_t dptm_scan_smooth(const double* x, Py_ssize_t K, double u) noexcept nogil
    int32_t dptm_scan_doc(const int32_t* dnz, Py_ssize_t n, const int32_t* drow,
                          const double* inv, double u) noexcept nogil
    Py_ssize_t dptm_row_list(const int32_t* row, Py_ssize_t K, int32_t* wl) noexcept nogil
    Py_ssize_t dptm_find_topic(const int32_t* wl, Py_ssize_t n, int32_t k) noexcept nogil
    double dptm_word_bucket(const int32_t* wl, Py_ssize_t n, const double* c, int32_t kold,
                            double* P, double* cum, Py_ssize_t* jk) noexcept nogil
    Py_ssize_t dptm_word_search(const int32_t* wl, Py_ssize_t n, const double* P,
                                const double* cum, Py_ssize_t jk, double u) noexcept nogil
    void dptm_list_move_at(int32_t* wl, int32_t* wn, Py_ssize_t ja, int32_t b,
                           Py_ssize_t jb, int32_t* prow) noexcept nogil


def _list_moves(const int32_t[::1] pairs, const int32_t[:, ::1] moves, Py_ssize_t K,
                const int32_t[::1] pos_fill, int mode):
    """For tests: a word list (``pairs``: (topic, count) pairs, topics < K) after the
    ``moves`` rows (a, b), each a token moved from topic a (in the list) to b != a by
    ``dptm_list_move_at`` as the kernels call it: mode 0 through the positions, b's index
    not given (the rounds' exchange of another part's moves); 1 through the positions, b's
    index given when b is in the list (the sampler's draw from the word bucket); 2 without
    positions (the serial sampler). The positions start as ``pos_fill`` (K values: what
    memory held) but for the list's topics. Returns the list and the positions."""
    cdef Py_ssize_t n0 = pairs.shape[0] // 2, i, j, ja, jb
    cdef int32_t n = <int32_t> n0
    if pos_fill.shape[0] != K or 2 * n0 != pairs.shape[0] or moves.shape[1] != 2:
        raise ValueError("pairs must hold (topic, count) pairs, pos_fill K values, moves 2 columns")
    out = np.zeros(2 * K, dtype=np.int32)
    pos = np.array(pos_fill, dtype=np.int32)
    cdef int32_t[::1] wl = out, pp = pos
    for j in range(2 * n0):
        wl[j] = pairs[j]
    for j in range(n0):
        pp[pairs[2 * j]] = <int32_t> j
    for i in range(moves.shape[0]):
        ja = dptm_find_topic(&wl[0], n, moves[i, 0]) if mode == 2 else pp[moves[i, 0]]
        jb = dptm_find_topic(&wl[0], n, moves[i, 1]) if mode == 1 else n
        dptm_list_move_at(&wl[0], &n, ja, moves[i, 1], jb, NULL if mode == 2 else &pp[0])
    return out[:2 * n].reshape(-1, 2), pos


cdef inline double _sum_doubles(const double* x, Py_ssize_t n) noexcept nogil:
    """sum of x[0:n] in 4 interleaved partial sums (a quarter of the serial additions)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t j = 0
    while j + 4 <= n:
        a0 += x[j]
        a1 += x[j + 1]
        a2 += x[j + 2]
        a3 += x[j + 3]
        j += 4
    while j < n:
        a0 += x[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


cdef void _sparse_docs(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                       const int32_t* words, int32_t* z, int32_t* n_wk, int32_t* n_dk,
                       int64_t* n_k, Py_ssize_t V, Py_ssize_t K, double alpha, double beta,
                       bitgen_t* rng, int32_t* wnz, const int64_t* loff, int32_t* wn,
                       int32_t* dnz,
                       int32_t* dpos, double* inv, double* c, double* cumq,
                       int32_t* pos) noexcept nogil:
    """``gibbs_sweep_sparse`` over documents [d_lo, d_hi), the word lists already built
    (the sampler reads them, not ``n_wk``; ``n_wk`` NULL: only the lists are kept).
    ``pos`` (unless NULL): V x K positions of the topics in their word's list, kept exact
    through the sampler's moves (the rounds' exchange reads them) and read instead
    of a search when a topic new to the word is drawn.

    Kept exact through the call (each recomputed when its topic's counts change):
    ``inv[t] = 1 / (n_k[t] + V beta)`` and ``c[t] = (n_dk[d, t] + alpha) inv[t]`` (``alpha
    inv[t]`` outside the current document's topics, so a document costs an O(K) integer
    scan for its topics and O(its topics) arithmetic to enter and leave). Kept as running
    sums, recomputed exactly per document: the smoothing mass ``s = sum_t inv[t]`` and the
    document mass ``r = sum_t n_dk[d, t] inv[t]``, so only the word bucket is summed per
    token; the document bucket's running sum is taken only when the uniform falls in it.
    The word lists keep counting the token being drawn (the bucket discounts its pair):
    a token that keeps its topic leaves its list as it was, and one that moves updates it
    once, at the pairs the bucket and its search found (no search of the list for the old
    topic). ``cumq`` takes K + 3 doubles (the word bucket's lanes)."""
    cdef Py_ssize_t d, i, j, k, w, t, n_d = 0, n_w, jk
    cdef int32_t kold
    cdef double cum[4]
    cdef double beta_sum = V * beta, ab = alpha * beta, s, q, r, u
    cdef bint in_list
    cdef int32_t* pend = NULL
    cdef bint dense = n_wk != NULL
    cdef int32_t* wrow
    cdef int32_t* drow
    cdef int32_t* wl
    cdef int32_t* prow = NULL
    cdef Py_ssize_t i_end = doc_ptr[d_hi]
    # n_k may have changed since the last call (another partition's moves)
    for t in range(K):
        inv[t] = 1.0 / (n_k[t] + beta_sum)
        c[t] = alpha * inv[t]
    for d in range(d_lo, d_hi):
        if doc_ptr[d + 1] == doc_ptr[d]:
            continue
        drow = n_dk + d * K
        # the document's topics (a branch-free scan of its counts), their c, and r and s
        # afresh: no drift carried across documents
        n_d = 0
        for t in range(K):
            dnz[n_d] = <int32_t> t
            n_d += drow[t] > 0
        r = 0.0
        for j in range(n_d):
            t = dnz[j]
            dpos[t] = <int32_t> j      # read for the document's topics only
            c[t] = (drow[t] + alpha) * inv[t]
            r += drow[t] * inv[t]
        s = _sum_doubles(inv, K)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            # the counts a token reads are scattered over its word's row (V K int32 outgrow
            # the caches at large K): fetch the next token's, and the word list of the one
            # after, while this one is drawn (hints only: no effect on the draws)
            if i + 2 < i_end:
                w = words[i + 2]
                __builtin_prefetch(wnz + loff[w])
                __builtin_prefetch(wn + w)
            if i + 1 < i_end:
                w = words[i + 1]
                wl = wnz + loff[w]
                if dense:
                    __builtin_prefetch(n_wk + w * K + z[i + 1])
                # its next two lines unconditionally (most lists end there: no loop exit to
                # mispredict; a line past a short list is a neighbour's, or none: a hint)
                __builtin_prefetch(wl + 16)
                __builtin_prefetch(wl + 32)
                for j in range(48, 2 * wn[w], 16):
                    __builtin_prefetch(wl + j)
            w = words[i]
            k = z[i]
            wrow = n_wk + w * K
            wl = wnz + loff[w]
            if pos != NULL:
                prow = pos + w * K
            # remove the token
            s -= inv[k]
            r -= drow[k] * inv[k]
            if dense:
                wrow[k] -= 1
            drow[k] -= 1
            n_k[k] -= 1
            inv[k] = 1.0 / (n_k[k] + beta_sum)
            c[k] = (drow[k] + alpha) * inv[k]
            s += inv[k]
            r += drow[k] * inv[k]
            if drow[k] == 0:
                n_d -= 1
                j = dpos[k]
                dnz[j] = dnz[n_d]
                dpos[dnz[j]] = <int32_t> j
            # word bucket q (topics of the word), document bucket beta r (topics of the
            # document), smoothing bucket alpha beta s (all topics)
            # (the word's list still counts the token: its pair jk loses the count only
            # if the token moves, so a token that keeps its topic leaves the list alone)
            kold = <int32_t> k
            n_w = wn[w]
            q = dptm_word_bucket(wl, n_w, c, kold, cumq, cum, &jk)
            u = next_uniform(rng) * (q + beta * r + ab * s)
            in_list = u < q
            if in_list:
                j = dptm_word_search(wl, n_w, cumq, cum, jk, u)
                k = wl[2 * j]
            elif u < q + beta * r and n_d > 0:
                k = dptm_scan_doc(dnz, n_d, drow, inv, (u - q) / beta)
            else:
                k = dptm_scan_smooth(inv, K, (u - q - beta * r) / ab)
            # add it back with its new topic; the word-row count (not read by the sampler,
            # which reads the list) one token later, after a prefetch of its line
            z[i] = <int32_t> k
            s -= inv[k]
            r -= drow[k] * inv[k]
            if dense:
                if pend != NULL:
                    pend[0] += 1
                pend = wrow + k
                __builtin_prefetch(pend)
            drow[k] += 1
            n_k[k] += 1
            inv[k] = 1.0 / (n_k[k] + beta_sum)
            c[k] = (drow[k] + alpha) * inv[k]
            s += inv[k]
            r += drow[k] * inv[k]
            if k != kold:
                dptm_list_move_at(wl, wn + w, jk, <int32_t> k, j if in_list else n_w, prow)
            if drow[k] == 1:
                dpos[k] = <int32_t> n_d
                dnz[n_d] = <int32_t> k
                n_d += 1
        # leave the document: its topics' c back to alpha inv
        for j in range(n_d):
            t = dnz[j]
            c[t] = alpha * inv[t]
    if pend != NULL:
        pend[0] += 1



# ---------------------------------------------------------------------- AD-LDA sweeps
cdef struct Work:
    # one partition's buffers, each in cache lines of its own (threads share none)
    Py_ssize_t P, V, K
    int32_t* old           # V x K counts of the start of the sweep (P > 1)
    int32_t** wk           # per partition its V x K counts (wk[0] unused: n_wk in place)
    int64_t** nk           # per partition its K topic totals
    int32_t** lists        # sparse: per partition each word's (topic, count) pairs
    const int64_t* loff    # sparse: word w's pairs at lists[p] + loff[w] (int32 units), room
                           # for (loff[w + 1] - loff[w]) / 2 pairs: min(K, its tokens)
    int32_t** small        # sparse: per partition V + 2 K (list lengths, document list)
    double** dbuf          # per partition scratch: 3 K + NB
    bitgen_t** gens        # per partition a copy of its generator's bitgen_t (same state
                           # pointer: the draws are the generator's own)


cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Ask for transparent huge pages (where the kernel does them on request): the sweeps
       read V x K arrays a row at a time in random word order, one 4 KB page per row at
       K = 1000, so with small pages nearly every row costs a TLB miss. A hint only. */
    static inline void dptm_advise_huge(void *p, size_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void) madvise(p, n, MADV_HUGEPAGE);
    #else
        (void) p; (void) n;
    #endif
    }
    """
    void dptm_advise_huge(void* p, size_t n) noexcept nogil


cdef size_t HUGE_PAGE = 1 << 21


cdef void* _own_lines(size_t nbytes, void** raw) noexcept nogil:
    """``nbytes`` at a cache-line boundary inside an allocation padded by a line at each
    end, so that no other allocation shares its lines (``*raw`` is what to free). From
    4 MB: at a 2 MB boundary, advised to use huge pages."""
    cdef char* p
    cdef uintptr_t a
    if nbytes >= 2 * HUGE_PAGE:
        p = <char*> malloc(nbytes + 2 * HUGE_PAGE)
        raw[0] = <void*> p
        if p == NULL:
            return NULL
        a = (<uintptr_t> p + HUGE_PAGE) & ~(<uintptr_t> (HUGE_PAGE - 1))
        dptm_advise_huge(<void*> a, (nbytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1))
        return <void*> a
    p = <char*> malloc(nbytes + 128)
    raw[0] = <void*> p
    if p == NULL:
        return NULL
    return <void*> ((<uintptr_t> p + 64) & ~(<uintptr_t> 63))


cdef class ADLDAWorkspace:
    """Buffers of ``gibbs_sweep_parallel`` / ``gibbs_sweep_sparse`` kept from one sweep to
    the next: per partition its copy of the word counts (partition 0 works in ``n_wk``),
    its topic totals, its per-word topic lists (sparse) and its scratch, each in cache lines
    of its own.

    Without a workspace a sweep allocates these, copies the counts into them and lets them
    go (a fresh V x K allocation per sweep costs its page faults again: about as much as
    the sweep at K = 1000 on KOS). With one, made for the same partitions count, V, K and
    kind and passed to consecutive sweeps of one state, the merge at the end of a sweep also
    writes the next sweep's copies and word lists (one pass over the V x K counts, in
    parallel over words), and a sweep allocates nothing. The draws are the same either
    way. The workspace is in step with the state it last swept; a sweep of another state,
    or of the same state after ``n_wk`` or ``n_k`` changed otherwise, must follow
    ``invalidate()`` (another ``n_wk`` array or changed ``n_k`` are detected; a change of
    ``n_wk`` alone is not). Memory: ``(P - 1 + [P > 1]) V K`` int32 for the copies (a
    sparse part's room for the positions of the topics in its word lists) and, if
    sparse, ``2 P sum_w min(K, c_w)`` int32 for the lists ((topic, count) pairs; ``c_w =
    word_counts[w]``, else K: a word's tokens have at most that many distinct topics).
    Buffers from 4 MB sit at 2 MB boundaries, advised to use transparent huge pages.

    Parameters
    ----------
    n_parts, n_words, n_topics : int
        Partitions P, vocabulary size V and topics K of the sweeps.
    sparse : bool
        For ``gibbs_sweep_sparse`` (else ``gibbs_sweep_parallel``).
    word_counts : array of V ints, optional
        Sparse: the tokens of each word in the corpora to be swept; each word's list then
        has room for ``min(K, word_counts[w])`` pairs instead of K (on KOS at K = 1000 the
        lists shrink from 55 MB to 3.4 MB a partition: fewer pages to fault in, and the
        lists share the caches). A sparse sweep that builds the lists checks that no word
        of its counts has more tokens than its room (ValueError).
    """
    cdef Work w
    cdef readonly Py_ssize_t n_parts, n_words, n_topics
    cdef readonly bint sparse
    cdef void** raw
    cdef Py_ssize_t n_raw, cap_raw
    cdef bint synced
    cdef int mode                  # kernel that last swept: 1 merged, 2 sparse rounds, 3 dense rounds
    cdef int32_t* rec              # rounds, P > 1: the moves (3 int32 per token of the corpus)
    cdef Py_ssize_t rec_cap
    cdef const int32_t* synced_wk
    cdef object synced_owner       # keeps the swept n_wk alive: its address is not reused
    cdef int64_t* synced_nk
    cdef bint capped               # some word's list has room for fewer than K pairs
    cdef int64_t* loff

    def __cinit__(self, Py_ssize_t n_parts, Py_ssize_t n_words, Py_ssize_t n_topics,
                  bint sparse, word_counts=None):
        cdef Py_ssize_t p, w, P = n_parts, V = n_words, K = n_topics
        cdef int64_t room
        if P < 1 or V < 0 or K < 1:
            raise ValueError("need n_parts >= 1, n_words >= 0, n_topics >= 1")
        cdef const int64_t[::1] counts = None
        if word_counts is not None:
            counts = np.ascontiguousarray(word_counts, dtype=np.int64)
            if counts.shape[0] != V:
                raise ValueError(f"word_counts must have n_words = {V} entries, got "
                                 f"{counts.shape[0]}")
        self.n_parts, self.n_words, self.n_topics, self.sparse = P, V, K, sparse
        self.cap_raw = 6 * P + 10
        self.raw = <void**> calloc(self.cap_raw, sizeof(void*))
        self.w.P, self.w.V, self.w.K = P, V, K
        self.w.wk = <int32_t**> self._alloc(P * sizeof(int32_t*))
        self.w.nk = <int64_t**> self._alloc(P * sizeof(int64_t*))
        self.w.dbuf = <double**> self._alloc(P * sizeof(double*))
        self.w.gens = <bitgen_t**> self._alloc(P * sizeof(bitgen_t*))
        self.synced_nk = <int64_t*> self._alloc(K * sizeof(int64_t))
        if P > 1:
            # the counts of the start of a sweep (or a sparse rounds part 0's positions)
            self.w.old = <int32_t*> self._alloc(V * K * sizeof(int32_t))
        if sparse:
            self.w.lists = <int32_t**> self._alloc(P * sizeof(int32_t*))
            self.w.small = <int32_t**> self._alloc(P * sizeof(int32_t*))
            self.loff = <int64_t*> self._alloc((V + 1) * sizeof(int64_t))
            self.loff[0] = 0
            for w in range(V):
                room = K
                if counts is not None and counts[w] < K:
                    room = counts[w] if counts[w] > 0 else 0
                    self.capped = True
                self.loff[w + 1] = self.loff[w] + 2 * room
            self.w.loff = self.loff
        for p in range(P):
            self.w.wk[p] = <int32_t*> self._alloc(V * K * sizeof(int32_t)) if p > 0 else NULL
            self.w.nk[p] = <int64_t*> self._alloc(K * sizeof(int64_t))
            self.w.gens[p] = <bitgen_t*> self._alloc(sizeof(bitgen_t))
            # scratch for either kind of sweep (a sparse workspace also serves dense
            # rounds: gibbs_sweep_rounds); the sparse word bucket's prefixes take up to
            # K + 3 entries (its lanes' padding)
            self.w.dbuf[p] = <double*> self._alloc((3 * K + DPTM_CGS_NB) * sizeof(double))
            if sparse:
                # 3 pairs of slack: the word bucket's last row reads (and ignores) up to
                # 3 pairs past a list
                self.w.lists[p] = <int32_t*> self._alloc((self.loff[V] + 6) * sizeof(int32_t))
                self.w.small[p] = <int32_t*> self._alloc((V + 2 * K) * sizeof(int32_t))

    cdef void* _alloc(self, size_t nbytes) except NULL:
        if self.raw == NULL or self.n_raw == self.cap_raw:
            raise MemoryError()
        cdef void* out = _own_lines(nbytes, &self.raw[self.n_raw])
        if out == NULL:
            raise MemoryError()
        self.n_raw += 1
        return out

    def __dealloc__(self):
        cdef Py_ssize_t i
        free(self.rec)
        if self.raw != NULL:
            for i in range(self.n_raw):
                free(self.raw[i])
            free(self.raw)

    cdef check_room(self, const int32_t[:, ::1] n_wk, int n_threads):
        """ValueError unless every word of ``n_wk`` has at most as many tokens as its list
        has room for (then no sweep of these counts can overflow a list: a word's tokens
        keep their number). On ``n_threads`` threads: a V x K pass before the first sparse
        sweep, 3% of a 2-part one at K = 1000 when serial."""
        cdef Py_ssize_t w, t, V = self.n_words, K = self.n_topics, bad = -1, n_bad = 0
        cdef int64_t tot
        if not self.capped:
            return
        with nogil:
            for w in prange(V, schedule="static", num_threads=n_threads):
                tot = 0
                for t in range(K):
                    tot = tot + n_wk[w, t]
                if 2 * (tot if tot < K else K) > self.loff[w + 1] - self.loff[w]:
                    n_bad += 1
        if n_bad == 0:
            return
        for w in range(V):
            tot = 0
            for t in range(K):
                tot = tot + n_wk[w, t]
            if 2 * (tot if tot < K else K) > self.loff[w + 1] - self.loff[w]:
                bad = w
                break
        raise ValueError(f"word {bad} has more tokens than the workspace's word_counts "
                         f"({(self.loff[bad + 1] - self.loff[bad]) // 2})")

    def invalidate(self):
        """Forget the state last swept: the next sweep copies the counts afresh."""
        self.synced = False
        self.synced_owner = None

    cdef bint in_step(self, const int32_t* n_wk, const int64_t* n_k, int mode) noexcept:
        cdef Py_ssize_t k
        if not self.synced or self.synced_wk != n_wk or self.mode != mode:
            return False
        for k in range(self.n_topics):
            if self.synced_nk[k] != n_k[k]:
                return False
        return True


cdef extern from *:
    """
    /* Cython's prange inside a `with parallel()` block is `omp for nowait`: no barrier
       between two loops (GCC's firstprivate happens to add one; the standard does not). */
    static inline void dptm_omp_barrier(void) {
    #ifdef _OPENMP
    #pragma omp barrier
    #endif
    }
    """
    void dptm_omp_barrier() noexcept nogil


cdef void _sync_row(const Work* ws, int32_t* n_wk, Py_ssize_t w, bint merge,
                    bint refresh) noexcept nogil:
    """Word ``w``'s row of the counts: with ``merge``, partition 0's counts (``n_wk``, in
    place) plus every other partition's changes since the start of the sweep; with
    ``refresh``, the next sweep's start: ``old`` and the other partitions' copies set to the
    row, and (sparse) every partition's list of the row's non-zero topics in increasing
    order."""
    cdef Py_ssize_t P = ws.P, K = ws.K, p, t, cnt
    cdef int32_t* row = n_wk + w * K
    cdef int32_t* o
    cdef int32_t* a
    cdef int32_t* wl
    cdef int64_t acc
    if P > 1:
        o = ws.old + w * K
        if merge and P == 2:
            a = ws.wk[1] + w * K
            for t in range(K):
                row[t] = row[t] + a[t] - o[t]
        elif merge:
            for t in range(K):
                acc = row[t]
                for p in range(1, P):
                    acc = acc + ws.wk[p][w * K + t] - o[t]
                row[t] = <int32_t> acc
        if refresh:
            memcpy(o, row, K * sizeof(int32_t))
            for p in range(1, P):
                memcpy(ws.wk[p] + w * K, row, K * sizeof(int32_t))
    if refresh and ws.lists != NULL:
        wl = ws.lists[0] + ws.loff[w]
        cnt = dptm_row_list(row, K, wl)
        ws.small[0][w] = <int32_t> cnt
        for p in range(1, P):
            memcpy(ws.lists[p] + ws.loff[w], wl, 2 * cnt * sizeof(int32_t))
            ws.small[p][w] = <int32_t> cnt


cdef inline int32_t* _round_pos(const Work* ws, int32_t* n_wk, Py_ssize_t p,
                                bint sparse) noexcept nogil:
    """Sparse rounds with P > 1: part ``p``'s V x K positions of the topics in its word
    lists (``dptm_list_move_at``), else NULL. In memory the sparse rounds leave unused: part 0
    ``old``, part p > 0 its dense copy (already touched by a fit's first, dense, sweep).
    Kept from one sweep to the next with the lists (only the positions of topics in a
    list are ever read)."""
    if not sparse or ws.P == 1:
        return NULL
    return ws.old if p == 0 else ws.wk[p]


cdef void _round_sync_row(const Work* ws, int32_t* n_wk, Py_ssize_t w,
                          bint sparse) noexcept nogil:
    """Word ``w``'s start of a rounds sweep (``_rounds_sweep``): dense, the other
    partitions' copies set to the row of ``n_wk``; sparse, every partition's list of the
    row's non-zero topics in increasing order, and with ``P > 1`` each part's positions
    of them (``_round_pos``; a sparse partition keeps no copy of the counts, and no
    partition reads ``old``)."""
    cdef Py_ssize_t P = ws.P, K = ws.K, p, t, cnt
    cdef const int32_t* row = n_wk + w * K
    cdef int32_t* wl
    cdef int32_t* prow
    if not sparse:
        for p in range(1, P):
            memcpy(ws.wk[p] + w * K, row, K * sizeof(int32_t))
        return
    wl = ws.lists[0] + ws.loff[w]
    cnt = dptm_row_list(row, K, wl)
    ws.small[0][w] = <int32_t> cnt
    for p in range(1, P):
        memcpy(ws.lists[p] + ws.loff[w], wl, 2 * cnt * sizeof(int32_t))
        ws.small[p][w] = <int32_t> cnt
    if P > 1:
        # every part's positions of the list's topics
        for p in range(P):
            prow = _round_pos(ws, n_wk, p, True) + w * K
            for t in range(cnt):
                prow[wl[2 * t]] = <int32_t> t


cdef void _adlda_sweep(const Work* ws, bint sparse, bint in_step, bint keep,
                       const int64_t* doc_ptr, const int32_t* words, Py_ssize_t n_tokens,
                       int32_t* z, int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                       const int64_t* part_ptr, double alpha, double beta,
                       int n_threads) noexcept nogil:
    """One AD-LDA sweep on ``ws.P`` partitions (see ``gibbs_sweep_parallel``), in one
    parallel region: the start-of-sweep copies (unless ``in_step``), the partitions' sweeps,
    the merge over words (refreshing the copies for the next sweep if ``keep``)."""
    cdef Py_ssize_t P = ws.P, V = ws.V, K = ws.K, VK = V * K, p, w, k
    cdef bint rows = P > 1 or sparse
    cdef int32_t* wkp
    cdef int32_t* sm
    cdef double* db
    cdef int64_t acc
    with parallel(num_threads=n_threads):
        if rows and not in_step:
            for w in prange(V, schedule="static"):
                _sync_row(ws, n_wk, w, False, True)
        dptm_omp_barrier()
        for p in prange(P, schedule="static", chunksize=1):
            wkp = n_wk if p == 0 else ws.wk[p]
            db = ws.dbuf[p]
            memcpy(ws.nk[p], n_k, K * sizeof(int64_t))
            if sparse:
                sm = ws.small[p]
                _sparse_docs(doc_ptr, part_ptr[p], part_ptr[p + 1], words, z, wkp, n_dk,
                             ws.nk[p], V, K, alpha, beta, ws.gens[p], ws.lists[p], ws.loff,
                             sm, sm + V, sm + V + K, db, db + K, db + 2 * K, NULL)
            else:
                _gibbs_docs(doc_ptr, part_ptr[p], part_ptr[p + 1], words, n_tokens, z, wkp,
                            n_dk, ws.nk[p], V, K, alpha, beta, ws.gens[p], db, db + K)
        dptm_omp_barrier()
        if rows and (P > 1 or keep):
            for w in prange(V, schedule="static"):
                _sync_row(ws, n_wk, w, True, keep)
    for k in range(K):
        acc = 0
        for p in range(P):
            acc = acc + ws.nk[p][k] - n_k[k]
        n_k[k] += acc


cdef _run_adlda(bint sparse, const int64_t[::1] doc_ptr, const int32_t[::1] words,
                int32_t[::1] z, int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                double alpha, double beta, const int64_t[::1] part_ptr, list bit_generators,
                int n_threads, ADLDAWorkspace workspace):
    """Checks, then ``_adlda_sweep`` with ``workspace`` (or a one-sweep one)."""
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t P = part_ptr.shape[0] - 1, p
    cdef bint keep = workspace is not None, in_step
    _check_partitions(part_ptr, D, bit_generators, n_threads)
    if D <= 0 or K <= 0 or words.shape[0] == 0:
        return
    if keep:
        if (workspace.n_parts != P or workspace.n_words != V or workspace.n_topics != K
                or workspace.sparse != sparse):
            raise ValueError(
                f"workspace is for P={workspace.n_parts}, V={workspace.n_words}, "
                f"K={workspace.n_topics}, sparse={workspace.sparse}; this sweep has P={P}, "
                f"V={V}, K={K}, sparse={sparse}")
    else:
        workspace = ADLDAWorkspace(P, V, K, sparse)
    in_step = workspace.in_step(&n_wk[0, 0], &n_k[0], 1)
    if sparse and not in_step:
        workspace.check_room(n_wk, n_threads)
    for p in range(P):
        workspace.w.gens[p][0] = get_bitgen(bit_generators[p])[0]
    workspace.synced = False
    workspace.synced_owner = None
    with nogil:
        _adlda_sweep(&workspace.w, sparse, in_step, keep, &doc_ptr[0], &words[0],
                     words.shape[0], &z[0], &n_wk[0, 0], &n_dk[0, 0], &n_k[0], &part_ptr[0],
                     alpha, beta, n_threads)
    if keep:
        workspace.synced = True
        workspace.mode = 1
        workspace.synced_wk = &n_wk[0, 0]
        workspace.synced_owner = n_wk.base
        memcpy(workspace.synced_nk, &n_k[0], K * sizeof(int64_t))


cdef Py_ssize_t _record_moves(const int32_t* words, const int32_t* z, int32_t* rec,
                              Py_ssize_t n) noexcept nogil:
    """The moves of a round of ``n`` tokens (``words``, new topics ``z``; their start topics
    in ``rec[2 n:3 n]``) as (word, from, to) triples from ``rec[0]`` in token order, tokens
    that kept their topic left out; returns their number. In place: triple j <= i ends at
    ``rec[3 i + 2]``, before ``rec[2 n + i + 1]``, the next start topic still to read. A
    triple is written for every token and kept only if it moved: no branch on a move,
    a coin flip for the predictor (the former per-token test of the applying part
    mispredicted about half the time)."""
    cdef Py_ssize_t i, m = 0
    cdef int32_t a, b
    for i in range(n):
        a = rec[2 * n + i]
        b = z[i]
        rec[3 * m] = words[i]
        rec[3 * m + 1] = a
        rec[3 * m + 2] = b
        m += a != b
    return m


cdef inline void _apply_dense(int32_t* wk, int64_t* nk, Py_ssize_t K, const int32_t* rec,
                              Py_ssize_t lo, Py_ssize_t hi, bint ahead) noexcept nogil:
    """Moves ``lo .. hi - 1`` of ``rec`` into the counts ``wk`` and ``nk``, the rows of the
    move 12 ahead prefetched if ``ahead`` (random words: without it each move waits for
    its row; about a sixth of a 2-part sweep at K = 50)."""
    cdef Py_ssize_t j
    cdef const int32_t* m
    cdef int32_t* row
    for j in range(lo, hi):
        if ahead:
            m = rec + 3 * (j + 12)
            __builtin_prefetch(wk + m[0] * K + m[1])
            __builtin_prefetch(wk + m[0] * K + m[2])
        m = rec + 3 * j
        row = wk + m[0] * K
        row[m[1]] -= 1
        row[m[2]] += 1
        nk[m[1]] -= 1
        nk[m[2]] += 1


cdef void _apply_moves(const Work* ws, Py_ssize_t p, int32_t* wkp, int32_t* pos,
                       const int32_t* rec, Py_ssize_t n) noexcept nogil:
    """Partition ``p``'s counts take the ``n`` moves of ``rec`` in order: (word, from topic,
    to topic) triples from ``_record_moves``. Only the moves are read: the tokens that
    kept their topic (about half after a few sweeps) cost nothing here. Dense (``pos``
    NULL): the counts ``wkp`` and ``ws.nk[p]``, in a loop with no test per move. Sparse:
    ``ws.nk[p]`` and the word lists, edited through the positions ``pos`` (``_round_pos``)
    by ``dptm_list_move_at``, without searching them."""
    cdef Py_ssize_t j, K = ws.K
    cdef int32_t a, b, w
    cdef int32_t* wl0
    cdef int32_t* wn
    cdef const int64_t* loff = ws.loff
    cdef int64_t* nk = ws.nk[p]
    cdef const int32_t* ahead
    if pos == NULL:
        _apply_dense(wkp, nk, K, rec, 0, n - 12 if n > 12 else 0, True)
        _apply_dense(wkp, nk, K, rec, n - 12 if n > 12 else 0, n, False)
        return
    wl0 = ws.lists[p]
    wn = ws.small[p]
    for j in range(n):
        # random words: the positions and list length of the move 16 ahead, then the
        # pair of its old topic 8 ahead, load while this one is applied (hints only)
        if j + 16 < n:
            ahead = rec + 3 * (j + 16)
            __builtin_prefetch(pos + ahead[0] * K + ahead[1])
            __builtin_prefetch(pos + ahead[0] * K + ahead[2])
            __builtin_prefetch(wn + ahead[0])
        if j + 8 < n:
            ahead = rec + 3 * (j + 8)
            __builtin_prefetch(wl0 + loff[ahead[0]] + 2 * pos[ahead[0] * K + ahead[1]])
        w = rec[3 * j]
        a = rec[3 * j + 1]
        b = rec[3 * j + 2]
        nk[a] -= 1
        nk[b] += 1
        dptm_list_move_at(wl0 + loff[w], wn + w, pos[w * K + a], b, wn[w], pos + w * K)


cdef extern from *:
    """
    /* Point-to-point progress flags of the rounds kernel: a part publishes "my round r is
       done" with a release store and another part waits for it with acquire loads, so the
       waiting part sees that round's moves (rec, n_rec). No barrier, no OpenMP construct. */
    static inline int64_t dptm_load_acquire(const int64_t *p) {
    #if defined(__GNUC__)
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    #else
        int64_t v;
        #pragma omp atomic read
        v = *p;
        #pragma omp flush
        return v;
    #endif
    }
    static inline void dptm_store_release(int64_t *p, int64_t v) {
    #if defined(__GNUC__)
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
    #else
        #pragma omp flush
        #pragma omp atomic write
        *p = v;
    #endif
    }
    #include <sched.h>
    /* Wait until *p >= v: spin a little (the other part is usually about to finish),
       then yield the core (on a shared machine the part we wait for may be descheduled). */
    static inline void dptm_wait_at_least(const int64_t *p, int64_t v) {
        int spins = 0;
        while (dptm_load_acquire(p) < v) {
            if (++spins < 2000) {
    #if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
    #endif
            } else {
                sched_yield();
            }
        }
    }
    #ifdef _OPENMP
    #include <omp.h>
    static inline int dptm_team_size(void) { return omp_get_num_threads(); }
    static inline int dptm_team_rank(void) { return omp_get_thread_num(); }
    #else
    static inline int dptm_team_size(void) { return 1; }
    static inline int dptm_team_rank(void) { return 0; }
    #endif
    """
    int64_t dptm_load_acquire(const int64_t* p) noexcept nogil
    void dptm_store_release(int64_t* p, int64_t v) noexcept nogil
    void dptm_wait_at_least(const int64_t* p, int64_t v) noexcept nogil
    int dptm_team_size() noexcept nogil
    int dptm_team_rank() noexcept nogil


cdef void _apply_round(const Work* ws, Py_ssize_t p, int32_t* wkp, int32_t* pos,
                       const int64_t* doc_ptr, const int32_t* rec, const int64_t* n_rec,
                       const int64_t* round_ptr, Py_ssize_t S, Py_ssize_t r, int64_t* done,
                       bint wait) noexcept nogil:
    """Part ``p``'s copy takes every other part's moves of round ``r``, in part order
    (waiting for each part's round to be done first if ``wait``). Part q's moves of round
    r are ``n_rec[q S + r]`` triples at ``rec + 3 t``, t the round's first token."""
    cdef Py_ssize_t q
    for q in range(ws.P):
        if q != p:
            if wait:
                dptm_wait_at_least(done + 8 * q, r + 1)
            _apply_moves(ws, p, wkp, pos, rec + 3 * doc_ptr[round_ptr[q * (S + 1) + r]],
                         n_rec[q * S + r])


cdef inline int32_t* _round_counts(const Work* ws, int32_t* n_wk, Py_ssize_t p,
                                  bint sparse) noexcept nogil:
    """The word-topic counts part ``p`` keeps in the rounds kernel: dense, part 0 the
    true ones (``n_wk``, in place) and another part its copy; sparse, none (a sparse
    sampler reads its word lists; ``n_wk`` is rewritten from part 0's lists after the
    sweep, a sequential pass, instead of two random writes per move for part 0, which made
    it the slowest part)."""
    if sparse:
        return NULL
    return n_wk if p == 0 else ws.wk[p]


cdef void _rounds_sweep(const Work* ws, bint sparse, bint in_step, const int64_t* doc_ptr,
                        const int32_t* words, Py_ssize_t n_tokens, int32_t* z, int32_t* rec,
                        int64_t* n_rec, int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                        const int64_t* round_ptr, Py_ssize_t S, Py_ssize_t lag, int64_t* done,
                        double alpha, double beta, int n_threads) noexcept nogil:
    """``gibbs_sweep_rounds`` after its checks, in one parallel region. Parts are dealt
    to the team's threads round-robin (thread t: parts t, t + n, ...), every thread running
    its parts' rounds in order; the only waits are for another part's round ``r - lag``
    (``done[8 q]``: rounds part q has finished; 8 int64 apart, a cache line each) and one
    barrier before the last rounds' moves. No deadlock for any team size: a thread in round
    r waits only for rounds < r, which every thread in a round >= r has finished. Sparse,
    ``n_wk`` is then rewritten from part 0's word lists (exact after the last moves).
    After each round a part lists its moves (``_record_moves``: ``rec`` at 3 int32 per
    token of the round, ``n_rec[p S + r]`` of them, published by the round's release
    store): the other parts read those triples only, not every token's old and new topic."""
    cdef Py_ssize_t P = ws.P, V = ws.V, K = ws.K, p, r, rr, w, lo, hi, nthr, rank, j, t0, nt
    cdef int32_t* wkp
    cdef int32_t* row
    cdef const int32_t* wl
    cdef int32_t* sm
    cdef double* db = NULL
    p = r = rr = lo = hi = nthr = rank = t0 = nt = 0
    wkp = sm = NULL
    with parallel(num_threads=n_threads):
        if not in_step and (P > 1 or sparse):
            for w in prange(V, schedule="static"):
                _round_sync_row(ws, n_wk, w, sparse)
        dptm_omp_barrier()
        nthr = dptm_team_size()
        rank = dptm_team_rank()
        for r in range(S):
            p = rank
            while p < P:
                wkp = _round_counts(ws, n_wk, p, sparse)
                if r == 0:
                    memcpy(ws.nk[p], n_k, K * sizeof(int64_t))
                elif r >= lag:
                    _apply_round(ws, p, wkp, _round_pos(ws, n_wk, p, sparse), doc_ptr,
                                 rec, n_rec, round_ptr, S,
                                 r - lag, done, True)
                lo = round_ptr[p * (S + 1) + r]
                hi = round_ptr[p * (S + 1) + r + 1]
                t0 = doc_ptr[lo]
                nt = doc_ptr[hi] - t0
                if P > 1:
                    # the round's start topics, in the last third of its moves' room
                    memcpy(rec + 3 * t0 + 2 * nt, z + t0, nt * sizeof(int32_t))
                db = ws.dbuf[p]
                if sparse:
                    sm = ws.small[p]
                    _sparse_docs(doc_ptr, lo, hi, words, z, wkp, n_dk, ws.nk[p], V, K, alpha,
                                 beta, ws.gens[p], ws.lists[p], ws.loff, sm, sm + V,
                                 sm + V + K, db, db + K, db + 2 * K,
                                 _round_pos(ws, n_wk, p, sparse))
                else:
                    _gibbs_docs(doc_ptr, lo, hi, words, n_tokens, z, wkp, n_dk, ws.nk[p], V,
                                K, alpha, beta, ws.gens[p], db, db + K)
                if P > 1:
                    n_rec[p * S + r] = _record_moves(words + t0, z + t0, rec + 3 * t0, nt)
                dptm_store_release(done + 8 * p, r + 1)
                p = p + nthr
        dptm_omp_barrier()
        # the rounds no part has seen yet from the others: S - lag .. S - 1
        p = rank
        while p < P:
            wkp = _round_counts(ws, n_wk, p, sparse)
            for rr in range(S - lag if S > lag else 0, S):
                _apply_round(ws, p, wkp, _round_pos(ws, n_wk, p, sparse), doc_ptr, rec,
                             n_rec, round_ptr, S, rr,
                             done, False)
            p = p + nthr
        if sparse:
            dptm_omp_barrier()
            for w in prange(V, schedule="static"):
                row = n_wk + w * K
                wl = ws.lists[0] + ws.loff[w]
                memset(row, 0, K * sizeof(int32_t))
                for j in range(ws.small[0][w]):
                    row[wl[2 * j]] = wl[2 * j + 1]
    memcpy(n_k, ws.nk[0], K * sizeof(int64_t))


def gibbs_sweep_rounds(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                       int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                       double alpha, double beta, const int64_t[:, ::1] round_ptr,
                       list bit_generators, int n_threads, bint sparse,
                       ADLDAWorkspace workspace, Py_ssize_t lag=1):
    """One AD-LDA sweep on ``P`` partitions synchronised ``S`` times (``round_ptr``, P x
    (S + 1) document boundaries: partition ``p``'s round ``r`` is documents
    ``round_ptr[p, r]:round_ptr[p, r + 1]``; ``round_ptr[p, S] == round_ptr[p + 1, 0]``,
    from 0 to D).

    In round ``r`` every partition samples its round-``r`` documents with its own
    generator (``gibbs_sweep``'s blocked/sequential draw, or ``gibbs_sweep_sparse``'s
    buckets if ``sparse``) against its own copy of the counts; then every partition adds
    the other partitions' moves of that round to its copy (in partition order), so at the
    start of each round every copy equals the true counts. The approximation of AD-LDA
    (a partition does not see the others' moves) is thus limited to one round: with
    ``S = 1`` it is ``gibbs_sweep_parallel`` / ``gibbs_sweep_sparse``'s semantics (not
    their draws: the word lists are never rebuilt here, and partition 0's are edited in
    another order). There is no O(V K) pass after the first sweep of a workspace; a round
    costs its moves (each partition applies the others', listed after each round as
    (word, from, to) triples: 3 N int32 in the workspace). The result depends on the
    partitions, rounds, ``lag`` and streams, not on ``n_threads``. ``workspace``:
    ``ADLDAWorkspace(P, V, K, sparse)``, reused across the sweeps of one state (required);
    a sparse one also serves dense sweeps (the same draws: GibbsLDA's first sweep, so the
    fit allocates and faults in one set of copies, not two). A dense sweep leaves its word
    lists stale: the next sparse sweep rebuilds them.

    ``lag`` (>= 1): a partition adds the others' moves of round ``r`` at the start of its
    round ``r + lag`` (in partition order), so it lags the others by at most ``lag``
    rounds; the moves of the last ``lag`` rounds are added after the sweep, so every copy
    again equals the true counts. ``lag = 1`` is the description above. With ``lag = 2``
    a partition never waits for a round that has just finished: threads wait only when one
    part is a whole round behind (one exchange per round, no barrier; one barrier per
    sweep). The same draws for any ``n_threads``; each thread takes its parts in order,
    so no team size deadlocks.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t P = round_ptr.shape[0], S = round_ptr.shape[1] - 1, p, r
    cdef Py_ssize_t N = words.shape[0]
    cdef bint in_step
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if P < 1 or S < 1 or len(bit_generators) != P:
        raise ValueError("round_ptr must be P x (S + 1) with P, S >= 1, one bit generator "
                         "per partition")
    if round_ptr[0, 0] != 0 or round_ptr[P - 1, S] != D:
        raise ValueError("round_ptr must start at 0 and end at the number of documents")
    for p in range(P):
        if p + 1 < P and round_ptr[p, S] != round_ptr[p + 1, 0]:
            raise ValueError("round_ptr: partition p must end where p + 1 starts")
        for r in range(S):
            if round_ptr[p, r + 1] < round_ptr[p, r]:
                raise ValueError("round_ptr must be non-decreasing")
    if lag < 1:
        raise ValueError(f"lag must be >= 1, got {lag}")
    if workspace is None:
        raise ValueError("gibbs_sweep_rounds needs an ADLDAWorkspace")
    # a sparse workspace serves dense sweeps too (its copies are allocated either way)
    if (workspace.n_parts != P or workspace.n_words != V or workspace.n_topics != K
            or (sparse and not workspace.sparse)):
        raise ValueError(
            f"workspace is for P={workspace.n_parts}, V={workspace.n_words}, "
            f"K={workspace.n_topics}, sparse={workspace.sparse}; this sweep has P={P}, "
            f"V={V}, K={K}, sparse={sparse}")
    if D <= 0 or K <= 0 or N == 0:
        return
    if P > 1 and workspace.rec_cap < 3 * N:
        free(workspace.rec)
        workspace.rec = <int32_t*> malloc(3 * N * sizeof(int32_t))
        workspace.rec_cap = 3 * N if workspace.rec != NULL else 0
        if workspace.rec == NULL:
            raise MemoryError()
    # modes 2 (sparse) and 3 (dense): in step only with a sweep of the same kind
    in_step = workspace.in_step(&n_wk[0, 0], &n_k[0], 2 if sparse else 3)
    if sparse and not in_step:
        workspace.check_room(n_wk, n_threads)
    for p in range(P):
        workspace.w.gens[p][0] = get_bitgen(bit_generators[p])[0]
    workspace.synced = False
    workspace.synced_owner = None
    # rounds done per part, one cache line each (written by one thread, read by the
    # others), then the moves recorded per part and round
    cdef int64_t* done = <int64_t*> calloc(8 * P + 8 + P * S, sizeof(int64_t))
    if done == NULL:
        raise MemoryError()
    try:
        with nogil:
            _rounds_sweep(&workspace.w, sparse, in_step, &doc_ptr[0], &words[0], N, &z[0],
                          workspace.rec, done + 8 * P + 8, &n_wk[0, 0], &n_dk[0, 0], &n_k[0],
                          &round_ptr[0, 0], S, lag, done, alpha, beta, n_threads)
    finally:
        free(done)
    workspace.synced = True
    workspace.mode = 2 if sparse else 3
    workspace.synced_wk = &n_wk[0, 0]
    workspace.synced_owner = n_wk.base
    memcpy(workspace.synced_nk, &n_k[0], K * sizeof(int64_t))


def gibbs_sweep_parallel(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                         int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                         double alpha, double beta, const int64_t[::1] part_ptr,
                         list bit_generators, int n_threads, ADLDAWorkspace workspace=None):
    """One approximate-distributed sweep (AD-LDA, Newman et al. 2009) on ``P`` partitions.

    Partition ``p`` (documents ``part_ptr[p]:part_ptr[p + 1]``) runs ``gibbs_sweep``'s
    sampler on its documents with ``bit_generators[p]`` and its own copy of ``n_wk`` and
    ``n_k`` taken at the start of the sweep (it sees its own moves, not the others'); after
    the sweep every partition's count changes are added to the shared counts (integer sums,
    in any order the same). ``z`` and ``n_dk`` are exact; the approximation is that a
    partition samples from word counts that are stale by the other partitions' moves of
    this sweep. The result depends on the partitions and their streams, not on the
    threads that run them (``n_threads`` OpenMP threads), nor on ``workspace`` (an
    ``ADLDAWorkspace(P, V, K, False)`` reused across the sweeps of one state saves the
    per-sweep allocation and copies). Memory: ``P`` copies of ``n_wk``. With one partition
    it is ``gibbs_sweep`` with that generator.
    """
    _run_adlda(False, doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, part_ptr,
               bit_generators, n_threads, workspace)


def gibbs_sweep_sparse(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                       int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                       double alpha, double beta, const int64_t[::1] part_ptr,
                       list bit_generators, int n_threads, ADLDAWorkspace workspace=None):
    """One collapsed Gibbs sweep with SparseLDA's bucket decomposition (Yao, Mimno &
    McCallum 2009), on ``P`` AD-LDA partitions as ``gibbs_sweep_parallel`` (``P = 1``: the
    serial sampler).

    The conditional of ``gibbs_sweep``, with the token removed and inv[t] = 1 / (n_k[t] +
    V beta), is split as

        p_t ∝ n_wk[w, t] (n_dk[d, t] + alpha) inv[t]      (word bucket q: topics of w)
            + beta n_dk[d, t] inv[t]                        (document bucket r: topics of d)
            + alpha beta inv[t]                             (smoothing bucket s: all topics)

    One uniform u on [0, q + r + s) picks the bucket (in that order) and the topic in it.
    Word bucket: the list's pairs in 4 lanes (pair j in lane j % 4, each lane summed left
    to right, the lanes' totals then cumulated), u's lane by those totals, then its pair by
    the lane's running sums (a point past the lane's end by rounding: the lane's last pair
    of positive weight). Document and smoothing buckets: a running sum over the document's
    topics (K_d) or all K by groups of 4 or 8 (a group's sum added at once, then one by one
    inside the group that passes u; the group's last topic, or the last topic, if a scan
    runs past the end). The same distribution as ``gibbs_sweep``, not the same draws. Per
    token only q is summed, O(K_w) (the word's non-zero topics, read from its list of
    (topic, count) pairs, which still counts the token: its old topic's pair weighs count -
    1, and the list changes only if the token moves); s and r are running sums kept as the
    counts change, recomputed exactly per document (O(K) additions); r's running sum is
    taken only when u falls in it, the smoothing scan only when u falls in s. Every
    partition's per-word topic lists start each sweep in increasing topic order, built from
    the counts of the start of the sweep (O(V K), in parallel over words, fused with the
    merge when ``workspace``, an ``ADLDAWorkspace(P, V, K, True)``, is reused across the
    sweeps of one state; the draws do not depend on it); within the sweep a topic whose
    count drops to zero is replaced by the list's last and a new one is appended (with
    several partitions each keeps a V x K array of its topics' positions in its lists, in
    memory the sparse rounds leave unused, so that the rounds apply the other partitions'
    moves without searching the lists; the sampler keeps them exact). Memory: P copies of
    ``n_wk`` and 2 P V K int32 for the lists.

    The draws changed with issue #16 (the lanes and groups sum in another order, and the
    token's pair leaves its list only when the token moves): a seed gives other
    assignments than before it (still the same for the same seed and ``n_jobs``).
    """
    _run_adlda(True, doc_ptr, words, z, n_wk, n_dk, n_k, alpha, beta, part_ptr,
               bit_generators, n_threads, workspace)


def _word_draw(const int32_t[::1] pairs, const double[::1] c, int32_t kold, double u):
    """Test hook: ``_sparse_docs``' word bucket and search on one list (``pairs``: 2 n int32,
    (topic, count), the old topic ``kold`` among them, every topic < len(c)) for the point
    ``u`` of [0, q). Returns (q, cum, jk, j): the bucket's mass, its 4 cumulative lane
    totals, kold's index and the chosen pair's index (-1 if u >= q: not in the bucket)."""
    cdef Py_ssize_t n = pairs.shape[0] // 2, jk = -1, j = -1, t
    if n < 1 or pairs.shape[0] != 2 * n:
        raise ValueError("need n >= 1 (topic, count) pairs")
    for t in range(n):
        if not 0 <= pairs[2 * t] < c.shape[0] or pairs[2 * t + 1] < 1:
            raise ValueError("topics must index c, counts be >= 1")
    # the kernel's buffers: 3 pairs of slack after the list (junk there, as the next
    # word's pairs in a sweep: the bucket must ignore them), K + 3 prefixes
    cdef int32_t[::1] wl = np.full(2 * n + 6, c.shape[0] - 1, dtype=np.int32)
    cdef double[::1] P = np.zeros(n + 4)
    cdef double[::1] cum = np.zeros(4)
    wl[:2 * n] = pairs
    q = dptm_word_bucket(&wl[0], n, &c[0], kold, &P[0], &cum[0], &jk)
    if u < q:
        j = dptm_word_search(&wl[0], n, &P[0], &cum[0], jk, u)
    return q, np.asarray(cum).copy(), jk, j


def gibbs_counts(const int64_t[::1] doc_ptr, const int32_t[::1] words, const int32_t[::1] z,
                 int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                 int n_threads=1):
    """Set ``n_wk`` (V x K), ``n_dk`` (D x K) and ``n_k`` (K) to the counts of the
    assignments ``z`` (their previous contents are overwritten, so ``np.empty`` arrays will
    do). The same integers for any ``n_threads``.

    Every row is written first by the thread that counts into it, in parallel: on a fresh
    array the page faults are shared by the threads (a fresh V x K array's faults cost
    more than the counting itself at K = 1000). ``n_dk`` is counted per document; for
    ``n_wk`` each of the ``n_threads`` threads owns a range of words and counts the tokens
    of its words.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t N = words.shape[0], d, i, j, lo, hi, nthr, rank, ahead
    cdef int32_t w, t
    cdef int32_t* row
    cdef int32_t* wk
    cdef const int32_t* zp
    cdef const int32_t* wp
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if D < 0:
        raise ValueError("doc_ptr must have at least one entry")
    if n_dk.shape[0] != D or n_dk.shape[1] != K or n_k.shape[0] != K:
        raise ValueError(f"need n_dk ({D}, {K}) and n_k ({K},) for n_wk ({V}, {K}) and "
                         f"{D} documents")
    if z.shape[0] != N or doc_ptr[0] != 0 or doc_ptr[D] != N:
        raise ValueError("z and words must have one entry per token, doc_ptr from 0 to it")
    with nogil:
        for d in range(D):
            if doc_ptr[d + 1] < doc_ptr[d]:
                with gil:
                    raise ValueError("doc_ptr must be non-decreasing")
        for i in range(N):
            if not (0 <= words[i] < V and 0 <= z[i] < K):
                with gil:
                    raise ValueError(f"token {i}: word {words[i]} or topic {z[i]} out of "
                                     f"range (V = {V}, K = {K})")
    if K > 0:
        memset(&n_k[0], 0, K * sizeof(int64_t))
    if N == 0 or K == 0:
        if V * K > 0:
            memset(&n_wk[0, 0], 0, V * K * sizeof(int32_t))
        if D * K > 0:
            memset(&n_dk[0, 0], 0, D * K * sizeof(int32_t))
        return
    zp = &z[0]
    wp = &words[0]
    wk = &n_wk[0, 0]
    lo = hi = nthr = rank = ahead = 0
    with nogil, parallel(num_threads=n_threads):
        for d in prange(D, schedule="static"):
            row = &n_dk[d, 0]
            memset(row, 0, K * sizeof(int32_t))
            for j in range(doc_ptr[d], doc_ptr[d + 1]):
                row[zp[j]] += 1
        nthr = dptm_team_size()
        rank = dptm_team_rank()
        lo = V * rank // nthr
        hi = V * (rank + 1) // nthr
        if hi > lo:
            memset(wk + lo * K, 0, (hi - lo) * K * sizeof(int32_t))
        for i in range(N):
            # the row of a token some way ahead loads while this one is counted (random
            # words: at K = 1000 each count is a cache miss otherwise)
            ahead = i + 16
            if ahead < N and lo <= wp[ahead] < hi:
                __builtin_prefetch(wk + wp[ahead] * K + zp[ahead])
            w = wp[i]
            if lo <= w < hi:
                wk[w * K + zp[i]] += 1
    for i in range(N):
        n_k[zp[i]] += 1


cdef Py_ssize_t OUT_BLOCK = 16     # topics per block of gibbs_outputs' transpose


def gibbs_outputs(const int32_t[:, ::1] n_wk, const int32_t[:, ::1] n_dk, double alpha,
                  double beta, double[:, ::1] components, double[:, ::1] topic_word,
                  double[:, ::1] doc_topic, int n_threads=1):
    """GibbsLDA's released arrays from the final counts, in one parallel pass (every
    output row first written, so its pages faulted in, by the thread that fills it):

    - ``components[k, w] = n_wk[w, k] + beta`` (K x V);
    - ``topic_word[k, w] = components[k, w] / (c_k + V beta)``, ``c_k = sum_w n_wk[w, k]``
      (an exact integer sum; the row sums to 1 up to rounding);
    - ``doc_topic[d, k] = (n_dk[d, k] + alpha) / (n_d + K alpha)``, ``n_d = sum_k
      n_dk[d, k]``.

    The outputs are overwritten (``np.empty`` arrays will do). The same bits for any
    ``n_threads``. The transpose goes by blocks of 16 topics: a block reads 16 consecutive
    counts of each word row and writes 16 output rows sequentially.
    """
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1], D = n_dk.shape[0]
    cdef Py_ssize_t nblk, blk, k0, k1, k, w, d
    cdef int64_t s
    cdef int64_t* tot
    cdef double vb, kb, inv
    cdef const int32_t* wk
    cdef const int32_t* src
    cdef const int32_t* drow
    cdef double* comp
    cdef double* crow
    cdef double* trow
    cdef double* trow_d
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if (n_dk.shape[1] != K or components.shape[0] != K or components.shape[1] != V
            or topic_word.shape[0] != K or topic_word.shape[1] != V
            or doc_topic.shape[0] != D or doc_topic.shape[1] != K):
        raise ValueError(f"need components and topic_word ({K}, {V}) and doc_topic "
                         f"({D}, {K}) for n_wk ({V}, {K}) and n_dk "
                         f"({n_dk.shape[0]}, {n_dk.shape[1]})")
    if K == 0:
        return
    nblk = (K + OUT_BLOCK - 1) // OUT_BLOCK
    vb = V * beta
    kb = K * alpha
    # the topics' count totals, each entry written by the block that owns its topic
    tot = <int64_t*> calloc(K, sizeof(int64_t))
    if tot == NULL:
        raise MemoryError()
    wk = &n_wk[0, 0] if V > 0 else NULL
    comp = &components[0, 0] if V > 0 else NULL
    with nogil, parallel(num_threads=n_threads):
        if V > 0:
            for blk in prange(nblk, schedule="static"):
                k0 = blk * OUT_BLOCK
                k1 = k0 + OUT_BLOCK if k0 + OUT_BLOCK < K else K
                for w in range(V):
                    src = wk + w * K
                    for k in range(k0, k1):
                        tot[k] += src[k]
                        comp[k * V + w] = src[k] + beta
                for k in range(k0, k1):
                    crow = comp + k * V
                    trow = &topic_word[k, 0]
                    inv = tot[k] + vb
                    for w in range(V):
                        trow[w] = crow[w] / inv
        for d in prange(D, schedule="static"):
            drow = &n_dk[d, 0]
            trow_d = &doc_topic[d, 0]
            s = 0
            for k in range(K):
                s = s + drow[k]
            inv = s + kb
            for k in range(K):
                trow_d[k] = (drow[k] + alpha) / inv
    free(tot)


cdef void _fold_in_doc(const int32_t* words, Py_ssize_t n, const double* word_factor,
                       Py_ssize_t K, double alpha, int n_iter, int burn_in, bitgen_t* rng,
                       double* cum, int32_t* n_dk, int32_t* z, double* out) noexcept nogil:
    """``fold_in`` for one document of ``n`` tokens, its mean counts added to ``out``."""
    cdef Py_ssize_t i, k, t, it
    cdef double total
    cdef const double* wrow
    for t in range(K):
        n_dk[t] = 0
    for i in range(n):
        k = <Py_ssize_t> (next_uniform(rng) * K)
        if k >= K:
            k = K - 1
        z[i] = <int32_t> k
        n_dk[k] += 1
    for it in range(n_iter):
        for i in range(n):
            k = z[i]
            wrow = word_factor + words[i] * K
            n_dk[k] -= 1
            total = 0.0
            for t in range(K):
                total += wrow[t] * (n_dk[t] + alpha)
                cum[t] = total
            k = sample_cumulative(cum, K, next_uniform(rng) * total)
            z[i] = <int32_t> k
            n_dk[k] += 1
        if it >= burn_in:
            for t in range(K):
                out[t] += n_dk[t]
    for t in range(K):
        out[t] /= <double> (n_iter - burn_in)


def fold_in(const int64_t[::1] doc_ptr, const int32_t[::1] words,
            const double[:, ::1] word_factor, double alpha, int n_iter, int burn_in,
            list bit_generators, int n_threads=1):
    """Fold-in Gibbs sampling of held-out documents with the word factor held fixed.

    For each document ``d`` (with its own BitGenerator ``bit_generators[d]``), topics are
    initialised uniformly and each token with word ``w`` is redrawn ``n_iter`` times from
    ``p_k ∝ word_factor[w, k] * (n_dk[d, k] + alpha)`` (``word_factor = topic_word.T``).
    Each document has its own stream, so its result does not depend on the batch, nor on
    ``n_threads`` (documents run in parallel on that many OpenMP threads; the generators
    are used without their locks and must belong to this call).

    Returns
    -------
    mean_counts : ndarray (n_docs, K)
        ``n_dk`` averaged over the sweeps after the first ``burn_in``.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, K = word_factor.shape[1]
    cdef Py_ssize_t d, n
    cdef int failed = 0
    if not 0 <= burn_in < n_iter:
        raise ValueError("need 0 <= burn_in < n_iter")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if len(bit_generators) != D:
        raise ValueError("need one bit generator per document")
    out = np.zeros((D, K), dtype=np.float64)
    cdef double[:, ::1] mean_counts = out
    if D <= 0 or K <= 0:
        return out
    cdef bitgen_t** rngs = <bitgen_t**> malloc(D * sizeof(bitgen_t*))
    if rngs == NULL:
        raise MemoryError()
    cdef double* cum
    cdef int32_t* n_dk
    cdef int32_t* z
    try:
        for d in range(D):
            rngs[d] = get_bitgen(bit_generators[d])
        with nogil:
            for d in prange(D, num_threads=n_threads, schedule="dynamic"):
                n = doc_ptr[d + 1] - doc_ptr[d]
                if n > 0:
                    cum = <double*> malloc(K * sizeof(double))
                    n_dk = <int32_t*> malloc(K * sizeof(int32_t))
                    z = <int32_t*> malloc(n * sizeof(int32_t))
                    if cum == NULL or n_dk == NULL or z == NULL:
                        failed += 1
                    else:
                        _fold_in_doc(&words[doc_ptr[d]], n, &word_factor[0, 0], K, alpha,
                                     n_iter, burn_in, rngs[d], cum, n_dk, z,
                                     &mean_counts[d, 0])
                    free(cum)
                    free(n_dk)
                    free(z)
        if failed:
            raise MemoryError()
    finally:
        free(rngs)
    return out


# ---------------------------------------------------------------------------------------
# Exact discrete noise (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
# differential privacy", Algorithms 1-3), for rational parameters, with the Bernoulli(exp)
# steps decided lazily (below): the output follows the stated pmf exactly.

# Cython would type uint128 as a 64-bit integer; the C helpers below keep its width.
cdef extern from *:
    ctypedef unsigned long long uint128 "unsigned __int128"


cdef extern from *:
    """
    static inline int dptm_clz64(unsigned long long x) { return __builtin_clzll(x); }
    """
    int dptm_clz64(unsigned long long x) noexcept nogil


cdef struct Bits:
    # A BitGenerator and a pool of its unread bits (most significant first): the exact
    # samplers below need a few bits per uniform integer, not a whole 64-bit draw each.
    bitgen_t* rng
    uint64_t pool
    int n


cdef inline void _bits_init(Bits* src, bitgen_t* rng) noexcept nogil:
    src.rng = rng
    src.pool = 0
    src.n = 0


cdef inline uint64_t _uniform_below(Bits* src, uint64_t m) noexcept nogil:
    """Uniform integer in [0, m), m >= 1: the top ceil(log2 m) bits of the pool, rejected
    while >= m (exact; the bits left in the pool stay uniform and independent)."""
    cdef int nbits
    cdef uint64_t v
    if m <= 1:
        return 0
    nbits = 64 - dptm_clz64(m - 1)
    if nbits == 64:
        while True:
            v = src.rng.next_uint64(src.rng.state)
            if v < m:
                return v
    while True:
        if src.n < nbits:
            src.pool = src.rng.next_uint64(src.rng.state)   # the < nbits bits left are dropped
            src.n = 64
        v = src.pool >> (64 - nbits)
        src.pool <<= nbits
        src.n -= nbits
        if v < m:
            return v


# Each Bernoulli(exp(-g)), g = num / den >= 0 rational, is decided lazily and exactly: a
# 64-bit uniform u (U in [u, u + 1) / 2^64) is compared with p = exp(-g) evaluated in double
# precision. That value is within 2^-49 of the true p (g to relative 2^-50 from exact
# integers, and a relative error rho in g moves exp(-g) by at most g e^-g rho (1 + rho) <=
# rho / e; libm's exp within an ulp), and u / 2^64 is within 2^-53
# of U, so a comparison with a margin of 2^-36 is never wrong; inside the margin
# (probability < 2^-34) the uniform's further bits are drawn and ``dptm._exact`` decides
# with exact rational arithmetic. The samplers' output follows the stated pmf exactly.

cdef double LAZY_MARGIN = 1.0 / 68719476736.0    # 2^-36
cdef double TWO_M64 = 1.0 / 18446744073709551616.0  # 2^-64


def _set_lazy_margin(double margin):
    """Test hook: set the comparison margin (returns the old one). A margin >= 1 sends every
    Bernoulli(exp) decision down the exact rational path, so tests can check its pmf; a
    margin below 2^-36 would let double-precision errors decide, and is refused."""
    global LAZY_MARGIN
    if not margin >= 1.0 / 68719476736.0:
        raise ValueError(f"margin must be >= 2^-36, got {margin}")
    old, LAZY_MARGIN = LAZY_MARGIN, margin
    return old

cdef extern from *:
    """
    static inline uint64_t dptm_hi64(unsigned __int128 a) { return (uint64_t)(a >> 64); }
    static inline uint64_t dptm_lo64(unsigned __int128 a) { return (uint64_t)a; }
    static inline double dptm_u128_to_double(unsigned __int128 a) { return (double)a; }
    """
    uint64_t dptm_hi64(uint128 a) nogil
    uint64_t dptm_lo64(uint128 a) nogil
    double dptm_u128_to_double(uint128 a) nogil


cdef bint _resolve(bitgen_t* rng, uint64_t u, object num, object den,
                   object scale) noexcept with gil:
    """The rare exact path: U * scale < exp(-num / den) for the uniform U whose first 64
    bits are ``u`` (more are drawn as needed). Fails closed: an error here (a bug, or no
    memory) aborts the process rather than return a decision the pmf does not justify."""
    try:
        big, nbits = u, 64
        while True:
            r = _exact.uniform_below_exp(big, nbits, num, den, scale)
            if r is not None:
                return r
            big = (big << 64) | rng.next_uint64(rng.state)
            nbits += 64
    except BaseException:
        import traceback
        traceback.print_exc()
        abort()


cdef bint _resolve_below_exp(bitgen_t* rng, uint64_t u, uint128 a, uint64_t den,
                             bint squared) noexcept with gil:
    """U < exp(-num / den), num = a^2 if ``squared`` else a."""
    cdef object hi = dptm_hi64(a), lo = dptm_lo64(a)
    num = (hi << 64) | lo
    return _resolve(rng, u, num * num if squared else num, den, 1)


cdef inline bint _bernoulli_exp(bitgen_t* rng, double g, uint128 a, uint64_t den,
                                bint squared) noexcept nogil:
    """Bernoulli(exp(-num / den)) exactly, num = a^2 if ``squared`` else a; ``g`` is
    num / den in double precision (relative error at most 2^-50)."""
    cdef uint64_t u = rng.next_uint64(rng.state)
    cdef double x = <double> u * TWO_M64
    cdef double p = exp(-g)
    if x < p - LAZY_MARGIN:
        return 1
    if x > p + LAZY_MARGIN:
        return 0
    return _resolve_below_exp(rng, u, a, den, squared)


cdef int64_t _discrete_laplace(Bits* rng, uint64_t t, uint64_t s) noexcept nogil:
    """Discrete Laplace with scale t/s: P(x) proportional to exp(-|x| s / t) on the
    integers (CKS20 Algorithm 2: U uniform on [0, t) kept with probability exp(-U/t), plus
    t times a Geometric(exp(-1)) count, divided by s; a random sign, -0 rejected)."""
    cdef uint64_t u, v, y
    cdef uint128 y_wide
    cdef double inv_t = 1.0 / <double> t
    while True:
        u = _uniform_below(rng, t)
        if u and not _bernoulli_exp(rng.rng, u * inv_t, u, t, 0):
            continue
        v = 0
        while _bernoulli_exp(rng.rng, 1.0, 1, 1, 0):
            v += 1
        # in 128 bits: t may be up to 2^60, and u + t v must not wrap (a wrapped value would
        # cut the tail off); a result past int64 (probability about e^-(2^23)) fails closed
        y_wide = (<uint128> u + <uint128> t * v) // s
        if y_wide >= (<uint128> 1 << 63):
            abort()
        y = <uint64_t> y_wide
        if _uniform_below(rng, 2):
            if y == 0:
                continue
            return -<int64_t> y
        return <int64_t> y


cdef int64_t _discrete_gaussian(Bits* rng, uint64_t p, uint64_t q, uint64_t t) noexcept nogil:
    """Discrete Gaussian with variance parameter sigma^2 = p/q, t = floor(sigma) + 1:
    P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers (CKS20 Algorithm 3).

    Accepts a discrete Laplace(t) draw Y with probability
    exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| t q - p)^2 / (2 p q t^2))."""
    cdef int64_t y
    cdef uint128 a, ay
    cdef uint128 pp = p
    cdef uint64_t den = 2 * p * q * t * t
    cdef double ad, dden = <double> den
    while True:
        y = _discrete_laplace(rng, t, 1)
        ay = <uint128> (y if y >= 0 else -y)
        a = ay * t * q
        a = a - pp if a >= pp else pp - a
        ad = dptm_u128_to_double(a)
        if _bernoulli_exp(rng.rng, ad * ad / dden, a, den, 1):
            return y


# Discrete Laplace with a dyadic parameter r = a / 2^21 (the default noise of the snapshots):
# P(x) = (1 - r) / (1 + r) r^|x| on the integers (scale -1 / log r), by exact inversion of
# |x| with the integer table of ``dptm._laplace_table`` (construction and proof there):
# G + 1 bits per draw (G index bits, one sign bit) in lanes of one 64-bit word, one table
# read for nearly every draw, integer comparisons only. The pmf is exact, and an output's
# bits carry nothing but its value.

from libc.stdint cimport int16_t
from libc.math cimport INFINITY
from dptm import _laplace_table, _gauss_inversion

cdef int DYADIC_BITS = 21
DYADIC_DENOMINATOR = 1 << 21


cdef extern from *:
    """
    static inline int dptm_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int dptm_ctz64(unsigned long long x) noexcept nogil


cdef struct LaplaceTable:
    const int16_t* guide       # 2^G entries: |x| when decided by the G index bits, else -(first + 1)
    const int32_t* hi          # per threshold row m: floor(T_m 2^(G + L)) >> L ...
    const uint64_t* lo         # ... and its low L bits
    uint64_t a
    int index_bits, low_bits   # G, L
    int family                 # thresholds of: 0 the dyadic Laplace (a), 1 the discrete Gaussian (p/q)
    uint64_t p, q
    int lane_bits, lanes       # G + 1 bits per draw, 64 // (G + 1) draws per word
    uint64_t lane_mask


cdef struct Lanes:
    uint64_t word              # the unread lanes of the last 64-bit draw, next in the low bits
    int left


cdef int64_t _dlap_resolve(bitgen_t* rng, const LaplaceTable* T, uint64_t g, uint64_t v,
                           int64_t m) noexcept with gil:
    """Stage 3 (``_laplace_table.resolve`` or ``_gauss_inversion.resolve``, exact
    integers): |x| for the uniform whose first G + L bits are g, v, given that it lies below
    the threshold of every row j < m; reads more 64-bit words as needed. Fails closed: an
    error here aborts the process rather than return a value the pmf does not justify."""
    try:
        big, nbits = (int(g) << T.low_bits) | int(v), T.index_bits + T.low_bits
        while True:
            if T.family == 1:
                r = _gauss_inversion.resolve(int(T.p), int(T.q), big, nbits, m)
            else:
                r = _laplace_table.resolve(int(T.a), big, nbits, m)
            if r is not None:
                if not r >= m - 1:
                    raise AssertionError("resolve went below the thresholds already decided")
                return r
            big = (big << 64) | rng.next_uint64(rng.state)
            nbits += 64
    except BaseException:
        import traceback
        traceback.print_exc()
        abort()


cdef int64_t _dlap_stage2(bitgen_t* rng, const LaplaceTable* T, uint64_t g,
                          int64_t m) noexcept nogil:
    """|x| when the interval g of the index bits holds thresholds (rows m + 1, ... with
    hi == g; the rows up to m lie above the interval): L more bits of the uniform decide
    each one, the last row (hi = lo = 0) stops the scan."""
    cdef uint64_t v = rng.next_uint64(rng.state)
    if T.low_bits < 64:
        v >>= 64 - T.low_bits
    while T.hi[m + 1] == <int32_t> g and T.lo[m + 1] > v:
        m += 1                                       # U < T_(m+1) for sure
    if T.hi[m + 1] == <int32_t> g and T.lo[m + 1] == v:
        return _dlap_resolve(rng, T, g, v, m + 1)    # the L bits do not decide T_(m+1)
    return m


cdef inline int64_t _dlap_draw(bitgen_t* rng, Lanes* ln, const LaplaceTable* T) noexcept nogil:
    """One exact discrete Laplace draw: the next lane's low bit is the sign, its G bits
    above index the guide."""
    cdef uint64_t lane
    cdef int64_t m, s
    if ln.left == 0:
        ln.word = rng.next_uint64(rng.state)
        ln.left = T.lanes
    lane = ln.word & T.lane_mask
    ln.word >>= T.lane_bits
    ln.left -= 1
    m = T.guide[lane >> 1]
    if m < 0:
        m = _dlap_stage2(rng, T, lane >> 1, -m - 1)
    s = <int64_t> (lane & 1)
    return (m ^ -s) + s                              # -m when the sign bit is set (-0 = 0)


cdef _set_laplace_table(LaplaceTable* T, dict table, uint64_t a):
    """Check a table of ``dptm._laplace_table.dyadic_table(a)`` (the structure the proof
    needs, so that a corrupted table is refused rather than sampled) and point ``T`` at its
    arrays (``table`` must stay alive while ``T`` is used)."""
    if table["a"] != a:
        raise ValueError("the Laplace table was built for another parameter than a")
    _set_inversion_table(T, table, "Laplace")
    T.a, T.family, T.p, T.q = a, 0, 0, 0


cdef _set_gauss_inversion(LaplaceTable* T, dict table, uint64_t p, uint64_t q):
    """The same for a table of ``dptm._gauss_inversion.inversion_table(p, q)``."""
    if table.get("p") != p or table.get("q") != q or "guide" not in table:
        raise ValueError("the inversion table was built for another variance than p/q")
    _set_inversion_table(T, table, "inversion")
    T.a, T.family, T.p, T.q = 0, 1, p, q


cdef _set_inversion_table(LaplaceTable* T, dict table, str name):
    """The structure shared by both tables (``dptm._laplace_table``'s stages)."""
    cdef const int16_t[::1] guide = table["guide"]
    cdef const int32_t[::1] hi = table["hi"]
    cdef const uint64_t[::1] lo = table["lo"]
    cdef int G = table["index_bits"], L = table["low_bits"]
    cdef Py_ssize_t i, g, n = hi.shape[0], first = 0
    if not 1 <= G <= 15 or not 1 <= L <= 64 or guide.shape[0] != (1 << G) \
            or lo.shape[0] != n or n < 2 or hi[n - 1] != 0 or lo[n - 1] != 0:
        raise ValueError(f"inconsistent {name} table")
    for i in range(1, n):
        # t_m = hi << L | lo: below 2^(G + L), non-increasing in m
        if not 0 <= hi[i] < (1 << G) or (L < 64 and lo[i] >> L) or (i > 1 and (
                hi[i] > hi[i - 1] or (hi[i] == hi[i - 1] and lo[i] > lo[i - 1]))):
            raise ValueError(f"inconsistent {name} table")
    # guide[g]: first[g] = #{m >= 1 : hi[m] > g}, negative iff some hi[m] == g
    for g in range((1 << G) - 1, -1, -1):
        while first + 1 < n and hi[first + 1] > g:
            first += 1
        if guide[g] != (-(first + 1) if hi[first + 1] == g else first):
            raise ValueError(f"inconsistent {name} table")
    T.guide, T.hi, T.lo = &guide[0], &hi[0], &lo[0]
    T.index_bits, T.low_bits = G, L
    T.lane_bits = G + 1
    T.lanes = 64 // (G + 1)
    T.lane_mask = (<uint64_t> 1 << (G + 1)) - 1


def fill_discrete_laplace_dyadic(int64_t[::1] out, uint64_t a, object bit_generator,
                                 dict table=None):
    """Fill ``out`` with exact discrete Laplace draws of parameter r = a / 2^21:
    P(x) = (1 - r) / (1 + r) r^|x| (scale -1 / log r), 0 < a < 2^21 (scale up to about
    600), through ``table = dptm._laplace_table.dyadic_table(a)`` (the default)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef LaplaceTable T
    cdef Lanes ln
    if a < 1 or a >= (<uint64_t> 1 << DYADIC_BITS):
        raise ValueError("a must be in [1, 2^21)")
    if table is None:
        table = _laplace_table.dyadic_table(a)
    _set_laplace_table(&T, table, a)
    ln.word = 0
    ln.left = 0
    with bit_generator.lock, nogil:
        for i in range(n):
            out[i] = _dlap_draw(rng, &ln, &T)


def fill_noise(double[::1] out, int kind, double scale, object bit_generator):
    """Fill ``out`` with i.i.d. continuous noise: ``kind`` 1 = Laplace(0, scale) as
    scale * (E1 - E2) with E1, E2 standard exponentials (numpy's ziggurat
    ``random_standard_exponential``; exact in distribution, no logarithm), 2 = Normal(0,
    scale^2) (``random_standard_normal``)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    if kind not in (1, 2):
        raise ValueError("kind must be 1 (Laplace) or 2 (Gaussian)")
    with bit_generator.lock, nogil:
        if kind == 1:
            for i in range(n):
                out[i] = scale * (random_standard_exponential(rng)
                                  - random_standard_exponential(rng))
        else:
            for i in range(n):
                out[i] = scale * random_standard_normal(rng)


def fill_discrete_laplace(int64_t[::1] out, uint64_t t, uint64_t s, object bit_generator):
    """Fill ``out`` with exact discrete Laplace draws of scale t/s (CKS20 Algorithm 2)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    if t < 1 or s < 1:
        raise ValueError("t and s must be positive integers")
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_laplace(&src, t, s)


def fill_discrete_gaussian(int64_t[::1] out, uint64_t p, uint64_t q, uint64_t t,
                           object bit_generator):
    """Fill ``out`` with exact discrete Gaussian draws of variance parameter p/q
    (CKS20 Algorithm 3); ``t`` must be floor(sqrt(p/q)) + 1 and 2 p q t^2 < 2^64."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    if p < 1 or q < 1 or t < 1:
        raise ValueError("p, q and t must be positive integers")
    P, Q, T = int(p), int(q), int(t)
    if 2 * P * Q * T * T >= 2 ** 64 or not (T - 1) ** 2 * Q <= P < T * T * Q:
        raise ValueError("need t = floor(sqrt(p/q)) + 1 and 2 p q t^2 < 2^64")
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_gaussian(&src, p, q, t)


# Discrete Gaussian (sigma >= 0.5): rejection from a proposal drawn with an integer alias
# table (the construction and its proof are in ``dptm._gauss_table``). The magnitude m >= 0
# is proposed in bins of width B = 2^bin_bits, bin j with probability W_j / 2^52 (the
# integer W_j >= c exp(-(jB)^2 / (2 sigma^2))), uniformly within it, and accepted with
# probability exp(-m^2 / (2 sigma^2)) c / W_j <= 1; one more component covers m >= M =
# n_bins B with a geometric envelope, and the table's slack (the last component) means
# "propose again". The accepted m has pmf proportional to exp(-m^2 / (2 sigma^2)); a random
# sign with -0 rejected gives the discrete Gaussian on the integers. Each acceptance is
# decided like ``_bernoulli_exp``: a lower bound per bin accepts most proposals without
# evaluating exp, the double-precision value decides outside the 2^-36 margin (in the bins
# g = m^2 / (2 sigma^2) < 100 has relative error below 2^-51, so exp(-g) c / W_j is within
# 2^-44 of its true value), and the rare remainder (and every tail proposal, probability
# below 2^-100) is decided exactly.

DEF GAUSS_TABLE_COLUMNS = 256
DEF GAUSS_TABLE_BITS = 52          # each column holds 2^52 units


cdef struct GaussTable:
    const uint64_t* prob           # column i keeps component i when v < prob[i] (v < 2^52)
    const int32_t* alias           # ... and gives alias[i] otherwise
    const double* squeeze          # per bin: the acceptance probability's minimum
    const double* ratio            # per bin: c / W_j (double)
    const uint64_t* weight         # W_j per bin, then the tail's W_T
    Py_ssize_t n_bins
    int bin_bits
    uint64_t c
    double g_coef                  # q / (2 p) = 1 / (2 sigma^2)
    uint64_t p, q


cdef inline bint _table_accept(bitgen_t* rng, const GaussTable* T, int64_t m, Py_ssize_t j,
                               int shift) noexcept nogil:
    """Bernoulli(exp(-m^2 q / (2 p)) c 2^shift / W_j), W_j = weight[j]."""
    cdef uint64_t u = rng.next_uint64(rng.state)
    cdef double x = <double> u * TWO_M64, a
    if shift == 0:
        if x < T.squeeze[j] - LAZY_MARGIN:
            return 1
        a = exp(-(<double> (m * m)) * T.g_coef) * T.ratio[j]
        if x < a - LAZY_MARGIN:
            return 1
        if x > a + LAZY_MARGIN:
            return 0
    return _resolve_table(rng, u, m, T.p, T.q, T.weight[j], T.c, shift)


cdef bint _resolve_table(bitgen_t* rng, uint64_t u, int64_t m, uint64_t p, uint64_t q,
                         uint64_t w, uint64_t c, int shift) noexcept with gil:
    cdef object mm = m
    return _resolve(rng, u, mm * mm * q, 2 * p, Fraction(w, c << shift))


cdef int64_t _discrete_gaussian_table(Bits* src, const GaussTable* T) noexcept nogil:
    cdef uint64_t w, v, r
    cdef Py_ssize_t col, j
    cdef int64_t m, J
    cdef bint neg
    while True:
        w = src.rng.next_uint64(src.rng.state)
        col = <Py_ssize_t> (w >> 56)
        v = w & ((<uint64_t> 1 << GAUSS_TABLE_BITS) - 1)
        neg = (w >> GAUSS_TABLE_BITS) & 1
        j = col if v < T.prob[col] else T.alias[col]
        if j < T.n_bins:
            m = (<int64_t> j << T.bin_bits) + <int64_t> _uniform_below(src, <uint64_t> 1 << T.bin_bits)
            if not _table_accept(src.rng, T, m, j, 0):
                continue
        elif j == T.n_bins:
            # the tail m >= M: J ~ Geometric(1/2) (trailing zeros of uniform words)
            J = 0
            while True:
                r = src.rng.next_uint64(src.rng.state)
                if r:
                    J += dptm_ctz64(r)
                    break
                J += 64
            m = ((<int64_t> T.n_bins + J) << T.bin_bits) \
                + <int64_t> _uniform_below(src, <uint64_t> 1 << T.bin_bits)
            if not _table_accept(src.rng, T, m, j, <int> (J + 1)):
                continue
        else:
            continue                                  # the table's slack: propose again
        if neg:
            if m == 0:
                continue
            return -m
        return m


cdef _set_gauss_table(GaussTable* T, dict table):
    """Check a table of ``dptm._gauss_table.gauss_table`` and point ``T`` at its arrays
    (``table`` must stay alive while ``T`` is used)."""
    cdef const uint64_t[::1] prob = table["prob"], weight = table["weight"]
    cdef const int32_t[::1] alias = table["alias"]
    cdef const double[::1] squeeze = table["squeeze"], ratio = table["ratio"]
    cdef uint64_t p = table["p"], q = table["q"], c = table["c"]
    cdef int bin_bits = table["bin_bits"]
    cdef Py_ssize_t i, n_bins = ratio.shape[0]
    if prob.shape[0] != GAUSS_TABLE_COLUMNS or alias.shape[0] != GAUSS_TABLE_COLUMNS:
        raise ValueError("prob and alias must have 256 entries")
    if squeeze.shape[0] != n_bins or weight.shape[0] != n_bins + 1 \
            or not 0 < n_bins <= GAUSS_TABLE_COLUMNS - 2 or not 0 <= bin_bits <= 20 \
            or p < 1 or q < 1 or c < 1:
        raise ValueError("inconsistent Gaussian table")
    for i in range(GAUSS_TABLE_COLUMNS):
        if not 0 <= alias[i] <= n_bins + 1 or prob[i] > (<uint64_t> 1 << GAUSS_TABLE_BITS) \
                or (i > n_bins + 1 and prob[i] != 0):
            raise ValueError("inconsistent Gaussian table")
    T.prob, T.alias, T.squeeze, T.ratio, T.weight = &prob[0], &alias[0], &squeeze[0], &ratio[0], &weight[0]
    T.n_bins, T.bin_bits, T.c, T.p, T.q = n_bins, bin_bits, c, p, q
    T.g_coef = <double> q / (2.0 * <double> p)


def fill_discrete_gaussian_table(int64_t[::1] out, dict table, object bit_generator):
    """Fill ``out`` with exact discrete Gaussian draws of variance parameter p/q through
    the alias-table proposal ``table = dptm._gauss_table.gauss_table(p, q)``."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    cdef GaussTable T
    _set_gauss_table(&T, table)
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_gaussian_table(&src, &T)


# Discrete Gaussian by exact inversion (SubsampledGibbsLDA's snapshots): the kernel of the
# dyadic discrete Laplace above (guide, stage 2, exact stage 3, sign bit; ``_dlap_draw``)
# on the thresholds S_m = P(|x| >= m) of N_Z(0, p/q), taken from guaranteed rational bounds
# (``dptm._gauss_inversion``: construction and proof). G + 1 bits and one table read for
# nearly every draw; the pmf is exact.

def fill_discrete_gaussian_inversion(int64_t[::1] out, uint64_t p, uint64_t q,
                                     object bit_generator, dict table=None):
    """Fill ``out`` with exact discrete Gaussian draws of variance p/q:
    P(x) proportional to exp(-x^2 q / (2 p)) on the integers, through
    ``table = dptm._gauss_inversion.inversion_table(p, q)`` (the default)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef LaplaceTable T
    cdef Lanes ln
    if p < 1 or q < 1:
        raise ValueError("p and q must be positive integers")
    if table is None:
        table = _gauss_inversion.inversion_table(p, q)
    _set_gauss_inversion(&T, table, p, q)
    ln.word = 0
    ln.left = 0
    with bit_generator.lock, nogil:
        for i in range(n):
            out[i] = _dlap_draw(rng, &ln, &T)


# ---------------------------------------------------------------------------------------
# Noisy-snapshot Gibbs sampling (papers/zhao2021 Algorithm 1, HDP-LDA; papers/huang2022
# Algorithm 1, SUB-LDA), with the release semantics of DESIGN.md 3.1-3.2.

cdef extern from *:
    """
    /* Branch-free clamps (the snapshot noise makes every comparison a coin flip: a
       branch would be mispredicted about half the time). */
    static inline int64_t dptm_pos_i64(int64_t v) { return v & ~(v >> 63); }
    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* maxsd / minsd: (x > 0 ? x : 0), then (x < hi ? x : hi), without a branch */
    static inline double dptm_clamp(double x, double hi) {
        __m128d v = _mm_max_sd(_mm_set_sd(x), _mm_setzero_pd());
        return _mm_cvtsd_f64(_mm_min_sd(v, _mm_set_sd(hi)));
    }
    #else
    static inline double dptm_clamp(double x, double hi) {
        x = x > 0.0 ? x : 0.0;
        return x < hi ? x : hi;
    }
    #endif
    """
    int64_t dptm_pos_i64(int64_t v) noexcept nogil
    double dptm_clamp(double x, double hi) noexcept nogil


# The word bucket's two-level search: per word, the running sums of its word-factor row
# at the end of each block of this many topics (a binary search over the blocks, then a
# scan of one block's floats from the previous block's end: the linear scan's running sums,
# so the same draws, from a V x K/16 table).
DEF WORD_BLOCK = 16
WORD_BLOCK_TOPICS = WORD_BLOCK    # the same, for Python (table shapes)


cdef void _dyadic_row(bitgen_t* rng, Lanes* lanes, const LaplaceTable* T,
                      const int32_t* counts, double* out, double* tot,
                      Py_ssize_t K, int32_t* cout, int64_t cmax) noexcept nogil:
    """One snapshot row under a table-inversion noise (the dyadic discrete Laplace or the
    discrete Gaussian by inversion, whichever ``T`` holds): out[k] = counts[k] + x_k
    (``fill_discrete_laplace_dyadic``'s or ``fill_discrete_gaussian_inversion``'s draws,
    continuing ``lanes``), adding the positive entries to ``tot``; with ``cout`` (not
    NULL) cout[k] = min(max(counts[k] + x_k, 0), cmax) instead of out[k] (the same draws)."""
    cdef Lanes ln = lanes[0]                     # a local copy (no store per draw)
    cdef Py_ssize_t k
    cdef int64_t v, pv
    if cout != NULL:
        for k in range(K):
            v = counts[k] + _dlap_draw(rng, &ln, T)
            pv = dptm_pos_i64(v)
            cout[k] = <int32_t> (pv if pv < cmax else cmax)
            tot[k] += <double> pv
        lanes[0] = ln
        return
    for k in range(K):
        v = counts[k] + _dlap_draw(rng, &ln, T)
        out[k] = <double> v
        tot[k] += <double> dptm_pos_i64(v)
    lanes[0] = ln


# the factor pass reads the double snapshot, or the clamped and clipped int32 counts
ctypedef fused snap_t:
    double
    int32_t


cdef void _factor_rows(const snap_t* snap, float* wf, double* wm, const double* inv_tot,
                       Py_ssize_t w0, Py_ssize_t w1, Py_ssize_t K, double clip, double beta,
                       double* wb) noexcept nogil:
    """Rows [w0, w1) (at most 4) of ``noisy_snapshot``'s word factor pass:
    wf[w, k] = float((clamp(snap[w, k], 0, clip) + beta) * inv_tot[k]), wm[w] = the sum of
    wf[w, :] in double, in topic order, and (wb not NULL) wb[w, b] its running sum at the
    end of topic block b (topics [b WORD_BLOCK, (b + 1) WORD_BLOCK) cut at K)."""
    cdef Py_ssize_t k, w, kb, ke, nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, t
    cdef float f0, f1, f2, f3
    cdef const snap_t* s0 = snap + w0 * K
    cdef float* g0 = wf + w0 * K
    cdef double* b0 = wb + w0 * nb if wb != NULL else NULL
    if w1 - w0 == 4:
        # topic blocks: the block ends stored after each block (no per-topic branch)
        for kb in range(nb):
            ke = min(kb * WORD_BLOCK + WORD_BLOCK, K)
            for k in range(kb * WORD_BLOCK, ke):
                t = inv_tot[k]
                f0 = <float> ((dptm_clamp(s0[k], clip) + beta) * t)
                f1 = <float> ((dptm_clamp(s0[K + k], clip) + beta) * t)
                f2 = <float> ((dptm_clamp(s0[2 * K + k], clip) + beta) * t)
                f3 = <float> ((dptm_clamp(s0[3 * K + k], clip) + beta) * t)
                g0[k] = f0
                g0[K + k] = f1
                g0[2 * K + k] = f2
                g0[3 * K + k] = f3
                # the sums of the stored floats, read back (the same numbers as f0..f3, but
                # GCC without -fopenmp summed the unrounded double products for two of the
                # four rows: a mass off its factor row by ~1e-8 relative)
                m0 = m0 + g0[k]
                m1 = m1 + g0[K + k]
                m2 = m2 + g0[2 * K + k]
                m3 = m3 + g0[3 * K + k]
            if b0 != NULL:
                b0[kb] = m0
                b0[nb + kb] = m1
                b0[2 * nb + kb] = m2
                b0[3 * nb + kb] = m3
        wm[w0] = m0
        wm[w0 + 1] = m1
        wm[w0 + 2] = m2
        wm[w0 + 3] = m3
        return
    for w in range(w0, w1):
        m0 = 0.0
        for k in range(K):
            f0 = <float> ((dptm_clamp(snap[w * K + k], clip) + beta) * inv_tot[k])
            wf[w * K + k] = f0
            m0 = m0 + wf[w * K + k]
            if wb != NULL and (k % WORD_BLOCK == WORD_BLOCK - 1 or k == K - 1):
                wb[w * nb + k // WORD_BLOCK] = m0
        wm[w] = m0


def noisy_snapshot(const int32_t[:, ::1] n_wk, int kind, double scale, uint64_t a, uint64_t b,
                   uint64_t c, double clip, double beta, double[:, ::1] snapshot,
                   float[:, ::1] word_factor, double[::1] word_mass, object bit_generator,
                   int n_threads=1, dict gauss_table=None, dict laplace_table=None, *,
                   double[:, ::1] word_blocks=None, int32_t[:, ::1] clipped=None,
                   const int32_t[::1] topics=None, const int64_t[::1] word_ptr=None,
                   const int64_t[::1] word_tokens=None):
    """Draw a noisy snapshot of the topic-word counts, its fixed word factor and row masses.

    ``snapshot = n_wk + eta`` with eta i.i.d. per entry: ``kind`` 0 none, 1 Laplace(scale)
    (as in ``fill_noise``),
    2 Normal(0, scale^2), 3 discrete Laplace of scale a/b, 4 discrete Gaussian of variance
    a/b with c = floor(sqrt(a/b)) + 1 (drawn through ``gauss_table`` when given: the same
    pmf, faster; the dict of ``dptm._gauss_inversion.inversion_table(a, b)``, drawn by
    inversion in lanes per block like kind 5, or of ``dptm._gauss_table.gauss_table(a, b)``,
    the alias-table proposal), 5 discrete
    Laplace of parameter r = a / 2^21 (``fill_discrete_laplace_dyadic``, through
    ``laplace_table``, default ``dptm._laplace_table.dyadic_table(a)``). Then, in NumPy
    terms::

        pos = np.maximum(snapshot, 0)
        word_factor = ((np.minimum(pos, clip) + beta) / (pos.sum(axis=0) + V * beta)).astype(np.float32)
        word_mass = word_factor.astype(np.float64).cumsum(axis=1)[:, -1]

    (numerator clamped and clipped, topic totals from the clamped snapshot; float32 halves
    the memory the sweep streams through; ``word_mass`` is summed in topic order, for the
    sweep's word bucket). O(V K). ``word_blocks`` (V x ceil(K / 16), optional, keyword)
    receives the running sums of the same pass at the end of each block of 16 topics
    (``word_block_sums``'s result, without a second pass over the word factor): the
    sweep's two-level word-bucket search table.

    ``clipped`` (V x K int32, optional, keyword; discrete kinds 3, 4, 5 and ceil(clip) < 2^31): the
    snapshot is then not written (``snapshot`` is left as it was); ``clipped`` receives
    ``min(max(snapshot, 0), ceil(clip))`` instead, the only part of it the factor pass
    reads (min(that, clip) is min(max(snapshot, 0), clip)). The same draws, the same
    word factor, masses and tables, with half the memory traffic of the double snapshot:
    for the snapshots a fit does not release.

    ``topics``, ``word_ptr``, ``word_tokens`` (optional, keyword, all three or none): the
    counts are those of ``topics`` (one topic per token) over the token positions grouped
    by word (word ``w``'s are ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``), each row
    counted in the pass that draws its noise; ``n_wk`` is then not read (only its shape):
    for a fit whose sweeps leave the counts to the snapshot
    (``noisy_gibbs_sweep_blocks(..., recount=True)``). The same snapshot as from ``n_wk``
    holding those counts.

    ``bit_generator``: one BitGenerator (every row from it, in row order), or a list of
    ``B`` BitGenerators: rows in ``B`` consecutive blocks of ``ceil(V / B)`` rows, block
    ``j`` drawing its noise from generator ``j`` (used without its lock: they must belong
    to this call), on ``n_threads`` OpenMP threads (a block's rows on one thread, blocks
    handed out as threads free up; one parallel region for the noise and the factor
    pass). The topic totals are summed per block
    (the first block starting from ``V beta``) and then over blocks in block order, so the
    result depends on the blocks and their streams, never on ``n_threads``.
    """
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1], w, k
    cdef Py_ssize_t n_blocks, rows_per, blk, j, g
    cdef double x, beta_sum = V * beta
    cdef bitgen_t* rng
    cdef bint single = not isinstance(bit_generator, list)
    if snapshot.shape[0] != V or snapshot.shape[1] != K or word_factor.shape[0] != V \
            or word_factor.shape[1] != K:
        raise ValueError("snapshot and word_factor must have the shape of n_wk")
    if word_mass.shape[0] != V:
        raise ValueError("word_mass must have one entry per word")
    cdef bint use_clipped = clipped is not None
    cdef int64_t cmax = 0
    cdef double cmaxd = 0.0
    if use_clipped:
        if kind not in (3, 4, 5):
            raise ValueError("clipped needs a discrete noise (kind 3, 4 or 5)")
        if not (clip > 0.0 and ceil(clip) < 2147483648.0):
            raise ValueError(f"clipped needs 0 < clip < 2^31, got {clip}")
        if clipped.shape[0] != V or clipped.shape[1] != K:
            raise ValueError("clipped must have the shape of n_wk")
        cmax = <int64_t> ceil(clip)
        cmaxd = <double> cmax
    cdef Py_ssize_t n_wblk = (K + WORD_BLOCK - 1) // WORD_BLOCK
    if word_blocks is not None and (word_blocks.shape[0] != V or word_blocks.shape[1] != n_wblk):
        raise ValueError(f"word_blocks must have shape (V, ceil(K / {WORD_BLOCK})) = "
                         f"({V}, {n_wblk})")
    cdef bint recount = topics is not None
    if recount != (word_ptr is not None) or recount != (word_tokens is not None):
        raise ValueError("topics, word_ptr and word_tokens go together")
    if recount:
        _check_word_groups(word_ptr, word_tokens, V, topics.shape[0])
    if kind < 0 or kind > 5:
        raise ValueError("kind must be in 0..5")
    if (kind == 3 or kind == 4) and (a < 1 or b < 1 or (kind == 4 and c < 1)):
        raise ValueError("discrete noise needs positive integer parameters")
    if kind == 5 and (a < 1 or a >= (<uint64_t> 1 << DYADIC_BITS)):
        raise ValueError("the dyadic discrete Laplace needs a in [1, 2^21)")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef GaussTable T
    cdef LaplaceTable LT
    cdef bint use_table = kind == 4 and gauss_table is not None
    cdef bint lane_kind = kind == 5          # kinds drawn by _dyadic_row (inversion tables)
    if use_table:
        if gauss_table["p"] != a or gauss_table["q"] != b:
            raise ValueError("gauss_table was built for another variance than a/b")
        if "guide" in gauss_table:
            _set_gauss_inversion(&LT, gauss_table, a, b)
            lane_kind = 1
        else:
            _set_gauss_table(&T, gauss_table)
    if kind == 5:
        if laplace_table is None:
            laplace_table = _laplace_table.dyadic_table(a)
        _set_laplace_table(&LT, laplace_table, a)
    gens = [bit_generator] if single else bit_generator
    n_blocks = len(gens)
    if n_blocks < 1:
        raise ValueError("need at least one bit generator")
    if V == 0 or K == 0:
        return
    rows_per = (V + n_blocks - 1) // n_blocks
    cdef const double* snap_p = &snapshot[0, 0]
    cdef int32_t* cl_p = &clipped[0, 0] if use_clipped else NULL
    cdef float* wf_p = &word_factor[0, 0]
    cdef double* wb_p = &word_blocks[0, 0] if word_blocks is not None else NULL
    cdef double* wm_p = &word_mass[0]
    cdef const int32_t* tp = &topics[0] if recount and topics.shape[0] else NULL
    cdef const int64_t* gp = &word_ptr[0] if recount else NULL
    cdef const int64_t* gt = &word_tokens[0] if recount and word_tokens.shape[0] else NULL
    cdef const int32_t* crow
    cdef int32_t* myrow = NULL
    cdef int64_t jt
    # per-block topic totals, each block's in cache lines of its own: two threads adding
    # into one line (adjacent blocks) would pass it back and forth once per row; after
    # them, each thread's copy of the inverse totals
    cdef Py_ssize_t Kp = (K + 7) & ~(<Py_ssize_t> 7), tid = 0, tk = 0, tj = 0
    cdef double tacc = 0.0
    cdef Bits bits
    cdef Lanes lane
    cdef void* ptot_raw = NULL
    cdef double* ptot = <double*> _own_lines((n_blocks + n_threads) * Kp * sizeof(double),
                                             &ptot_raw)
    # recount: each thread's row of counts (K int32, in cache lines of its own)
    cdef Py_ssize_t Ki = (K + 15) & ~(<Py_ssize_t> 15)
    cdef void* rows_raw = NULL
    cdef int32_t* rows = (<int32_t*> _own_lines(n_threads * Ki * sizeof(int32_t), &rows_raw)
                          if recount else NULL)
    cdef double* totals = NULL
    cdef bitgen_t** rngs = <bitgen_t**> malloc(n_blocks * sizeof(bitgen_t*))
    cdef Bits* srcs = <Bits*> malloc(n_blocks * sizeof(Bits))
    # kind 5 (and 4 by inversion): one lane stream per block, read in row order by the
    # block's thread: the draws of fill_discrete_laplace_dyadic (fill_discrete_gaussian_
    # inversion) over the block's counts, without its V x K int64 buffer
    cdef Lanes* lanes = <Lanes*> calloc(n_blocks, sizeof(Lanes))
    if (ptot == NULL or rngs == NULL or srcs == NULL or lanes == NULL
            or (recount and rows == NULL)):
        free(ptot_raw); free(rngs); free(srcs); free(lanes); free(rows_raw)
        raise MemoryError()
    memset(ptot, 0, n_blocks * Kp * sizeof(double))
    if single:
        n_threads = 1
        bit_generator.lock.acquire()
    try:
        for j in range(n_blocks):
            rngs[j] = get_bitgen(gens[j])
            _bits_init(&srcs[j], rngs[j])
        for k in range(K):
            ptot[k] = beta_sum
        with nogil, parallel(num_threads=n_threads):
            # one parallel region for the noise and the factor pass (one thread wake-up
            # per snapshot); a block's rows on one thread, in row order, blocks handed out
            # as threads free up (the result depends on the blocks only)
            for blk in prange(n_blocks, schedule="dynamic"):
                rng = rngs[blk]
                # the block's bit pool and lanes in the thread's own stack (the arrays'
                # entries of adjacent blocks share cache lines)
                bits = srcs[blk]
                lane = lanes[blk]
                if recount:
                    myrow = rows + threadid() * Ki
                for w in range(blk * rows_per, min(V, blk * rows_per + rows_per)):
                    crow = &n_wk[w, 0]
                    if recount:
                        # the row's counts from its word's topics, in the thread's own row
                        # (n_wk is neither read nor written)
                        memset(myrow, 0, K * sizeof(int32_t))
                        for jt in range(gp[w], gp[w + 1]):
                            myrow[tp[gt[jt]]] += 1
                        crow = myrow
                        # the next row's topics (random positions in z) load while this
                        # row's noise is drawn (KOS, K = 500 / 1000: 10.4 / 20.2 ->
                        # 10.3 / 19.8 ms)
                        for jt in range(gp[w + 1], gp[w + 2] if w + 2 <= V else gp[w + 1]):
                            dptm_prefetch_r(tp + gt[jt], 1)
                    if lane_kind:
                        # the default noises, in their own loop (no per-count branch on kind)
                        _dyadic_row(rng, &lane, &LT, crow, &snapshot[w, 0],
                                    ptot + blk * Kp, K, cl_p + w * K if use_clipped else NULL,
                                    cmax)
                        continue
                    for k in range(K):
                        x = crow[k]
                        if kind == 1:
                            x = x + scale * (random_standard_exponential(rng)
                                             - random_standard_exponential(rng))
                        elif kind == 2:
                            x += scale * random_standard_normal(rng)
                        elif kind == 3:
                            x = x + <double> _discrete_laplace(&bits, a, b)
                        elif use_table:
                            x = x + <double> _discrete_gaussian_table(&bits, &T)
                        elif kind == 4:
                            x = x + <double> _discrete_gaussian(&bits, a, b, c)
                        if use_clipped:
                            cl_p[w * K + k] = <int32_t> dptm_clamp(x, cmaxd)
                        else:
                            snapshot[w, k] = x
                        ptot[blk * Kp + k] += dptm_clamp(x, INFINITY)   # branch-free max(x, 0)
            dptm_omp_barrier()                  # every block's totals are in
            # each thread sums the blocks' totals in block order (the same doubles on every
            # thread, whatever the team), into its own copy
            tid = threadid()
            totals = ptot + (n_blocks + tid) * Kp
            for tk in range(K):
                tacc = ptot[tk]
                for tj in range(1, n_blocks):
                    tacc = tacc + ptot[tj * Kp + tk]
                totals[tk] = 1.0 / tacc
            # four rows at a time: each row's mass is a chain of dependent additions in
            # topic order (kept: the sweep's word bucket needs exactly these sums), so four
            # independent chains hide the add latency (same sums, same results)
            for g in prange((V + 3) // 4, schedule="static"):
                if use_clipped:
                    _factor_rows(<const int32_t*> cl_p, wf_p, wm_p, totals, 4 * g,
                                 min(4 * g + 4, V), K, clip, beta, wb_p)
                else:
                    _factor_rows(snap_p, wf_p, wm_p, totals, 4 * g, min(4 * g + 4, V), K,
                                 clip, beta, wb_p)
    finally:
        if single:
            bit_generator.lock.release()
        free(ptot_raw)
        free(rows_raw)
        free(rngs)
        free(srcs)
        free(lanes)


cdef inline int64_t _geometric_capped(bitgen_t* rng, double scale, int64_t cap) noexcept nogil:
    """min(floor(E * scale), cap) for one standard exponential E (numpy's ziggurat
    ``random_standard_exponential``, the draw of ``Generator.standard_exponential()``).
    With ``scale = -1 / log(q)``, floor(E * scale) counts the failures before the first
    success of independent trials failing with probability q: P(G >= g) = P(E >= -g log q)
    = q^g exactly (no logarithm per draw)."""
    cdef double x = random_standard_exponential(rng) * scale
    if x >= <double> cap:
        return cap
    return <int64_t> x


cdef inline int64_t _next_selected(bitgen_t* rng, int mode, double scale, int64_t p, int64_t end,
                                   int64_t* sel_left) noexcept nogil:
    """The first token >= p selected by ``noisy_gibbs_sweep`` (``end`` if none; draws
    nothing once p reaches ``end``): p itself in modes 0 and 1 (every token is a
    candidate), p plus a geometric gap in mode 2, and in mode 3 p if the current run of
    selected tokens has ``sel_left`` > 0 tokens left, else after skipped tokens, each
    followed by a fresh run length."""
    if p >= end:
        return end
    if mode == 2:
        return p + _geometric_capped(rng, scale, end - p)
    if mode == 3:
        while sel_left[0] == 0:
            p += 1                                      # token p is not selected
            if p >= end:
                return end
            sel_left[0] = _geometric_capped(rng, scale, end - p)
        sel_left[0] -= 1
    return p


cdef extern from *:
    """
    /* Shared-count update of the parallel sweeps: integer additions commute, so the
       result does not depend on the order threads reach a count. Without OpenMP the
       pragma is ignored and the add is plain (one thread). */
    static inline void dptm_atomic_add_i32(int32_t *p, int32_t v) {
    #pragma omp atomic
        *p += v;
    }
    """
    void dptm_atomic_add_i32(int32_t* p, int32_t v) noexcept nogil


cdef int _selection_mode(double rate, bint table, double* scale) noexcept:
    """The selection mode of ``noisy_gibbs_sweep`` (-1: nothing is selected)."""
    scale[0] = 0.0
    if table:
        return 1
    if rate >= 1.0:
        return 0
    if not rate > 0.0:
        return -1
    if rate <= 0.75:
        # one exponential per selected token; above 0.75 one per skipped token is cheaper
        scale[0] = -1.0 / log1p(-rate)
        return 2
    scale[0] = -1.0 / log(rate)
    return 3


cdef extern from *:
    """
    /* Prefetch a row (nbytes from p, cache line by cache line): the next token's word
       factor row is read (r) and its count row written (w) in a random order. */
    static inline void dptm_prefetch_r(const void *p, Py_ssize_t nbytes) {
        const char *c = (const char *)p;
        for (Py_ssize_t off = 0; off < nbytes; off += 64) __builtin_prefetch(c + off, 0, 3);
    }
    static inline void dptm_prefetch_w(const void *p, Py_ssize_t nbytes) {
        const char *c = (const char *)p;
        for (Py_ssize_t off = 0; off < nbytes; off += 64) __builtin_prefetch(c + off, 1, 3);
    }
    """
    void dptm_prefetch_r(const void* p, Py_ssize_t nbytes) noexcept nogil
    void dptm_prefetch_w(const void* p, Py_ssize_t nbytes) noexcept nogil


cdef extern from *:
    """
    /* The private sweep's document list: topics nz[j] with counts cnt[j] (double), j < n,
       followed by 4 padding entries (topic 0, count 0), so the list is read in whole rows
       of 4 (no loop tail whose length changes with n). */
    #define DPTM_LIST_PAD 4
    /* 0.0 and 1.0 indexed by a comparison: GCC compiles (double) (a != b) to a branch on
       a != b, which the token loop is to do without (the private sweep, KOS, K = 500, one
       thread: 15.7 -> 15.4 ms, the same draws) */
    static const double dptm_zero_one[2] = {0.0, 1.0};
    /* A token leaves list entry jk: its count less 1, or unchanged if same (jk is the
       entry owed a count: they cancel); returns whether the entry emptied. The next
       token's document bucket waits on the previous draw through this value: selected
       with integer masks on the two doubles' bits (c - 1.0 is computed before the draw),
       a few cycles shorter than a table load and a subtraction (KOS, K = 500, one
       thread: 15.97 -> 15.29 ms, the same draws) */
    static inline int dptm_leave(double *cnt, Py_ssize_t jk, int same) {
        double c = cnt[jk], c1 = c - 1.0;
        uint64_t a, b;
        memcpy(&a, &c, 8);
        memcpy(&b, &c1, 8);
        a ^= (a ^ b) & (0 - (uint64_t) (same == 0));
        memcpy(cnt + jk, &a, 8);
        return a == 0;
    }
    /* Whether a document-bucket draw u (below its total) lands on list entry nx: the
       entry dptm_count_le finds is nx (cum[nx - 1] <= u < cum[nx]), or it finds none of
       the n entries (cum[n - 1] <= u: the owed entry) and that is nx (same). Three loads
       and compares instead of the count's chain (cum[0] is read for n = 0: defined) */
    static inline int dptm_draws(const double *cum, Py_ssize_t nx, Py_ssize_t n, double u,
            int same) {
        Py_ssize_t a = nx - (nx > 0), b = n - (n > 0);
        return (((cum[a] <= u) | (nx == 0)) & (u < cum[nx]))
               | (((cum[b] <= u) | (n == 0)) & same);
    }
    /* The document bucket: cum[j] = the running sum, left to right in double, of the
       products f[nz[j]] * cnt[j] (exact in double) over the R = ceil(n / 4) rows (the
       padding adds 0.0: cum past n repeats the total); returns the total (0.0 for n = 0).
       pf (not NULL): a later token's word-factor row, prefetched at the same topics. */
    #define DPTM_DOC_STEP(j) { int32_t t_ = nz[j]; if (PF) __builtin_prefetch(pf + t_, 0, 3); \
                               q += (double) f[t_] * cnt[j]; cum[j] = q; }
    #define DPTM_DOC_LOOP \
        for (j = 0; j < n; j += 4) { \
            DPTM_DOC_STEP(j) DPTM_DOC_STEP(j + 1) DPTM_DOC_STEP(j + 2) DPTM_DOC_STEP(j + 3) \
        }
    static inline double dptm_doc_bucket(const float *__restrict f, const double *__restrict cnt,
            const int32_t *__restrict nz, Py_ssize_t n, double *__restrict cum,
            const float *pf) {
        double q = 0.0;
        Py_ssize_t j;
        if (pf != NULL) {
    #define PF 1
            DPTM_DOC_LOOP
    #undef PF
        } else {
    #define PF 0
            DPTM_DOC_LOOP
    #undef PF
        }
        return q;
    }
    #undef DPTM_DOC_STEP
    #undef DPTM_DOC_LOOP
    /* #{j < 4 ceil(n / 4) : cum[j] <= u}, counted without a branch per entry (SSE2: two
       compares an instruction): in non-decreasing cum, the first index with cum > u, or
       >= n if cum[n - 1] <= u. */
    static inline Py_ssize_t dptm_count_le(const double *cum, Py_ssize_t n, double u) {
        Py_ssize_t t, j = 0;
    #if defined(__SSE2__) && defined(__x86_64__)
        __m128d uu = _mm_set1_pd(u);
        __m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();
        for (t = 0; t < n; t += 4) {
            a = _mm_sub_epi64(a, _mm_castpd_si128(_mm_cmple_pd(_mm_loadu_pd(cum + t), uu)));
            b = _mm_sub_epi64(b, _mm_castpd_si128(_mm_cmple_pd(_mm_loadu_pd(cum + t + 2), uu)));
        }
        a = _mm_add_epi64(a, b);
        j = (Py_ssize_t) (_mm_cvtsi128_si64(a) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a)));
    #else
        for (t = 0; t < 4 * ((n + 3) >> 2); t++) j += cum[t] <= u;
    #endif
        return j;
    }
    /* A document's counts while its tokens are sampled: the non-zero topics of its count
       row c (K topics) in increasing order into nz, their counts as doubles into cnt (same
       order), then the padding, pos[t] = the index of t in nz for those topics (other
       entries untouched), and the counts taken out of the topic totals n_k (dptm_doc_put
       puts the document's counts back, so the tokens update neither c nor n_k); returns
       their number. 64 topics a step: a mask of the non-zero ones, then its set bits. */
    static inline Py_ssize_t dptm_doc_take(const int32_t *__restrict c, Py_ssize_t K,
            int32_t *__restrict nz, double *__restrict cnt, int32_t *__restrict pos,
            int64_t *__restrict n_k) {
        Py_ssize_t n = 0, t0, i;
        for (t0 = 0; t0 < K; t0 += 64) {
            Py_ssize_t len = K - t0 < 64 ? K - t0 : 64;
            uint64_t m = 0;
            i = 0;
    #if defined(__SSE2__)
            {
                __m128i zero = _mm_setzero_si128();
                for (; i + 4 <= len; i += 4) {
                    __m128i v = _mm_loadu_si128((const __m128i *) (c + t0 + i));
                    m |= (uint64_t) _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, zero)))
                         << i;
                }
            }
    #endif
            for (; i < len; i++) m |= (uint64_t) (c[t0 + i] > 0) << i;
            while (m) {
                int32_t t = (int32_t) (t0 + __builtin_ctzll(m));
                pos[t] = (int32_t) n;
                cnt[n] = (double) c[t];
                n_k[t] -= c[t];
                nz[n++] = t;
                m &= m - 1;
            }
        }
        for (i = 0; i < DPTM_LIST_PAD; i++) {
            nz[n + i] = 0;
            cnt[n + i] = 0.0;
        }
        return n;
    }
    /* The end of a document: its counts (cnt, over the n topics of nz) back into its count
       row c and the topic totals n_k. */
    static inline void dptm_doc_put(int32_t *__restrict c, int64_t *__restrict n_k,
            const int32_t *__restrict nz, const double *__restrict cnt, Py_ssize_t n) {
        for (Py_ssize_t j = 0; j < n; j++) {
            int32_t v = (int32_t) cnt[j];
            c[nz[j]] = v;
            n_k[nz[j]] += v;
        }
    }
    """
    int DPTM_LIST_PAD
    const double dptm_zero_one[2]
    int dptm_leave(double* cnt, Py_ssize_t jk, int same) noexcept nogil
    int dptm_draws(const double* cum, Py_ssize_t nx, Py_ssize_t n, double u, int same) noexcept nogil
    double dptm_doc_bucket(const float* f, const double* cnt, const int32_t* nz, Py_ssize_t n,
                           double* cum, const float* pf) noexcept nogil
    Py_ssize_t dptm_count_le(const double* cum, Py_ssize_t m, double u) noexcept nogil
    Py_ssize_t dptm_doc_take(const int32_t* c, Py_ssize_t K, int32_t* nz, double* cnt,
                             int32_t* pos, int64_t* n_k) noexcept nogil
    void dptm_doc_put(int32_t* c, int64_t* n_k, const int32_t* nz, const double* cnt,
                      Py_ssize_t n) noexcept nogil


# Word-factor rows of at most this many topics are prefetched whole for a later token (a
# few cache lines); longer rows at the document's topics only (measured on KOS, K = 50-1000).
DEF PREFETCH_MAX_TOPICS = 128
# Uniforms drawn ahead when every token is resampled (one uniform per token).
DEF UNIFORM_BATCH = 64
# The row prefetches are for the token this many tokens ahead, when every token is resampled.
DEF PREFETCH_AHEAD = 10


cdef inline Py_ssize_t _first_above(const double* sums, Py_ssize_t n, double u) noexcept nogil:
    """The first i with sums[i] > u in non-decreasing ``sums`` (n - 1 if none), by binary
    search: the linear scan's answer in O(log n)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if sums[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef Py_ssize_t _word_bucket(const float* frow, const double* crow, Py_ssize_t K,
                             double u) noexcept nogil:
    """The word bucket's topic: the first t with sum_{t' <= t} frow[t'] > u (running sums
    in double, left to right; K - 1 if none). ``crow`` (NULL: linear scan) holds the
    running sums at the end of each block of WORD_BLOCK topics: the first block whose end
    sum exceeds u (the last block if none), then the scan inside it continued from the
    previous block's end sum (the same doubles, so the linear scan's result)."""
    cdef Py_ssize_t t, lo = 0, t1 = K
    cdef double acc = 0.0
    if crow != NULL:
        lo = _first_above(crow, (K + WORD_BLOCK - 1) // WORD_BLOCK, u)
        acc = crow[lo - 1] if lo > 0 else 0.0
        t1 = min(lo * WORD_BLOCK + WORD_BLOCK, K)
        lo = lo * WORD_BLOCK
    for t in range(lo, t1):
        acc = acc + frow[t]
        if acc > u:
            return t
    return t1 - 1


cdef inline Py_ssize_t _leave(double* cnt, int32_t* nz, int32_t* pos, int32_t* drow,
                              Py_ssize_t k, bint same, Py_ssize_t* jp, Py_ssize_t n_nz,
                              Py_ssize_t none) noexcept nogil:
    """A token of topic ``k`` leaves ``_noisy_block``'s document list (``same``: its entry
    is the one owed a count, ``jp[0]``, and the two cancel); an emptied entry is replaced
    by the list's last. Returns the list's new length."""
    cdef Py_ssize_t jk = pos[k]
    if same:
        jp[0] = none
    if dptm_leave(cnt, jk, same):
        drow[k] = 0                             # out of the list: not put back
        n_nz -= 1
        nz[jk] = nz[n_nz]
        cnt[jk] = cnt[n_nz]
        pos[nz[jk]] = <int32_t> jk
        nz[n_nz] = 0                            # a padding entry again
        cnt[n_nz] = 0.0
        if jp[0] == n_nz:
            jp[0] = jk
    return n_nz


# _noisy_block's two compiled forms: every token resampled (_Every, mode 0: no selection
# draw, test or call in the token's code) and the selection modes 1-3 (_Some); the tag
# pointer (NULL) only picks the form
cdef struct _Every:
    char unused
cdef struct _Some:
    char unused
ctypedef fused sel_t:
    _Every
    _Some


cdef Py_ssize_t _noisy_block(const int64_t* doc_ptr, Py_ssize_t d_lo, Py_ssize_t d_hi,
                             const int32_t* words, int32_t* z, int32_t* n_wk, int32_t* n_dk,
                             int64_t* n_k, const float* word_factor, const double* word_mass,
                             const double* rate_table, Py_ssize_t K,
                             double alpha, int mode, double scale, bitgen_t* rng, double* cum,
                             int32_t* nz, double* cnt, int32_t* pos, bint shared,
                             const double* word_blk, sel_t* form) noexcept nogil:
    """The sweep of ``noisy_gibbs_sweep`` over documents [d_lo, d_hi) with one stream
    (``form``: a NULL ``_Every*`` for mode 0, a NULL ``_Some*`` for the others).

    ``n_k`` receives the topic-total changes (the totals themselves, or a zeroed delta
    buffer); ``shared``: other threads update ``n_wk`` concurrently (atomic adds); ``n_wk``
    NULL: not updated (the caller does it from the topics).
    ``word_blk`` (NULL: linear scan for the word bucket) holds each word's running sums of
    its word-factor row (double, topic order) at the end of each block of WORD_BLOCK
    topics (``_word_bucket``). Scratch: ``cum`` (K + DPTM_LIST_PAD doubles), ``cnt`` and
    ``nz`` (K + DPTM_LIST_PAD + 1 each: the list, its padding, the slot of no owed
    count), ``pos`` (K). Returns the number of tokens resampled."""
    cdef Py_ssize_t d, k, w, j, jk, knew, wn = 0, n_nz = 0
    # the list entry owed one count; none: the slot after the padding (topic 0, a count
    # nobody reads), so that owing, paying and weighing it need no branch
    cdef Py_ssize_t none = K + DPTM_LIST_PAD, jp = none
    cdef double owed
    # long rows only: the owed count saves the wait on the previous draw, which short
    # rows (a short bucket) do not pay back (KOS, K = 50: 13.0 ms owed, 12.3 paid at once)
    cdef bint owe = K > PREFETCH_MAX_TOPICS
    cdef Py_ssize_t nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef Py_ssize_t n_sampled = 0
    cdef int64_t i, ip, cur, end, doc_end, sel_left = 0
    cdef double q, u, a_w
    cdef bint hit = False
    cdef double ubuf[UNIFORM_BATCH]
    cdef Py_ssize_t ub = 0, ue = 0
    cdef const float* frow
    cdef const float* pf
    cdef int32_t* drow = NULL
    # pos is read for any topic of the word bucket (checked against nz): defined values
    memset(pos, 0, K * sizeof(int32_t))
    cum[0] = 0.0                                # read by dptm_draws for an empty list
    nz[none] = 0
    cnt[none] = 0.0
    i = doc_ptr[d_lo]
    end = doc_ptr[d_hi]
    d = d_lo - 1
    doc_end = i                                 # no document loaded yet
    if sel_t is _Some:
        if mode == 3 and i < end:
            sel_left = _geometric_capped(rng, scale, end - i)
        i = _next_selected(rng, mode, scale, i, end, &sel_left)
    while i < end:
        cur = i
        if sel_t is _Every:
            i = cur + 1
            # every token selected: the rows are requested ten tokens ahead (a token's
            # sampling is much shorter than a load from memory; KOS, K = 500 / 1000: 2
            # ahead 21.0 / 29.8 ms, 6 ahead 19.4 / 25.2 ms; with the shorter token of
            # session 16, 6 ahead 15.94 / 20.94 ms, 10 ahead 15.22 / 19.49, 14 ahead
            # 20.37 at K = 1000; K = 50 / 100 the same)
            ip = i + PREFETCH_AHEAD - 1 if i + PREFETCH_AHEAD - 1 < end else i
        else:
            # locating the next selected token first keeps the selection draws off
            # this token's critical path (measured: the per-token cost otherwise grows
            # as the rate falls)
            i = _next_selected(rng, mode, scale, cur + 1, end, &sel_left)
            ip = i
        if ip < end:
            # that token's rows load while this one is sampled (its word is random: the
            # secret visiting order): its word factor at the topics it will read and its
            # count row (whole rows when short; for long rows the document's topics, if it
            # is in the same document, and the count it will decrement), its mass
            wn = words[ip]
            if K <= PREFETCH_MAX_TOPICS:
                dptm_prefetch_r(word_factor + wn * K, K * sizeof(float))
            dptm_prefetch_r(word_mass + wn, 1)
            if n_wk != NULL:
                if K <= PREFETCH_MAX_TOPICS:
                    dptm_prefetch_w(n_wk + wn * K, K * sizeof(int32_t))
                else:
                    dptm_prefetch_w(n_wk + wn * K + z[ip], 1)
        w = words[cur]
        k = z[cur]
        if sel_t is _Some:
            if mode == 1:
                if next_uniform(rng) >= rate_table[w * K + k]:
                    continue
        if cur >= doc_end:
            # first selected token of a document: the previous one's counts put back, this
            # one's non-zero topics and counts taken (the tokens update only the copy: no
            # count row or total written at an address known only after the draw)
            if drow != NULL:
                cnt[jp] += 1.0
                jp = none
                dptm_doc_put(drow, n_k, nz, cnt, n_nz)
            d += 1
            while doc_ptr[d + 1] <= cur:
                d += 1
            doc_end = doc_ptr[d + 1]
            drow = n_dk + d * K
            n_nz = dptm_doc_take(drow, K, nz, cnt, pos, n_k)
            if sel_t is _Every:
                if owe:
                    n_nz = _leave(cnt, nz, pos, drow, k, False, &jp, n_nz, none)
        n_sampled += 1
        frow = word_factor + w * K
        a_w = alpha * word_mass[w]
        # the token leaves its topic: a count owed to that entry cancels it (every token
        # resampled, long rows: the previous token of its document did it, see below)
        if sel_t is _Some:
            n_nz = _leave(cnt, nz, pos, drow, k, pos[k] == jp, &jp, n_nz, none)
        elif not owe:                           # nothing owed: no cancel to select
            n_nz = _leave(cnt, nz, pos, drow, k, False, &jp, n_nz, none)
        # long rows: that token's word factor at this document's topics, prefetched in
        # the bucket's pass (if it is in this document)
        pf = word_factor + wn * K if K > PREFETCH_MAX_TOPICS and ip < doc_end else NULL
        # the list's entries with the counts in cnt (not waiting for the previous token's
        # draw), then the count the previous token added, owed to entry jp, as one more
        # entry after them (long rows): the document bucket's total is the same
        q = dptm_doc_bucket(frow, cnt, nz, n_nz, cum, pf)
        owed = dptm_zero_one[jp != none]
        q = q + <double> frow[nz[jp]] * owed
        if sel_t is _Every:
            # every token draws one uniform and nothing else: drawn ahead in batches (the
            # same uniforms in the same order, none past the block's last token), so the
            # generator's call is not in the token's code
            if ub == ue:
                ue = min(UNIFORM_BATCH, end - cur)
                for ub in range(ue):
                    ubuf[ub] = next_uniform(rng)
                ub = 0
            u = ubuf[ub] * (q + a_w)
            ub += 1
        else:
            u = next_uniform(rng) * (q + a_w)
        cnt[jp] += owed                         # paid (the address is known early)
        if u < q:
            # the first j with cum[j] > u, counted without a branch: cum increases, so the
            # entries <= u are a prefix (no mispredicted loop exit); j >= n_nz: the owed
            # entry's topic. The drawn entry is owed a count in turn (long rows; short
            # rows: added at once), its count is > 0: the topic stays in the list.
            if sel_t is _Every:
                # whether the next token (same document) leaves the entry this draw is
                # owed to, from u and three sums: its leaving waits on this, not on the
                # count (KOS, K = 500, one thread: 15.73 -> 14.75 ms, the same draws)
                hit = False
                if owe and i < doc_end:
                    jk = pos[z[i]]
                    hit = dptm_draws(cum, jk, n_nz, u, jk == jp)
            j = dptm_count_le(cum, n_nz, u)
            j = j if j < n_nz else jp
            knew = nz[j]
            jp = j
            if not owe:
                cnt[jp] += 1.0
                jp = none
        else:
            jp = none
            hit = False
            knew = _word_bucket(frow, word_blk + w * nb if word_blk != NULL else NULL, K,
                                (u - q) / alpha)
            j = pos[knew]                       # stale for a topic not in the list
            if j < n_nz and nz[j] == knew:
                cnt[j] += 1.0
            else:
                pos[knew] = <int32_t> n_nz
                nz[n_nz] = <int32_t> knew
                cnt[n_nz] = 1.0
                n_nz += 1
                nz[n_nz + DPTM_LIST_PAD - 1] = 0    # the padding's new last entry
                cnt[n_nz + DPTM_LIST_PAD - 1] = 0.0
        if shared and n_wk != NULL:
            if knew != k:
                z[cur] = <int32_t> knew
                dptm_atomic_add_i32(n_wk + w * K + k, -1)
                dptm_atomic_add_i32(n_wk + w * K + knew, 1)
        else:
            # without a branch on whether the topic changed (a coin flip for the
            # predictor): a token that kept it takes 1 off and adds it back
            z[cur] = <int32_t> knew
            if n_wk != NULL:                    # else updated by the caller after the sweep
                n_wk[w * K + k] -= 1
                n_wk[w * K + knew] += 1
        if sel_t is _Every:
            if owe and i < doc_end:
                # the next token leaves its topic now (nothing changes the list between;
                # short rows owe nothing: there it leaves in its own turn, KOS K = 50:
                # 12.6 ms, 13.3 leaving early)
                n_nz = _leave(cnt, nz, pos, drow, z[i], hit, &jp, n_nz, none)
    if drow != NULL:
        cnt[jp] += 1.0
        dptm_doc_put(drow, n_k, nz, cnt, n_nz)
    return n_sampled


cdef inline Py_ssize_t _noisy_block_any(const int64_t* doc_ptr, Py_ssize_t d_lo,
                                        Py_ssize_t d_hi, const int32_t* words, int32_t* z,
                                        int32_t* n_wk, int32_t* n_dk, int64_t* n_k,
                                        const float* word_factor, const double* word_mass,
                                        const double* rate_table, Py_ssize_t K, double alpha,
                                        int mode, double scale, bitgen_t* rng, double* cum,
                                        int32_t* nz, double* cnt, int32_t* pos, bint shared,
                                        const double* word_blk) noexcept nogil:
    """``_noisy_block`` in the form for ``mode`` (mode 0: every token resampled)."""
    if mode == 0:
        return _noisy_block(doc_ptr, d_lo, d_hi, words, z, n_wk, n_dk, n_k, word_factor,
                            word_mass, rate_table, K, alpha, mode, scale, rng, cum, nz, cnt,
                            pos, shared, word_blk, <_Every*> NULL)
    return _noisy_block(doc_ptr, d_lo, d_hi, words, z, n_wk, n_dk, n_k, word_factor,
                        word_mass, rate_table, K, alpha, mode, scale, rng, cum, nz, cnt, pos,
                        shared, word_blk, <_Some*> NULL)


cdef _check_word_groups(const int64_t[::1] word_ptr, const int64_t[::1] word_tokens,
                        Py_ssize_t V, Py_ssize_t n_tokens):
    if word_ptr.shape[0] != V + 1 or word_tokens.shape[0] != n_tokens \
            or word_ptr[0] != 0 or word_ptr[V] != n_tokens:
        raise ValueError("word_ptr / word_tokens must group the token positions by word")


cdef _check_noisy_args(const int32_t[:, ::1] n_wk, const float[:, ::1] word_factor,
                       const double[::1] word_mass, double alpha, const double[:, ::1] rate_table):
    cdef Py_ssize_t V = n_wk.shape[0], K = n_wk.shape[1]
    if word_factor.shape[0] != V or word_factor.shape[1] != K:
        raise ValueError("word_factor must have the shape of n_wk")
    if word_mass.shape[0] != V:
        raise ValueError("word_mass must have one entry per word")
    if not alpha > 0.0:
        raise ValueError("alpha must be > 0")
    if rate_table.shape[0] > 0 and (rate_table.shape[0] != V or rate_table.shape[1] != K):
        raise ValueError("rate_table must be empty or have the shape of n_wk")


def noisy_gibbs_sweep(const int64_t[::1] doc_ptr, const int32_t[::1] words, int32_t[::1] z,
                      int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk, int64_t[::1] n_k,
                      const float[:, ::1] word_factor, const double[::1] word_mass, double alpha,
                      double rate, const double[:, ::1] rate_table, object bit_generator):
    """One sweep sampling each token's topic with the word factor fixed for the sweep.

    Selection (Poisson subsampling: each token independently with probability ``rate``):

    - ``rate_table`` (V x K) given: a token with word ``w`` and topic ``k`` is selected if
      a uniform, drawn just before its topic, is ``< rate_table[w, k]``;
    - else ``rate >= 1``: every token, no selection draws; ``rate`` not > 0 (0, NaN): none;
    - else ``rate <= 0.75`` (gaps): the next selected token is ``G`` tokens after the
      current position, ``G = floor(E * -1/log1p(-rate))`` (E a standard exponential, so
      G is Geometric: P(G >= g) = (1 - rate)^g, see ``_geometric_capped``);
    - else (runs): ``R = floor(E * -1/log(rate))`` consecutive tokens are selected
      (P(R >= r) = rate^r), then one token is skipped and a new R is drawn.

    Both give exactly independent Bernoulli(rate) selections with one exponential per
    selected (gaps) or skipped (runs) token; skipped tokens, and documents without a selected
    token, are not read. Draw order: the first selection draw (for runs: R, then the gap
    draws needed to reach the first selected token), then for each selected token the
    selection draws that locate the *next* selected token, then this token's topic uniform
    (selection is one token ahead of sampling; with every token selected the topic uniforms
    are drawn up to 64 at a time, the same numbers in the same order). Nothing is drawn
    past the last token.

    A selected token ``i`` of document ``d`` with word ``w`` and topic ``k`` is removed from
    its document's counts and redrawn from ``p_t ∝ F[w, t] (n_dk[d, t] + alpha)``
    (``F = word_factor``, live document counts), then the true counts ``n_wk``, ``n_dk``,
    ``n_k`` are updated; they only feed the next snapshot. Because F is fixed, p splits
    into a document bucket ``F[w, t] n_dk[d, t]`` over the document's non-zero topics and
    a word bucket ``alpha F[w, t]`` of total A_w = alpha * word_mass[w] (``word_mass`` from
    ``noisy_snapshot``). The document bucket is a list: entries j = 0, 1, ... with topic
    nz[j] and count c[j], weight x_j = F[w, nz[j]] c[j] (a double product, exact). With
    K > 128 (long rows), when the previous selected token of the document was drawn from
    the document bucket (entry j*), the count it added is owed to that entry: c[j*] does
    not hold it yet, and it is one more entry after the list, of topic nz[j*] and weight
    F[w, nz[j*]] (so each topic still weighs F[w, t] n_dk[d, t]); with K <= 128 a drawn
    count is added to c[j*] at once and nothing is ever owed. With one uniform u on [0, Q + A_w), Q the
    running sum (double, left to right) of the list's weights, then the owed entry's, the
    topic is that of the first entry whose running sum exceeds u if u < Q, else the first
    t with sum_{t' <= t} F[w, t'] > (u - Q) / alpha (K - 1 if none). The token leaving its
    topic first cancels a count owed to that topic's entry, else takes 1 off its entry;
    an owed count is paid into c after the weights are summed; a draw from the owed entry
    owes the count to entry j* again. The list is built in increasing topic order at the
    first selected token of each document (nothing owed); an entry whose count drops to 0
    is replaced by the last entry (an owed count moving with it), a topic the word bucket
    draws and the list lacks is appended with count 1 (nothing owed after a word-bucket
    draw). The owed entry keeps a token's document bucket from waiting for the previous
    token's draw (worth it for long rows only); the document's counts are put back into
    ``n_dk`` and ``n_k`` at its end.
    O(K_d) per selected token (K_d: non-zero topics of the document) plus O(K) with
    probability A_w / (Q + A_w), plus O(K) per document with a selected token.
    ``noisy_gibbs_sweep_blocks`` runs the same sweep on blocks of documents in parallel.

    Returns
    -------
    int : number of tokens resampled.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, K = n_wk.shape[1]
    cdef Py_ssize_t n_sampled = 0
    cdef double scale = 0.0
    cdef int mode            # 0 every token, 1 rate table, 2 geometric gaps, 3 geometric runs
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    _check_noisy_args(n_wk, word_factor, word_mass, alpha, rate_table)
    mode = _selection_mode(rate, rate_table.shape[0] > 0, &scale)
    if mode < 0 or D <= 0 or K <= 0:
        return 0
    cdef const int32_t* wp = &words[0] if words.shape[0] else NULL
    cdef int32_t* zp = &z[0] if z.shape[0] else NULL
    cdef double* cum = <double*> malloc((K + DPTM_LIST_PAD) * sizeof(double))
    cdef int32_t* nz = <int32_t*> malloc((K + DPTM_LIST_PAD + 1) * sizeof(int32_t))
    cdef double* cnt = <double*> malloc((K + DPTM_LIST_PAD + 1) * sizeof(double))
    cdef int32_t* pos = <int32_t*> malloc(K * sizeof(int32_t))
    if cum == NULL or nz == NULL or cnt == NULL or pos == NULL:
        free(cum); free(nz); free(cnt); free(pos)
        raise MemoryError()
    try:
        with bit_generator.lock, nogil:
            n_sampled = _noisy_block_any(&doc_ptr[0], 0, D, wp, zp, &n_wk[0, 0], &n_dk[0, 0],
                                         &n_k[0], &word_factor[0, 0], &word_mass[0],
                                         &rate_table[0, 0] if mode == 1 else NULL, K, alpha,
                                         mode, scale, rng, cum, nz, cnt, pos, False, NULL)
    finally:
        free(cum)
        free(nz)
        free(cnt)
        free(pos)
    return n_sampled


def noisy_gibbs_sweep_blocks(const int64_t[::1] doc_ptr, const int32_t[::1] words,
                             int32_t[::1] z, int32_t[:, ::1] n_wk, int32_t[:, ::1] n_dk,
                             int64_t[::1] n_k, const float[:, ::1] word_factor,
                             const double[::1] word_mass, double alpha, double rate,
                             const double[:, ::1] rate_table, const int64_t[::1] block_ptr,
                             list bit_generators, int n_threads, *,
                             const int64_t[::1] word_ptr=None,
                             const int64_t[::1] word_tokens=None,
                             int32_t[:, ::1] thread_counts=None,
                             const double[:, ::1] word_blocks=None, bint recount=False):
    """``noisy_gibbs_sweep`` on blocks of documents, in parallel, exactly.

    Block ``b`` holds documents ``block_ptr[b]:block_ptr[b + 1]`` and draws everything
    (its selection process, restarted at its first token, and its topics) from its own
    ``bit_generators[b]``, as ``noisy_gibbs_sweep`` would over those documents alone. The
    word factor is fixed for the sweep and a block reads and writes only its documents'
    ``z`` and ``n_dk`` rows, so the blocks are independent given the snapshot: running them
    on ``n_threads`` OpenMP threads (any order) gives the same ``z`` and ``n_dk``, and the
    true counts ``n_wk`` (atomic integer adds) and ``n_k`` (per-block changes summed after
    the sweep) are the same as well. The result depends on the blocks and their streams,
    never on ``n_threads``; with one block and one generator it is ``noisy_gibbs_sweep``'s.

    The optional arguments are keyword-only.

    ``word_blocks`` (V x ceil(K / 16), optional; None: the linear scan): ``word_factor``
    rows' running sums in double, topic order, at the end of each block of 16 topics
    (``word_block_sums``, or ``noisy_snapshot``'s factor pass); the word bucket is a binary
    search over the blocks, then a scan of one block's word factor continuing the previous
    block's sum: the same doubles and comparisons, so the linear scan's result, in
    O(log K + 16) instead of O(K).

    ``word_ptr``, ``word_tokens`` (optional): the token positions grouped by word (word
    ``w``'s tokens are ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``). The sweep never reads
    ``n_wk`` (it samples from the fixed word factor), so with them the blocks only write
    ``z`` and ``n_dk`` and each row of ``n_wk`` is counted again after the sweep from its
    word's topics, in parallel over words (no atomic adds, no cache line written by two
    threads; on one thread, rows written in word order instead of a random count per
    token, the cheaper way for long rows). Without them, ``n_wk`` is updated as tokens
    move (atomic adds on several threads). ``n_wk`` must hold the counts of ``z`` (as in a
    fit): the result is then the same integer counts either way.

    ``recount`` (without ``word_ptr`` and ``thread_counts``): ``n_wk`` is neither read nor
    written; the caller's next ``noisy_snapshot`` counts it from ``z`` (its ``topics``
    argument) in the pass that draws each row's noise, instead of a pass over ``n_wk``
    here and another there.

    ``thread_counts`` (optional, without ``word_ptr``; (n_threads - 1) x (V K) int32, all
    zero): thread 0 updates ``n_wk`` as tokens move and thread t > 0 its row t - 1 of
    ``thread_counts`` (plain adds: each thread owns its counts), added into ``n_wk`` after
    the sweep, in parallel over words, and zeroed again for the next sweep. The same integer
    counts again, without atomic adds or a pass over the tokens by word (short rows: on 2
    threads at K = 50, the sweep at the per-token cost of one thread).

    The generators are used without their locks: they must belong to this sweep alone.

    Returns
    -------
    int : number of tokens resampled.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1, V = n_wk.shape[0], K = n_wk.shape[1]
    cdef Py_ssize_t n_blocks = block_ptr.shape[0] - 1, b, k, n_sampled = 0
    cdef double scale = 0.0
    cdef int mode
    _check_noisy_args(n_wk, word_factor, word_mass, alpha, rate_table)
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    if n_blocks < 0 or len(bit_generators) != n_blocks:
        raise ValueError("need one bit generator per block")
    if n_blocks == 0 or block_ptr[0] != 0 or block_ptr[n_blocks] != D:
        raise ValueError("block_ptr must start at 0 and end at the number of documents")
    for b in range(n_blocks):
        if block_ptr[b + 1] < block_ptr[b]:
            raise ValueError("block_ptr must be non-decreasing")
    cdef Py_ssize_t n_wblk = (K + WORD_BLOCK - 1) // WORD_BLOCK
    if word_blocks is not None and (word_blocks.shape[0] != V or word_blocks.shape[1] != n_wblk):
        raise ValueError(f"word_blocks must have shape (V, ceil(K / {WORD_BLOCK})) = "
                         f"({V}, {n_wblk})")
    mode = _selection_mode(rate, rate_table.shape[0] > 0, &scale)
    if mode < 0 or D <= 0 or K <= 0:
        return 0
    cdef bitgen_t** rngs = <bitgen_t**> malloc(n_blocks * sizeof(bitgen_t*))
    # per-block topic-total changes, each block's in cache lines of its own (adjacent
    # blocks run at the same time on two threads: a shared line would move between the
    # cores at every token changing a topic at its ends)
    cdef Py_ssize_t Kp = (K + 7) & ~(<Py_ssize_t> 7)
    cdef void* dk_raw = NULL
    cdef int64_t* dk = <int64_t*> _own_lines(n_blocks * Kp * sizeof(int64_t), &dk_raw)
    if rngs == NULL or dk == NULL:
        free(rngs); free(dk_raw)
        raise MemoryError()
    memset(dk, 0, n_blocks * Kp * sizeof(int64_t))
    cdef const int32_t* wp = &words[0] if words.shape[0] else NULL
    cdef int32_t* zp = &z[0] if z.shape[0] else NULL
    cdef const double* bp = (&word_blocks[0, 0] if word_blocks is not None and V > 0
                             else NULL)
    cdef const double* rp = &rate_table[0, 0] if mode == 1 else NULL
    cdef double* cum
    cdef int32_t* nz
    cdef int32_t* pos
    cdef double* cnt
    if recount and (word_ptr is not None or word_tokens is not None
                    or thread_counts is not None):
        free(rngs); free(dk_raw)
        raise ValueError("recount takes neither word_ptr / word_tokens nor thread_counts")
    cdef bint deferred = word_ptr is not None and word_tokens is not None
    cdef bint per_thread = (thread_counts is not None and not deferred and n_threads > 1
                            and V * K > 0)
    cdef bint shared = n_threads > 1 and not per_thread
    cdef int32_t* tc = NULL
    cdef int32_t* mine
    cdef int32_t* src
    cdef Py_ssize_t tid, VK = V * K, n_tc = 0, c
    cdef int32_t* wk_target = &n_wk[0, 0]
    cdef Py_ssize_t w, j
    # per-thread scratch (the running sums, the document's non-zero topics, their
    # positions and counts), each thread's in cache lines of its own; tokens resampled per
    # block
    cdef size_t scratch_bytes = (((2 * K + 2 * DPTM_LIST_PAD + 1) * sizeof(double)
                                  + (2 * K + DPTM_LIST_PAD + 1) * sizeof(int32_t) + 63) // 64) * 64
    cdef void* scratch_raw = NULL
    cdef char* scratch = NULL
    cdef int64_t* sampled = NULL
    if deferred:
        try:
            _check_word_groups(word_ptr, word_tokens, V, words.shape[0])
        except ValueError:
            free(rngs); free(dk_raw)
            raise
    if deferred or recount:
        # the blocks write their n_wk changes nowhere: n_wk is counted again below (or by
        # the next snapshot)
        wk_target = NULL
    if per_thread:
        if thread_counts.shape[0] < n_threads - 1 or thread_counts.shape[1] != VK:
            free(rngs); free(dk_raw)
            raise ValueError(f"thread_counts must be at least (n_threads - 1) x (V K) = "
                             f"{n_threads - 1} x {VK}, got {thread_counts.shape[0]} x "
                             f"{thread_counts.shape[1]}")
        tc = &thread_counts[0, 0]
        n_tc = n_threads - 1
    try:
        scratch = <char*> _own_lines(n_threads * scratch_bytes, &scratch_raw)
        sampled = <int64_t*> calloc(n_blocks, sizeof(int64_t))
        if scratch == NULL or sampled == NULL:
            raise MemoryError()
        for b in range(n_blocks):
            rngs[b] = get_bitgen(bit_generators[b])
        tid = 0
        cum = NULL
        nz = pos = mine = NULL
        cnt = NULL
        with nogil:
            # one parallel region for the sweep and the count update (the worksharing
            # loops' barriers order them): one thread wake-up per sweep, not two
            with parallel(num_threads=n_threads):
                tid = threadid()
                cum = <double*> (scratch + tid * scratch_bytes)
                cnt = cum + K + DPTM_LIST_PAD
                nz = <int32_t*> (cnt + K + DPTM_LIST_PAD + 1)
                pos = nz + K + DPTM_LIST_PAD + 1
                # per-thread buffers: thread 0 writes n_wk, thread t > 0 row t - 1 of tc
                mine = tc + (tid - 1) * VK if per_thread and tid > 0 else wk_target
                for b in prange(n_blocks, schedule="dynamic"):
                    sampled[b] = _noisy_block_any(&doc_ptr[0], block_ptr[b], block_ptr[b + 1],
                                                  wp, zp, mine, &n_dk[0, 0], dk + b * Kp,
                                                  &word_factor[0, 0], &word_mass[0], rp, K,
                                                  alpha, mode, scale, rngs[b], cum, nz, cnt,
                                                  pos, shared, bp)
                dptm_omp_barrier()              # every block swept before the counts move
                if deferred:
                    # word frequencies are skewed: small chunks of words handed out as
                    # threads free up (KOS: the two static halves of the vocabulary hold
                    # 48% / 52% of the tokens, and chunks of 256 words did not scale: 2.05
                    # ms on one thread, 2.35 on two at K = 500); each row is still written
                    # by one thread, so the counts are the same
                    for w in prange(V, schedule="dynamic", chunksize=16):
                        if (w + 1) % 16 != 0 and w + 1 < V:
                            # the next row of the chunk loads while this one is counted
                            # (KOS one thread, K = 500 / 1000: 18.3 / 24.1 -> 17.6 / 23.4 ms)
                            dptm_prefetch_w(&n_wk[w + 1, 0], K * sizeof(int32_t))
                        # the row counted again from the word's topics (n_wk held their
                        # counts before the sweep: the same counts as taking each token
                        # off its old topic, with no copy of the old topics and one
                        # random load and add per token instead of two)
                        memset(&n_wk[w, 0], 0, K * sizeof(int32_t))
                        for j in range(word_ptr[w], word_ptr[w + 1]):
                            n_wk[w, zp[word_tokens[j]]] += 1
                if per_thread:
                    # every thread's changes into n_wk, the buffers zeroed for the next sweep
                    for w in prange(V, schedule="static"):
                        for j in range(n_tc):
                            src = tc + j * VK + w * K
                            for c in range(K):
                                n_wk[w, c] += src[c]
                                src[c] = 0
            for b in range(n_blocks):
                n_sampled += sampled[b]
                for k in range(K):
                    n_k[k] += dk[b * Kp + k]
    finally:
        free(rngs)
        free(dk_raw)
        free(scratch_raw)
        free(sampled)
    return n_sampled


def word_block_sums(const float[:, ::1] word_factor, double[:, ::1] out, int n_threads=1):
    """``out[w, b]`` = the running sum (double, left to right) of ``word_factor[w]`` at the
    end of topic block ``b`` (topics ``[16 b, 16 b + 16)`` cut at K), i.e. the columns
    15, 31, ..., K - 1 of ``word_factor.astype(np.float64).cumsum(axis=1)``: the two-level
    word-bucket table of ``noisy_gibbs_sweep_blocks`` (``noisy_snapshot`` fills it in its
    factor pass)."""
    cdef Py_ssize_t V = word_factor.shape[0], K = word_factor.shape[1], w, k
    cdef Py_ssize_t nb = (K + WORD_BLOCK - 1) // WORD_BLOCK
    cdef double acc
    if out.shape[0] != V or out.shape[1] != nb:
        raise ValueError(f"out must have shape (V, ceil(K / {WORD_BLOCK})) = ({V}, {nb})")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    with nogil:
        for w in prange(V, num_threads=n_threads, schedule="static"):
            acc = 0.0
            for k in range(K):
                acc = acc + word_factor[w, k]
                if k % WORD_BLOCK == WORD_BLOCK - 1 or k == K - 1:
                    out[w, k // WORD_BLOCK] = acc


def shuffle_segments(const int64_t[::1] ptr, int64_t[::1] values, object bit_generator):
    """Uniformly permute each segment ``values[ptr[i]:ptr[i+1]]`` in place (Fisher-Yates,
    unbiased bounded integers from ``random_interval``); the NumPy equivalent is
    ``rng.permutation`` per segment."""
    cdef Py_ssize_t d, i, j, start, n_seg = ptr.shape[0] - 1
    cdef int64_t tmp
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    with bit_generator.lock, nogil:
        for d in range(n_seg):
            start = ptr[d]
            for i in range(ptr[d + 1] - start - 1, 0, -1):
                j = <Py_ssize_t> random_interval(rng, <uint64_t> i)
                tmp = values[start + i]
                values[start + i] = values[start + j]
                values[start + j] = tmp


def uniform_sum(Py_ssize_t n, object bit_generator):
    """Sum of ``n`` uniform doubles drawn through the BitGenerator C API (``next_double``),
    the way the sweep kernels draw: the raw throughput of a generator in a kernel loop
    (bench/bench_private_gibbs.py)."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    with bit_generator.lock, nogil:
        for i in range(n):
            total += next_uniform(rng)
    return total
