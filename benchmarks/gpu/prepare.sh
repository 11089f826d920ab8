#!/usr/bin/env bash
# Collect the wheels that benchmarks/gpu/run.sh installs offline on a GPU machine: warpspeed's own
# wheel and the dependencies such a machine lacks (benchmarks/gpu/requirements.txt: pystencils,
# islpy, sympy, scipy, ...; not numpy, cupy or matplotlib), for one Python version on Linux x86_64.
# Run it on a machine with internet access (PyPI):
#
#   benchmarks/gpu/prepare.sh [--python-version 3.12] [--with-numpy] [--dest DIR]
#
# --python-version  the GPU machine's Python (default 3.12); run.sh refuses another one
# --with-numpy      also carry numpy (for a GPU machine without it; about 16 MB more)
# --dest            where the wheels go (default benchmarks/gpu/wheels/, ignored by git)
#
# The folder must stay small enough to travel with the repository: it fails above 64 MiB.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python_version="3.12"
dest="$here/wheels"
with_numpy=0
limit_mib=64
python="${PYTHON:-python3}"

while [ $# -gt 0 ]; do
    case "$1" in
        --python-version) python_version="$2"; shift 2 ;;
        --with-numpy) with_numpy=1; shift ;;
        --dest) dest="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "error: unknown option $1 (allowed: --python-version X.Y, --with-numpy, --dest DIR)" >&2; exit 2 ;;
    esac
done
if ! [[ "$python_version" =~ ^3\.[0-9]+$ ]]; then
    echo "error: --python-version must look like 3.12, got '$python_version'" >&2
    exit 2
fi

rm -rf "$dest"
mkdir -p "$dest"

echo "== warpspeed's wheel (from $root)"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$dest" "$root"

echo "== dependencies for CPython $python_version, Linux x86_64"
platforms=()
for p in manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_27_x86_64 manylinux_2_28_x86_64 linux_x86_64; do
    platforms+=(--platform "$p")
done
"$python" -m pip download --quiet --only-binary=:all: --python-version "$python_version" "${platforms[@]}" \
    --dest "$dest" -r "$here/requirements.txt"
if [ "$with_numpy" -eq 0 ]; then
    rm -f "$dest"/numpy-*.whl
fi

commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
{
    echo "python_version: $python_version"
    echo "platform: linux x86_64 (manylinux_2_28 and older)"
    echo "numpy: $([ "$with_numpy" -eq 1 ] && echo carried || echo 'not carried (the GPU machine has it)')"
    echo "warpspeed_commit: $commit"
    echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "files:"
    (cd "$dest" && ls -1 *.whl | sort | while read -r f; do echo "  $f $(stat -c %s "$f")"; done)
} > "$dest/MANIFEST.txt"

bytes="$(du -sb "$dest" | cut -f1)"
mib="$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
count="$(ls -1 "$dest"/*.whl | wc -l)"
echo "== $count wheels, $mib MiB in $dest"
if [ "$bytes" -gt $((limit_mib * 1048576)) ]; then
    echo "error: $mib MiB is above the $limit_mib MiB that can travel with the repository" >&2
    exit 1
fi
