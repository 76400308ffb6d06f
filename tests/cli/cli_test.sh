#!/usr/bin/env bash
# End-to-end tests of the upres command-line tool, run by CTest (tests/cli/CMakeLists.txt):
#   tests/cli/cli_test.sh path/to/upres [repo root]
# Prints one PASS/FAIL/SKIP line per check and exits non-zero if any check failed.
# Exit codes checked here are documented in docs/cli.md (0 ok, 1 usage, 2 + ErrorCode - 1).
set -uo pipefail

upres=${1:?usage: cli_test.sh path/to/upres [repo root]}
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
sample="$root/examples/data/butterfly.png"
py=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/upres-cli-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Exit codes (upres::exit_code).
EX_USAGE=1
EX_INVALID=2      # invalid_argument
EX_FORMAT=3       # unsupported_format
EX_IO=4           # io_error

passed=0
failed=0
skipped=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
skip() { echo "SKIP: $1"; skipped=$((skipped + 1)); }

# (Output checks read $out / $err through a here-string: `printf | grep -q` with pipefail can
# fail when grep exits before printf has written, SIGPIPE.)
# run NAME CMD...: runs a command, keeping stdout, stderr and the exit code in $out $err $rc.
run() {
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    out=$(cat "$tmp/stdout")
    err=$(cat "$tmp/stderr")
}
# expect_rc NAME WANT: checks $rc, showing stderr on failure.
expect_rc() {
    if [ "$rc" -eq "$2" ]; then
        pass "$1 (exit $rc)"
    else
        fail "$1: exit $rc, expected $2; stderr: $err"
    fi
}
# expect_one_line_error NAME WANT_RC PATTERN: exit code WANT_RC, exactly one line on stderr
# matching PATTERN (grep -E), nothing on stdout.
expect_one_line_error() {
    local lines
    lines=$(printf '%s' "$err" | grep -c '' || true)
    if [ "$rc" -ne "$2" ]; then
        fail "$1: exit $rc, expected $2; stderr: $err"
    elif [ "$lines" -ne 1 ]; then
        fail "$1: $lines lines on stderr, expected 1: $err"
    elif ! grep -Eq -- "$3" <<<"$err"; then
        fail "$1: stderr does not match '$3': $err"
    elif [ -n "$out" ]; then
        fail "$1: unexpected stdout: $out"
    else
        pass "$1 (exit $rc: $err)"
    fi
}

# resumes NAME LIMIT_KB REF DIR CMD...: CMD (writing DIR/o.tif) fails on a file size limit of
# LIMIT_KB (a disk that fills up) after some rows of tiles, saying so; the same command again
# writes a file byte-identical to REF (an uninterrupted run) and leaves nothing else in DIR.
resumes() {
    local name=$1 limit=$2 ref=$3 dir=$4
    shift 4
    rm -rf "$dir" && mkdir -p "$dir"
    run bash -c "trap '' XFSZ; ulimit -f $limit; exec \"\$@\" -q" _ "$@"
    expect_one_line_error "$name failing on a full disk" $EX_IO "rerun the same command to resume after the"
    run "$@" -q
    if [ "$rc" -eq 0 ] && cmp -s "$dir/o.tif" "$ref" && [ "$(ls -A "$dir")" = o.tif ]; then
        pass "$name resumed: byte-identical to an uninterrupted run, no leftovers"
    else
        fail "$name resume: exit $rc, $err; files: $(ls -A "$dir")"
    fi
}
# json_check NAME EXPR: stdout is exactly one JSON object and the Python expression EXPR on it
# (called d) is true.
json_check() {
    if [ -x "$py" ]; then
        if printf '%s' "$out" | "$py" -c '
import json, sys
text = sys.stdin.read()
d = json.loads(text)
assert isinstance(d, dict), "not an object"
assert text.strip().count("\n") == 0, "more than one line"
ok = eval(sys.argv[1])
sys.exit(0 if ok else 1)' "$2" 2>"$tmp/pyerr"; then
            pass "$1: $out"
        else
            fail "$1: '$out' is not valid JSON or fails $2 ($(cat "$tmp/pyerr"))"
        fi
    else
        if grep -Eq '^\{"psnr": ("inf"|[0-9.]+), "ssim": [0-9.]+\}$' <<<"$out"; then
            pass "$1 (grep, no /usr/bin/python3): $out"
        else
            fail "$1: '$out' does not look like the expected JSON object"
        fi
    fi
}

[ -x "$upres" ] || { echo "FAIL: $upres is not an executable"; exit 1; }
[ -f "$sample" ] || { echo "FAIL: sample image $sample is missing"; exit 1; }

# ---------------------------------------------------------------- help, version, info
run "$upres" --help
expect_rc "--help" 0
for c in info compare convert; do
    if grep -Eq "^ +$c( |$)" <<<"$out"; then pass "--help lists $c"; else fail "--help does not list $c"; fi
done
run "$upres" --version
if [ "$rc" -eq 0 ] && grep -Eq '^upres [0-9]+\.[0-9]+\.[0-9]+' <<<"$out"; then
    pass "--version prints '$out'"
else
    fail "--version: exit $rc, '$out'"
fi
run "$upres" info
expect_rc "info" 0
if grep -q '^CUDA backends:' <<<"$out"; then pass "info shows the CUDA build flag"; else fail "info output: $out"; fi
run "$upres"
expect_one_line_error "no subcommand is a usage error" $EX_USAGE 'upres: .*subcommand'

# ---------------------------------------------------------------- usage errors
run "$upres" info --bogus
expect_one_line_error "unknown flag" $EX_USAGE 'upres: .*--bogus'
run "$upres" compare "$sample"
expect_one_line_error "missing argument" $EX_USAGE 'upres: .*B'
run "$upres" --backend gpu info
expect_one_line_error "bad --backend value" $EX_USAGE 'upres: .*(gpu|backend)'
run "$upres" --threads -1 info
expect_one_line_error "negative --threads" $EX_USAGE 'upres: .*threads'
run "$upres" convert "$sample" "$tmp/x.png" --depth u12
expect_one_line_error "bad --depth value" $EX_USAGE 'upres: .*u12'
run "$upres" frobnicate
expect_one_line_error "unknown subcommand" $EX_USAGE 'upres: .*frobnicate'

# ---------------------------------------------------------------- compare
run "$upres" compare "$sample" "$sample" --json
expect_rc "compare identical --json" 0
json_check "compare identical: psnr is \"inf\", ssim 1" 'd["psnr"] == "inf" and abs(d["ssim"] - 1) < 1e-9 and set(d) == {"psnr", "ssim"}'

run "$upres" compare "$sample" "$sample"
if [ "$rc" -eq 0 ] && grep -q '^PSNR: inf' <<<"$out" && grep -q '^SSIM: 1.000000' <<<"$out"; then
    pass "compare identical (text)"
else
    fail "compare identical (text): exit $rc, '$out' $err"
fi

# A different image: the sample through a low-quality JPEG (convert keeps u8).
run "$upres" convert "$sample" "$tmp/lossy.jpg"
expect_rc "convert png -> jpeg" 0
run "$upres" compare "$sample" "$tmp/lossy.jpg" --json
expect_rc "compare different --json" 0
json_check "compare different: finite psnr in (20, 60), ssim in (0.5, 1)" 'isinstance(d["psnr"], float) and 20 < d["psnr"] < 60 and 0.5 < d["ssim"] < 1'
psnr_y=$(printf '%s' "$out" | sed -E 's/.*"psnr": ([0-9.]+).*/\1/')
run "$upres" compare "$sample" "$tmp/lossy.jpg" --json --no-y --shave 4
json_check "compare --no-y --shave 4 is valid JSON" 'isinstance(d["psnr"], float) and d["psnr"] > 0'
if [ "$(printf '%s' "$out" | sed -E 's/.*"psnr": ([0-9.]+).*/\1/')" != "$psnr_y" ]; then
    pass "--no-y --shave changes the result"
else
    fail "--no-y --shave gives the same PSNR as the default ($psnr_y)"
fi

run "$upres" compare "$sample" "$tmp/missing.png"
expect_one_line_error "compare: missing file is an io error" $EX_IO 'missing\.png'
"$upres" convert "$root/examples/data/butterfly.png" "$tmp/small.npy" >/dev/null 2>&1
if [ -x "$py" ]; then
    "$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.load(sys.argv[2])[:100, :120])' \
        "$tmp/crop.npy" "$tmp/small.npy"
    run "$upres" compare "$sample" "$tmp/crop.npy"
    expect_one_line_error "compare: size mismatch" $EX_INVALID '256 x 256.*120 x 100|120 x 100.*256 x 256'
else
    skip "compare: size mismatch (needs /usr/bin/python3 with numpy)"
fi
run "$upres" compare "$sample" "$sample" --shave 128
expect_one_line_error "compare: --shave too large" $EX_INVALID 'shave'

# ---------------------------------------------------------------- convert round trips
run "$upres" convert "$sample" "$tmp/a0.pfm"
expect_rc "convert u8 -> pfm without --depth takes f32, the one depth PFM stores" 0
run "$upres" convert "$sample" "$tmp/a.pfm" --depth f32
expect_rc "convert png -> pfm --depth f32" 0
if cmp -s "$tmp/a0.pfm" "$tmp/a.pfm"; then pass "convert to pfm: implied f32 equals --depth f32"; else fail "convert to pfm: implied depth differs from --depth f32"; fi
run "$upres" convert "$tmp/a.pfm" "$tmp/b.png"
expect_one_line_error "convert f32 -> png without --depth names u8, u16" $EX_FORMAT 'u8, u16'
if [ ! -e "$tmp/b.png" ]; then pass "no output file after a refused conversion"; else fail "$tmp/b.png was written"; fi
run "$upres" convert "$tmp/a.pfm" "$tmp/b.png" --depth u8
expect_rc "convert pfm -> png --depth u8" 0
run "$upres" compare "$sample" "$tmp/b.png" --json
json_check "png -> pfm -> png round trip is exact" 'd["psnr"] == "inf"'

run "$upres" convert "$sample" "$tmp/c.npy"
expect_rc "convert png -> npy (u8 kept)" 0
run "$upres" convert "$tmp/c.npy" "$tmp/c.png"
expect_rc "convert npy -> png" 0
run "$upres" compare "$sample" "$tmp/c.png" --json
json_check "png -> npy -> png round trip is exact" 'd["psnr"] == "inf"'
run "$upres" convert "$sample" "$tmp/d.npy" --depth f32
expect_rc "convert png -> npy --depth f32" 0
if [ -x "$py" ]; then
    if "$py" -c '
import numpy as np, sys
a = np.load(sys.argv[1])
assert a.dtype == np.float32 and a.shape == (256, 256, 3), (a.dtype, a.shape)
assert 0 <= a.min() and a.max() <= 1 and a.max() > 0.5
' "$tmp/d.npy" 2>"$tmp/pyerr"; then
        pass "npy f32 output reads in numpy as float32 (256, 256, 3) in [0, 1]"
    else
        fail "npy f32 output: $(cat "$tmp/pyerr")"
    fi
else
    skip "numpy check of the npy output (no /usr/bin/python3)"
fi
run "$upres" convert "$tmp/d.npy" "$tmp/e.png" --depth u16
expect_rc "convert npy f32 -> png --depth u16" 0
run "$upres" convert "$tmp/e.png" "$tmp/f.png" --depth u8
run "$upres" compare "$sample" "$tmp/f.png" --json
json_check "u8 -> f32 -> u16 -> u8 round trip is exact" 'd["psnr"] == "inf"'
run "$upres" convert "$tmp/e.png" "$tmp/g.jpg"
expect_one_line_error "convert u16 -> jpeg names the allowed depth u8" $EX_FORMAT 'u8'
run "$upres" convert "$sample" "$tmp/h.bin"
expect_one_line_error "convert: unknown output extension" $EX_FORMAT '\.bin'
run "$upres" convert "$sample" "$tmp/h.bin" --format png
expect_rc "convert --format png to a .bin path" 0

# ---------------------------------------------------------------- output errors
run "$upres" convert "$sample" "$tmp/no/such/dir/out.png"
expect_one_line_error "unwritable output path is an io error" $EX_IO 'out\.png'
if [ ! -e "$tmp/no" ]; then pass "nothing created for an unwritable path"; else fail "$tmp/no was created"; fi
mkdir -p "$tmp/w" "$tmp/w/taken.png"
run "$upres" convert "$sample" "$tmp/w/taken.png"
expect_one_line_error "output path that is a directory is an io error" $EX_IO 'taken\.png'
left=$(ls -A "$tmp/w")
if [ "$left" = "taken.png" ] && [ -z "$(ls -A "$tmp/w/taken.png")" ]; then
    pass "no partial or temporary file left after a failed write"
else
    fail "files left after a failed write: $(ls -lA "$tmp/w" "$tmp/w/taken.png")"
fi
run "$upres" convert "$tmp/missing.png" "$tmp/w/out.png"
expect_one_line_error "convert: missing input is an io error" $EX_IO 'missing\.png'
run "$upres" convert "$tmp" "$tmp/w/out.png"
expect_one_line_error "convert: directory as input is an io error" $EX_IO 'directory'
printf 'not a png' >"$tmp/bad.png"
run "$upres" convert "$tmp/bad.png" "$tmp/w/out.png"
if [ "$rc" -ge 2 ] && [ "$(printf '%s' "$err" | grep -c '')" -eq 1 ] && [ ! -e "$tmp/w/out.png" ]; then
    pass "corrupt input: one-line error, exit $rc ($err)"
else
    fail "corrupt input: exit $rc, stderr: $err"
fi

# ---------------------------------------------------------------- backends
run "$upres" --backend reference compare "$sample" "$tmp/lossy.jpg" --json
json_check "compare --backend reference" 'isinstance(d["psnr"], float)'
ref_psnr=$(printf '%s' "$out" | sed -E 's/.*"psnr": ([0-9.]+).*/\1/')
if [ "$ref_psnr" = "$psnr_y" ]; then
    pass "reference and cpu backends agree on PSNR ($ref_psnr)"
else
    fail "reference PSNR $ref_psnr differs from cpu $psnr_y"
fi

# A forced backend runs or fails, never silently runs elsewhere (exit 7: backend_unavailable).
run "$upres" info
if grep -q '^CUDA devices: *none' <<<"$out"; then
    run "$upres" --backend cuda convert "$sample" "$tmp/cuda.pfm" --depth f32
    expect_one_line_error "convert --backend cuda without a CUDA device" 7 'cuda'
    if [ ! -e "$tmp/cuda.pfm" ]; then pass "no output after a backend error"; else fail "$tmp/cuda.pfm written"; fi
    run "$upres" --backend cuda compare "$sample" "$sample"
    expect_one_line_error "compare --backend cuda without a CUDA device" 7 'cuda'
else
    run "$upres" --backend cuda convert "$sample" "$tmp/cuda.pfm" --depth f32
    expect_rc "convert --backend cuda on a CUDA device" 0
    run "$upres" compare "$tmp/a.pfm" "$tmp/cuda.pfm" --json
    json_check "CUDA and CPU u8 -> f32 conversions are identical" 'd["psnr"] == "inf"'
fi

# ---------------------------------------------------------------- warp (scripts/demo's job)
run "$upres" --help
if grep -Eq '^ +warp( |$)' <<<"$out"; then
    run "$upres" warp "$sample" "$tmp/zoom.png" --zoom 2
    expect_rc "warp --zoom 2" 0
    if [ -x "$py" ] && [ -f "$tmp/zoom.png" ]; then
        if "$py" -c '
import sys, cv2
im = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
assert im is not None and im.shape == (512, 512, 3), None if im is None else im.shape
' "$tmp/zoom.png" 2>"$tmp/pyerr"; then
            pass "warp --zoom 2 writes a 512 x 512 RGB image"
        else
            fail "warp --zoom 2 output: $(cat "$tmp/pyerr")"
        fi
    fi
    run "$upres" warp "$sample" "$tmp/zoom2.png" --zoom 2 --bogus-flag
    expect_one_line_error "warp: unknown flag" $EX_USAGE 'bogus-flag'
else
    skip "warp is not built into this upres yet"
fi

# ---------------------------------------------------------------- warp (warp helper's checks)
run "$upres" --help
if grep -Eq '^ +warp( |$)' <<<"$out"; then
    # Float stays float; rotation matches scipy.ndimage.rotate(order=3, mode='mirror').
    if [ -x "$py" ] && "$py" -c '
import sys, numpy as np
rng = np.random.default_rng(3)
np.save(sys.argv[1], rng.random((21, 30)).astype(np.float32))
f = rng.uniform(-2, 2, (21, 30, 2)).astype(np.float32)
np.save(sys.argv[2], f)
' "$tmp/wf.npy" "$tmp/flow.npy" 2>"$tmp/pyerr"; then
        run "$upres" warp "$tmp/wf.npy" "$tmp/wr.npy" --rotate 25
        expect_rc "warp --rotate 25 (npy float)" 0
        if "$py" -c '
import sys, numpy as np, scipy.ndimage as nd
a = np.load(sys.argv[1]).astype(np.float64); b = np.load(sys.argv[2])
assert b.dtype == np.float32 and b.shape == a.shape, (b.dtype, b.shape)
want = nd.rotate(a, 25, reshape=False, order=3, mode="mirror")
assert np.abs(b - want).max() < 1e-4, np.abs(b - want).max()
' "$tmp/wf.npy" "$tmp/wr.npy" 2>"$tmp/pyerr"; then
            pass "warp --rotate 25 matches scipy.ndimage.rotate(order=3, mirror)"
        else
            fail "warp --rotate vs scipy: $(cat "$tmp/pyerr")"
        fi
        run "$upres" warp "$tmp/wf.npy" "$tmp/wz.npy" --size 17x9 --interp linear --border constant --fill 0.5
        if [ "$rc" -eq 0 ] && "$py" -c '
import sys, numpy as np, scipy.ndimage as nd, warnings
a = np.load(sys.argv[1]).astype(np.float64); b = np.load(sys.argv[2])
warnings.simplefilter("ignore")
want = nd.zoom(a, (9 / 21, 17 / 30), order=1, mode="constant", cval=0.5, grid_mode=True)
assert b.shape == (9, 17) and np.abs(b - want).max() < 1e-5, (b.shape, np.abs(b - want).max())
' "$tmp/wf.npy" "$tmp/wz.npy" 2>"$tmp/pyerr"; then
            pass "warp --size 17x9 --interp linear --border constant matches scipy zoom(grid_mode)"
        else
            fail "warp --size vs scipy (exit $rc): $err $(cat "$tmp/pyerr")"
        fi
        run "$upres" warp "$tmp/wf.npy" "$tmp/wflow.npy" --flow "$tmp/flow.npy" --interp nearest
        expect_rc "warp --flow (2-channel npy)" 0
        run "$upres" warp "$tmp/wz.npy" "$tmp/wflow.npy" --flow "$tmp/flow.npy"
        expect_one_line_error "warp: flow field of another size" $EX_INVALID 'is 30 x 21 but'
    else
        skip "warp numeric checks need /usr/bin/python3 with numpy/scipy"
    fi
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 2 --rotate 10
    expect_one_line_error "warp: two transforms" $EX_USAGE 'only one transform'
    run "$upres" warp "$sample" "$tmp/w1.png"
    expect_one_line_error "warp: no transform" $EX_USAGE 'one transform'
    run "$upres" warp "$sample" "$tmp/w1.png" --affine 1,0,0,0,1
    expect_one_line_error "warp: --affine with 5 numbers" $EX_USAGE '6 numbers'
    run "$upres" warp "$sample" "$tmp/w1.png" --affine 1,2,0,2,4,0
    expect_one_line_error "warp: singular affine" $EX_INVALID 'singular'
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 0
    expect_one_line_error "warp: --zoom 0" $EX_INVALID 'zoom 0 must be a positive number'
    run "$upres" warp "$sample" "$tmp/w1.png" --rotate 5 --border constant --fill nan
    expect_one_line_error "warp: NaN fill on a u8 image" $EX_INVALID 'fill value is NaN; u8'
    run "$upres" warp "$sample" "$tmp/wfir.png" --zoom 2 --prefilter fir
    expect_rc "warp --prefilter fir (default FIR length)" 0
    run "$upres" warp "$sample" "$tmp/wfir17.png" --zoom 2 --prefilter fir17
    if [ "$rc" -eq 0 ] && cmp -s "$tmp/wfir.png" "$tmp/wfir17.png"; then
        pass "warp --prefilter fir is fir17"
    else
        fail "warp --prefilter fir differs from fir17 (exit $rc)"
    fi
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 2 --prefilter fir8
    expect_one_line_error "warp: even FIR length" $EX_INVALID 'fir8'
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 2 --fast --backend cpu
    expect_one_line_error "warp: --fast on the cpu backend" $EX_INVALID 'fast_texture'
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 0.5 --antialias
    expect_one_line_error "warp: --antialias with bspline" $EX_INVALID 'linear or cubic'
    run "$upres" warp "$sample" "$tmp/w1.png" --zoom 0.5 --antialias --interp cubic --border reflect
    expect_rc "warp --zoom 0.5 --antialias --interp cubic (MATLAB imresize)" 0
    run "$upres" warp "$sample" "$tmp/w1.pfm" --zoom 2
    expect_one_line_error "warp: u8 image to PFM" $EX_FORMAT 'pfm'
    run "$upres" warp "$sample" "$tmp/w1.png" --flow "$tmp/missing.npy"
    expect_one_line_error "warp: missing flow file" $EX_IO 'missing.npy'
else
    skip "warp is not built into this upres yet"
fi

# ---------------------------------------------------------------- upscale
run "$upres" upscale "$sample" "$tmp/up.png" --scale 2 --method silseabi
expect_rc "upscale --method silseabi x2 (colour)" 0
if [ "$rc" -eq 0 ] && [ -x "$py" ] && "$py" -c '
import sys, cv2
a = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED); b = cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
assert b.shape[0] == 2 * a.shape[0] and b.shape[1] == 2 * a.shape[1] and b.shape[2:] == a.shape[2:], (a.shape, b.shape)
' "$sample" "$tmp/up.png" 2>"$tmp/pyerr"; then
    pass "upscale x2 output is twice the size with the same channels"
elif [ "$rc" -eq 0 ]; then
    fail "upscale output shape: $(cat "$tmp/pyerr")"
fi
for m in lseai lseabi tap4 tap6 bilinear bicubic; do
    run "$upres" upscale "$sample" "$tmp/up_$m.png" --scale 2 --method "$m"
    expect_rc "upscale --method $m" 0
done
run "$upres" upscale "$sample" "$tmp/up4.png" --scale 4 --method silseabi
expect_rc "upscale --scale 4 (cascade)" 0
run "$upres" upscale "$sample" "$tmp/up.png" --scale 2 --method frob
expect_one_line_error "upscale: unknown method lists the methods" $EX_USAGE "unknown upscale method 'frob' \\(allowed: auto, srcnn, lseai"
run "$upres" upscale "$sample" "$tmp/up.png" --scale 2 --method silseabi --iterations 3
expect_one_line_error "upscale: --iterations without lseabi" $EX_INVALID 'iterations'
run "$upres" upscale "$sample" "$tmp/up.png" --scale 2 --method lseabi --iterations 0
expect_one_line_error "upscale: --iterations 0 is outside the declared range" $EX_USAGE 'iterations 0 is outside \[1, 1000\]'
run "$upres" convert "$sample" "$tmp/s16.png" --depth u16
run "$upres" upscale "$tmp/s16.png" "$tmp/up.png" --scale 2 --method silseabi
expect_one_line_error "upscale: 16-bit input" $EX_FORMAT 'convert'

# ---------------------------------------------------------------- upscale --method srcnn
# Small models of tests/data/srcnn (pipe.srcnn: 9-1-5 8/4, x2, receptive field 13); the
# bundled models are replaced by a folder of our own through UPRES_MODEL_DIR.
srcdata="$root/tests/data/srcnn"
mkdir -p "$tmp/models"
cp "$srcdata/pipe.srcnn" "$tmp/models/srcnn_x2.srcnn"
run "$upres" upscale "$srcdata/pipe_gray_in.npy" "$tmp/sr_gray.npy" --method srcnn --model "$srcdata/pipe.srcnn"
expect_rc "upscale --method srcnn (gray u8, --model)" 0
if [ "$rc" -eq 0 ] && [ -x "$py" ] && "$py" -c '
import sys, numpy as np
a = np.load(sys.argv[1]); b = np.load(sys.argv[2])
assert a.shape == (20, 24) and a.dtype == np.uint8, (a.shape, a.dtype)
assert np.abs(a.astype(int) - b.astype(int)).max() <= 1
' "$tmp/sr_gray.npy" "$srcdata/pipe_gray_out.npy" 2>"$tmp/pyerr"; then
    pass "upscale --method srcnn gray output matches the golden pipeline (1 LSB)"
elif [ "$rc" -eq 0 ] && [ -x "$py" ]; then
    fail "upscale --method srcnn gray output: $(cat "$tmp/pyerr")"
fi
UPRES_MODEL_DIR="$tmp/models" run "$upres" upscale "$sample" "$tmp/sr_rgb.png" --method srcnn --scale 2 --verbose
expect_rc "upscale --method srcnn (colour, model from UPRES_MODEL_DIR, --verbose)" 0
if grep -q 'receptive field 13' <<<"$out"; then
    pass "upscale --verbose prints the model"
else
    fail "upscale --verbose output: $out"
fi
mkdir -p "$tmp/batch_in"
cp "$sample" "$tmp/batch_in/a.png"
cp "$srcdata/pipe_gray_in.npy" "$tmp/batch_in/b.npy"
run "$upres" -q upscale "$tmp/batch_in" "$tmp/batch_out" --method srcnn --model "$srcdata/pipe.srcnn"
expect_rc "upscale --method srcnn on a folder" 0
if [ -f "$tmp/batch_out/a.png" ] && [ -f "$tmp/batch_out/b.npy" ]; then
    pass "upscale folder batch writes one output per input"
else
    fail "upscale folder batch outputs: $(ls "$tmp/batch_out" 2>&1)"
fi
echo "not an image" >"$tmp/batch_in/c.png"
run "$upres" upscale "$tmp/batch_in/a.png" "$tmp/batch_in/c.png" "$tmp/batch_out2" --method bicubic
if [ "$rc" -eq 5 ] && [ -f "$tmp/batch_out2/a.png" ] && grep -q 'c\.png' <<<"$err" &&
    grep -q '1 of 2 files failed' <<<"$err"; then
    pass "upscale batch: a bad file is reported and counted, the others written (exit 5)"
else
    fail "upscale batch with a bad file: exit $rc; stderr: $err"
fi
UPRES_MODEL_DIR="$tmp/models" run "$upres" upscale "$sample" "$tmp/sr.png" --method srcnn --scale 5
expect_one_line_error "upscale srcnn: scale without a model lists the available scales" $EX_INVALID 'available scales: 2'
run "$upres" upscale "$sample" "$tmp/sr.png" --method srcnn --scale 2.5 --model "$srcdata/pipe.srcnn"
expect_one_line_error "upscale srcnn: non-integer scale" $EX_INVALID 'integer scale'
run "$upres" upscale "$sample" "$tmp/sr.png" --method srcnn --model "$tmp/none.srcnn"
expect_one_line_error "upscale srcnn: missing model file" $EX_IO 'none\.srcnn'
echo "garbage" >"$tmp/bad.srcnn"
run "$upres" upscale "$sample" "$tmp/sr.png" --method srcnn --model "$tmp/bad.srcnn"
expect_one_line_error "upscale srcnn: corrupt model file" 5 'bad\.srcnn.*bad magic'
run "$upres" warp "$sample" "$tmp/tiny.png" --zoom 0.02
run "$upres" upscale "$tmp/tiny.png" "$tmp/sr.png" --method srcnn --model "$srcdata/pipe.srcnn"
expect_one_line_error "upscale srcnn: image too small for the receptive field" $EX_INVALID 'receptive field'
run "$upres" --backend cpu upscale "$sample" "$tmp/sr.png" --method srcnn --model "$srcdata/pipe.srcnn" --precision fp16
expect_one_line_error "upscale srcnn: fp16 on the cpu backend" $EX_INVALID 'fp16'
run "$upres" upscale "$sample" "$tmp/sr.png" --method srcnn --model "$srcdata/pipe.srcnn" --variant winograd
expect_one_line_error "upscale srcnn: unknown variant" $EX_USAGE 'winograd'
run "$upres" upscale "$sample" "$tmp/sr.png" --method bicubic --model "$srcdata/pipe.srcnn"
expect_one_line_error "upscale: --model without srcnn" $EX_INVALID 'srcnn only'
run "$upres" -q upscale "$sample" "$tmp/sil_c.png" --method silseabi --lattice centered
run "$upres" -q upscale "$sample" "$tmp/sil_d.png" --method silseabi
if cmp -s "$tmp/sil_c.png" "$tmp/sil_d.png"; then pass "upscale: SEABI defaults to the centre-aligned lattice"; else fail "upscale: SEABI's default is not --lattice centered"; fi
run "$upres" -q upscale "$sample" "$tmp/sil_p.png" --method silseabi --lattice cosited
if [ "$rc" -eq 0 ] && ! cmp -s "$tmp/sil_c.png" "$tmp/sil_p.png"; then pass "upscale: SEABI on the paper's co-sited lattice"; else fail "upscale --method silseabi --lattice cosited: exit $rc or same as centred"; fi
run "$upres" upscale "$sample" "$tmp/sr.png" --method nlm --lattice cosited
expect_one_line_error "upscale: nlm is centre-aligned only" $EX_INVALID 'centre-aligned'
run "$upres" upscale "$sample" "$tmp/bic_cosited.png" --method bicubic --lattice cosited
expect_rc "upscale --method bicubic --lattice cosited (the SEABI paper's baseline)" 0
run "$upres" convert "$sample" "$tmp/s16b.png" --depth u16
run "$upres" upscale "$tmp/s16b.png" "$tmp/bic16.png" --method bicubic --scale 3
expect_rc "upscale --method bicubic (centred, MATLAB) on a 16-bit image" 0

# ---------------------------------------------------------------- defaults a user expects
run "$upres" -q upscale "$sample" "$tmp/up_default.png"
expect_rc "upscale with no method" 0
run "$upres" -q upscale "$sample" "$tmp/up_srcnn2.png" --method srcnn --scale 2
if cmp -s "$tmp/up_default.png" "$tmp/up_srcnn2.png"; then pass "upscale with no method is SRCNN x2"; else fail "upscale with no method differs from --method srcnn --scale 2"; fi
run "$upres" -q upscale "$sample" "$tmp/up_default5.png" --scale 5
run "$upres" -q upscale "$sample" "$tmp/up_bicubic5.png" --scale 5 --method bicubic
if cmp -s "$tmp/up_default5.png" "$tmp/up_bicubic5.png"; then pass "upscale x5 (no model) with no method is bicubic"; else fail "upscale x5 with no method differs from bicubic"; fi

# ---------------------------------------------------------------- stereo
sdata="$root/tests/data/stereo"
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp.pfm" --disparities 24 --right "$tmp/disp_r.pfm" --mask "$tmp/mask.png"
expect_rc "stereo: a Motorcycle crop to PFM with the right map and the mask" 0
if [ ! -x "$py" ]; then
    skip "stereo: numpy check of the PFM (no /usr/bin/python3)"
elif "$py" - "$tmp/disp.pfm" "$sdata/photo_g7_disp.npy" <<'PY'
import sys, numpy as np
def pfm(p):
    with open(p, 'rb') as f:
        assert f.readline().strip() == b'Pf'
        w, h = map(int, f.readline().split())
        s = float(f.readline())
        a = np.frombuffer(f.read(), dtype='<f4' if s < 0 else '>f4').reshape(h, w)
    return a[::-1]
a, b = pfm(sys.argv[1]), np.load(sys.argv[2])
ok = np.array_equal(np.isnan(a), np.isnan(b)) and np.nanmax(np.abs(a - b)) <= 1e-5
sys.exit(0 if ok else 1)
PY
then pass "stereo: the PFM equals the golden map"; else fail "stereo: the PFM differs from the golden map"; fi
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp16.png" --disparities 24
expect_rc "stereo: 16-bit PNG output (x16)" 0
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/d.pfm" --disparities 24 --preview "$tmp/preview.png"
expect_rc "stereo: --preview" 0
# PNG header: colour type 2 (RGB) at byte 25, 8 bits per sample at byte 24.
hdr=$(od -An -tu1 -j24 -N2 "$tmp/preview.png" 2>/dev/null | tr -s ' ')
if [ "$hdr" = " 8 2" ]; then pass "stereo: the preview is an 8-bit RGB PNG"; else fail "stereo: preview header '$hdr'"; fi
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/box5a.pfm" --disparities 24 --aggregate box:5
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/box5b.pfm" --disparities 24 --aggregate box --box-size 5
if cmp -s "$tmp/box5a.pfm" "$tmp/box5b.pfm"; then pass "stereo: --aggregate box:5 is box with --box-size 5"; else fail "stereo: box:5 differs from box --box-size 5"; fi
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp.pfm" --aggregate box:x
expect_one_line_error "stereo: box:N with a non-number" $EX_USAGE 'box:N needs a whole number'
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/gray_right.npy" "$tmp/disp.pfm"
expect_one_line_error "stereo: pair of different channel counts" $EX_INVALID 'one size'
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp.pfm" --disparities 65
expect_one_line_error "stereo: range wider than the image" $EX_INVALID 'wider than the image'
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp.pfm" --aggregate gauss9
expect_one_line_error "stereo: unknown aggregation" $EX_USAGE 'allowed: gauss7, gauss13, box, sgm4, sgm8'
run "$upres" stereo "$sdata/photo_left.npy" "$sdata/photo_right.npy" "$tmp/disp.jpg"
expect_one_line_error "stereo: JPEG cannot hold disparities" $EX_FORMAT 'cannot hold'

# ---------------------------------------------------------------- fuse
# Identical frames weigh alike: three copies of a frame fuse to what the frame alone gives.
nf="$root/tests/data/nlmsr/fusion_estimate.npy"
run "$upres" fuse "$nf" "$tmp/fuse1.npy" --patch 7
expect_rc "fuse: one frame (single-image NLM up-scaling)" 0
run "$upres" fuse "$nf" "$nf" "$nf" "$tmp/fuse3.npy" --patch 7
expect_rc "fuse: three frames" 0
# (Equal up to float rounding: three equal terms summed and divided; 1e-5 relative.)
if [ ! -x "$py" ]; then
    skip "fuse: numpy check of three identical frames (no /usr/bin/python3)"
elif "$py" -c 'import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); sys.exit(0 if a.shape == b.shape and (np.abs(a - b) <= 1e-5 * np.maximum(1, np.abs(a))).all() else 1)' "$tmp/fuse1.npy" "$tmp/fuse3.npy" 2>/dev/null; then
    pass "fuse: three identical frames give the one frame's result (within 1e-5 relative)"
else
    fail "fuse: three identical frames differ from one"
fi
mkdir -p "$tmp/seq"
for i in 1 2 3; do cp "$sample" "$tmp/seq/f$i.png"; done
run "$upres" fuse "$tmp/seq" "$tmp/seq_out" --sequence --window 3 --patch 5
expect_rc "fuse: --sequence over a folder" 0
if [ -f "$tmp/seq_out/f1.png" ] && [ -f "$tmp/seq_out/f3.png" ]; then pass "fuse: --sequence writes one output per frame"; else fail "fuse: --sequence outputs: $(ls "$tmp/seq_out" 2>&1)"; fi
run "$upres" fuse "$nf" "$sample" "$tmp/fuse.png"
expect_one_line_error "fuse: frames of different pixel types" $EX_INVALID 'frame 1 is u8 but frame 0 is f32'
run "$upres" fuse "$nf" "$root/tests/data/nlmsr/pipeline_frames.npy" "$tmp/fuse.npy"
expect_one_line_error "fuse: frames of different sizes" $EX_INVALID 'frame 1 is 24 x 72'
run "$upres" fuse "$nf" "$tmp/fuse.npy" --patch 6
expect_one_line_error "fuse: an even patch" $EX_INVALID 'patch 6 must be odd'
run "$upres" fuse "$nf" "$nf" "$tmp/fuse.npy" --reference 2
expect_one_line_error "fuse: a reference out of range" $EX_INVALID 'reference 2 is out of range'
run "$upres" fuse "$nf" "$tmp/fuse.npy" --post deblur
expect_one_line_error "fuse: unknown post-step" $EX_USAGE 'allowed: none, backproject'
# fuse --tiled: TIFF frames (camera.png, half size, and two shifted copies) fused band by band
# equal the whole-frame command's bytes; killed mid-write, the same command resumes.
camera="${UPRES_DATA_DIR:-$root/data}/camera.png"
if [ -f "$camera" ] && "$upres" -q warp "$camera" "$tmp/fz0.tif" --size 256x256 &&
    "$upres" -q warp "$tmp/fz0.tif" "$tmp/fz1.tif" --affine 1,0,0.6,0,1,-0.4 &&
    "$upres" -q warp "$tmp/fz0.tif" "$tmp/fz2.tif" --affine 1,0,-0.3,0,1,0.7; then
    "$upres" -q fuse "$tmp/fz0.tif" "$tmp/fz1.tif" "$tmp/fz2.tif" "$tmp/fzw.tif"
    run "$upres" fuse "$tmp/fz0.tif" "$tmp/fz1.tif" "$tmp/fz2.tif" "$tmp/fzt.tif" --tiled --band-rows 64
    expect_rc "fuse --tiled" 0
    run "$upres" compare "$tmp/fzw.tif" "$tmp/fzt.tif" --json
    grep -q '"psnr": "inf"' <<<"$out" && pass "fuse --tiled equals the whole-frame fuse" ||
        fail "fuse --tiled differs: $out $err"
    "$upres" -q fuse "$tmp/fz0.tif" "$tmp/fz1.tif" "$tmp/fz2.tif" "$tmp/fzr.tif" --tiled --band-rows 64 --tile-size 64
    resumes "fuse --tiled" 150 "$tmp/fzr.tif" "$tmp/fres" "$upres" fuse "$tmp/fz0.tif" "$tmp/fz1.tif" \
        "$tmp/fz2.tif" "$tmp/fres/o.tif" --tiled --band-rows 64 --tile-size 64
    run "$upres" fuse "$tmp/fz0.tif" "$tmp/fzt.tif" --tiled --sequence
    expect_one_line_error "fuse --tiled --sequence" $EX_INVALID "not --sequence"
else
    skip "fuse --tiled (no data/camera.png: scripts/fetch_data.sh)"
fi

# ---------------------------------------------------------------- quality
run "$upres" quality "$sample"
expect_rc "quality: BRISQUE of the sample" 0
if grep -Eq '^.*butterfly.png: brisque [0-9]+\.[0-9]{4}$' <<<"$out"; then pass "quality: one line 'IMG: brisque S'"; else fail "quality: output '$out'"; fi
run "$upres" quality "$sample" --json
json_check "quality --json" 'd["file"].endswith("butterfly.png") and 0 <= d["brisque"] < 150'
run "$upres" quality "$root/tests/data/nlmsr/fusion_frames.npy" --model-dir "$tmp/no-models"
expect_one_line_error "quality: a missing model folder" $EX_IO 'cannot open the brisque model'
run "$upres" quality "$root/tests/data/brisque/MANIFEST"
expect_one_line_error "quality: not an image" $EX_FORMAT '.'

# ---------------------------------------------------------------- declared options
# Every enum option of every command comes from its operation's declaration (upres info
# --options): each allowed value is accepted by the flag's check, a wrong one is a usage error
# naming the whole list.
run "$upres" info --options
expect_rc "info --options" 0
printf '%s\n' "$out" >"$tmp/options.tsv"
if grep -q $'^warp\tinterp\tenum\tbspline\tnearest,linear,cubic,bspline\t' "$tmp/options.tsv"; then
    pass "info --options lists warp's interp"
else
    fail "info --options: $(head -3 "$tmp/options.tsv")"
fi
declare -A cmd_args=(
    [warp]="warp $sample $tmp/opt.png --rotate 3"
    [upscale]="upscale $sample $tmp/opt.png"
    [convert]="convert $sample $tmp/opt.png"
    [compare]="compare $sample $sample"
    [context]="compare $sample $sample"
    [stereo]="stereo $root/tests/data/stereo/rand_left.npy $root/tests/data/stereo/rand_right.npy $tmp/opt.pfm --disparities 8"
    [fuse]="fuse $root/tests/data/nlmsr/fusion_estimate.npy $tmp/opt.npy --patch 3"
    [quality]="quality $sample"
)
# --tiled: a TIFF zoomed band by band equals the whole-image warp's pixels (u8 RGB, u16 gray,
# several interpolations and borders, small bands), into a tiled TIFF that read_image reads.
if "$upres" -q convert "$sample" "$tmp/t8.tif" 2>/dev/null; then
    tiled_ok=1
    for extra in "" "--interp cubic --border reflect" "--border nearest --prefilter fir" \
        "--interp linear --border constant --fill 9"; do
        # shellcheck disable=SC2086  # the words of $extra
        "$upres" -q warp "$tmp/t8.tif" "$tmp/w.tif" --zoom 1.7 $extra &&
            "$upres" -q warp "$tmp/t8.tif" "$tmp/tl.tif" --zoom 1.7 --tiled --band-rows 13 $extra ||
            tiled_ok=0
        run "$upres" compare "$tmp/w.tif" "$tmp/tl.tif" --json
        grep -q '"psnr": "inf"' <<<"$out" || { tiled_ok=0; echo "tiled $extra: $out $err"; }
    done
    [ "$tiled_ok" = 1 ] && pass "warp --tiled equals the whole-image warp (4 option sets)" ||
        fail "warp --tiled differs from the whole-image warp"
    # Rotations, affine maps and homographies by 2-D tiles, read from a tiled TIFF (the output
    # above) and from a stripped one.
    tiled_ok=1
    for map in "--rotate 23" "--affine 0.9,0.2,-5,-0.1,1.1,7 --interp linear" \
        "--homography 1,0.1,2,0.05,1,-3,0.001,0.0005,1 --border constant --fill 3"; do
        for src in "$tmp/t8.tif" "$tmp/tl.tif"; do
            # shellcheck disable=SC2086  # the words of $map
            "$upres" -q warp "$src" "$tmp/w.tif" $map &&
                "$upres" -q warp "$src" "$tmp/tr.tif" $map --tiled --band-rows 24 ||
                tiled_ok=0
            run "$upres" compare "$tmp/w.tif" "$tmp/tr.tif" --json
            grep -q '"psnr": "inf"' <<<"$out" || { tiled_ok=0; echo "tiled $map: $out $err"; }
        done
    done
    [ "$tiled_ok" = 1 ] && pass "warp --tiled --rotate / --affine / --homography equal the whole-image warp" ||
        fail "warp --tiled by 2-D tiles differs from the whole-image warp"
    run "$upres" warp "$tmp/t8.tif" "$tmp/tl.tif" --size 100x77 --tiled --tile-size 16 --deflate
    expect_rc "warp --tiled --size --tile-size 16 --deflate" 0
    if grep -Eq "bands? of" <<<"$out" && [ -f "$tmp/tl.tif" ]; then
        pass "warp --tiled reports its bands: $out"
    else
        fail "warp --tiled output: '$out' $err"
    fi
    # --stream from an 8-bit gray TIFF into a tiled TIFF: the whole-image SIL-SEABI's pixels.
    camera="${UPRES_DATA_DIR:-$root/data}/camera.png"
    if [ -f "$camera" ] && "$upres" -q convert "$camera" "$tmp/cam.tif"; then
        "$upres" -q upscale "$tmp/cam.tif" "$tmp/cam_whole.png" --method silseabi
        run "$upres" -q upscale "$tmp/cam.tif" "$tmp/cam_stream.tif" --method silseabi --stream
        expect_rc "upscale --stream TIFF to TIFF" 0
        run "$upres" compare "$tmp/cam_whole.png" "$tmp/cam_stream.tif" --json
        grep -q '"psnr": "inf"' <<<"$out" && pass "upscale --stream from and to TIFF equals the whole image" ||
            fail "upscale --stream TIFF differs: $out $err"
        # Killed mid-write (a file size limit), the same command resumes after the rows of tiles
        # kept (the threshold's pass again, then the stream from there): the same file.
        resumes "upscale --stream" 700 "$tmp/cam_stream.tif" "$tmp/sres" "$upres" upscale \
            "$tmp/cam.tif" "$tmp/sres/o.tif" --method silseabi --stream
    else
        skip "upscale --stream TIFF (no data/camera.png: scripts/fetch_data.sh)"
    fi
    # A disk that fills up mid-write (a file size limit: writes fail with EFBIG): one error line
    # naming the file, exit 4, no output or temporary file left.
    mkdir -p "$tmp/full"
    run bash -c "trap '' XFSZ; ulimit -f 200; exec \"\$0\" warp \"\$1\" \"\$2\" --zoom 4 --tiled -q" \
        "$upres" "$tmp/t8.tif" "$tmp/full/o.tif"
    expect_one_line_error "warp --tiled on a full disk" $EX_IO "full/o.tif: TIFF tile write failed: File too large"
    if [ -z "$(ls -A "$tmp/full")" ]; then
        pass "warp --tiled on a full disk leaves no file"
    else
        fail "warp --tiled on a full disk left: $(ls -A "$tmp/full")"
    fi
    # Resuming: a run that fails after some rows of tiles (the same file size limit, larger)
    # keeps them (OUT.upres-partial.tif, OUT.upres-resume); the same command then copies them,
    # computes the rest, and the file equals an uninterrupted run's byte for byte.
    "$upres" -q warp "$tmp/t8.tif" "$tmp/ref4.tif" --zoom 4 --tiled
    mkdir -p "$tmp/res"
    run bash -c "trap '' XFSZ; ulimit -f 2000; exec \"\$0\" warp \"\$1\" \"\$2\" --zoom 4 --tiled -q" \
        "$upres" "$tmp/t8.tif" "$tmp/res/o.tif"
    expect_one_line_error "warp --tiled failing after 2 rows of tiles" $EX_IO "rerun the same command to resume after the 512 rows kept"
    if [ -f "$tmp/res/o.tif.upres-partial.tif" ] && [ -f "$tmp/res/o.tif.upres-resume" ] && [ ! -f "$tmp/res/o.tif" ]; then
        pass "the failed run kept its rows and no output"
    else
        fail "the failed run left: $(ls -A "$tmp/res")"
    fi
    run "$upres" -q warp "$tmp/t8.tif" "$tmp/res/o.tif" --zoom 4 --tiled
    if [ "$rc" -eq 0 ] && cmp -s "$tmp/res/o.tif" "$tmp/ref4.tif" && [ "$(ls -A "$tmp/res")" = o.tif ]; then
        pass "the same command resumed: byte-identical to an uninterrupted run, no leftovers"
    else
        fail "resume: exit $rc, $err; files: $(ls -A "$tmp/res")"
    fi
    # upscale --tiled: srcnn in tiles with their halo, bicubic / bspline in bands, equal to the
    # whole-image command's pixels; a resumed srcnn job equals an uninterrupted one.
    tiled_ok=1
    for m in "srcnn" "bicubic" "bspline"; do
        # shellcheck disable=SC2086  # the words of $m
        "$upres" -q upscale "$tmp/t8.tif" "$tmp/w.tif" --method $m &&
            "$upres" -q upscale "$tmp/t8.tif" "$tmp/tu.tif" --method $m --tiled --band-rows 80 ||
            tiled_ok=0
        run "$upres" compare "$tmp/w.tif" "$tmp/tu.tif" --json
        grep -q '"psnr": "inf"' <<<"$out" || { tiled_ok=0; echo "upscale tiled $m: $out $err"; }
    done
    [ "$tiled_ok" = 1 ] && pass "upscale --tiled equals the whole-image upscale (srcnn, bicubic, bspline)" ||
        fail "upscale --tiled differs from the whole-image upscale"
    "$upres" -q upscale "$tmp/t8.tif" "$tmp/refu.tif" --method srcnn --tiled --tile-size 16
    resumes "upscale --tiled" 400 "$tmp/refu.tif" "$tmp/res" "$upres" upscale "$tmp/t8.tif" \
        "$tmp/res/o.tif" --method srcnn --tiled --tile-size 16
    # stereo --tiled: the window matcher band by band equals the whole pair's map (as NPY bytes).
    if "$upres" -q convert "$root/tests/data/stereo/photo_left.npy" "$tmp/sl.tif" 2>/dev/null &&
        "$upres" -q convert "$root/tests/data/stereo/photo_right.npy" "$tmp/sr.tif" 2>/dev/null; then
        "$upres" -q stereo "$tmp/sl.tif" "$tmp/sr.tif" "$tmp/sw.tif" --disparities 24 --cost census \
            --aggregate gauss13 --lr-check 1 --median &&
            "$upres" -q stereo "$tmp/sl.tif" "$tmp/sr.tif" "$tmp/st.tif" --disparities 24 \
                --cost census --aggregate gauss13 --lr-check 1 --median --tiled --band-rows 23 &&
            "$upres" -q convert "$tmp/sw.tif" "$tmp/sw.npy" && "$upres" -q convert "$tmp/st.tif" "$tmp/st.npy"
        if cmp -s "$tmp/sw.npy" "$tmp/st.npy"; then
            pass "stereo --tiled equals the whole-pair map"
        else
            fail "stereo --tiled differs from the whole-pair map"
        fi
        run "$upres" stereo "$tmp/sl.tif" "$tmp/sr.tif" "$tmp/st.tif" --aggregate sgm4 --tiled
        expect_one_line_error "stereo --tiled with semi-global paths" $EX_INVALID "aggregation sgm4 is not tiled"
    else
        fail "stereo --tiled: cannot convert tests/data/stereo/photo_*.npy to TIFF"
    fi
    run "$upres" upscale "$tmp/t8.tif" "$tmp/tu.tif" --method lseabi --tiled
    expect_one_line_error "upscale --tiled with a SEABI method" $EX_INVALID "method lseabi is not tiled"
else
    skip "warp --tiled (this build has no TIFF)"
fi

n_enum=0
while IFS=$'\t' read -r op name kind def values doc; do
    [ "$kind" = enum ] || continue
    [ -n "${cmd_args[$op]:-}" ] || continue
    # shellcheck disable=SC2086  # the command's words
    run "$upres" ${cmd_args[$op]} "--$name" bogus-value
    want="unknown .* 'bogus-value' \\(allowed: ${values//,/, }\\)"
    if [ "$rc" -eq $EX_USAGE ] && grep -Eq -- "$want" <<<"$err"; then
        n_enum=$((n_enum + 1))
    else
        fail "$op --$name bogus-value: exit $rc, stderr: $err (wanted /$want/)"
    fi
    for v in ${values//,/ }; do
        # shellcheck disable=SC2086
        run "$upres" -q ${cmd_args[$op]} "--$name" "$v"
        # Accepted by the flag's check (it may still fail later for this input: e.g. cuda
        # without a device, fp16 with a method other than srcnn).
        if [ "$rc" -eq $EX_USAGE ]; then fail "$op --$name $v is refused as a usage error: $err"; fi
    done
done <"$tmp/options.tsv"
if [ "$n_enum" -ge 8 ]; then
    pass "every declared enum option refuses a wrong value with its list ($n_enum options)"
else
    fail "only $n_enum enum options checked"
fi

echo "cli_test: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
