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
