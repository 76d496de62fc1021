"""Real corpora for the utility benchmarks, declared as a tuning set and an evaluation set.

Held-out discipline: a default of a model may be chosen (tuned, compared, switched) only on
the corpora of ``TUNING``. The corpora of ``EVALUATION`` are for reporting; a figure that
decided a default must not come from them, and a claim names the corpora it was measured on.
The sets were declared before any private model was measured on the evaluation corpora.

Every corpus is real text found on a Debian machine or in the shared data folder, read by a
loader whose docstring states its provenance. ``load`` turns it into one fixed benchmark:

- documents deduplicated (identical normalised text kept once), ordered by a stable id;
- held-out split: a seeded permutation (``numpy.random.default_rng(seed)``) puts 10% of the
  documents (at least 1,000, or a fifth of a small corpus, when that is more) into the test
  part; the split depends on the document count and the seed only;
- vocabulary: the ``vocabulary_size`` most frequent words of the TRAINING part (lowercase,
  letters only, two or more of them, scikit-learn's English stop words removed, in 3 or more
  training documents; ties broken alphabetically), listed alphabetically. The benchmark
  treats this vocabulary as public (a deployment would take it from public text or select it
  privately with ``dptm.DPVocabulary``);
- documents with fewer than 5 tokens in that vocabulary dropped (both parts).

Processed matrices are cached in ``~/.cache/dptm-bench`` (``$DPTM_BENCH_CACHE``); delete
a file there (or run ``python bench/corpora.py --refresh``) after the sources change.

    python bench/corpora.py                 # the table of every available corpus
    python bench/corpora.py c50 changelogs  # some of them
"""
import argparse
import ast
import glob
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# a default may be chosen on these (short: debian; long: kos, c50, nips; heavy-tailed: gcide,
# foldoc); EXTRA is small and may be used as tuning data too
TUNING = ("debian", "kos", "c50", "nips", "gcide", "foldoc")
# never used to choose a default (short: fortunes, wordnet; long: manpages; heavy-tailed
# like a forum: pydoc; heavy-tailed with authors: changelogs)
EVALUATION = ("fortunes", "wordnet", "manpages", "pydoc", "changelogs")
EXTRA = ("tweetrumors",)

# bump when the processing changes, so that stale caches are not read
_VERSION = 2
MIN_TOKENS = 5
MIN_DF = 3
TOKEN = re.compile(r"\b[a-z][a-z]+\b")


@dataclass
class Corpus:
    """One benchmark corpus: document-term counts of the fixed train/test split.

    ``groups_*`` hold an integer author id per document (None when the source has no
    authorship); ``meta`` holds ``source``, ``provenance``, ``n_docs``, token statistics
    of the training part, author statistics, and ``ids_train`` / ``ids_test`` (a stable
    source id per document)."""
    X_train: sp.csr_matrix
    X_test: sp.csr_matrix
    vocabulary: list
    groups_train: np.ndarray | None
    groups_test: np.ndarray | None
    meta: dict = field(default_factory=dict)


class Unavailable(Exception):
    """A corpus this machine cannot build; the message says what is missing."""


@dataclass
class _Raw:
    texts: list            # str per document
    ids: list              # stable str id per document
    groups: list | None    # author key (str) per document
    provenance: dict
    bow: tuple | None = None  # (csr counts, vocabulary) for bag-of-words sources


def cache_dir():
    return Path(os.environ.get("DPTM_BENCH_CACHE", Path.home() / ".cache" / "dptm-bench"))


def data_dir():
    """The shared data folder: ``$DPTM_DATA``, else the first ``shared/data`` above here."""
    env = os.environ.get("DPTM_DATA")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared" / "data"
    return None


def _day(path):
    return time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(path)))


def _deb_version(package):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                             capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout.strip() or None


def _need_deb(package, path):
    if not os.path.exists(path):
        raise Unavailable(f"{path} missing (apt-get install {package}; bench/setup_corpora.sh)")


# ----------------------------------------------------------------------------- Debian
APT_LISTS = "/var/lib/apt/lists"


def _apt_cat(path):
    # apt-helper reads every compression apt writes (lz4, gz, xz, none)
    try:
        return subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.CalledProcessError) as exc:
        raise Unavailable(f"cannot read {path}: {exc}") from None


def _stanzas(text):
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            yield fields


def _email(maintainer):
    m = re.search(r"<([^>]+)>", maintainer)
    return (m.group(1) if m else maintainer).strip().lower()


def debian():
    """Debian package long descriptions (English), one document per distinct description,
    authored by the package's Maintainer (its e-mail address).

    Provenance: this machine's apt lists of Debian 12 "bookworm" main (with -updates and
    -security), ``/var/lib/apt/lists/*_main_i18n_Translation-en*`` (descriptions) joined on
    ``Description-md5`` with ``*_main_binary-amd64_Packages*`` (maintainers); the file
    dates are in ``meta['provenance']`` (fetched 2026-12-02 with ``apt-get update -o
    Acquire::Languages=en``). Packages of one source share a description: as in
    ``bench_utility.debian_descriptions`` the first 300 characters of the body (lowercased,
    non-word runs collapsed) decide, and the first occurrence is kept (lists in name order).
    Licence: the descriptions are part of the packages' control data, distributed by
    Debian under each package's licence (DFSG-free for main)."""
    trans = sorted(glob.glob(os.path.join(APT_LISTS, "*_main_i18n_Translation-en*")))
    pkgs = sorted(glob.glob(os.path.join(APT_LISTS, "*_main_binary-amd64_Packages*")))
    if not trans or not pkgs:
        raise Unavailable(f"no Translation-en / Packages lists in {APT_LISTS} (run "
                          "`apt-get update -o Acquire::Languages=en`; bench/setup_corpora.sh)")
    maint = {}
    for path in pkgs:
        for st in _stanzas(_apt_cat(path)):
            if "Description-md5" in st and "Maintainer" in st:
                maint.setdefault(st["Description-md5"], _email(st["Maintainer"]))
    texts, ids, groups, seen = [], [], [], set()
    for path in trans:
        for st in _stanzas(_apt_cat(path)):
            desc = st.get("Description-en")
            if not desc:
                continue
            lines = [ln.strip() for ln in desc.splitlines()]
            lines = [ln for ln in lines if ln != "."]
            key = re.sub(r"\W+", " ", " ".join(lines[1:]).lower())[:300]
            if key in seen:
                continue
            seen.add(key)
            texts.append(" ".join(lines))
            ids.append(st.get("Package", "?") + "/" + st.get("Description-md5", ""))
            groups.append(maint.get(st.get("Description-md5"), "unknown"))
    prov = {"files": {os.path.basename(p): _day(p) for p in trans + pkgs},
            "release": "Debian 12 bookworm main"}
    return _Raw(texts, ids, groups, prov)


def _changelog_entries(text, package):
    entry, head = [], None
    for line in text.splitlines():
        if line and not line[0].isspace() and ";" in line and "(" in line:
            head, entry = line, []
        elif line.startswith(" -- ") and head is not None:
            m = re.match(r" -- (.*?)\s*<([^>]*)>\s*(.*)", line)
            who = m.group(2).strip().lower() if m else line[4:].strip().lower()
            date = m.group(3).strip() if m else ""
            version = re.search(r"\(([^)]*)\)", head)
            yield (f"{package}/{version.group(1) if version else '?'}", "\n".join(entry),
                   who, date)
            head = None
        elif head is not None:
            entry.append(line)


CHANGELOG_SHARE = 10       # one source package in ten (by the hash of its name)
CHANGELOG_MAX_BYTES = 1_000_000


def changelog_sample():
    """The source packages whose changelogs form the corpus, with the binary package to
    download for each: [(source, binary)]. A source is in when the SHA-1 of its name is
    0 modulo ``CHANGELOG_SHARE``; its binary is its smallest in bookworm main amd64 (ties
    by name), and the source is left out when that binary exceeds ``CHANGELOG_MAX_BYTES``.
    Stable across list updates (a name's hash does not change)."""
    paths = sorted(glob.glob(os.path.join(APT_LISTS, "*_dists_bookworm_main_binary-amd64_Packages*")))
    if not paths:
        raise Unavailable(f"no bookworm main Packages list in {APT_LISTS} (apt-get update)")
    best = {}
    for st in _stanzas(_apt_cat(paths[0])):
        if "Package" not in st or "Size" not in st:
            continue
        src = st.get("Source", st["Package"]).split()[0]
        cand = (int(st["Size"]), st["Package"])
        if src not in best or cand < best[src]:
            best[src] = cand
    return [(src, best[src][1]) for src in sorted(best)
            if int(hashlib.sha1(src.encode()).hexdigest(), 16) % CHANGELOG_SHARE == 0
            and best[src][0] <= CHANGELOG_MAX_BYTES]


def _changelog_progress():
    """(packages fetched, packages in the sample list) of bench/setup_corpora.sh, or None."""
    listing = cache_dir() / "changelog-sample.txt"
    if not listing.is_file():
        return None
    sources = [ln.split()[0] for ln in listing.read_text().splitlines() if ln.strip()]
    done = sum((cache_dir() / "debs" / src / ".done").is_file() for src in sources)
    return done, len(sources)


def changelogs():
    """Debian changelog entries, one document per upload entry (the text between the
    header line and the ``-- Name <e-mail>  date`` trailer), authored by the e-mail of the
    trailer (the person who made that upload).

    Provenance: the ``usr/share/doc/*/changelog.Debian.gz`` of one binary package of each
    source package in :func:`changelog_sample` (a tenth of Debian 12 "bookworm" main, about
    3,100 packages of at most 1 MB), downloaded with ``apt-get download`` and extracted with
    ``dpkg-deb`` into ``~/.cache/dptm-bench/debs`` by ``bench/setup_corpora.sh``
    (2026-12-02). Changelogs shipped as symlinks to another package's are absent; identical
    entry texts (e.g. "New upstream release") are kept once. Licence: each package's
    copyright file (DFSG-free)."""
    root = cache_dir() / "debs"
    done = _changelog_progress()
    if done is None or done[0] < done[1]:
        raise Unavailable(f"changelog sample not downloaded ({done and done[0]} of "
                          f"{done and done[1]} packages; run bench/setup_corpora.sh as root)")
    paths = sorted(glob.glob(str(root / "*" / "usr" / "share" / "doc" / "*" / "changelog.Debian.gz")))
    texts, ids, groups, seen, files = [], [], [], set(), set()
    for path in paths:
        real = os.path.realpath(path)
        if real in files or not os.path.isfile(real):
            continue
        files.add(real)
        package = Path(path).parent.name
        try:
            with gzip.open(real, "rt", encoding="utf-8", errors="replace") as f:
                content = f.read()
        except (OSError, EOFError):
            continue
        for doc_id, body, who, _date in _changelog_entries(content, package):
            key = hashlib.sha1(" ".join(body.lower().split()).encode()).digest()
            if key in seen:
                continue
            seen.add(key)
            texts.append(body)
            ids.append(doc_id)
            groups.append(who)
    return _Raw(texts, ids, groups, {"changelogs": len(files), "path": str(root),
                                     "share": f"1/{CHANGELOG_SHARE}",
                                     "max_bytes": CHANGELOG_MAX_BYTES})


# ----------------------------------------------------------------------------- man pages
_ROFF_TEXT_MACROS = {"SH", "SS", "B", "I", "BI", "BR", "IB", "IR", "RB", "RI", "SB", "SM",
                     "IP", "TP", "Nm", "Nd", "Sh", "Ss", "Fl", "Ar", "Xr", "Pa", "Op", "It",
                     "Em", "Sy", "Dq", "Qq", "Sq", "Ql", "Li", "Cm", "Ic", "Va", "Ev", "Fn",
                     "Ft", "Fa", "Dv", "Er", "Cd", "Ad", "An", "Ms", "Tn", "UR", "MT", "OP"}
_ROFF_ESC = re.compile(r"\\(f(\[[^\]]*\]|\(..|.)|s[+-]?\d+|\(..|\[[^\]]*\]|\*(\(..|\[[^\]]*\]|.)"
                       r"|[nkgmMVYwhvlLxNHoSzZ]'[^']*'|[nkgmMVYwhvlLxNHoSzZ](\(..|\[[^\]]*\]|.)|.)")


def roff_to_text(source):
    """Plain text of a man page's roff source: request lines dropped except the text of
    the common font/section macros, escapes removed (no layout; the words survive)."""
    out = []
    for line in source.splitlines():
        if line.startswith((".", "'")):
            parts = line[1:].split(None, 1)
            if not parts or parts[0] not in _ROFF_TEXT_MACROS or len(parts) == 1:
                continue
            line = parts[1].replace('"', " ")
        out.append(_ROFF_ESC.sub(lambda m: "-" if m.group(1) == "-" else " ", line))
    return "\n".join(out)


def manpages():
    """English manual pages, one document per page (sections 1-8), as text.

    Provenance: ``/usr/share/man/man[1-8]/*`` on this machine (Debian 12 "bookworm",
    about 23,000 files on 2026-12-02, from the installed packages; translations under
    ``/usr/share/man/<locale>`` left out), roff converted by :func:`roff_to_text` (requests
    dropped, font and section macros kept as text). Pages that only source another
    (``.so``) and identical texts are kept once. Like the changelogs, the corpus depends on
    the installed packages (``meta['provenance']['sha256']``). Licence: each page's
    package's copyright file (DFSG-free)."""
    paths = sorted(glob.glob("/usr/share/man/man[1-8]/*"))
    if len(paths) < 1000:
        raise Unavailable(f"only {len(paths)} files under /usr/share/man/man[1-8] (a Debian "
                          "system with manual pages installed, not a minimised image)")
    texts, ids, seen, files = [], [], set(), set()
    for path in paths:
        real = os.path.realpath(path)
        if real in files or not os.path.isfile(real):
            continue
        files.add(real)
        try:
            opener = gzip.open if real.endswith(".gz") else open
            with opener(real, "rt", encoding="utf-8", errors="replace") as f:
                src = f.read()
        except (OSError, EOFError):
            continue
        if src.lstrip().startswith(".so ") and src.count("\n") <= 3:
            continue
        text = roff_to_text(src)
        key = hashlib.sha1(" ".join(text.lower().split()).encode()).digest()
        if key in seen:
            continue
        seen.add(key)
        texts.append(text)
        ids.append(os.path.relpath(path, "/usr/share/man"))
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]
    return _Raw(texts, ids, None, {"files": len(files), "sha256": digest})


# ----------------------------------------------------------------------------- dictionaries
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(s):
    n = 0
    for c in s:
        n = n * 64 + _B64.index(c)
    return n


def _dictd(name, package):
    index, data = f"/usr/share/dictd/{name}.index", f"/usr/share/dictd/{name}.dict.dz"
    _need_deb(package, data)
    with gzip.open(data, "rb") as f:  # dictzip is gzip with a random-access table
        blob = f.read()
    texts, ids, seen = [], [], set()
    with open(index, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or parts[0].startswith("00") or parts[1] in seen:
                continue
            seen.add(parts[1])
            start, length = _b64(parts[1]), _b64(parts[2])
            texts.append(blob[start:start + length].decode("utf-8", "replace"))
            ids.append(f"{parts[0]}@{start}")
    return _Raw(texts, ids, None, {"package": package, "version": _deb_version(package),
                                   "path": data, "date": _day(data)})


def _dedup(raw):
    seen, keep = set(), []
    for i, t in enumerate(raw.texts):
        key = hashlib.sha1(" ".join(t.lower().split()).encode()).digest()
        if key not in seen:
            seen.add(key)
            keep.append(i)
    raw.texts = [raw.texts[i] for i in keep]
    raw.ids = [raw.ids[i] for i in keep]
    if raw.groups is not None:
        raw.groups = [raw.groups[i] for i in keep]
    return raw


def gcide():
    """The GNU Collaborative International Dictionary of English, one document per entry
    (a headword with all its senses, etymology and quotations: heavy-tailed lengths).

    Provenance: Debian package ``dict-gcide`` 0.48.5+nmu2 (bookworm),
    ``/usr/share/dictd/gcide.dict.dz`` (file of 2022-02-13), entries located by
    ``gcide.index``; an entry listed under several headwords read once. Licence: GPL-3+
    (the text derives from Webster's 1913 and WordNet)."""
    return _dedup(_dictd("gcide", "dict-gcide"))


def wordnet():
    """WordNet 3.0 in dictd form, one document per headword (its glosses and examples).

    Provenance: Debian package ``dict-wn`` 1:3.0-37, ``/usr/share/dictd/wn.dict.dz``
    (2021-08-15). Licence: the WordNet 3.0 licence (BSD-like, Princeton)."""
    return _dedup(_dictd("wn", "dict-wn"))


def foldoc():
    """The Free On-line Dictionary of Computing, one document per entry.

    Provenance: Debian package ``dict-foldoc`` 20230119-1, ``/usr/share/dictd/foldoc.dict.dz``
    (2023-01-23). Licence: GFDL 1.1+."""
    return _dedup(_dictd("foldoc", "dict-foldoc"))


# ----------------------------------------------------------------------------- fortunes
def fortunes():
    """Fortune cookies, one document per fortune (short quotations and jokes).

    Provenance: Debian packages ``fortunes`` and ``fortunes-min`` 1:1.99.1-7.3 (bookworm),
    every data file of ``/usr/share/games/fortunes`` (the files beside their ``.dat``
    index; the offensive set ``fortunes-off`` is not installed); fortunes split on lines
    holding only ``%``. Licence: BSD (fortune-mod); the quotations' authors hold theirs."""
    root = "/usr/share/games/fortunes"
    datas = sorted(glob.glob(os.path.join(root, "*.dat")))
    if len(datas) < 10:
        raise Unavailable(f"no fortune files in {root} (apt-get install fortunes fortunes-min)")
    texts, ids = [], []
    for dat in datas:
        path = dat[:-4]
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            parts = re.split(r"\n%\n", "\n" + f.read())
        for i, p in enumerate(parts):
            if p.strip():
                texts.append(p.strip())
                ids.append(f"{os.path.basename(path)}#{i}")
    prov = {"packages": {p: _deb_version(p) for p in ("fortunes", "fortunes-min")},
            "path": root, "files": len(datas)}
    return _dedup(_Raw(texts, ids, None, prov))


# ----------------------------------------------------------------------------- Python
PYDOC_PACKAGES = (("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "sklearn"),
                  ("pandas", "pandas"), ("matplotlib", "matplotlib"), ("sympy", "sympy"),
                  ("networkx", "networkx"), ("docutils", "docutils"), ("Sphinx", "sphinx"),
                  ("nltk", "nltk"))


def _docstrings(root, files, prefix, texts, ids):
    skip = {"test", "tests", "idle_test", "testing", "site-packages", "dist-packages",
            "__pycache__"}
    for path in files:
        rel = path.relative_to(root)
        if skip.intersection(rel.parts[:-1]):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        stack = [(tree, f"{prefix}{rel}")]
        while stack:
            node, name = stack.pop()
            doc = ast.get_docstring(node, clean=True)
            if doc:
                texts.append(doc)
                ids.append(name)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stack.append((child, f"{name}:{child.name}"))


def pydoc():
    """Python docstrings, one document per module, class or function docstring (many
    one-liners, long numpydoc pages with parameter lists: a heavy tail).

    Provenance: the ``.py`` sources of this interpreter's standard library
    (``sysconfig.get_paths()['stdlib']``: CPython 3.11.7 here; ``site-packages`` left out)
    and of the PyPI distributions in ``PYDOC_PACKAGES`` as installed (their versions are
    in ``meta['provenance']``; on 2026-12-02 numpy 2.4.6, scipy 1.17.1, scikit-learn
    1.9.1, pandas 3.1.1, matplotlib 3.11.2, sympy 1.14.0, networkx 3.6.1, docutils 0.22.4,
    Sphinx 9.0.4, nltk 3.10.4); test folders left out; parsed with :mod:`ast`, nothing
    imported. Licences: PSF-2 and the packages' (BSD, MIT, public domain, Apache-2)."""
    import importlib.util
    import sysconfig
    from importlib.metadata import PackageNotFoundError, version
    root = Path(sysconfig.get_paths()["stdlib"])
    if not (root / "os.py").is_file():
        raise Unavailable(f"no standard library sources under {root}")
    texts, ids = [], []
    _docstrings(root, sorted(root.rglob("*.py")), "stdlib/", texts, ids)
    versions = {"python": sys.version.split()[0]}
    for dist, module in PYDOC_PACKAGES:
        spec = importlib.util.find_spec(module)
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            raise Unavailable(f"{dist} is not installed (pip install {dist})")
        pkg = Path(list(spec.submodule_search_locations)[0])
        _docstrings(pkg.parent, sorted(pkg.rglob("*.py")), "", texts, ids)
    return _dedup(_Raw(texts, ids, None, {"versions": versions, "stdlib": str(root)}))


# ----------------------------------------------------------------------------- shared data
def _shared(*parts):
    d = data_dir()
    if d is None or not (d.joinpath(*parts)).is_file():
        raise Unavailable(f"{'/'.join(parts)} not in the shared data folder ({d}; set "
                          "DPTM_DATA)")
    return d.joinpath(*parts)


def _uci(name):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from dptm.datasets import load_uci_bow
    docword = _shared(name if name != "nips" else "nips_uci", f"docword.{name}.txt.gz")
    X, vocab = load_uci_bow(docword, docword.parent / f"vocab.{name}.txt")
    n = X.shape[0]
    return _Raw([None] * n, [f"{name}#{i + 1}" for i in range(n)], None,
                {"path": str(docword), "see": str(docword.parent / "SOURCE.md")},
                bow=(X.tocsr(), [str(w) for w in vocab]))


def kos():
    """KOS: 3,430 Daily Kos blog posts of 2004 as UCI bag-of-words counts (small).

    Provenance: ``<shared data>/kos/docword.kos.txt.gz`` and ``vocab.kos.txt`` (UCI Bag of
    Words, 2008; see its SOURCE.md). Licence: UCI, CC BY 4.0."""
    return _uci("kos")


def nips():
    """NIPS: 1,500 NIPS full papers as UCI bag-of-words counts (small, long documents).

    Provenance: ``<shared data>/nips_uci/docword.nips.txt.gz`` (UCI Bag of Words; see its
    SOURCE.md). Licence: UCI, CC BY 4.0."""
    return _uci("nips")


def c50():
    """Reuters C50: 5,000 Reuters newswire articles of 1996-97 by 50 authors (100 each).

    Provenance: ``<shared data>/reuters_c50/C50.tar.gz`` (UCI Reuter_50_50, 2011; see its
    SOURCE.md), read with ``dptm.datasets.load_reuters_c50(subset="all")``; the author is
    the group. Licence: UCI lists CC BY 4.0; the articles are Reuters copyright (RCV1,
    research use)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from dptm.datasets import load_reuters_c50
    path = _shared("reuters_c50", "C50.tar.gz")
    texts, authors = load_reuters_c50(path, subset="all")
    ids = [f"c50#{i}" for i in range(len(texts))]
    return _dedup(_Raw(list(texts), ids, [str(a) for a in authors], {"path": str(path)}))


def tweetrumors():
    """PHEME rumour tweets, already cleaned and lemmatised (5,698 tweets, very short).

    Provenance: ``<shared data>/tweetrumors/tweetrumors_clean.json`` (from the repository
    nicomanzonelli/topic_model_attacks; see its SOURCE.md). Licence: the repository's MIT
    licence; the tweets' text belongs to their authors (PHEME, research use)."""
    path = _shared("tweetrumors", "tweetrumors_clean.json")
    with open(path) as f:
        texts = json.load(f)["text"]
    return _dedup(_Raw(texts, [f"tweet#{i}" for i in range(len(texts))], None,
                       {"path": str(path)}))


LOADERS = {"debian": debian, "changelogs": changelogs, "manpages": manpages,
           "gcide": gcide, "wordnet": wordnet, "foldoc": foldoc, "fortunes": fortunes,
           "pydoc": pydoc, "kos": kos, "nips": nips, "c50": c50, "tweetrumors": tweetrumors}
NAMES = TUNING + EVALUATION + EXTRA


# ----------------------------------------------------------------------------- processing
def split_indices(n, seed=0):
    """The fixed held-out split of ``n`` documents: (train, test) index arrays, sorted.
    10% of the documents are held out, at least 1,000 (or a fifth of a small corpus)."""
    n_test = max(-(-n // 10), min(1000, n // 5))
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _select_vocabulary(counts, df, words, size):
    # letters only, no stop words, in MIN_DF training documents; most frequent first,
    # ties alphabetical; then listed alphabetically
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    ok = [j for j, w in enumerate(words)
          if df[j] >= MIN_DF and TOKEN.fullmatch(w) and w not in ENGLISH_STOP_WORDS]
    ok.sort(key=lambda j: (-counts[j], words[j]))
    return sorted(ok[:size], key=lambda j: words[j])


def _unique(ids):
    # a name defined twice (a function redefined, a version uploaded twice) keeps its
    # occurrences apart: "#2", "#3" in source order
    seen, out = {}, []
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
        out.append(i if seen[i] == 1 else f"{i}#{seen[i]}")
    return out


def _process(raw, vocabulary_size, seed):
    raw.ids = _unique(raw.ids)
    order = sorted(range(len(raw.ids)), key=lambda i: raw.ids[i])
    tr, te = split_indices(len(order), seed)
    tr, te = [order[i] for i in tr], [order[i] for i in te]
    if raw.bow is not None:
        X, words = raw.bow
        Xtr_full, Xte_full = X[tr], X[te]
    else:
        from sklearn.feature_extraction.text import CountVectorizer
        cv = CountVectorizer(lowercase=True, token_pattern=TOKEN.pattern, dtype=np.int64)
        Xtr_full = cv.fit_transform([raw.texts[i] for i in tr])
        words = list(cv.get_feature_names_out())
        Xte_full = None
    counts = np.asarray(Xtr_full.sum(axis=0)).ravel()
    df = np.diff(Xtr_full.tocsc().indptr)
    cols = _select_vocabulary(counts, df, words, vocabulary_size)
    vocab = [words[j] for j in cols]
    Xtr = Xtr_full[:, cols].tocsr()
    if Xte_full is None:
        from sklearn.feature_extraction.text import CountVectorizer
        cv = CountVectorizer(lowercase=True, token_pattern=TOKEN.pattern, dtype=np.int64,
                             vocabulary=vocab)
        Xte = cv.transform([raw.texts[i] for i in te]).tocsr()
    else:
        Xte = Xte_full[:, cols].tocsr()
    ktr = np.asarray(Xtr.sum(axis=1)).ravel() >= MIN_TOKENS
    kte = np.asarray(Xte.sum(axis=1)).ravel() >= MIN_TOKENS
    tr = [i for i, k in zip(tr, ktr) if k]
    te = [i for i, k in zip(te, kte) if k]
    out = {"Xtr": Xtr[ktr], "Xte": Xte[kte], "vocab": vocab,
           "ids_tr": [raw.ids[i] for i in tr], "ids_te": [raw.ids[i] for i in te]}
    if raw.groups is not None:
        names = sorted(set(raw.groups[i] for i in tr + te))
        code = {g: k for k, g in enumerate(names)}
        out["gtr"] = np.array([code[raw.groups[i]] for i in tr], dtype=np.int64)
        out["gte"] = np.array([code[raw.groups[i]] for i in te], dtype=np.int64)
        out["group_names"] = names
    return out


def length_stats(X):
    """Token statistics of a document-term matrix: n_docs, tokens, mean, median, p90, max
    tokens per document and the share of tokens in the longest 1% and 10% of documents."""
    n = np.sort(np.asarray(X.sum(axis=1)).ravel().astype(np.int64))[::-1]
    total = max(int(n.sum()), 1)
    top = lambda q: float(n[:max(1, int(round(q * len(n))))].sum() / total)  # noqa: E731
    return {"n_docs": int(len(n)), "tokens": int(n.sum()), "mean": float(n.mean()),
            "median": float(np.median(n)), "p90": float(np.percentile(n, 90)),
            "max": int(n.max()), "top1_share": top(0.01), "top10_share": top(0.10)}


def group_stats(groups):
    """Documents per author: number of authors, the most active author's count, the share
    of authors with one document and the share of documents written by them, the median."""
    _, per = np.unique(groups, return_counts=True)
    return {"n_authors": int(len(per)), "max_docs_per_author": int(per.max()),
            "median_docs_per_author": float(np.median(per)),
            "authors_with_one_doc": float(np.mean(per == 1)),
            "docs_by_one_doc_authors": float(np.sum(per == 1) / per.sum())}


def _cache_path(name, vocabulary_size, seed):
    return cache_dir() / f"{name}-V{vocabulary_size}-seed{seed}-v{_VERSION}.npz"


def _save(path, out, meta):
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for key in ("Xtr", "Xte"):
        X = out[key]
        arrays.update({f"{key}_data": X.data, f"{key}_indices": X.indices,
                       f"{key}_indptr": X.indptr, f"{key}_shape": np.array(X.shape)})
    arrays["vocab"] = np.array(out["vocab"], dtype=str)
    arrays["ids_tr"] = np.array(out["ids_tr"], dtype=str)
    arrays["ids_te"] = np.array(out["ids_te"], dtype=str)
    if "gtr" in out:
        arrays.update(gtr=out["gtr"], gte=out["gte"],
                      group_names=np.array(out["group_names"], dtype=str))
    arrays["meta"] = np.array(json.dumps(meta))
    tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def _read(path):
    with np.load(path, allow_pickle=False) as z:
        mats = {k: sp.csr_matrix((z[f"{k}_data"].astype(np.int64), z[f"{k}_indices"],
                                  z[f"{k}_indptr"]), shape=tuple(z[f"{k}_shape"]))
                for k in ("Xtr", "Xte")}
        meta = json.loads(str(z["meta"]))
        meta["ids_train"], meta["ids_test"] = z["ids_tr"].tolist(), z["ids_te"].tolist()
        g = (z["gtr"], z["gte"]) if "gtr" in z.files else (None, None)
        if "group_names" in z.files:
            meta["group_names"] = z["group_names"].tolist()
        return mats["Xtr"], mats["Xte"], z["vocab"].tolist(), g[0], g[1], meta


def load(name, *, vocabulary_size=5000, max_docs=None, seed=0):
    """Load one benchmark corpus (processed once, then read from the cache).

    Parameters
    ----------
    name : str
        One of ``TUNING``, ``EVALUATION`` or ``EXTRA``.
    vocabulary_size : int, default=5000
        Number of words kept: the most frequent of the training part (see the module).
    max_docs : int or None
        Keep a seeded random subset of this many TRAINING documents (with their groups);
        the test part and the vocabulary stay those of the whole corpus, so figures at
        different ``max_docs`` share one held-out set.
    seed : int, default=0
        Seed of the held-out split (and of the ``max_docs`` subset). The benchmark's
        figures use 0.

    Returns
    -------
    Corpus

    Raises
    ------
    ValueError
        Unknown name or bad parameter.
    Unavailable
        The machine lacks the corpus's source (the message says what to install).
    """
    if name not in LOADERS:
        raise ValueError(f"name must be one of {sorted(LOADERS)}, got {name!r}")
    if isinstance(vocabulary_size, bool) or not isinstance(vocabulary_size, (int, np.integer)) \
            or vocabulary_size < 1:
        raise ValueError(f"vocabulary_size must be a positive int, got {vocabulary_size!r}")
    if max_docs is not None and (isinstance(max_docs, bool) or
                                 not isinstance(max_docs, (int, np.integer)) or max_docs < 1):
        raise ValueError(f"max_docs must be None or a positive int, got {max_docs!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    path = _cache_path(name, int(vocabulary_size), int(seed))
    if not path.is_file():
        t = time.perf_counter()
        raw = LOADERS[name]()
        out = _process(raw, int(vocabulary_size), int(seed))
        meta = {"name": name, "set": corpus_set(name), "source": LOADERS[name].__doc__
                .split("\n\n")[0].replace("\n", " ").replace("    ", " ").strip(),
                "provenance": raw.provenance, "seed": int(seed),
                "vocabulary_size": len(out["vocab"]), "raw_docs": len(raw.ids),
                "n_docs": {"train": out["Xtr"].shape[0], "test": out["Xte"].shape[0]},
                "train_tokens": length_stats(out["Xtr"]),
                "test_tokens": length_stats(out["Xte"]),
                "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "build_seconds": round(time.perf_counter() - t, 1)}
        if "gtr" in out:
            meta["authors"] = group_stats(np.concatenate([out["gtr"], out["gte"]]))
            meta["authors_train"] = group_stats(out["gtr"])
        _save(path, out, meta)
    Xtr, Xte, vocab, gtr, gte, meta = _read(path)
    meta["set"] = corpus_set(name)
    if max_docs is not None and max_docs < Xtr.shape[0]:
        keep = np.sort(np.random.default_rng([int(seed), 1]).choice(
            Xtr.shape[0], int(max_docs), replace=False))
        Xtr = Xtr[keep]
        gtr = None if gtr is None else gtr[keep]
        meta["ids_train"] = [meta["ids_train"][i] for i in keep]
        meta["max_docs"] = int(max_docs)
        meta["n_docs"] = {"train": Xtr.shape[0], "test": Xte.shape[0]}
        meta["train_tokens"] = length_stats(Xtr)
    return Corpus(Xtr, Xte, vocab, gtr, gte, meta)


def corpus_set(name):
    return "tuning" if name in TUNING else "evaluation" if name in EVALUATION else "extra"


def _probe(name):
    """A cheap check that the source exists (no parsing)."""
    apt = lambda pat: glob.glob(os.path.join(APT_LISTS, pat))  # noqa: E731
    checks = {
        "debian": lambda: apt("*_main_i18n_Translation-en*") and apt("*_main_binary-amd64_Packages*"),
        "changelogs": lambda: (p := _changelog_progress()) is not None and p[0] == p[1] > 0,
        "manpages": lambda: len(glob.glob("/usr/share/man/man1/*")) >= 1000,
        "gcide": lambda: os.path.exists("/usr/share/dictd/gcide.dict.dz"),
        "wordnet": lambda: os.path.exists("/usr/share/dictd/wn.dict.dz"),
        "foldoc": lambda: os.path.exists("/usr/share/dictd/foldoc.dict.dz"),
        "fortunes": lambda: len(glob.glob("/usr/share/games/fortunes/*.dat")) >= 10,
        "pydoc": lambda: all(__import__("importlib.util").util.find_spec(m) for _, m in PYDOC_PACKAGES),
        "kos": lambda: _shared("kos", "docword.kos.txt.gz"),
        "nips": lambda: _shared("nips_uci", "docword.nips.txt.gz"),
        "c50": lambda: _shared("reuters_c50", "C50.tar.gz"),
        "tweetrumors": lambda: _shared("tweetrumors", "tweetrumors_clean.json"),
    }
    try:
        return checks[name]()
    except Unavailable as exc:
        raise exc


_HINTS = {"debian": "apt-get update -o Acquire::Languages=en",
          "changelogs": "the changelog sample downloaded",
          "manpages": "manual pages under /usr/share/man (not a minimised image)",
          "gcide": "apt-get install dict-gcide", "wordnet": "apt-get install dict-wn",
          "foldoc": "apt-get install dict-foldoc",
          "fortunes": "apt-get install fortunes fortunes-min", "pydoc": "pip install " + " ".join(d for d, _ in PYDOC_PACKAGES)}


def available():
    """``{name: None}`` for every corpus this machine can build (or has cached), else
    ``{name: reason}``."""
    out = {}
    for name in NAMES:
        if glob.glob(str(cache_dir() / f"{name}-V*-v{_VERSION}.npz")):
            out[name] = None
            continue
        try:
            ok = _probe(name)
            out[name] = None if ok else f"missing: {_HINTS[name]} (bench/setup_corpora.sh)"
        except Unavailable as exc:
            out[name] = str(exc)
    return out


def _fmt_row(name, c, seconds):
    s = c.meta["train_tokens"]
    a = c.meta.get("authors")
    authors = "-" if a is None else (f"{a['n_authors']} (max {a['max_docs_per_author']}, "
                                     f"{100 * a['authors_with_one_doc']:.0f}% one doc)")
    return (f"{name:12s} {corpus_set(name):10s} {c.X_train.shape[0]:>7d} {c.X_test.shape[0]:>6d} "
            f"{s['mean']:7.1f} {s['median']:6.0f} {s['p90']:6.0f} {s['max']:7d} "
            f"{100 * s['top1_share']:5.1f}% {100 * s['top10_share']:5.1f}%  {authors:28s} "
            f"{seconds:6.1f}s")


def main(argv=None):
    p = argparse.ArgumentParser(description="The benchmark corpora: sets, sizes, lengths.")
    p.add_argument("names", nargs="*", default=list(NAMES))
    p.add_argument("--vocabulary-size", type=int, default=5000)
    p.add_argument("--refresh", action="store_true", help="rebuild the cached matrices")
    p.add_argument("--changelog-sample", action="store_true",
                   help="print the changelog sample (source binary per line) and exit")
    a = p.parse_args(argv)
    if a.changelog_sample:
        for src, pkg in changelog_sample():
            print(src, pkg)
        return
    print(f"{'name':12s} {'set':10s} {'train':>7s} {'test':>6s} {'mean':>7s} {'median':>6s} "
          f"{'p90':>6s} {'max':>7s} {'top1%':>6s} {'top10%':>6s}  {'authors':28s} {'load':>7s}")
    for name in a.names:
        if a.refresh:
            _cache_path(name, a.vocabulary_size, 0).unlink(missing_ok=True)
        t = time.perf_counter()
        try:
            c = load(name, vocabulary_size=a.vocabulary_size)
        except Unavailable as exc:
            print(f"{name:12s} {corpus_set(name):10s} unavailable: {exc}")
            continue
        print(_fmt_row(name, c, time.perf_counter() - t), flush=True)
    print("tokens: training documents, in the vocabulary; top1%/top10%: share of the training "
          "tokens in the longest 1% / 10% of documents")


if __name__ == "__main__":
    main()
