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


def test_a_simd_dependent_case_has_no_hash_on_an_unrecorded_level(monkeypatch):
    # a case with by_simd overrides is compared only on a level it was recorded for (its
    # plain hash is stale), every other case with its plain hash on any level
    golden = {"hashes": {"fit": "plain-fit", "kernel": "plain-kernel"},
              "by_simd": {"AVX512F": {"fit": "avx512-fit"}}}
    monkeypatch.setattr(frozen, "simd_key", lambda: "AVX512F")
    assert frozen.expected(golden, "fit") == "avx512-fit"
    assert frozen.expected(golden, "kernel") == "plain-kernel"
    monkeypatch.setattr(frozen, "simd_key", lambda: "AVX2")
    assert frozen.expected(golden, "fit") is None
    assert frozen.expected(golden, "kernel") == "plain-kernel"


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
    want = frozen.expected(GOLDEN, name)
    if want is None:
        pytest.skip(f"{name} follows numpy's SIMD loops; recorded for "
                    f"{sorted(GOLDEN['by_simd'])}, this machine is {frozen.simd_key()}")
    assert frozen.compute(name) == want, (
        f"{name}: the draws changed (python tools/frozen_draws.py --only {name})")
