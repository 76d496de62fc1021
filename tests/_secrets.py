"""Helpers of the tests that look for secrets by value: a walk over everything an object
holds (private names, nested estimators, dicts, lists, slots), a scan for whatever could
restore a generator, and a recorder of the secret generators a fit creates."""
import copy
import pickle

import numpy as np

_GENERATOR_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence,
                    np.random.RandomState)
_SCALARS = (str, bytes, bytearray, int, float, complex, bool, type(None), np.generic)


def walk(obj, path="model", seen=None):
    """``(path, value)`` for every leaf reachable from ``obj``: arrays, scalars, strings,
    and the objects (generators, functions, ...) the walk does not open."""
    seen = set() if seen is None else seen
    if isinstance(obj, _SCALARS) or isinstance(obj, np.ndarray):
        yield path, obj
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, _GENERATOR_TYPES):
        yield path, obj
    elif isinstance(obj, dict):
        for k in sorted(obj, key=repr):
            yield from walk(obj[k], f"{path}[{k!r}]", seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        for i, v in enumerate(items):
            yield from walk(v, f"{path}[{i}]", seen)
    elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
        fields = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for cls in type(obj).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if hasattr(obj, name):
                    fields[name] = getattr(obj, name)
        yield path, type(obj)               # the type is part of the value
        for k in sorted(fields):
            yield from walk(fields[k], f"{path}.{k}", seen)
    else:
        yield path, obj


def flat(obj):
    """``{path: value}`` of :func:`walk`."""
    return dict(walk(obj))


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:
        return a is b


def differing_paths(a, b):
    """Paths whose value (type, dtype, shape, content) differs between ``a`` and ``b``,
    including paths present in one only."""
    fa, fb = flat(a), flat(b)
    return sorted(p for p in set(fa) | set(fb)
                  if p not in fa or p not in fb or not _same(fa[p], fb[p]))


def released(paths, allowed):
    """The paths of ``paths`` that do not start with one of the ``allowed`` attribute
    names (dotted, from the walked object: ``"model_.components_"``)."""
    allowed = ["model." + a for a in allowed]
    return [p for p in paths
            if not any(p == a or p.startswith(a + ".") or p.startswith(a + "[")
                       for a in allowed)]


def suspicious(obj):
    """Paths of anything that could restore a generator: generators, bit generators,
    seed sequences, a dict holding a 'state' / 'bit_generator' entry, arrays of the raw
    dtypes of a generator state (uint64 keys and counters, uint8 AES blocks), bytes."""
    out = []
    for path, v in walk(obj):
        if isinstance(v, _GENERATOR_TYPES) or (isinstance(v, type)
                                               and issubclass(v, _GENERATOR_TYPES)):
            out.append(path)
        elif isinstance(v, np.ndarray) and v.dtype in (np.uint64, np.uint8):
            out.append(path)
        elif isinstance(v, (bytes, bytearray)) and len(v) >= 8:
            out.append(path)
        elif path.endswith(("['state']", "['bit_generator']", "['s']", "['counter']",
                            "['key']", "['entropy']")):
            out.append(path)
    return out


class GeneratorRecorder:
    """Records every secret generator ``dptm._random.secret_generator`` creates (use with
    pytest's monkeypatch) with its initial state, so a test can look for its key, its
    round keys, its counter or any 16 bytes of its first output in what a fit keeps."""

    def __init__(self, monkeypatch):
        from dptm.noise import secret as _random
        self.generators = []
        original = _random.secret_generator

        def recording():
            gen = original()
            self.generators.append((gen, copy.deepcopy(gen.bit_generator.state)))
            return gen
        monkeypatch.setattr(_random, "secret_generator", recording)

    def fingerprints(self, stream_bytes=1 << 18):
        """16-byte strings whose presence in a pickle would let its holder regenerate a
        secret stream: each generator's key and round-key schedule (initial and final
        state), its counter blocks, and every 8-aligned 16-byte window of its first
        ``stream_bytes`` output (any key a child generator was given)."""
        from randomgen import AESCounter
        out = set()
        for gen, start in self.generators:
            for state in (start, gen.bit_generator.state):
                s = state["s"]
                for name in ("seed", "counter", "state"):
                    raw = np.ascontiguousarray(s[name]).tobytes()
                    out.update(raw[i:i + 16] for i in range(0, len(raw) - 15, 8)
                               if any(raw[i:i + 16]))
            replay = AESCounter()
            replay.state = start
            raw = np.random.Generator(replay).bytes(stream_bytes)
            out.update(raw[i:i + 16] for i in range(0, len(raw) - 15, 8))
        # low-entropy windows (a counter's small integers and zeros) match ordinary data;
        # 16 random bytes have at least 10 distinct values but with probability < 1e-7
        return {w for w in out if len(set(w)) >= 10}


def leaked_windows(blob, fingerprints):
    """Offsets of ``blob`` where one of ``fingerprints`` (16-byte strings) occurs."""
    return [i for i in range(len(blob) - 15) if blob[i:i + 16] in fingerprints]


def secret_bytes_in(obj, fingerprints):
    """Offsets in ``pickle.dumps(obj)`` (and in every array's raw bytes) where a secret
    fingerprint occurs."""
    hits = leaked_windows(pickle.dumps(obj), fingerprints)
    for path, v in walk(obj):
        if isinstance(v, np.ndarray) and v.dtype != object:
            hits += [(path, i) for i in leaked_windows(np.ascontiguousarray(v).tobytes(),
                                                       fingerprints)]
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 1 << 64:
            # padded to whole 8-byte words: a key whose top bytes are 0 (1 in 256) keeps its
            # 16-byte window (the minimal length dropped them and the scan missed the key)
            raw = abs(v).to_bytes(-(-abs(v).bit_length() // 64) * 8, "little")
            hits += [(path, i) for i in leaked_windows(raw, fingerprints)]
    return hits
