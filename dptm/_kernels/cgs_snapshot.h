#ifndef DPTM_CGS_SNAPSHOT_H
#define DPTM_CGS_SNAPSHOT_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

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

#endif  /* DPTM_CGS_SNAPSHOT_H */
