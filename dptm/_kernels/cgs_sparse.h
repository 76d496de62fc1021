#ifndef DPTM_CGS_SPARSE_H
#define DPTM_CGS_SPARSE_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

/* Index of topic k among the n (topic, count) pairs of wl, n if absent. Eight pairs
   a step without a branch per pair: a frequent word's list holds hundreds of topics,
   and every move applied to a list searches it twice. Topics are unique in a
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

#endif  /* DPTM_CGS_SPARSE_H */
