"""The noise package's old module names, its import cost and its single rules."""
import math
import subprocess
import sys

import pytest

import dptm.noise.mechanisms as mech

OLD_NAMES = {
    "dptm.mechanisms": "dptm.noise.mechanisms",
    "dptm._random": "dptm.noise.secret",
    "dptm._laplace_table": "dptm.noise.laplace_table",
    "dptm._gauss_table": "dptm.noise.gauss_table",
    "dptm._gauss_inversion": "dptm.noise.gauss_inversion",
    "dptm._exact": "dptm.noise.exact",
    "dptm.local": "dptm.noise.local_randomizers",
}


@pytest.mark.parametrize("old, new", sorted(OLD_NAMES.items()))
def test_old_module_name_is_the_same_module(old, new):
    import importlib
    assert importlib.import_module(old) is importlib.import_module(new)


def test_old_from_imports_give_the_same_objects():
    from dptm import _random, mechanisms
    from dptm.mechanisms import __all__ as names
    from dptm.noise import secret
    assert _random.private_fit is secret.private_fit
    assert sorted(names) == sorted(mech.__all__)
    assert all(getattr(mechanisms, n) is getattr(mech, n) for n in names)


def test_importing_the_mechanisms_loads_no_kernel():
    code = ("import sys, dptm.mechanisms, dptm._random, dptm.noise.gauss_inversion, "
            "dptm.noise.releases; "
            "print(sorted(m for m in sys.modules if m in ('dptm._cgs', 'dptm._svi')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_models_use_the_one_lattice_rule():
    from dptm.models import private_vb, topicdp_calibration
    assert private_vb._granularity is mech.finest_lattice_granularity
    assert topicdp_calibration._lattice_laplace_granularity is mech._lattice_laplace_granularity
    for sigma in (1e-3, 0.7, 1.0, 3.0, 1234.5, 2.0 ** 30):
        g = mech.finest_lattice_granularity(sigma)
        assert math.frexp(g)[0] == 0.5 and 8192 <= sigma / g < 16384
        assert g == mech.lattice_granularity(sigma) / 2


def test_the_one_gaussian_sampler_choice():
    from dptm.noise import gauss_inversion, gauss_table, releases
    p, q = 9, 1                                    # sigma = 3: inversion
    assert mech.discrete_gaussian_table(p, q) is not None
    assert "prob" not in mech.discrete_gaussian_table(p, q)
    assert mech.discrete_gaussian_table(p, q) == gauss_inversion.table_for(p, q)
    assert mech.discrete_gaussian_table(p, q, inversion=False) == gauss_table.table_for(p, q)
    assert releases.discrete_gaussian_table is mech.discrete_gaussian_table   # the snapshots
