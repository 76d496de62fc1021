#ifndef DPTM_CGS_PRIVATE_SWEEP_H
#define DPTM_CGS_PRIVATE_SWEEP_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

/* Shared-count update of the parallel sweeps: integer additions commute, so the
   result does not depend on the order threads reach a count. Without OpenMP the
   pragma is ignored and the add is plain (one thread). */
static inline void dptm_atomic_add_i32(int32_t *p, int32_t v) {
#pragma omp atomic
    *p += v;
}

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

/* The private sweep's document list: topics nz[j] with counts cnt[j] (double), j < n,
   followed by 4 padding entries (topic 0, count 0), so the list is read in whole rows
   of 4 (no loop tail whose length changes with n). */
#define DPTM_LIST_PAD 4
/* 0.0 and 1.0 indexed by a comparison: GCC compiles (double) (a != b) to a branch on
   a != b, which the token loop is to do without */
static const double dptm_zero_one[2] = {0.0, 1.0};
/* A token leaves list entry jk: its count less 1, or unchanged if same (jk is the
   entry owed a count: they cancel); returns whether the entry emptied. The next
   token's document bucket waits on the previous draw through this value: selected
   with integer masks on the two doubles' bits (c - 1.0 is computed before the draw),
   a few cycles shorter than a table load and a subtraction */
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

#endif  /* DPTM_CGS_PRIVATE_SWEEP_H */
