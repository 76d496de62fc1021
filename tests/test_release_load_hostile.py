"""Release.load on hostile files: what it inflates is bounded by the shape release.json
states, every field is validated before anything is built, nothing is ever unpickled, and
negative topic-word entries are refused."""
import json
import os
import zipfile

import numpy as np
import pytest

from dptm import Release
from dptm.accounting import PrivacyReport
from dptm.accounting.events import GaussianEvent, SelfComposedEvent
from dptm.accounting.report import event_to_dict


def _good(tmp_path, name="rel"):
    comp = np.array([[3.0, 1.0, 0.0], [1.0, 1.0, 2.0]])
    report = PrivacyReport(SelfComposedEvent(GaussianEvent(2.0, discrete=True), 3), "document")
    rel = Release(comp, components=comp, doc_topic_prior=0.5, privacy=report,
                  vocabulary=["a", "b", "c"], model="X", hyperparameters={"n_components": 2})
    return rel, rel.save(str(tmp_path / name))


def _edit_meta(path, **changes):
    with open(os.path.join(path, "release.json")) as f:
        meta = json.load(f)
    meta.update(changes)
    with open(os.path.join(path, "release.json"), "w") as f:
        json.dump(meta, f)


def _write_arrays(path, compression=zipfile.ZIP_STORED, **arrays):
    npz = os.path.join(path, "topics.npz")
    os.remove(npz)
    with zipfile.ZipFile(npz, "w", compression=compression) as zf:
        for name, arr in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asarray(arr), allow_pickle=True)


def test_good_release_loads(tmp_path):
    rel, path = _good(tmp_path)
    assert Release.load(path) == rel


class _CountingDecompressor:
    inflated = 0

    def __init__(self, inner):
        self._inner = inner

    def decompress(self, data, max_length=0):
        out = self._inner.decompress(data, max_length)
        _CountingDecompressor.inflated += len(out)
        return out

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_zip_bomb_is_refused_unread(tmp_path, monkeypatch):
    _, path = _good(tmp_path)
    # 64 MiB of zeros behind a valid .npy header, deflated to about 64 KiB
    npz = os.path.join(path, "topics.npz")
    os.remove(npz)
    n = 1 << 23
    with zipfile.ZipFile(npz, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("topic_word.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": "<f8", "fortran_order": False, "shape": (2, n // 2)})
            chunk = bytes(1 << 20)
            for _ in range(n * 8 // len(chunk)):
                f.write(chunk)
    assert os.path.getsize(npz) < (1 << 20)
    real = zipfile._get_decompressor
    monkeypatch.setattr(zipfile, "_get_decompressor",
                        lambda kind: _CountingDecompressor(real(kind)))
    _CountingDecompressor.inflated = 0
    with pytest.raises(ValueError, match="refused unread"):
        Release.load(path)
    assert _CountingDecompressor.inflated == 0
    # the same bomb with a release.json claiming its shape: the compression ratio refuses it
    _edit_meta(path, shape=[2, n // 2], vocabulary=None)
    with pytest.raises(ValueError, match="refused unread"):
        Release.load(path)
    assert _CountingDecompressor.inflated == 0


def test_declared_size_beyond_the_file_is_refused(tmp_path):
    _, path = _good(tmp_path)
    npz = os.path.join(path, "topics.npz")
    data = bytearray(open(npz, "rb").read())
    # the central directory's compressed size of the first member: claim 1 GiB
    cd = data.rfind(b"PK\x01\x02", 0, data.rfind(b"PK\x01\x02"))
    data[cd + 20:cd + 28] = (1 << 30).to_bytes(4, "little") * 2
    open(npz, "wb").write(bytes(data))
    with pytest.raises(ValueError):
        Release.load(path)


@pytest.mark.parametrize("case", ["nan components", "negative components", "unrelated components",
                                  "negative topic_word", "rows not normalised", "wrong shape",
                                  "integer dtype", "extra member", "no topic_word"])
def test_bad_arrays_are_refused(tmp_path, case):
    rel, path = _good(tmp_path)
    tw, comp = rel.topic_word.copy(), rel.components.copy()
    arrays = {"topic_word": tw, "components": comp}
    if case == "nan components":
        comp[0, 0] = np.nan
    elif case == "negative components":
        comp[1] = [-1.0, 2.0, 3.0]
        tw[1] = [0.0, 0.5, 0.5]
    elif case == "unrelated components":
        comp[:] = [[1.0, 1.0, 1.0], [5.0, 0.0, 0.0]]
    elif case == "negative topic_word":
        tw[0] = [1.5, -0.5, 0.0]
        del arrays["components"]
    elif case == "rows not normalised":
        arrays = {"topic_word": tw * 2}
    elif case == "wrong shape":
        arrays = {"topic_word": np.full((2, 4), 0.25)}
    elif case == "integer dtype":
        arrays = {"topic_word": np.eye(2, 3, dtype=np.int64)}
    elif case == "extra member":
        arrays["secret"] = np.zeros(3)
    elif case == "no topic_word":
        arrays = {"components": comp}
    _write_arrays(path, **arrays)
    with pytest.raises(ValueError):
        Release.load(path)


class _Boom:
    ran = False

    def __reduce__(self):
        return (_set_ran, ())


def _set_ran():
    _Boom.ran = True
    return np.zeros((2, 3))


def test_pickled_member_is_never_unpickled(tmp_path):
    _, path = _good(tmp_path)
    arr = np.empty((2, 3), dtype=object)
    arr[:] = _Boom()
    _write_arrays(path, topic_word=arr)
    _Boom.ran = False
    with pytest.raises(ValueError):
        Release.load(path)
    assert not _Boom.ran


@pytest.mark.parametrize("field, value, error", [
    ("transform_max_iter", 10 ** 15, ValueError),
    ("transform_max_iter", 2.5, TypeError),
    ("transform_seed", -1, ValueError),
    ("doc_topic_prior", "0.5", TypeError),
    ("doc_topic_prior", float("nan"), ValueError),
    ("format_version", True, ValueError),
    ("format_version", 1.0, ValueError),
    ("vocabulary", ["a", "b", 3], ValueError),
    ("vocabulary", ["a", "b"], ValueError),
    ("model", 3, ValueError),
    ("hyperparameters", [1], ValueError),
    ("shape", [2, 3, 1], ValueError),
    ("shape", [True, 3], ValueError),
    ("privacy", "epsilon = 1", ValueError),
])
def test_bad_fields_are_refused(tmp_path, field, value, error):
    _, path = _good(tmp_path)
    _edit_meta(path, **{field: value})
    with pytest.raises(error):
        Release.load(path)


def _privacy_state(path):
    with open(os.path.join(path, "release.json")) as f:
        return json.load(f)["privacy"]


def test_bare_event_is_not_a_report(tmp_path):
    _, path = _good(tmp_path)
    state = _privacy_state(path)
    # the event tree alone, without the report around it
    _edit_meta(path, privacy=state["event"])
    with pytest.raises(ValueError, match="privacy"):
        Release.load(path)
    # the bare marker class as the event: it bounds nothing
    _edit_meta(path, privacy=dict(state, event={"__event__": "PrivacyEvent"}))
    with pytest.raises(ValueError, match="privacy"):
        Release.load(path)
    # a report missing keys, or with a string where a bool is expected
    partial = {"event": state["event"], "adjacency": "document"}
    _edit_meta(path, privacy=partial)
    with pytest.raises(ValueError, match="missing"):
        Release.load(path)
    _edit_meta(path, privacy=dict(state, seeded="false"))
    with pytest.raises(ValueError, match="seeded"):
        Release.load(path)
    bad_leaf = dict(event_to_dict(GaussianEvent(2.0)), discrete="yes")
    _edit_meta(path, privacy=dict(state, event=bad_leaf))
    with pytest.raises(ValueError, match="discrete"):
        Release.load(path)
    _edit_meta(path, privacy=dict(state, event=dict(event_to_dict(GaussianEvent(2.0)), x=1)))
    with pytest.raises(ValueError, match="no field"):
        Release.load(path)


def test_constructor_bounds_transform_max_iter_and_checks_components():
    with pytest.raises(ValueError, match="transform_max_iter"):
        Release(np.ones((1, 2)), doc_topic_prior=1.0, transform_max_iter=10 ** 15)
    with pytest.raises(ValueError, match="components"):
        Release(np.ones((1, 2)), doc_topic_prior=1.0, components=[[np.nan, 1.0]])


def _saved(tmp_path):
    tw = np.random.default_rng(0).dirichlet(np.ones(6), size=3)
    path = str(tmp_path / "rel")
    Release(tw, doc_topic_prior=0.5, model="x").save(path)
    return path, tw


def test_load_never_unpickles(tmp_path):
    path, tw = _saved(tmp_path)
    # an object array (what a pickle payload needs) in place of the topics
    np.savez(os.path.join(path, "topics.npz"), topic_word=tw.astype(object))
    with pytest.raises(ValueError, match="[Oo]bject arrays|allow_pickle|must be a float64 array"):
        Release.load(path)


def test_load_refuses_negative_topic_word_entries(tmp_path):
    path, tw = _saved(tmp_path)
    bad = tw.copy()
    bad[0, 0], bad[0, 1] = -0.25, bad[0, 1] + bad[0, 0] + 0.25      # row sum still 1
    np.savez(os.path.join(path, "topics.npz"), topic_word=bad)
    with pytest.raises(ValueError, match="topic_word"):
        Release.load(path)
    with pytest.raises(ValueError, match="non-negative"):
        Release(bad, doc_topic_prior=0.5)
