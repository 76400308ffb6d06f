#!/usr/bin/env bash
# Packs one fuzz target built by tools/fuzz.sh for a machine that has neither the build tools
# nor the libraries (the GPU machine, whose 16 cores run a campaign in a few device calls): the
# target (xz), the shared libraries `ldd` names except glibc's (tar.xz: FFmpeg's 131 make 50 MB
# for the video target), its seeds, tools/fuzz_campaign.sh, tools/fuzz_common.sh,
# tools/lsan_suppressions.txt and run.sh.
#   tools/fuzz_pack.sh TARGET DIR
# The target comes from $UPRES_FUZZ_BUILD (default build/fuzz): for fuzz_cli, a fuzz build
# without video (-DUPRES_BUILD_VIDEO=OFF, docs/reliability.md) leaves FFmpeg out of its pack.
# On the other machine, from any folder:
#   bash DIR/run.sh PROCS SECONDS [libFuzzer flags...]
# unpacks (once) and runs tools/fuzz_campaign.sh TARGET PROCS SECONDS niced (nice 10: a build or
# a test started beside it keeps its speed), with the corpora and the targets' temporary files
# in /dev/shm and the findings under $OUT/findings-TARGET (OUT defaults to /dev/shm/camp). Start
# it in the background (setsid) to keep working while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
t=${1:?usage: tools/fuzz_pack.sh TARGET DIR}
dir=${2:?usage: tools/fuzz_pack.sh TARGET DIR}
bin=${UPRES_FUZZ_BUILD:-$root/build/fuzz}/fuzz/fuzz_$t
[ -x "$bin" ] || { echo "fuzz_pack: no $bin (build it with tools/fuzz.sh)"; exit 1; }
. "$root/tools/fuzz_common.sh"
rm -rf "$dir" && mkdir -p "$dir/lib"
ldd "$bin" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libpthread|libdl|librt)\.so|/ld-linux' |
    while read -r l; do cp -L "$l" "$dir/lib/"; done
tar -C "$dir" -cf - lib | xz -6 -T0 >"$dir/lib.tar.xz"
rm -rf "$dir/lib"
xz -6 -T0 -c "$bin" >"$dir/fuzz_$t.xz"
fuzz_seed_corpus "$root" "$t" "$dir/corpus/$t"
cp "$root/tools/fuzz_campaign.sh" "$root/tools/fuzz_common.sh" "$root/tools/lsan_suppressions.txt" "$dir/"
cat >"$dir/run.sh" <<EOF
#!/usr/bin/env bash
# Made by tools/fuzz_pack.sh: unpacks fuzz_$t and its libraries here (once), then runs its
# campaign: bash run.sh PROCS SECONDS [libFuzzer flags...]
set -u
here=\$(cd "\$(dirname "\$0")" && pwd)
if [ ! -x "\$here/fuzz_$t" ]; then
    xz -dc "\$here/lib.tar.xz" | tar -C "\$here" -xf - && xz -dc "\$here/fuzz_$t.xz" >"\$here/fuzz_$t" &&
        chmod +x "\$here/fuzz_$t" || exit 1
fi
missing=\$(LD_LIBRARY_PATH=\$here/lib ldd "\$here/fuzz_$t" | grep 'not found')
[ -z "\$missing" ] || { echo "run.sh: libraries missing: \$missing"; exit 1; }
mkdir -p /dev/shm/camp
OUT=\${OUT:-/dev/shm/camp} TMPDIR=/dev/shm UPRES_FUZZ_BIN=\$here exec nice -n 10 \\
    bash "\$here/fuzz_campaign.sh" $t "\$@"
EOF
chmod +x "$dir/run.sh"
du -sh "$dir"
