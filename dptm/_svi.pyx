# cython: language_level=3
"""Variational kernels: the per-document optimisation of theta behind the attack
statistic zeta, and the E-step of (private) stochastic variational inference.

Documents come as CSR pieces (``indptr``, ``indices``, ``counts``); topic-word
probabilities are word-major ``phi_t[w, k]``.
"""
# The included .pxi files use these names (cython-lint reads one file at a time).
import numpy as np  # no-cython-lint

from libc.math cimport log, log1p, fabs, sqrt  # no-cython-lint
from libc.math cimport exp as _c_exp, log as _c_log  # no-cython-lint
from libc.math cimport fabs as _c_fabs, NAN as _C_NAN  # no-cython-lint
from libc.stdint cimport int32_t, int64_t  # no-cython-lint
from libc.stdlib cimport malloc, free  # no-cython-lint
from cython.parallel cimport prange, threadid  # no-cython-lint


include "_kernels/svi_zeta.pxi"       # zeta: max over theta of the document log-likelihood
include "_kernels/svi_e_step.pxi"     # the E-step of (private) online LDA
include "_kernels/svi_clipped_sum.pxi"  # the clipped, lattice-rounded statistic of batch VB
include "_kernels/svi_testing.pxi"    # entry points for tests only
