"""Frozen draws: every sweep kernel, noise sampler and seeded fit gives bit for bit the
output recorded in tests/data/frozen_draws.json (tools/frozen_draws.py), so a refactoring
of the kernels that claims "same draws" is checked, and a failure names the kernel that
moved. An intended change of draws regenerates the file with
``python tools/frozen_draws.py --write`` (and says so in its commit)."""
import importlib.util
from pathlib import Path

import pytest

_TOOL = Path(__file__).resolve().parents[1] / "tools" / "frozen_draws.py"
_spec = importlib.util.spec_from_file_location("frozen_draws", _TOOL)
frozen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(frozen)

GOLDEN = frozen.load()


def test_every_case_has_a_golden_hash():
    assert sorted(GOLDEN["hashes"]) == sorted(frozen.CASES)


def test_digest_depends_on_bytes_dtype_and_shape():
    import numpy as np
    a = np.arange(6, dtype=np.int32)
    base = frozen.digest([("a", a)])
    assert frozen.digest([("a", a.copy())]) == base
    assert frozen.digest([("a", a.reshape(2, 3))]) != base
    assert frozen.digest([("a", a.astype(np.int64))]) != base
    b = a.copy()
    b[5] ^= 1
    assert frozen.digest([("a", b)]) != base
    # a non-contiguous view hashes as its contiguous copy
    assert frozen.digest([("a", np.arange(12, dtype=np.int32)[::2])]) == \
        frozen.digest([("a", np.arange(0, 12, 2, dtype=np.int32))])


@pytest.mark.parametrize("name", sorted(frozen.CASES))
def test_frozen_draws(name):
    if GOLDEN["platform"] != frozen.platform_key():
        pytest.skip(f"hashes recorded on {GOLDEN['platform']}, this is "
                    f"{frozen.platform_key()}")
    by_simd = GOLDEN.get("by_simd", {})
    if any(name in table for table in by_simd.values()) and \
            name not in by_simd.get(frozen.simd_key(), {}):
        pytest.skip(f"{name} follows numpy's SIMD loops; recorded for {sorted(by_simd)}, "
                    f"this machine is {frozen.simd_key()}")
    assert frozen.compute(name) == frozen.expected(GOLDEN, name), (
        f"{name}: the draws changed (python tools/frozen_draws.py --only {name})")
