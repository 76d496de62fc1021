#!/bin/sh
# Install what bench/corpora.py reads (Debian 12 "bookworm", as root). Idempotent: a second
# run downloads nothing already extracted.
#   sh bench/setup_corpora.sh     # apt lists, dictionaries, fortunes, man-page packages,
#                                 # the changelog and perl samples (~410 MB downloaded)
#   PYTHON=/path/to/python sh bench/setup_corpora.sh   # the interpreter with numpy, scipy
set -eu
CACHE="${DPTM_BENCH_CACHE:-$HOME/.cache/dptm-bench}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# English package descriptions (the Debian image's default is Acquire::Languages "none")
if ! ls /var/lib/apt/lists/*_main_i18n_Translation-en* >/dev/null 2>&1; then
    apt-get update -o Acquire::Languages=en
fi

# dictionaries (dictd format; no dictd server needed), fortunes, packages with many English
# manual pages (corpus_sources.MANPAGE_PACKAGES)
need=""
for p in dict-gcide dict-wn dict-foldoc fortunes fortunes-min \
         man-db manpages manpages-dev perl-doc libssl-doc erlang-manpages tcl8.6-doc \
         tk8.6-doc libx11-doc libcurl4-doc libsystemd-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need
fi

# fetch LIST DEST PATTERN: LIST has lines "key package"; each package is downloaded, the
# members matching PATTERN are extracted into DEST/key, DEST/key/.done records the .deb
# (or "missing" when apt has no such package); the .deb is deleted
fetch() {
    d="$(mktemp -d "$tmp/f.XXXXXX")"
    (cd "$d" && cut -d' ' -f2 "$1" | xargs apt-get download -q >/dev/null 2>&1) || true
    while read -r key pkg; do
        deb="$(ls "$d/${pkg}"_*.deb 2>/dev/null | head -n 1)"
        if [ -z "$deb" ]; then  # the batch failed on another name: this one alone
            (cd "$d" && apt-get download -q "$pkg" >/dev/null 2>&1) || true
            deb="$(ls "$d/${pkg}"_*.deb 2>/dev/null | head -n 1)"
        fi
        mkdir -p "$2/$key"
        if [ -z "$deb" ]; then
            echo "missing $pkg" > "$2/$key/.done"
            continue
        fi
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$2/$key" --wildcards "$3" 2>/dev/null || true
        basename "$deb" > "$2/$key/.done"
        rm -f "$deb"
    done < "$1"
    rm -rf "$d"
}

# sample NAME DEST PATTERN: fetch the packages of LIST not yet done, four batches at a time
sample() {
    : > "$tmp/$1.todo"
    while read -r key pkg; do
        [ -e "$2/$key/.done" ] || echo "$key $pkg" >> "$tmp/$1.todo"
    done < "$CACHE/$1-sample.txt"
    echo "$1 sample: $(wc -l < "$CACHE/$1-sample.txt") packages, $(wc -l < "$tmp/$1.todo") to fetch"
    split -l 100 "$tmp/$1.todo" "$tmp/$1.batch."
    n=0
    for batch in "$tmp/$1".batch.*; do
        [ -e "$batch" ] || continue
        fetch "$batch" "$2" "$3" &
        n=$((n + 1))
        [ $((n % 4)) -ne 0 ] || wait
    done
    wait
}

# the changelog sample: one binary package (the smallest, <= 1 MB) of each source package
# whose name hashes into one tenth of bookworm main; only its changelog.Debian.gz is kept
mkdir -p "$CACHE/debs" "$CACHE/perl"
"$PY" "$HERE/corpora.py" --changelog-sample > "$CACHE/changelog-sample.txt"
sample changelog "$CACHE/debs" './usr/share/doc/*/changelog.Debian.gz'
echo "changelogs: $(ls "$CACHE"/debs/*/usr/share/doc/*/changelog.Debian.gz 2>/dev/null | wc -l)"

# the perlpod corpus: the module manual pages (usr/share/man/man3) of every lib*-perl
# package of bookworm main of at most 200 kB
"$PY" "$HERE/corpora.py" --perl-sample | awk '{print $1, $1}' > "$CACHE/perl-sample.txt"
sample perl "$CACHE/perl" './usr/share/man/man3/*'
echo "perl pages: $(ls "$CACHE"/perl/*/usr/share/man/man3/ 2>/dev/null | grep -c '\.3pm')"
