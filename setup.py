"""Build the Cython kernels. All metadata lives in pyproject.toml."""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# Cython directives are set here, once, for every kernel.
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
    "nonecheck": False,
}

# numpy's C distributions (random_standard_normal, ...) live in libnpyrandom.
NUMPY_RANDOM_LIB = os.path.join(os.path.dirname(np.__file__), "random", "lib")


def kernel(name):
    return Extension(
        f"dptm.{name}",
        [f"dptm/{name}.pyx"],
        include_dirs=[np.get_include()],
        library_dirs=[NUMPY_RANDOM_LIB],
        libraries=["npyrandom"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
        # strip symbols from the shipped .so (1.5 MB -> a few hundred kB); GNU ld only
        extra_link_args=["-Wl,--strip-all"] if sys.platform.startswith("linux") else [],
    )


setup(ext_modules=cythonize([kernel("_cgs"), kernel("_svi")], compiler_directives=DIRECTIVES))
