#ifndef DPTM_CGS_ADLDA_H
#define DPTM_CGS_ADLDA_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

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

/* Cython's prange inside a `with parallel()` block is `omp for nowait`: no barrier
   between two loops (GCC's firstprivate happens to add one; the standard does not). */
static inline void dptm_omp_barrier(void) {
#ifdef _OPENMP
#pragma omp barrier
#endif
}

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

#endif  /* DPTM_CGS_ADLDA_H */
