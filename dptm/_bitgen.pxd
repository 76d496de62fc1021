# Access to numpy's BitGenerator C API, shared by the kernels.
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from numpy.random cimport bitgen_t


cdef inline bitgen_t* get_bitgen(object bit_generator) except NULL:
    """The ``bitgen_t`` behind a ``numpy.random.BitGenerator`` (hold ``bit_generator.lock``
    while drawing)."""
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise TypeError("bit_generator must be a numpy.random.BitGenerator")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")


cdef inline double next_uniform(bitgen_t* rng) noexcept nogil:
    """Uniform double in [0, 1)."""
    return rng.next_double(rng.state)
