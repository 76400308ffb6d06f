#!/usr/bin/env bash
# Packs fuzz targets built by tools/fuzz.sh for a machine that has neither the build tools nor
# the libraries (the GPU machine, whose 16 cores run a campaign in a few device calls): the
# targets (xz, without debug information), the shared libraries `ldd` names except glibc's (one
# tar.xz for all: FFmpeg's 131 make 50 MB with the video target), their seeds,
# tools/fuzz_campaign.sh, tools/fuzz_common.sh, tools/lsan_suppressions.txt and run.sh.
#   tools/fuzz_pack.sh TARGET[,TARGET...] DIR
# The targets come from $UPRES_FUZZ_BUILD (default build/fuzz; with FFmpeg's libraries, fuzz_cli
# there also takes the `video` command).
# On the other machine, from any folder:
#   bash DIR/run.sh TARGET PROCS SECONDS [libFuzzer flags...]
# unpacks (once) and runs tools/fuzz_campaign.sh TARGET PROCS SECONDS niced (nice 10: a build or
# a test started beside it keeps its speed), with the corpora (kept: the next call, while the
# machine is warm, goes on from them) and the targets' temporary files in /dev/shm and the
# findings under $OUT/findings-TARGET (OUT defaults to /dev/shm/camp).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
IFS=, read -ra targets <<<"${1:?usage: tools/fuzz_pack.sh TARGET[,TARGET...] DIR}"
dir=${2:?usage: tools/fuzz_pack.sh TARGET[,TARGET...] DIR}
build=${UPRES_FUZZ_BUILD:-$root/build/fuzz}
. "$root/tools/fuzz_common.sh"
rm -rf "$dir" && mkdir -p "$dir/lib"
for t in "${targets[@]}"; do
    bin=$build/fuzz/fuzz_$t
    [ -x "$bin" ] || { echo "fuzz_pack: no $bin (build it with tools/fuzz.sh)"; exit 1; }
    ldd "$bin" | awk '$3 ~ /^\// {print $3}' |
        grep -Ev '/(libc|libm|libpthread|libdl|librt)\.so|/ld-linux' |
        while read -r l; do cp -L "$l" "$dir/lib/"; done
    # Without debug information (a third of the size; reports keep the function names, and a
    # finding is reproduced here from its input): the command line's and the video's targets
    # with FFmpeg's libraries fit within a device call's 64 MiB.
    objcopy --strip-debug "$bin" "$dir/fuzz_$t" && xz -6 -T0 "$dir/fuzz_$t"
    fuzz_seed_corpus "$root" "$t" "$dir/corpus/$t"
done
tar -C "$dir" -cf - lib | xz -6 -T0 >"$dir/lib.tar.xz"
rm -rf "$dir/lib"
cp "$root/tools/fuzz_campaign.sh" "$root/tools/fuzz_common.sh" "$root/tools/lsan_suppressions.txt" "$dir/"
cat >"$dir/run.sh" <<'EOF'
#!/usr/bin/env bash
# Made by tools/fuzz_pack.sh: unpacks the targets and their libraries here (once), then runs a
# campaign of one of them: bash run.sh TARGET PROCS SECONDS [libFuzzer flags...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
t=${1:?usage: run.sh TARGET PROCS SECONDS [libFuzzer flags...]}
shift
if [ ! -d "$here/lib" ]; then
    xz -dc "$here/lib.tar.xz" | tar -C "$here" -xf - || exit 1
fi
if [ ! -x "$here/fuzz_$t" ]; then
    xz -dc "$here/fuzz_$t.xz" >"$here/fuzz_$t" && chmod +x "$here/fuzz_$t" || exit 1
fi
missing=$(LD_LIBRARY_PATH=$here/lib ldd "$here/fuzz_$t" | grep 'not found')
[ -z "$missing" ] || { echo "run.sh: libraries missing: $missing"; exit 1; }
mkdir -p /dev/shm/camp
OUT=${OUT:-/dev/shm/camp} TMPDIR=/dev/shm UPRES_FUZZ_BIN=$here \
    UPRES_FUZZ_CORPUS=${UPRES_FUZZ_CORPUS:-/dev/shm/camp/corpus} exec nice -n 10 \
    bash "$here/fuzz_campaign.sh" "$t" "$@"
EOF
chmod +x "$dir/run.sh"
du -sh "$dir"
