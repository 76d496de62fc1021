#ifndef DPTM_CGS_EXACT_H
#define DPTM_CGS_EXACT_H

#include <Python.h>   /* Py_ssize_t; the generated module includes it first */
#include <stdint.h>

static inline int dptm_clz64(unsigned long long x) { return __builtin_clzll(x); }

static inline uint64_t dptm_hi64(unsigned __int128 a) { return (uint64_t)(a >> 64); }
static inline uint64_t dptm_lo64(unsigned __int128 a) { return (uint64_t)a; }
static inline double dptm_u128_to_double(unsigned __int128 a) { return (double)a; }

static inline int dptm_ctz64(unsigned long long x) { return __builtin_ctzll(x); }

#endif  /* DPTM_CGS_EXACT_H */
