# Sourced by tools/fuzz.sh and tools/fuzz_campaign.sh: what a libFuzzer run of one of upres's
# targets needs beside the binary.

# LeakSanitizer's suppressions (third-party libraries only: tools/lsan_suppressions.txt, found
# beside this file, also in a tools/fuzz_pack.sh pack).
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan_suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# fuzz_seed_corpus ROOT TARGET DIR: fills DIR with the target's seeds: the small real files of
# ROOT/tests/data/io and ROOT/models with the target's extensions, plus ROOT/fuzz/corpus/TARGET/
# (inputs that once failed or reached new code, kept as seeds).
fuzz_seed_corpus() {
    local root=$1 t=$2 dir=$3 e
    local -A ext=([png]="png" [jpeg]="jpg jpeg" [tiff]="tif tiff" [tiffrows]="tif tiff" [pfm]="pfm"
                  [pnm]="pgm ppm pnm" [npy]="npy" [srcnn]="srcnn")
    mkdir -p "$dir"
    for e in ${ext[$t]:-}; do
        find "$root/tests/data/io" "$root/models" -maxdepth 1 -name "*.$e" -size -64k \
            -exec cp {} "$dir/" \; 2>/dev/null || true
    done
    [ -d "$root/fuzz/corpus/$t" ] && cp "$root/fuzz/corpus/$t/"* "$dir/" 2>/dev/null
    return 0
}

# fuzz_target_flags TARGET: libFuzzer flags of the target, one per line. Decoders take files of
# up to 64 KiB. The command line's target prints what the CLI prints: its output is closed, and a
# command line is short.
fuzz_target_flags() {
    if [ "$1" = cli ]; then
        printf '%s\n' -close_fd_mask=3 -max_len=1024
    else
        printf '%s\n' -max_len=65536
    fi
}
