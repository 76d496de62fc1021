#!/bin/sh
# Install what bench/corpora.py reads (Debian 12 "bookworm", as root). Idempotent: a second
# run downloads nothing already extracted.
#   sh bench/setup_corpora.sh            # apt lists, dictionaries, fortunes, changelog sample
set -eu
CACHE="${DPTM_BENCH_CACHE:-$HOME/.cache/dptm-bench}"
HERE="$(cd "$(dirname "$0")" && pwd)"

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

# the changelog sample: one binary package (the smallest, <= 1 MB) of each source package
# whose name hashes into one tenth of bookworm main; only its changelog.Debian.gz is kept
mkdir -p "$CACHE/debs"
python3 "$HERE/corpora.py" --changelog-sample > "$CACHE/changelog-sample.txt"
todo="$CACHE/changelog-todo.txt"
: > "$todo"
while read -r src pkg; do
    [ -e "$CACHE/debs/$src/.done" ] || echo "$src $pkg" >> "$todo"
done < "$CACHE/changelog-sample.txt"
echo "changelog sample: $(wc -l < "$CACHE/changelog-sample.txt") packages, $(wc -l < "$todo") to fetch"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
split -l 200 "$todo" "$tmp/batch."
for batch in "$tmp"/batch.*; do
    [ -e "$batch" ] || continue
    (cd "$tmp" && cut -d' ' -f2 "$batch" | xargs apt-get download -q >/dev/null 2>&1) || true
    while read -r src pkg; do
        deb="$(ls "$tmp/${pkg}"_*.deb 2>/dev/null | head -n 1)"
        [ -n "$deb" ] || continue
        mkdir -p "$CACHE/debs/$src"
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$CACHE/debs/$src" \
            --wildcards './usr/share/doc/*/changelog.Debian.gz' 2>/dev/null || true
        echo "$pkg $(basename "$deb")" > "$CACHE/debs/$src/.done"
        rm -f "$deb"
    done < "$batch"
done
echo "extracted: $(ls "$CACHE"/debs/*/usr/share/doc/*/changelog.Debian.gz 2>/dev/null | wc -l) changelogs"

# the perlpod corpus: the module manual pages (usr/share/man/man3) of every lib*-perl
# package of bookworm main of at most 200 kB; four downloads at a time
mkdir -p "$CACHE/perl"
python3 "$HERE/corpora.py" --perl-sample > "$CACHE/perl-sample.txt"
ptodo="$tmp/perl-todo.txt"
: > "$ptodo"
while read -r pkg; do
    [ -e "$CACHE/perl/$pkg/.done" ] || echo "$pkg" >> "$ptodo"
done < "$CACHE/perl-sample.txt"
echo "perl sample: $(wc -l < "$CACHE/perl-sample.txt") packages, $(wc -l < "$ptodo") to fetch"
fetch_perl() {  # $1: a file of package names; download, keep the man3 pages, mark done
    d="$(mktemp -d "$tmp/p.XXXXXX")"
    (cd "$d" && xargs apt-get download -q < "$1" >/dev/null 2>&1) || true
    while read -r pkg; do
        deb="$(ls "$d/${pkg}"_*.deb 2>/dev/null | head -n 1)"
        [ -n "$deb" ] || continue
        mkdir -p "$CACHE/perl/$pkg"
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$CACHE/perl/$pkg" \
            --wildcards './usr/share/man/man3/*' 2>/dev/null || true
        echo "$(basename "$deb")" > "$CACHE/perl/$pkg/.done"
        rm -f "$deb"
    done < "$1"
    rm -rf "$d"
}
split -l 100 "$ptodo" "$tmp/pbatch."
n=0
for batch in "$tmp"/pbatch.*; do
    [ -e "$batch" ] || continue
    fetch_perl "$batch" &
    n=$((n + 1))
    [ $((n % 4)) -ne 0 ] || wait
done
wait
echo "perl pages: $(ls "$CACHE"/perl/*/usr/share/man/man3/ 2>/dev/null | grep -c '\.3pm')"
