# cython: language_level=3
"""Collapsed Gibbs sampling kernels for LDA.

Data layout, shared by every kernel: tokens are flat arrays, document ``d`` owning
``words[doc_ptr[d]:doc_ptr[d+1]]`` with current topics ``z``; topic-word counts are
word-major ``n_wk[w, k]`` (the K counts of one word are contiguous), document-topic counts
``n_dk[d, k]``, topic totals ``n_k[k]``. Kernels take numpy's BitGenerator and draw from it
through its C API; they know nothing of estimators, privacy or I/O.
"""
# The included .pxi files use these names (cython-lint reads one file at a time).
from fractions import Fraction  # no-cython-lint

import numpy as np  # no-cython-lint

from libc.math cimport INFINITY, ceil, exp, log, log1p  # no-cython-lint
from libc.stdint cimport int16_t, int32_t, int64_t  # no-cython-lint
from libc.stdint cimport uint32_t, uint64_t, uintptr_t  # no-cython-lint
from libc.stdlib cimport abort, calloc, malloc, free  # no-cython-lint
from libc.string cimport memcpy, memset  # no-cython-lint
from cython.parallel cimport parallel, prange, threadid  # no-cython-lint
from numpy.random cimport bitgen_t  # no-cython-lint
from numpy.random.c_distributions cimport random_interval  # no-cython-lint
from numpy.random.c_distributions cimport random_standard_exponential  # no-cython-lint
from numpy.random.c_distributions cimport random_standard_normal  # no-cython-lint

from dptm._bitgen cimport get_bitgen, next_uniform  # no-cython-lint
from dptm.noise import exact as _exact  # no-cython-lint
from dptm.noise import gauss_inversion as _gauss_inversion  # no-cython-lint
from dptm.noise import laplace_table as _laplace_table  # no-cython-lint


# One file per subsystem, in dependency order (the include is textual).
include "_kernels/cgs_dense.pxi"            # serial dense sweep (blocked search)
include "_kernels/cgs_sparse.pxi"           # SparseLDA word lists and buckets
include "_kernels/cgs_adlda.pxi"            # AD-LDA: partitions, rounds, sparse sweep
include "_kernels/cgs_outputs.pxi"          # counts, outputs, fold-in
include "_kernels/cgs_exact.pxi"            # exact discrete Laplace / Gaussian samplers
include "_kernels/cgs_snapshot.pxi"         # the noisy snapshot and its word factor
include "_kernels/cgs_private_sweep.pxi"    # the sweep from a fixed noisy snapshot
include "_kernels/cgs_helpers.pxi"          # shuffles
include "_kernels/cgs_testing.pxi"          # entry points for tests and benchmarks only
