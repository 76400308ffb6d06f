#!/usr/bin/env bash
# Byte-identity sweep of the command line: runs a fixed set of `upres` commands (every warp
# transform x interpolation x border x pixel type, the prefilters, every upscale method with an
# explicit --lattice, convert, compare) on small real crops and prints one line per command:
# "sha256  name". Used to show that a refactoring changed no user's pixels:
#
#   tools/cli_hashes.sh BUILD/upres > before.txt      (at the old commit)
#   tools/cli_hashes.sh BUILD/upres --check before.txt  (at the new one; exit 1 on a difference)
#
# tests/data/cli/hashes.txt holds the hashes recorded this way (the CTest test cli_hashes checks
# them); a command that fails records "FAILED(rc)" instead of a hash, so an error turning into
# an output (or back) shows too. A change meant to alter pixels regenerates that file in the
# same commit and says why. Inputs are made with Python (numpy, OpenCV from Debian) from
# examples/data/butterfly.png, independently of upres. About 10 s on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:?usage: tools/cli_hashes.sh UPRES_BINARY [--check FILE]}")
check=""
if [ "${2:-}" = "--check" ]; then check=$(realpath "${3:?--check needs a file}"); fi
work=$(mktemp -d "${TMPDIR:-/tmp}/upres-hashes.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

/usr/bin/python3 - "$root/examples/data/butterfly.png" <<'EOF'
import sys, numpy as np, cv2
im = cv2.imread(sys.argv[1], cv2.IMREAD_COLOR)[:, :, ::-1]  # RGB
rgb = np.ascontiguousarray(im[40:93, 60:121])                 # 61 x 53, odd sizes
grey = np.ascontiguousarray(rgb[:, :, 1])
def png(name, a):
    cv2.imwrite(name, a[:, :, ::-1] if a.ndim == 3 else a)
def pfm(name, a):
    a = a.astype(np.float32)
    h, w = a.shape[:2]
    with open(name, "wb") as f:
        f.write(b"PF\n" if a.ndim == 3 else b"Pf\n")
        f.write(f"{w} {h}\n-1.0\n".encode())
        f.write(np.ascontiguousarray(a[::-1]).tobytes())
png("g8.png", grey); png("c8.png", rgb)
png("g16.png", (grey.astype(np.uint16) * 257 + 3).astype(np.uint16))
png("c16.png", (rgb.astype(np.uint16) * 257 + 5).astype(np.uint16))
pfm("gf.pfm", grey / 255.0); pfm("cf.pfm", rgb / 255.0)
rng = np.random.default_rng(7)
flow = rng.uniform(-3, 3, size=(53, 61, 2)).astype(np.float32)
np.save("flow.npy", flow)
big = cv2.imread(sys.argv[1], cv2.IMREAD_COLOR)[:, :, ::-1]
png("b8.png", np.ascontiguousarray(big[20:60, 30:78]))        # 48 x 40 for SRCNN / SEABI
png("bg8.png", np.ascontiguousarray(big[20:60, 30:78, 1]))
EOF

run() {  # run NAME OUTFILE CMD...: records the hash of OUTFILE (or of stdout when OUTFILE is -)
    local name=$1 out=$2 rc=0
    shift 2
    rm -f "$out" stdout.txt
    "$@" >stdout.txt 2>/dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAILED($rc)  $name"
    elif [ "$out" = "-" ]; then
        echo "$(sha256sum <stdout.txt | cut -c1-64)  $name"
    else
        echo "$(sha256sum <"$out" | cut -c1-64)  $name"
    fi
}

sweep() {
    local ins=(g8.png c8.png g16.png c16.png gf.pfm cf.pfm)
    local transforms=("--rotate 17" "--zoom 1.7" "--size 40x70" "--affine 0.9,0.2,1.5,-0.1,1.1,-2"
                      "--homography 1,0.05,1,0.02,1,-1,0.001,0.0005,1" "--flow flow.npy")
    for in in "${ins[@]}"; do
        local ext=${in##*.}
        for t in "${transforms[@]}"; do
            for interp in nearest linear cubic bspline; do
                for border in mirror reflect nearest wrap constant; do
                    # shellcheck disable=SC2086  # $t is a flag and its value
                    run "warp $in $t $interp $border" "o.$ext" \
                        "$bin" warp "$in" "o.$ext" $t --interp "$interp" --border "$border" \
                        --fill 0.25 -q
                done
            done
        done
        for pf in fir fir3 fir15 fir31; do
            run "warp $in zoom2 $pf" "o.$ext" "$bin" warp "$in" "o.$ext" --zoom 2 \
                --prefilter "$pf" -q
        done
        for interp in linear cubic; do
            run "warp $in zoom0.6 $interp antialias" "o.$ext" "$bin" warp "$in" "o.$ext" \
                --zoom 0.6 --interp "$interp" --antialias -q
        done
        run "warp $in rotate reference" "o.$ext" "$bin" --backend reference warp "$in" \
            "o.$ext" --rotate 33 -q
    done
    for in in b8.png bg8.png; do
        for m in lseai silseabi lseabi tap4 tap6 bilinear bicubic; do
            for s in 2 3 4; do
                run "upscale $in $m x$s cosited" o.png "$bin" upscale "$in" o.png --method "$m" \
                    --scale "$s" --lattice cosited -q
            done
        done
        for m in lseai silseabi lseabi tap4 tap6 bilinear bicubic srcnn; do
            for s in 2 3 4; do
                run "upscale $in $m x$s centered" o.png "$bin" upscale "$in" o.png --method "$m" \
                    --scale "$s" --lattice centered -q
            done
        done
        run "upscale $in lseabi iterations" o.png "$bin" upscale "$in" o.png --method lseabi \
            --iterations 2 --max-error 0.5 --lattice cosited -q
        run "upscale $in srcnn reference" o.png "$bin" --backend reference upscale "$in" o.png \
            --method srcnn --scale 2 --lattice centered -q
    done
    for in in c16.png cf.pfm; do
        local ext=${in##*.}
        run "upscale $in srcnn x2" "o.$ext" "$bin" upscale "$in" "o.$ext" --method srcnn \
            --scale 2 --lattice centered -q
        run "upscale $in bicubic x3" "o.$ext" "$bin" upscale "$in" "o.$ext" --method bicubic \
            --scale 3 --lattice centered -q
    done
    for in in g8.png c16.png cf.pfm; do
        for d in u8 u16 f32; do
            run "convert $in $d npy" o.npy "$bin" convert "$in" o.npy --depth "$d" -q
            run "convert $in $d tiff" o.tif "$bin" convert "$in" o.tif --depth "$d" -q
        done
        run "convert $in f32 pfm" o.pfm "$bin" convert "$in" o.pfm --depth f32 -q
    done
    "$bin" warp c8.png ref.png --zoom 1 --interp nearest -q
    "$bin" warp c8.png cmp.png --rotate 3 -q
    run "compare json" - "$bin" compare ref.png cmp.png --json
    run "compare shave json" - "$bin" compare ref.png cmp.png --shave 4 --json
}

if [ -z "$check" ]; then
    sweep
else
    sweep >now.txt
    if diff -u "$check" now.txt >diff.txt; then
        echo "cli_hashes: all $(wc -l <now.txt) outputs identical to $check"
    else
        cat diff.txt
        echo "cli_hashes: $(grep -c '^+[^+]' diff.txt) of $(wc -l <now.txt) outputs differ" >&2
        exit 1
    fi
fi
