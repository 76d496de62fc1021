"""The sources of the benchmark corpora (bench/corpora.py): one loader per corpus, each
returning the raw documents with stable ids, author keys where the source has them, and
its provenance. The processing (split, vocabulary, cache) is in corpora.py."""
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
from dataclasses import dataclass
from pathlib import Path


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
    paths = sorted(glob.glob(os.path.join(APT_LISTS,
                                          "*_dists_bookworm_main_binary-amd64_Packages*")))
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


PERL_MAX_BYTES = 200_000


def perl_sample():
    """The ``lib*-perl`` packages of bookworm main amd64 of at most ``PERL_MAX_BYTES``
    (3,968 of 4,156 on 2026-12-02), whose module manual pages form the perlpod corpus."""
    paths = sorted(glob.glob(os.path.join(APT_LISTS,
                                          "*_dists_bookworm_main_binary-amd64_Packages*")))
    if not paths:
        raise Unavailable(f"no bookworm main Packages list in {APT_LISTS} (apt-get update)")
    return sorted(st["Package"] for st in _stanzas(_apt_cat(paths[0]))
                  if st.get("Package", "").startswith("lib") and st["Package"].endswith("-perl")
                  and int(st.get("Size", "0")) <= PERL_MAX_BYTES)


def _sample_progress(listing, folder):
    """(packages fetched, packages listed) by bench/setup_corpora.sh, or None."""
    listing = cache_dir() / listing
    if not listing.is_file():
        return None
    names = [ln.split()[0] for ln in listing.read_text().splitlines() if ln.strip()]
    done = sum((cache_dir() / folder / name / ".done").is_file() for name in names)
    return done, len(names)


def _missing(folder):
    """Packages of a sample that apt could not download (marked by bench/setup_corpora.sh)."""
    marks = glob.glob(str(cache_dir() / folder / "*" / ".done"))
    return sum(Path(m).read_text().startswith("missing") for m in marks)


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
    paths = sorted(glob.glob(str(root / "*" / "usr/share/doc" / "*" / "changelog.Debian.gz")))
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
                                     "missing": _missing("debs"),
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


# Debian packages with many English manual pages, installed by bench/setup_corpora.sh
MANPAGE_PACKAGES = ("man-db", "manpages", "manpages-dev", "perl-doc", "libssl-doc",
                    "erlang-manpages", "tcl8.6-doc", "tk8.6-doc", "libx11-doc",
                    "libcurl4-doc", "libsystemd-dev")


def _debian_package_names():
    names = set()
    for path in sorted(glob.glob(os.path.join(APT_LISTS, "*_main_binary-amd64_Packages*"))):
        names.update(st["Package"] for st in _stanzas(_apt_cat(path)) if "Package" in st)
    return names


def _man_owners():
    # installed file -> package, from dpkg's file lists
    owners = {}
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(lst)[:-5].split(":")[0]
        with open(lst, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("/usr/share/man/man"):
                    owners[line.rstrip("\n")] = package
    return owners


def manpages():
    """English manual pages of Debian packages, one document per page (sections 1-8).

    Provenance: ``/usr/share/man/man[1-8]/*`` on this machine (Debian 12 "bookworm";
    translations under ``/usr/share/man/<locale>`` left out), only pages that dpkg lists
    as installed by a package of the Debian archive (a name in the apt lists: third-party
    packages such as the 16,600 generated pages of ``google-cloud-cli`` are out). The
    installed set is this image's plus ``MANPAGE_PACKAGES`` (bench/setup_corpora.sh);
    on 2026-12-02 the pages' packages and versions are in ``meta['provenance']``. Roff is
    converted by :func:`roff_to_text`; pages that only source another (``.so``) and
    identical texts are kept once. Licence: each page's package's copyright file
    (DFSG-free)."""
    paths = sorted(glob.glob("/usr/share/man/man[1-8]/*"))
    if len(paths) < 1000:
        raise Unavailable(f"only {len(paths)} files under /usr/share/man/man[1-8] (a Debian "
                          "system with manual pages installed, not a minimised image)")
    debian_names, owners = _debian_package_names(), _man_owners()
    texts, ids, seen, files, used = [], [], set(), set(), {}
    for path in paths:
        package = owners.get(path)
        real = os.path.realpath(path)
        if package not in debian_names or real in files or not os.path.isfile(real):
            continue
        files.add(real)
        src = _read_man_page(real)
        text = None if src is None else roff_to_text(src)
        if text is None or not _first_time(text, seen):
            continue
        texts.append(text)
        ids.append(os.path.relpath(path, "/usr/share/man"))
        used[package] = used.get(package, 0) + 1
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]
    return _Raw(texts, ids, None, {"files": len(files), "sha256": digest,
                                   "packages": {p: [_deb_version(p), n]
                                                for p, n in sorted(used.items())}})


def _read_man_page(real):
    """The roff source of a (possibly gzipped) manual page; None if unreadable or a
    one-line ``.so`` redirect to another page."""
    try:
        opener = gzip.open if real.endswith(".gz") else open
        with opener(real, "rt", encoding="utf-8", errors="replace") as f:
            src = f.read()
    except (OSError, EOFError):
        return None
    if src.lstrip().startswith(".so ") and src.count("\n") <= 3:
        return None
    return src


def _first_time(text, seen):
    """Whether ``text`` (compared lowercased, whitespace-normalised) is new; records it."""
    key = hashlib.sha1(" ".join(text.lower().split()).encode()).digest()
    if key in seen:
        return False
    seen.add(key)
    return True


_AUTHOR_SECTION = re.compile(r"^\.SH\s+\"?AUTHORS?\b[^\n]*\n(.*?)(?=^\.SH|\Z)", re.M | re.S)
_AUTHOR_NOISE = re.compile(r"\b(copyright|written|originally|original|maintained|created|"
                           r"developed|authored|ported|rewritten|current(ly)?|maintainers?|"
                           r"authors?|module|version|released|this|by|the|is|was|and|c|"
                           r"\d{4})\b|\(c\)|[^\w\s.'-]", re.I)
_NOT_A_NAME = re.compile(r"\b(license|licence|you|may|use|http|www|see|perl|cpan|code|"
                         r"under|free|software|distribut\w*|thanks|conceived|team|project)\b")


def pod_author(source):
    """The first author named in a POD-generated page's AUTHOR(S) section (roff source):
    the words before the first ``<``, ``,``, ``(`` or `` and `` of its first text line,
    lowercased, with "Copyright (c) 2004", "written by" and the like removed; or None."""
    m = _AUTHOR_SECTION.search(source)
    if not m:
        return None
    for line in roff_to_text(m.group(1)).splitlines():
        line = re.sub(r"\(c\)|\u00a9", " ", line.strip(), flags=re.I)
        line = re.split(r"<|,|\(|\band\b|@|\bat\b", line, maxsplit=1)[0]
        words = _AUTHOR_NOISE.sub(" ", line).split()
        name = " ".join(words).strip(" .-'").lower()
        if (2 <= len(name) <= 40 and re.search(r"[a-z]", name) and len(words) <= 5
                and not _NOT_A_NAME.search(name)):
            return name
    return None


def perlpod():
    """Perl module documentation, one document per module manual page (long pages of
    reference prose), authored by the module's first upstream author (its AUTHOR section;
    the package's name when the page names none).

    Provenance: ``usr/share/man/man3/*.3pm.gz`` of the ``lib*-perl`` packages of Debian 12
    "bookworm" main of at most 200 kB (:func:`perl_sample`: 3,968 packages), downloaded
    with ``apt-get download`` and extracted with ``dpkg-deb`` into
    ``~/.cache/dptm-bench/perl`` by ``bench/setup_corpora.sh`` (2026-12-02); roff
    converted by :func:`roff_to_text`; identical texts kept once. Licence: each module's
    (mostly "the same terms as Perl itself": Artistic or GPL-1+)."""
    root = cache_dir() / "perl"
    done = _sample_progress("perl-sample.txt", "perl")
    if done is None or done[0] < done[1]:
        raise Unavailable(f"perl sample not downloaded ({done and done[0]} of "
                          f"{done and done[1]} packages; run bench/setup_corpora.sh as root)")
    texts, ids, groups, seen = [], [], [], set()
    for path in sorted(glob.glob(str(root / "*" / "usr/share/man/man3" / "*"))):
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            continue
        src = _read_man_page(real)
        text = None if src is None else roff_to_text(src)
        if text is None or not _first_time(text, seen):
            continue
        package = Path(path).relative_to(root).parts[0]
        texts.append(text)
        ids.append(f"{package}/{Path(path).name}")
        groups.append(pod_author(src) or f"package:{package}")
    return _Raw(texts, ids, groups, {"path": str(root), "packages": done[1],
                                     "missing": _missing("perl"),
                                     "max_bytes": PERL_MAX_BYTES})


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
_ATTRIBUTION = re.compile(r"^\s*--\s*([^,(\[\n]+)")


def split_attribution(fortune):
    """(quotation, author key or None): a ``-- Name, source`` line among the last three
    lines is the attribution; it and what follows are cut, the name before the first
    comma, parenthesis or bracket (lowercased, spaces collapsed) is the author."""
    lines = fortune.rstrip().splitlines()
    for k in range(len(lines) - 1, max(len(lines) - 4, 0), -1):
        m = _ATTRIBUTION.match(lines[k])
        if m and k > 0:
            name = " ".join(m.group(1).strip().strip('"').split()).lower()
            return "\n".join(lines[:k]).rstrip(), name or None
    return fortune.strip(), None


def fortunes():
    """Fortune cookies, one document per fortune (short quotations and jokes), authored by
    the name of their ``-- Name`` attribution line (cut from the text); an unattributed
    fortune is its own author (a distinct anonymous one each: about half of them).

    Provenance: Debian packages ``fortunes`` and ``fortunes-min`` 1:1.99.1-7.3 (bookworm),
    every data file of ``/usr/share/games/fortunes`` (the files beside their ``.dat``
    index; the offensive set ``fortunes-off`` is not installed); fortunes split on lines
    holding only ``%``; attribution by :func:`split_attribution`. Licence: BSD
    (fortune-mod); the quotations' authors hold theirs."""
    root = "/usr/share/games/fortunes"
    datas = sorted(glob.glob(os.path.join(root, "*.dat")))
    if len(datas) < 10:
        raise Unavailable(f"no fortune files in {root} (apt-get install fortunes fortunes-min)")
    texts, ids, groups = [], [], []
    for dat in datas:
        path = dat[:-4]
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            parts = re.split(r"\n%\n", "\n" + f.read())
        for i, p in enumerate(parts):
            if p.strip():
                text, who = split_attribution(p)
                doc_id = f"{os.path.basename(path)}#{i}"
                texts.append(text)
                ids.append(doc_id)
                groups.append(who if who else f"anonymous:{doc_id}")
    prov = {"packages": {p: _deb_version(p) for p in ("fortunes", "fortunes-min")},
            "path": root, "files": len(datas)}
    return _dedup(_Raw(texts, ids, groups, prov))


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


# a loader's revision: raise it when its output changes (its caches are then rebuilt)
SOURCE_VERSION = {"fortunes": 1, "manpages": 1}

LOADERS = {"debian": debian, "changelogs": changelogs, "manpages": manpages,
           "gcide": gcide, "wordnet": wordnet, "foldoc": foldoc, "fortunes": fortunes,
           "pydoc": pydoc, "perlpod": perlpod, "kos": kos, "nips": nips, "c50": c50,
           "tweetrumors": tweetrumors}


