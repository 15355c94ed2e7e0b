#!/usr/bin/env bash
# Lay out a real SGLang release the way it sits on a GPU box, for sgtrace to fetch over SSH.
# The tests run this script without Docker; docker/Dockerfile runs it at build time.
#
#   setup-target.sh VERSION DEST [--layout checkout|site-packages] [--patch FILE]
#                                [--python-version X.Y]
#
#   checkout       DEST is a git repository like a clone of sglang at tag vVERSION:
#                  DEST/python/pyproject.toml, DEST/python/sglang/...; one commit, tagged.
#                  --patch is applied with `git apply` and left uncommitted (a modified tree).
#   site-packages  DEST is a virtualenv prefix: DEST/pyvenv.cfg,
#                  DEST/lib/pythonX.Y/site-packages/{sglang/, sglang-VERSION.dist-info/}
#                  (X.Y is 3.12 unless --python-version). --patch, written against the
#                  checkout (a/python/sglang/...), edits the installed files, so they no longer
#                  match the dist-info RECORD.
#
# The wheel comes from `pip download --no-deps` and is kept in
# ${SGTRACE_TEST_CACHE:-${SGTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sgtrace}}/wheels.
# PYTHON picks the interpreter (default python3; it needs pip). DEST must be absent or empty.
# On success the last line printed is the directory holding the `sglang` package.
set -euo pipefail

usage() {
    echo "usage: $0 VERSION DEST [--layout checkout|site-packages] [--patch FILE]" \
        "[--python-version X.Y]" >&2
    exit 2
}

[ $# -ge 2 ] || usage
version=$1
dest=$2
shift 2
layout=checkout
patch=
pyver=3.12
while [ $# -gt 0 ]; do
    case $1 in
        --layout) layout=${2:?--layout needs a value}; shift 2 ;;
        --patch) patch=${2:?--patch needs a file}; shift 2 ;;
        --python-version) pyver=${2:?--python-version needs X.Y}; shift 2 ;;
        *) usage ;;
    esac
done
case $layout in checkout | site-packages) ;; *) usage ;; esac
case $version in *[!A-Za-z0-9.+!_-]* | "") echo "bad version: $version" >&2; exit 2 ;; esac
if [ -n "$patch" ]; then
    [ -f "$patch" ] || { echo "no such patch file: $patch" >&2; exit 2; }
    patch=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
fi
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
    echo "$dest exists and is not empty" >&2
    exit 2
fi
python=${PYTHON:-python3}
cache=${SGTRACE_TEST_CACHE:-${SGTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sgtrace}}/wheels
mkdir -p "$cache"

find_wheel() {
    for wheel in "$cache"/sglang-"$version"-*.whl; do
        [ -f "$wheel" ] && { echo "$wheel"; return 0; }
    done
    return 1
}

if ! wheel=$(find_wheel); then
    # Download beside the cache, then move in: a concurrent run never sees half a wheel.
    partial=$(mktemp -d "$cache/.partial-XXXXXX")
    trap 'rm -rf "$partial"' EXIT
    pip_download=("$python" -m pip download --no-deps --quiet --disable-pip-version-check
        --only-binary=:all: -d "$partial")
    # The wheel is pure Python; if this interpreter is too old or new for it, ask for 3.12's.
    "${pip_download[@]}" "sglang==$version" 2>"$partial/pip.log" ||
        "${pip_download[@]}" --python-version 3.12 "sglang==$version" 2>>"$partial/pip.log" || {
        grep '^ERROR' "$partial/pip.log" | sort -u >&2
        echo "cannot download sglang==$version (is the version on the package index?)" >&2
        exit 1
    }
    for downloaded in "$partial"/sglang-*.whl; do mv -f "$downloaded" "$cache/"; done
    wheel=$(find_wheel)
fi

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
case $layout in
    checkout) package_root=$dest/python ;;
    site-packages) package_root=$dest/lib/python$pyver/site-packages ;;
esac
mkdir -p "$package_root"

# Only sglang/ and the dist-info leave the wheel, and no member may climb out of its root.
"$python" - "$wheel" "$package_root" "$layout" <<'PY'
import sys
import zipfile
from pathlib import Path, PurePosixPath

wheel, root, layout = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(wheel) as zf:
    for info in zf.infolist():
        path = PurePosixPath(info.filename)
        if path.is_absolute() or ".." in path.parts or "\\" in info.filename:
            sys.exit(f"unsafe member in {wheel.name}: {info.filename!r}")
        top = path.parts[0]
        wanted = top == "sglang" or (top.endswith(".dist-info") and layout == "site-packages")
        if not wanted or info.is_dir():
            continue
        out = root.joinpath(*path.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(zf.read(info))
PY

# Every git call: no user or system config (signing, hooks, templates), fixed identity and
# dates so the same release always gives the same commit.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
GIT_CEILING_DIRECTORIES=$(dirname "$dest")
export GIT_CEILING_DIRECTORIES
export GIT_AUTHOR_NAME=sgtrace GIT_AUTHOR_EMAIL=sgtrace@localhost
export GIT_COMMITTER_NAME=sgtrace GIT_COMMITTER_EMAIL=sgtrace@localhost
export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"

if [ "$layout" = checkout ]; then
    cat >"$dest/python/pyproject.toml" <<EOF
[build-system]
requires = ["setuptools>=61.0", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "sglang"
version = "$version"
requires-python = ">=3.8"

[tool.setuptools.packages.find]
exclude = ["assets*", "benchmark*", "docs*", "dist*", "playground*", "scripts*", "tests*"]
EOF
    printf '# SGLang %s\n\nLaid out from the PyPI wheel by sgtrace docker/setup-target.sh.\n' \
        "$version" >"$dest/README.md"
    git -C "$dest" init -q --template= -b main
    git -C "$dest" add -A
    git -C "$dest" commit -q -m "sglang $version"
    git -C "$dest" tag "v$version"
    [ -z "$patch" ] || git -C "$dest" apply "$patch"
else
    cat >"$dest/pyvenv.cfg" <<EOF
home = /usr/bin
include-system-site-packages = false
version = $pyver.0
EOF
    [ -z "$patch" ] || (cd "$dest" && git apply -p2 --directory="lib/python$pyver/site-packages" "$patch")
fi

echo "$package_root"
