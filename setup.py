"""Build the Cython kernels. All metadata lives in pyproject.toml."""
import glob
import os
import sys
import tempfile

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


def openmp_flags():
    """Compiler and linker flags for OpenMP, or ``([], [])`` when the compiler has none.

    The kernels' ``prange`` loops then run on one thread, so ``pip install .`` works with
    any C compiler (e.g. Apple clang without libomp). ``DPTM_NO_OPENMP=1`` forces the
    serial build.
    """
    if os.environ.get("DPTM_NO_OPENMP"):
        return [], []
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler
    flag = "/openmp" if sys.platform == "win32" else "-fopenmp"
    cc = new_compiler()
    customize_compiler(cc)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp_check.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            objs = cc.compile([src], output_dir=tmp, extra_postargs=[flag])
            cc.link_executable(objs, os.path.join(tmp, "omp_check"), extra_postargs=[flag])
        except Exception:  # noqa: BLE001 - any compiler/linker failure means "no OpenMP"
            print("dptm: the C compiler has no OpenMP; kernels are built single-threaded")
            return [], []
    return [flag], ([] if sys.platform == "win32" else [flag])


OMP_COMPILE, OMP_LINK = openmp_flags()


def kernel(name):
    return Extension(
        f"dptm.{name}",
        [f"dptm/{name}.pyx"],
        # the included .pxi and the .h they use: a change rebuilds the module
        depends=sorted(glob.glob(f"dptm/_kernels/{name.lstrip('_')}_*")),
        include_dirs=[np.get_include()],
        library_dirs=[NUMPY_RANDOM_LIB],
        # libm named: exp and log bind to their current versions (GLIBC_2.29), not the
        # errno-setting compatibility wrappers an unversioned reference gets
        libraries=["npyrandom"] + (["m"] if sys.platform != "win32" else []),
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # no fused multiply-add anywhere: every build gives the statistic's bits of the
        # reference (the headers also say so per function; MSVC does not contract by default)
        extra_compile_args=["-O3"] + ([] if sys.platform == "win32" else ["-ffp-contract=off"])
        + OMP_COMPILE,
        # strip symbols from the shipped .so (1.5 MB -> a few hundred kB); GNU ld only
        extra_link_args=OMP_LINK + (["-Wl,--strip-all"] if sys.platform.startswith("linux")
                                    else []),
    )


setup(ext_modules=cythonize([kernel("_cgs"), kernel("_svi")], compiler_directives=DIRECTIVES))
