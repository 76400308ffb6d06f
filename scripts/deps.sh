#!/usr/bin/env bash
# Installs what upres needs on Debian 12 / Ubuntu with apt-get, only what is missing (checked
# with dpkg -s, so a machine that has everything never touches apt). Needs root or sudo when
# something is missing. Safe to re-run.
#   scripts/deps.sh           everything: build, tests, benchmarks, format check, fuzzing and
#                             ThreadSanitizer (clang, libomp),
#                             video tests (ffmpeg), golden data
#   scripts/deps.sh --build   only what building the library and the upres command needs
# CUDA is not installed here: the CUDA backends are compiled when nvcc is found (PATH or
# /usr/local/cuda/bin), see README.md.
set -euo pipefail

build_pkgs=(build-essential cmake ninja-build pkg-config libpng-dev libjpeg-dev libtiff-dev
            libavformat-dev libavcodec-dev libavutil-dev
            libcli11-dev libfmt-dev)
all_pkgs=("${build_pkgs[@]}" libgtest-dev libgmock-dev libbenchmark-dev clang-format clang libomp-dev
          python3-numpy python3-scipy python3-skimage python3-opencv opencv-doc python3-dev
          python3-venv ffmpeg)

case "${1:-}" in
    --build) pkgs=("${build_pkgs[@]}") ;;
    ""|--all) pkgs=("${all_pkgs[@]}") ;;
    *) echo "usage: scripts/deps.sh [--build|--all]" >&2; exit 1 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
    # Installed means dpkg's status says "install ok installed" (not just "known").
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#pkgs[@]} packages present"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "deps: missing packages ${missing[*]} and no apt-get: install them by hand" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
        sudo="sudo"
    else
        echo "deps: missing packages ${missing[*]}: run as root or install sudo" >&2
        exit 1
    fi
fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
echo "deps: installed ${#missing[@]} packages"
