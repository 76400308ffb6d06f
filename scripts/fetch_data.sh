#!/usr/bin/env bash
# Copies the real images upres uses (tests, examples, evaluation) from Debian packages into the
# ignored data/ folder, following tools/data/manifest.tsv. Installs opencv-doc and
# python3-skimage if they are missing (needs root or sudo). Safe to re-run.
#   scripts/fetch_data.sh            images of the manifest
#   scripts/fetch_data.sh --videos   also the clips vtest.avi, tree.avi and Megamind.avi
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest="$root/tools/data/manifest.tsv"
out="$root/data"
opencv_dir=/usr/share/doc/opencv-doc/examples/data
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

need=()
[ -d "$opencv_dir" ] || need+=(opencv-doc)
skimage_dir=$(/usr/bin/python3 -c 'import os, skimage; print(os.path.join(os.path.dirname(skimage.__file__), "data"))' 2>/dev/null || true)
[ -n "$skimage_dir" ] || need+=(python3-skimage)
if [ ${#need[@]} -gt 0 ]; then
    echo "fetch_data: installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    skimage_dir=$(/usr/bin/python3 -c 'import os, skimage; print(os.path.join(os.path.dirname(skimage.__file__), "data"))')
fi

mkdir -p "$out"
n=0
while IFS=$'\t' read -r name set source notes; do
    case "$name" in ''|'#'*) continue ;; esac
    case "$source" in
        opencv:*) src="$opencv_dir/${source#opencv:}" ;;
        skimage:*) src="$skimage_dir/${source#skimage:}" ;;
        *) echo "fetch_data: bad source '$source' in manifest" >&2; exit 2 ;;
    esac
    # Debian may ship documentation files compressed.
    if [ ! -f "$src" ] && [ -f "$src.gz" ]; then
        gzip -dc "$src.gz" > "$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name"
    elif [ -f "$src" ]; then
        cp -f "$src" "$out/$name"
    else
        echo "fetch_data: missing $src" >&2; exit 2
    fi
    n=$((n + 1))
done < "$manifest"
cp -f "$manifest" "$out/manifest.tsv"
if [ "${1:-}" = "--videos" ]; then
    for v in vtest.avi tree.avi Megamind.avi; do cp -f "$opencv_dir/$v" "$out/$v"; n=$((n + 1)); done
fi
echo "fetch_data: $n files in $out"
