# cython: language_level=3
"""Variational kernels: the per-document optimisation of theta behind the attack
statistic zeta, and the E-step of (private) stochastic variational inference.

Documents come as CSR pieces (``indptr``, ``indices``, ``counts``); topic-word
probabilities are word-major ``phi_t[w, k]``.
"""
import numpy as np

from libc.math cimport log, log1p, fabs, sqrt
from libc.math cimport exp as _c_exp, log as _c_log, fabs as _c_fabs, NAN as _C_NAN
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
from cython.parallel cimport prange, threadid


include "_kernels/svi_zeta.pxi"       # zeta: max over theta of the document log-likelihood
include "_kernels/svi_e_step.pxi"     # the E-step of (private) online LDA
include "_kernels/svi_testing.pxi"    # entry points for tests only
