#!/usr/bin/env python3
"""The catalogue of bad input: every entry is a command that must fail with an exact one-line
message and exit code, leaving no output file. The same table is docs/errors.md.

    python3 tests/cli/error_catalogue.py UPRES                 # check (CTest `error_catalogue`)
    python3 tests/cli/error_catalogue.py UPRES --record        # rewrite tests/cli/errors.tsv
    python3 tests/cli/error_catalogue.py UPRES --doc           # rewrite docs/errors.md
    python3 tests/cli/error_catalogue.py --check-doc           # docs/errors.md is up to date

Fixtures (corrupt, truncated and hostile files) are made here in a temporary folder, written
$T in commands and messages ($ROOT: the source tree); video fixtures need the `ffmpeg` command and the video build
(their entries are reported as skipped without them). tests/cli/errors.tsv holds the recorded
exit code and message of each entry (--record after an intended change, then review the diff).
Standard library only.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TSV = os.path.join(HERE, "errors.tsv")
DOC = os.path.join(ROOT, "docs", "errors.md")
BUTTERFLY = os.path.join(ROOT, "examples", "data", "butterfly.png")

# (id, category, what, arguments after `upres`; needs: None, "video")
ENTRIES = [
    # ---- input files
    ("missing-input", "files", "an input that does not exist", ["upscale", "$T/none.png", "$T/o.png"], None),
    ("empty-png", "files", "an empty .png", ["upscale", "$T/empty.png", "$T/o.png"], None),
    ("truncated-png", "files", "a PNG cut in the middle of its image data", ["upscale", "$T/truncated.png", "$T/o.png"], None),
    ("garbage-png", "files", "random bytes named .png", ["upscale", "$T/garbage.png", "$T/o.png"], None),
    ("png-bad-crc", "files", "a PNG whose header chunk's CRC is wrong", ["upscale", "$T/badcrc.png", "$T/o.png"], None),
    ("png-bomb", "files", "a PNG declaring 100000 x 100000 pixels", ["upscale", "$T/huge.png", "$T/o.png"], None),
    ("truncated-jpeg", "files", "a JPEG cut after its headers", ["upscale", "$T/truncated.jpg", "$T/o.png"], None),
    ("garbage-jpeg", "files", "random bytes named .jpg", ["upscale", "$T/garbage.jpg", "$T/o.png"], None),
    ("garbage-tiff", "files", "random bytes named .tif", ["upscale", "$T/garbage.tif", "$T/o.png"], None),
    ("truncated-tiff", "files", "a TIFF header pointing past the end of the file", ["upscale", "$T/truncated.tif", "$T/o.png"], None),
    ("pfm-bad-header", "files", "a PFM whose size line is not numbers", ["warp", "$T/badheader.pfm", "$T/o.pfm", "--zoom", "2"], None),
    ("pfm-truncated", "files", "a PFM with fewer samples than its header says", ["warp", "$T/truncated.pfm", "$T/o.pfm", "--zoom", "2"], None),
    ("pfm-nan", "files", "a PFM frame holding a NaN, into NLM-SR (which needs finite values)", ["fuse", "$T/nan.pfm", "$T/small16.pfm", "$T/o.pfm"], None),
    ("pfm-inf-flow", "files", "a flow field holding an infinity", ["warp", "$T/small16.pfm", "$T/o.pfm", "--flow", "$T/flow_inf.npy"], None),
    ("png-bomb-limit", "files", "a PNG declaring 20000 x 20000 pixels, read with --max-pixels 1000000", ["--max-pixels", "1000000", "upscale", "$T/bomb.png", "$T/o.png"], None),
    ("npy-over-limit", "files", "a 16 x 24 .npy read with --max-pixels 100", ["--max-pixels", "100", "warp", "$T/flow1.npy", "$T/o.npy", "--zoom", "2"], None),
    ("pgm-huge", "files", "a PGM declaring 70000 x 70000 pixels", ["upscale", "$T/huge.pgm", "$T/o.png"], None),
    ("pgm-maxval-0", "files", "a PGM with maxval 0", ["upscale", "$T/maxval0.pgm", "$T/o.png"], None),
    ("ppm-truncated", "files", "a PPM with half its samples", ["upscale", "$T/truncated.ppm", "$T/o.png"], None),
    ("npy-bad-magic", "files", "a .npy without the NumPy magic", ["upscale", "$T/badmagic.npy", "$T/o.png"], None),
    ("npy-complex", "files", "a complex .npy array", ["upscale", "$T/complex.npy", "$T/o.png"], None),
    ("npy-4d", "files", "a 4-D .npy array", ["upscale", "$T/fourd.npy", "$T/o.png"], None),
    ("npy-huge-shape", "files", "a .npy header declaring 10^12 elements", ["upscale", "$T/hugeshape.npy", "$T/o.png"], None),
    ("unknown-input-format", "files", "an input with an unknown extension", ["upscale", "$T/image.xyz", "$T/o.png"], None),
    ("folder-without-images", "files", "a folder holding no image", ["upscale", "$T/emptydir", "$T/outdir"], None),
    ("model-truncated", "files", "a truncated .srcnn model", ["upscale", "$T/small.png", "$T/o.png", "--model", "$T/truncated.srcnn"], None),
    ("model-garbage", "files", "random bytes as a .srcnn model", ["upscale", "$T/small.png", "$T/o.png", "--model", "$T/garbage.srcnn"], None),
    ("model-missing", "files", "a model file that does not exist", ["upscale", "$T/small.png", "$T/o.png", "--model", "$T/none.srcnn"], None),
    # ---- outputs
    ("output-folder-missing", "outputs", "an output in a folder that does not exist", ["upscale", "$T/small.png", "$T/no/such/o.png"], None),
    ("output-unknown-format", "outputs", "an output with an unknown extension", ["upscale", "$T/small.png", "$T/o.xyz"], None),
    ("output-is-a-folder", "outputs", "several inputs into an existing file", ["upscale", "$T/small.png", "$T/small2.png", "$T/existing.png"], None),
    ("output-replaces-input", "outputs", "several inputs into the folder that holds them", ["upscale", "$T/small.png", "$T/small2.png", "$T", "--method", "bicubic"], None),
    ("output-depth", "outputs", "a float image into a JPEG", ["convert", "$T/small.pfm", "$T/o.jpg"], None),
    # ---- command line
    ("unknown-command", "command line", "an unknown subcommand", ["resize", "$T/small.png", "$T/o.png"], None),
    ("unknown-flag", "command line", "an unknown flag", ["upscale", "$T/small.png", "$T/o.png", "--sharpen"], None),
    ("missing-output", "command line", "an input without an output", ["upscale", "$T/small.png"], None),
    ("bad-backend", "command line", "an unknown backend", ["--backend", "tpu", "upscale", "$T/small.png", "$T/o.png"], None),
    ("bad-max-pixels", "command line", "--max-pixels 0", ["--max-pixels", "0", "upscale", "$T/small.png", "$T/o.png"], None),
    ("bad-threads", "command line", "a negative thread count", ["--threads", "-3", "upscale", "$T/small.png", "$T/o.png"], None),
    # ---- option values and combinations
    ("scale-zero", "options", "upscale --scale 0", ["upscale", "$T/small.png", "$T/o.png", "--scale", "0"], None),
    ("scale-too-big", "options", "upscale --scale 17", ["upscale", "$T/small.png", "$T/o.png", "--scale", "17"], None),
    ("scale-nan", "options", "upscale --scale nan", ["upscale", "$T/small.png", "$T/o.png", "--scale", "nan"], None),
    ("unknown-method", "options", "an unknown upscale method", ["upscale", "$T/small.png", "$T/o.png", "--method", "magic"], None),
    ("srcnn-no-model", "options", "SRCNN at a factor without a model", ["upscale", "$T/small.png", "$T/o.png", "--method", "srcnn", "--scale", "5"], None),
    ("srcnn-fraction", "options", "SRCNN at a fractional factor", ["upscale", "$T/small.png", "$T/o.png", "--method", "srcnn", "--scale", "2.5"], None),
    ("nlm-cosited", "options", "NLM-SR on the co-sited lattice", ["upscale", "$T/small.png", "$T/o.png", "--method", "nlm", "--lattice", "cosited"], None),
    ("srcnn-cosited", "options", "SRCNN on the co-sited lattice", ["upscale", "$T/small.png", "$T/o.png", "--method", "srcnn", "--lattice", "cosited"], None),
    ("iterations-not-lseabi", "options", "--iterations with another method than lseabi", ["upscale", "$T/small.png", "$T/o.png", "--method", "bicubic", "--iterations", "3"], None),
    ("precision-not-srcnn", "options", "--precision with another method than srcnn", ["upscale", "$T/small.png", "$T/o.png", "--method", "bicubic", "--precision", "fp16"], None),
    ("precision-on-cpu", "options", "SRCNN fp16 on the cpu backend", ["--backend", "cpu", "upscale", "$T/small.png", "$T/o.png", "--method", "srcnn", "--precision", "fp16"], None),
    ("iterations-range", "options", "lseabi --iterations 0", ["upscale", "$T/small.png", "$T/o.png", "--method", "lseabi", "--iterations", "0"], None),
    ("seabi-16bit", "options", "a 16-bit image through an 8-bit SEABI method", ["upscale", "$T/gray16.png", "$T/o.png", "--method", "silseabi"], None),
    ("seabi-two-channels", "options", "a gray + alpha image through a SEABI method", ["upscale", "$T/graya.png", "$T/o.png", "--method", "silseabi"], None),
    ("stream-truncated", "files", "a streamed PGM that ends early", ["upscale", "$T/truncated.pgm", "$T/o.pgm", "--method", "silseabi", "--stream"], None),
    ("stream-not-pgm", "options", "--stream with a PNG input", ["upscale", "$T/small.png", "$T/o.pgm", "--method", "silseabi", "--stream"], None),
    ("stream-tiff-channels", "options", "--stream from a TIFF that is not 8-bit gray", ["upscale", "$T/t16.tif", "$T/o.tif", "--method", "silseabi", "--stream"], None),
    ("stream-method", "options", "--stream with a method that cannot stream", ["upscale", "$T/gray.pgm", "$T/o.pgm", "--method", "lseabi", "--stream"], None),
    ("stream-output", "options", "--stream into a PNG", ["upscale", "$T/gray.pgm", "$T/o.png", "--method", "silseabi", "--stream"], None),
    ("tiled-flow", "options", "--tiled with a displacement field", ["warp", "$T/t.tif", "$T/o.tif", "--flow", "$T/none.npy", "--tiled"], None),
    ("tiled-not-tiff", "options", "--tiled with a PNG input", ["warp", "$T/small.png", "$T/o.tif", "--zoom", "2", "--tiled"], None),
    ("tiled-output", "options", "--tiled into a PNG", ["warp", "$T/t.tif", "$T/o.png", "--zoom", "2", "--tiled"], None),
    ("tiled-wrap", "options", "--tiled with the wrap border", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "2", "--tiled", "--border", "wrap"], None),
    ("tiled-tile-size", "options", "--tiled with an output tile side that is not a multiple of 16", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "2", "--tiled", "--tile-size", "20"], None),
    ("tiled-too-large", "options", "--tiled with a zoom past 2^20 pixels per side", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "100000", "--tiled"], None),
    ("tiled-memory", "options", "--tiled with --max-memory -5", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "2", "--tiled", "--max-memory", "-5"], None),
    ("tiled-cuda-fast", "options", "--tiled with the texture mode (its reads take whole images)", ["warp", "$T/t.tif", "$T/o.tif", "--rotate", "10", "--tiled", "--backend", "cuda", "--fast"], None),
    ("tiled-band-rows", "options", "--tiled with bands taller than the output", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "2", "--tiled", "--band-rows", "100"], None),
    ("tiled-tile-too-large", "options", "--tiled with output tiles larger than the output", ["warp", "$T/t.tif", "$T/o.tif", "--zoom", "2", "--tiled", "--tile-size", "256"], None),
    ("band-rows-alone", "options", "--band-rows without --tiled", ["warp", "$T/small.png", "$T/o.png", "--zoom", "2", "--band-rows", "8"], None),
    ("tiled-missing-tile", "files", "a tiled TIFF whose tile lies past the end of the file, through --tiled", ["warp", "$T/missing_tile.tif", "$T/o.tif", "--zoom", "2", "--tiled"], None),
    ("tiff-tile-bomb", "files", "a 9 x 7 tiled TIFF declaring one tile of 16 x 4294966272 samples (68 GB; found by fuzzing)", ["upscale", "$T/tile_bomb.tif", "$T/o.png"], None),
    ("upscale-tiled-reference", "options", "upscale --tiled on the reference backend (the tiles run the cpu or cuda backend)", ["upscale", "$T/t.tif", "$T/o.tif", "--tiled", "--backend", "reference"], None),
    ("stereo-tiled-reference", "options", "stereo --tiled on the reference backend (the bands run the cpu or cuda backend)", ["stereo", "$T/t.tif", "$T/t.tif", "$T/o.tif", "--tiled", "--backend", "reference"], None),
    ("fuse-tiled-sequence", "options", "fuse --tiled with --sequence (one fused output in bands)", ["fuse", "$T/t.tif", "$T/t.tif", "$T/o.tif", "--tiled", "--sequence"], None),
    ("fuse-tiled-reference", "options", "fuse --tiled on the reference backend (the bands run the cpu or cuda backend)", ["fuse", "$T/t.tif", "$T/o.tif", "--tiled", "--backend", "reference"], None),
    ("fuse-noise", "options", "fuse with a noise level past 255", ["fuse", "$T/small.png", "$T/o.png", "--noise", "300"], None),
    ("single-pass-alone", "options", "--single-pass without --stream", ["upscale", "$T/gray.pgm", "$T/o.pgm", "--method", "silseabi", "--single-pass"], None),
    ("nlm-fraction", "options", "nlm at a fractional factor", ["upscale", "$T/small.png", "$T/o.png", "--method", "nlm", "--scale", "2.5"], None),
    ("warp-no-transform", "options", "warp without a transform", ["warp", "$T/small.png", "$T/o.png"], None),
    ("warp-two-transforms", "options", "warp with two transforms", ["warp", "$T/small.png", "$T/o.png", "--zoom", "2", "--rotate", "10"], None),
    ("warp-zoom-zero", "options", "warp --zoom 0", ["warp", "$T/small.png", "$T/o.png", "--zoom", "0"], None),
    ("warp-bad-interp", "options", "an unknown interpolation", ["warp", "$T/small.png", "$T/o.png", "--zoom", "2", "--interp", "sinc"], None),
    ("warp-bad-border", "options", "an unknown border", ["warp", "$T/small.png", "$T/o.png", "--zoom", "2", "--border", "torus"], None),
    ("warp-flow-channels", "options", "a flow field with 1 channel", ["warp", "$T/small.png", "$T/o.png", "--flow", "$T/flow1.npy"], None),
    ("warp-flow-size", "options", "a flow field of another size than the output", ["warp", "$T/small.png", "$T/o.png", "--flow", "$T/flow_small.npy"], None),
    ("stereo-sizes", "options", "a stereo pair of two sizes", ["stereo", "$T/small.png", "$T/small_wide.png", "$T/d.pfm"], None),
    ("stereo-disparities", "options", "stereo --disparities 0", ["stereo", "$T/small.png", "$T/small2.png", "$T/d.pfm", "--disparities", "0"], None),
    ("stereo-aggregate", "options", "an unknown stereo aggregation", ["stereo", "$T/small.png", "$T/small2.png", "$T/d.pfm", "--aggregate", "mean"], None),
    ("fuse-sizes", "options", "frames of two sizes to fuse", ["fuse", "$T/small.png", "$T/small_wide.png", "$T/o.png"], None),
    ("fuse-scale", "options", "fuse --scale 5", ["fuse", "$T/small.png", "$T/small2.png", "$T/o.png", "--scale", "5"], None),
    ("fuse-window", "options", "fuse --sequence --window 0", ["fuse", "$T/small.png", "$T/small2.png", "$T/outdir2", "--sequence", "--window", "0"], None),
    ("compare-sizes", "options", "compare images of two sizes", ["compare", "$T/small.png", "$T/small_wide.png"], None),
    ("convert-depth", "options", "convert to an unknown depth", ["convert", "$T/small.png", "$T/o.png", "--depth", "u12"], None),
    ("quality-tiny", "options", "BRISQUE of a 4 x 4 image", ["quality", "$T/tiny.png"], None),
    ("json-on-image", "options", "--json with an image input", ["upscale", "$T/small.png", "$T/o.png", "--json"], None),
    # ---- video
    ("video-not-video", "video", "random bytes named .mp4", ["upscale", "$T/garbage.mp4", "$T/o.mkv"], "video"),
    ("video-truncated", "video", "an MKV cut in half", ["upscale", "$T/truncated.mkv", "$T/o.mkv"], "video"),
    ("video-no-video-stream", "video", "an audio-only file", ["upscale", "$T/audio.mkv", "$T/o.mkv"], "video"),
    ("video-pixel-format", "video", "an RGB video", ["upscale", "$T/rgb.nut", "$T/o.mkv"], "video"),
    ("video-unknown-codec", "video", "an unknown output codec", ["upscale", "$T/ok.mkv", "$T/o.mkv", "--codec", "h266"], "video"),
    ("video-crf-lossless", "video", "--crf with the lossless ffv1", ["upscale", "$T/ok.mkv", "$T/o.mkv", "--codec", "ffv1", "--crf", "10"], "video"),
    ("video-container", "video", "ffv1 into an .mp4", ["upscale", "$T/ok.mkv", "$T/o.mp4", "--codec", "ffv1"], "video"),
    ("video-preset", "video", "an unknown x264 preset", ["upscale", "$T/ok.mkv", "$T/o.mkv", "--preset", "fastest"], "video"),
    ("video-10bit-seabi", "video", "a 10-bit video through an 8-bit method", ["upscale", "$T/ten.mkv", "$T/o.mkv", "--method", "lseabi"], "video"),
    ("video-image-output", "video", "a video into an image file", ["upscale", "$T/ok.mkv", "$T/o.png"], "video"),
    ("video-window", "video", "--window with another method than nlm", ["upscale", "$T/ok.mkv", "$T/o.mkv", "--method", "bicubic", "--window", "3"], "video"),
    ("video-flag-on-image", "video", "a video flag with an image input", ["upscale", "$T/small.png", "$T/o.png", "--codec", "libx265"], "video"),
    ("video-hwdec-codec", "video", "--hwdec cuda on a codec NVDEC does not decode (ffv1)", ["upscale", "$T/ten.mkv", "$T/o.mkv", "--hwdec", "cuda"], "video"),
    ("video-output-folder", "video", "a video output in a folder that does not exist", ["upscale", "$T/ok.mkv", "$T/no/o.mkv"], "video"),
]


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png(w, h, color_type=0, depth=8, rows=None):
    raw = rows if rows is not None else b"".join(
        b"\0" + bytes((x * 7 + y * 3) % 256 for x in range(w * {0: 1, 4: 2, 2: 3}[color_type] *
                                                      (depth // 8))) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth,
                                                                      color_type, 0, 0, 0)) +
            png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def npy(header_dict, payload=b""):
    header = header_dict.encode()
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def make_fixtures(t, upres):
    def w(name, data):
        with open(os.path.join(t, name), "wb") as f:
            f.write(data)

    small = make_png(24, 16)
    w("small.png", small)
    w("small2.png", make_png(24, 16, rows=b"".join(b"\0" + bytes((x * 5 + y) % 256 for x in
                                                                 range(24)) for y in range(16))))
    w("small_wide.png", make_png(30, 16))
    w("existing.png", small)
    w("tiny.png", make_png(4, 4))
    w("gray16.png", make_png(12, 8, 0, 16))
    w("graya.png", make_png(12, 8, 4))
    w("empty.png", b"")
    w("truncated.png", small[:len(small) // 2])
    w("garbage.png", bytes((i * 131 + 7) % 256 for i in range(600)))
    bad = bytearray(small)
    bad[29] ^= 0xFF  # the IHDR chunk's CRC
    w("badcrc.png", bytes(bad))
    w("huge.png", b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 100000,
                                                                          100000, 8, 0, 0, 0, 0))
      + png_chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + png_chunk(b"IEND", b""))
    w("bomb.png", b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 20000, 20000,
                                                                          8, 0, 0, 0, 0))
      + png_chunk(b"IDAT", zlib.compress(b"\0" * 20001 * 4)) + png_chunk(b"IEND", b""))
    jpeg_header = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffdb004300") + bytes(64)
    w("truncated.jpg", jpeg_header)
    w("garbage.jpg", bytes((i * 17 + 3) % 256 for i in range(500)))
    w("garbage.tif", bytes((i * 29 + 1) % 256 for i in range(500)))
    w("truncated.tif", b"II*\x00" + struct.pack("<I", 100000) + bytes(16))
    w("badheader.pfm", b"Pf\nabc def\n-1.0\n" + bytes(16))
    w("truncated.pfm", b"Pf\n4 4\n-1.0\n" + struct.pack("<4f", 0.1, 0.2, 0.3, 0.4))
    vals = [((i * 37) % 100) / 100.0 for i in range(256)]
    w("small16.pfm", b"Pf\n16 16\n-1.0\n" + struct.pack("<256f", *vals))
    vals[17] = float("nan")
    w("nan.pfm", b"Pf\n16 16\n-1.0\n" + struct.pack("<256f", *vals))
    flow = [0.25] * (16 * 16 * 2)
    flow[41] = float("inf")
    w("flow_inf.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16, 2), }",
                          struct.pack("<512f", *flow)))
    w("small.pfm", b"Pf\n2 2\n-1.0\n" + struct.pack("<4f", 0.1, 0.2, 0.3, 0.4))
    w("huge.pgm", b"P5\n70000 70000\n255\n" + bytes(100))
    w("maxval0.pgm", b"P5\n4 4\n0\n" + bytes(16))
    w("truncated.ppm", b"P6\n8 8\n255\n" + bytes(96))
    w("truncated.pgm", b"P5\n8 8\n255\n" + bytes(40))
    w("gray.pgm", b"P5\n8 6\n255\n" + bytes(range(40, 88)))
    w("badmagic.npy", b"NOTNUMPY" + bytes(100))
    w("complex.npy", npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }", bytes(32)))
    w("fourd.npy", npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 2, 2), }",
                       bytes(16)))
    w("hugeshape.npy", npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1000000, "
                           "1000000), }", bytes(16)))
    w("flow1.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 24), }",
                       bytes(16 * 24 * 4)))
    w("flow_small.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 8, 2), }",
                            bytes(8 * 8 * 2 * 4)))
    w("image.xyz", small)
    subprocess.run([upres, "-q", "convert", os.path.join(t, "small.png"), os.path.join(t, "t.tif")],
                   check=True)
    subprocess.run([upres, "-q", "convert", os.path.join(t, "gray16.png"),
                    os.path.join(t, "t16.tif")], check=True)
    w("missing_tile.tif", tiled_tiff(32, 32, past_end=True))
    w("tile_bomb.tif", tiled_tiff(9, 7, tile_length=4294966272))
    os.mkdir(os.path.join(t, "emptydir"))
    w("truncated.srcnn", b"SRCNN" + bytes(10))
    w("garbage.srcnn", bytes((i * 13 + 5) % 256 for i in range(300)))
    video = shutil.which("ffmpeg") is not None and video_build(upres)
    if video:
        def ff(*args):
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)
        ok = os.path.join(t, "ok.mkv")
        ff("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "30", "-pix_fmt",
           "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", ok)
        data = open(ok, "rb").read()
        w("truncated.mkv", data[:len(data) // 2])
        w("garbage.mp4", bytes((i * 37 + 11) % 256 for i in range(800)))
        ff("-f", "lavfi", "-i", "sine=sample_rate=8000", "-t", "0.5", "-c:a", "flac",
           os.path.join(t, "audio.mkv"))
        ff("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "2", "-pix_fmt",
           "rgb24", "-c:v", "rawvideo", os.path.join(t, "rgb.nut"))
        ff("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "2", "-pix_fmt",
           "yuv420p10le", "-c:v", "ffv1", os.path.join(t, "ten.mkv"))
    return video


def tiled_tiff(w, h, past_end=False, tile_length=16):
    """A little-endian tiled 8-bit gray TIFF of 16 x tile_length uncompressed tiles (zeros, 256
    bytes each whatever the tile's size); past_end: the last tile's offset points past the end
    of the file."""
    tiles = ((w + 15) // 16) * ((h + tile_length - 1) // tile_length)
    tags = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
            (277, 3, 1, 1), (322, 3, 1, 16), (323, 4, 1, tile_length)]
    ifd_at = 8
    n = len(tags) + 2
    arrays_at = ifd_at + 2 + n * 12 + 4
    data_at = arrays_at + 8 * tiles
    offsets = [data_at + 256 * i for i in range(tiles)]
    if past_end:
        offsets[-1] = data_at + 256 * tiles * 4
    tags += [(324, 4, tiles, arrays_at), (325, 4, tiles, arrays_at + 4 * tiles)]
    out = b"II*\x00" + struct.pack("<I", ifd_at) + struct.pack("<H", n)
    for tag, typ, count, value in sorted(tags):
        packed = struct.pack("<HI", value, 0)[:4] if typ == 3 else struct.pack("<I", value)
        out += struct.pack("<HHI", tag, typ, count) + packed
    out += struct.pack("<I", 0)
    out += struct.pack("<%dI" % tiles, *offsets) + struct.pack("<%dI" % tiles, *([256] * tiles))
    return out + bytes(256 * (tiles - 1 if past_end else tiles))


def video_build(upres):
    """Whether this upres has video support (its upscale help lists --codec)."""
    r = subprocess.run([upres, "upscale", "--help"], capture_output=True, text=True)
    return "--codec" in r.stdout


def run_entry(upres, t, args):
    argv = [upres] + [a.replace("$T", t) for a in args]
    before = set(os.listdir(t))
    r = subprocess.run(argv, capture_output=True, text=True, cwd=t)
    after = set(os.listdir(t))
    msg = r.stderr.strip().replace(t, "$T").replace(ROOT, "$ROOT")
    return r.returncode, msg, sorted(after - before), r.stdout.strip()


def load_tsv():
    rows = {}
    if os.path.exists(TSV):
        for line in open(TSV, encoding="utf-8"):
            if line.startswith("#") or not line.strip():
                continue
            eid, rc, msg = line.rstrip("\n").split("\t", 2)
            rows[eid] = (int(rc), msg.replace("\\n", "\n"))
    return rows


def render_doc(rows):
    out = ["# Bad input: what upres refuses, and how", "",
           "Every row is a test: `tests/cli/error_catalogue.py` (CTest `error_catalogue`) runs "
           "the command on the fixture it names (made by the script: corrupt, truncated and "
           "hostile files; `$T` is its temporary folder, `$ROOT` the source tree) and checks the exit code, that the "
           "message is exactly this one line on stderr, that nothing is written to stdout and "
           "that no output file is left behind. Exit codes: 1 command-line usage, 2 invalid "
           "argument, 3 unsupported format, 4 I/O error, 5 corrupt data, 6 out of memory, "
           "7 backend unavailable, 8 CUDA error (docs/cli.md). Regenerated with "
           "`python3 tests/cli/error_catalogue.py build/release/upres --doc`.", "",
           "Also tested elsewhere: interrupting a video (Ctrl-C: `interrupted after N frames; "
           "OUT was not written`, `tests/video/test_video.py`), GPU out of memory "
           "(`CoreCuda.HugeDeviceAllocationIsOutOfMemory`), and the limits of "
           "docs/reliability.md.", ""]
    cat = None
    for eid, category, what, args, needs in ENTRIES:
        if category != cat:
            cat = category
            out += ["## " + category[0].upper() + category[1:], "",
                    "| input | command | exit | message |", "| --- | --- | ---: | --- |"]
        rc, msg = rows.get(eid, (None, "(not recorded)"))
        cmd = "upres " + " ".join(args)
        out.append("| %s | `%s` | %s | `%s` |" % (what, cmd.replace("|", "\\|"), rc,
                                                  msg.replace("|", "\\|")))
        if ENTRIES.index((eid, category, what, args, needs)) + 1 == len(ENTRIES) or \
                ENTRIES[ENTRIES.index((eid, category, what, args, needs)) + 1][1] != category:
            out.append("")
    out.append("%d entries." % len(ENTRIES))
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = load_tsv()
    if sys.argv[1] == "--check-doc":
        current = open(DOC, encoding="utf-8").read() if os.path.exists(DOC) else ""
        if current != render_doc(rows):
            print("error_catalogue: docs/errors.md is out of date with tests/cli/errors.tsv "
                  "(run with --doc)")
            return 1
        print("error_catalogue: docs/errors.md is up to date")
        return 0
    upres = os.path.abspath(sys.argv[1])
    record, doc = "--record" in sys.argv, "--doc" in sys.argv
    if doc:
        with open(DOC, "w", encoding="utf-8") as f:
            f.write(render_doc(rows))
        print("error_catalogue: wrote", DOC)
        return 0
    t = tempfile.mkdtemp(prefix="upres_errors_")
    try:
        video = make_fixtures(t, upres)
        failed = skipped = 0
        recorded = {}
        for eid, category, what, args, needs in ENTRIES:
            if needs == "video" and not video:
                print("SKIP %s: needs the video build and the ffmpeg command" % eid)
                skipped += 1
                if eid in rows:
                    recorded[eid] = rows[eid]
                continue
            rc, msg, left, stdout = run_entry(upres, t, args)
            problems = []
            if rc == 0:
                problems.append("succeeded")
            if "\n" in msg:
                problems.append("%d lines on stderr" % (msg.count("\n") + 1))
            if stdout:
                problems.append("wrote to stdout: " + stdout[:200])
            if left:
                problems.append("left files: " + ", ".join(left))
            if not record:
                want = rows.get(eid)
                if want is None:
                    problems.append("not recorded in errors.tsv (run --record)")
                elif (rc, msg) != want:
                    problems.append("got exit %d %r, recorded exit %d %r" % (rc, msg, *want))
            recorded[eid] = (rc, msg)
            if problems:
                failed += 1
                print("FAIL %s: %s" % (eid, "; ".join(problems)))
            else:
                print("PASS %s (exit %d): %s" % (eid, rc, msg))
        if record:
            with open(TSV, "w", encoding="utf-8") as f:
                f.write("# id\texit\tmessage (tests/cli/error_catalogue.py --record)\n")
                for eid, *_ in ENTRIES:
                    if eid in recorded:
                        rc, msg = recorded[eid]
                        f.write("%s\t%d\t%s\n" % (eid, rc, msg.replace("\n", "\\n")))
            print("error_catalogue: recorded", TSV)
        print("error_catalogue: %d entries, %d failed, %d skipped" % (len(ENTRIES), failed,
                                                                      skipped))
        return 1 if failed else 0
    finally:
        shutil.rmtree(t, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
