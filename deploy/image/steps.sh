#!/bin/sh
# The image's build steps, one place for deploy/Containerfile and for
# tests/packaging/test_image.py (which runs them in a virtualenv where no container
# builder is available):
#
#   steps.sh build SRC WHEELS     hcpscan's wheel and a wheel of every pinned dependency
#   steps.sh install WHEELS DIR   a virtualenv at DIR from WHEELS only (no index), as pinned
#
# Both take exactly the versions of deploy/image/constraints.txt (deploy/image/lock.py).
set -eu
PYTHON="${PYTHON:-python3}"
case "${1:-}" in
build)
    src="$2"; wheels="$3"
    mkdir -p "$wheels"
    "$PYTHON" -m pip wheel --no-cache-dir --disable-pip-version-check --quiet \
        --constraint "$src/deploy/image/constraints.txt" --wheel-dir "$wheels" "$src[cel,live]"
    cp "$src/deploy/image/constraints.txt" "$wheels/constraints.txt"
    ;;
install)
    wheels="$2"; dir="$3"
    "$PYTHON" -m venv "$dir"
    "$dir/bin/python" -m pip install --no-cache-dir --disable-pip-version-check --quiet \
        --no-index --find-links "$wheels" --constraint "$wheels/constraints.txt" "hcpscan[cel,live]"
    # pip is not needed at run time; the scan must still start
    "$dir/bin/python" -m pip uninstall --yes --quiet pip
    "$dir/bin/hcpscan" --version
    ;;
*)
    echo "usage: steps.sh build SRC WHEELS | install WHEELS DIR" >&2
    exit 2
    ;;
esac
