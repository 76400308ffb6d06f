#!/usr/bin/env python3
"""End-to-end tests of `upres upscale IN.video OUT.video` (upres_video, FFmpeg's libraries).

    python3 tests/video/test_video.py path/to/upres [unittest args]

Real clips from Debian's opencv-doc (vtest.avi, Megamind.avi with its AC-3 audio; looked up in
$UPRES_DATA, data/, then /usr/share/doc/opencv-doc/examples/data) and clips made here with the
`ffmpeg` command: 10-bit HDR10, variable frame rate with two audio and a subtitle stream, every
supported chroma layout at odd sizes, p010. Checked with `ffprobe` and lossless (ffv1) outputs:
each output frame's luma equals the single-image `upres upscale` of the decoded frame's luma;
streams, timestamps, colour tags and side data survive; bad input gives a clear error and no
output file. Only the standard library: runs with any python3. Exit code 77 (CTest: skipped)
without ffmpeg / ffprobe.
"""
import array
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

UPRES = None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_clip(name):
    for d in (os.environ.get("UPRES_DATA", ""), os.path.join(ROOT, "data"),
              "/usr/share/doc/opencv-doc/examples/data"):
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def run(args, check=True):
    p = subprocess.run(args, capture_output=True, text=False)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(map(str, args)), p.returncode,
                                                      p.stderr.decode(errors="replace")))
    return p


def ffmpeg(*args):
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", *map(str, args)])


def probe(path):
    out = run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json",
               str(path)]).stdout
    return json.loads(out)


def video_stream(info):
    return next(s for s in info["streams"] if s["codec_type"] == "video")


def frame_times(path):
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
               "frame=pts_time", "-of", "csv=p=0", str(path)]).stdout.decode()
    times = [line.split(",")[0].strip() for line in out.splitlines()]
    return [round(float(t), 4) for t in times if t and t != "N/A"]


def raw_frames(path, pix_fmt):
    return run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-map", "0:v:0", "-f",
                "rawvideo", "-pix_fmt", pix_fmt, "-"]).stdout


def stream_md5(path, index):
    return run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-map", "0:%d" % index,
                "-c", "copy", "-f", "md5", "-"]).stdout.decode().strip()


def write_pgm(path, w, h, data, wide=False):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n%d\n" % (w, h, 65535 if wide else 255))
        if wide:
            a = array.array("H", data)
            if sys.byteorder == "little":
                a.byteswap()  # PGM is big-endian
            f.write(a.tobytes())
        else:
            f.write(bytes(data))


def read_pgm(path, w, h, wide=False):
    data = open(path, "rb").read()
    n = w * h * (2 if wide else 1)
    body = data[len(data) - n:]
    if not wide:
        return body
    a = array.array("H", body)
    if sys.byteorder == "little":
        a.byteswap()
    return a


def single_image_luma(tmp, y, w, h, method, scale, bits=8):
    """upres upscale of one luma plane as a gray image (bits > 8: on the 16-bit scale, as
    upscale_yuv documents), back in the frame's depth."""
    inp, out = os.path.join(tmp, "y.pgm"), os.path.join(tmp, "y_up.pgm")
    if bits == 8:
        write_pgm(inp, w, h, y)
    else:
        m = (1 << bits) - 1
        write_pgm(inp, w, h, [(v * 65535 + m // 2) // m for v in y], wide=True)
    run([UPRES, "upscale", inp, out, "--method", method, "--scale", str(scale), "--quiet"])
    ow, oh = w * scale, h * scale
    r = read_pgm(out, ow, oh, wide=bits > 8)
    if bits == 8:
        return r
    m = (1 << bits) - 1
    return array.array("H", [(v * m + 32767) // 65535 for v in r])


class VideoTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="upres_video_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def upscale(self, src, dst, *args, check=True):
        return run([UPRES, "upscale", src, dst, "--quiet", *map(str, args)], check=check)

    def assert_nothing_left(self, dst):
        self.assertFalse(os.path.exists(dst), dst + " exists after an error")
        left = [f for f in os.listdir(os.path.dirname(dst)) if ".partial-" in f]
        self.assertEqual(left, [], "partial files left behind")

    def assert_luma_equal(self, src, dst, w, h, method, scale, frames, pix_fmt="yuv420p",
                          bits=8):
        """Frames `frames` of dst's luma equal the single-image upscale of src's."""
        bpp = 2 if bits > 8 else 1
        a, b = raw_frames(src, pix_fmt), raw_frames(dst, pix_fmt)
        ow, oh = w * scale, h * scale

        def frame_bytes(W, H):
            cw, ch = W, H
            if pix_fmt.startswith("yuv420"):
                cw, ch = (W + 1) // 2, (H + 1) // 2
            elif pix_fmt.startswith("yuv422"):
                cw = (W + 1) // 2
            n = W * H + (0 if pix_fmt.startswith("gray") else 2 * cw * ch)
            return n * bpp

        fa, fb = frame_bytes(w, h), frame_bytes(ow, oh)
        self.assertEqual(len(a) % fa, 0)
        self.assertEqual(len(a) // fa, len(b) // fb, "frame counts differ")
        for k in frames:
            ya = a[k * fa:k * fa + w * h * bpp]
            yb = b[k * fb:k * fb + ow * oh * bpp]
            if bits > 8:
                ya, yb = array.array("H", ya), array.array("H", yb)
            want = single_image_luma(self.tmp, ya, w, h, method, scale, bits)
            self.assertTrue(want == yb, "frame %d: luma differs from the single-image result" % k)
        return a, b, fa, fb

    # ------------------------------------------------------------------ real clips

    def test_real_clip_frames_equal_single_image(self):
        clip = find_clip("vtest.avi")
        if not clip:
            self.skipTest("vtest.avi not found (opencv-doc)")
        src, dst = self.path("vtest20.avi"), self.path("out.mkv")
        ffmpeg("-i", clip, "-frames:v", 20, "-c", "copy", src)
        self.upscale(src, dst, "--method", "bicubic", "--codec", "ffv1")
        v = video_stream(probe(dst))
        self.assertEqual((v["codec_name"], v["width"], v["height"], v["pix_fmt"]),
                         ("ffv1", 1536, 1152, "yuv420p"))
        self.assertEqual(frame_times(src), frame_times(dst))
        self.assert_luma_equal(src, dst, 768, 576, "bicubic", 2, [0, 9, 19])

    def test_real_clip_audio_copied(self):
        clip = find_clip("Megamind.avi")
        if not clip:
            self.skipTest("Megamind.avi not found (opencv-doc)")
        src, dst = self.path("mm.avi"), self.path("out.mkv")
        ffmpeg("-i", clip, "-frames:v", 10, "-c", "copy", src)
        r = self.upscale(src, dst, "--method", "silseabi", "--preset", "ultrafast", "--json")
        stats = json.loads(r.stdout)
        self.assertEqual((stats["frames"], stats["copied_streams"]), (10, 1))
        for stage in ("decode", "upscale", "encode"):
            self.assertGreater(stats["stages"][stage]["fps"], 0)
        info = probe(dst)
        types = [s["codec_type"] for s in info["streams"]]
        self.assertEqual(sorted(types), ["audio", "video"])
        a_in = next(s["index"] for s in probe(src)["streams"] if s["codec_type"] == "audio")
        a_out = next(s["index"] for s in info["streams"] if s["codec_type"] == "audio")
        self.assertEqual(stream_md5(src, a_in), stream_md5(dst, a_out))
        v = video_stream(info)
        self.assertEqual((v["codec_name"], v["width"], v["height"]), ("h264", 1440, 1056))
        self.assertEqual(v.get("sample_aspect_ratio"), "1:1")
        self.assertEqual(len(frame_times(dst)), 10)

    # ------------------------------------------------------------------ synthesised clips

    def test_10bit_hdr10(self):
        src, dst = self.path("hdr.mkv"), self.path("out.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=24", "-frames:v", 4,
               "-pix_fmt", "yuv420p10le", "-c:v", "libx265", "-x265-params",
               "log-level=error:master-display=G(13250,34500)B(7500,3000)R(34000,16000)"
               "WP(15635,16450)L(10000000,1):max-cll=1000,400",
               "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace",
               "bt2020nc", src)
        self.upscale(src, dst, "--method", "bicubic", "--codec", "ffv1")
        v = video_stream(probe(dst))
        self.assertEqual(v["pix_fmt"], "yuv420p10le")
        self.assertEqual((v.get("color_primaries"), v.get("color_transfer"),
                          v.get("color_space")), ("bt2020", "smpte2084", "bt2020nc"))
        kinds = {d.get("side_data_type") for d in v.get("side_data_list", [])}
        self.assertIn("Mastering display metadata", kinds)
        self.assertIn("Content light level metadata", kinds)
        self.assert_luma_equal(src, dst, 96, 64, "bicubic", 2, [0, 3], "yuv420p10le", bits=10)
        # The same 10-bit video through x265 keeps its depth and tags.
        dst2 = self.path("out265.mkv")
        self.upscale(src, dst2, "--method", "bicubic", "--codec", "libx265", "--preset",
                     "ultrafast")
        v2 = video_stream(probe(dst2))
        self.assertEqual((v2["pix_fmt"], v2.get("color_transfer")), ("yuv420p10le", "smpte2084"))

    def test_vfr_audio_subtitles_metadata(self):
        srt = self.path("subs.srt")
        with open(srt, "w") as f:
            f.write("1\n00:00:00,000 --> 00:00:00,400\nfirst\n\n"
                    "2\n00:00:00,500 --> 00:00:00,900\nsecond\n")
        src, dst = self.path("vfr.mkv"), self.path("out.mkv")
        # Frames 0-9 at 25 fps, then a 0.3 s gap: variable frame rate.
        ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-f", "lavfi", "-i",
               "sine=frequency=440:sample_rate=8000", "-f", "lavfi", "-i",
               "sine=frequency=660:sample_rate=16000", "-i", srt,
               "-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:s",
               "-vf", "setpts='PTS+gt(N,9)*0.3/TB'", "-fps_mode", "passthrough",
               "-frames:v", 16, "-t", "1", "-pix_fmt", "yuv420p", "-c:v", "ffv1", "-c:a", "flac", "-c:s", "srt",
               "-metadata", "title=upres test", "-metadata:s:a:1", "language=fre", src)
        self.upscale(src, dst, "--method", "bicubic", "--codec", "ffv1")
        si, so = probe(src), probe(dst)
        self.assertEqual([s["codec_type"] for s in si["streams"]],
                         [s["codec_type"] for s in so["streams"]])
        self.assertEqual(so["format"]["tags"].get("title"), "upres test")
        self.assertEqual(so["streams"][2]["tags"].get("language"), "fre")
        t_in, t_out = frame_times(src), frame_times(dst)
        self.assertEqual(t_in, t_out)
        self.assertGreater(max(b - a for a, b in zip(t_in, t_in[1:])), 0.3)
        for k in (1, 2, 3):
            self.assertEqual(stream_md5(src, k), stream_md5(dst, k), "stream %d changed" % k)

    def test_layouts_and_odd_sizes(self):
        for pix_fmt, w, h, out_fmt in (("yuv444p", 101, 77, "yuv444p"),
                                       ("yuv422p", 101, 77, "yuv422p"),
                                       ("yuv420p", 101, 77, "yuv420p"),
                                       ("gray", 101, 77, "gray"),
                                       ("yuv422p10le", 101, 77, "yuv422p10le")):
            with self.subTest(pix_fmt=pix_fmt):
                src, dst = self.path(pix_fmt + ".mkv"), self.path(pix_fmt + "_out.mkv")
                ffmpeg("-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-vf",
                       "format=yuv444p,crop=%d:%d:0:0" % (w, h), "-frames:v", 3, "-pix_fmt", pix_fmt,
                       "-c:v", "ffv1", src)
                self.upscale(src, dst, "--method", "bicubic", "--codec", "ffv1")
                v = video_stream(probe(dst))
                self.assertEqual((v["pix_fmt"], v["width"], v["height"]), (out_fmt, 2 * w, 2 * h))
                bits = 10 if out_fmt.endswith("10le") else 8
                a, b, fa, fb = self.assert_luma_equal(src, dst, w, h, "bicubic", 2, [0, 2],
                                                      out_fmt, bits)
                if pix_fmt == "yuv444p":
                    # 4:4:4: chroma sits on the luma grid, so Cb is upscaled like luma
                    # (Keys bicubic either way; within one level of the gray-image result).
                    cb = a[w * h:2 * w * h]
                    want = single_image_luma(self.tmp, cb, w, h, "bicubic", 2)
                    got = b[4 * w * h:8 * w * h]
                    self.assertLessEqual(max(abs(x - y) for x, y in zip(want, got)), 1)

    def test_semi_planar_nv12(self):
        """nv12 (Cb and Cr interleaved; what hardware decoders give) is made planar when decoded:
        the output is yuv420p, byte for byte the output of the same pictures given as yuv420p,
        and its luma the single-image result (odd size: the last chroma column)."""
        w, h = 101, 77
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=128x96:rate=10", "-vf",
               "format=yuv444p,crop=%d:%d:0:0" % (w, h), "-frames:v", 3, "-pix_fmt", "nv12",
               "-c:v", "rawvideo", self.path("nv12.nut"))
        # The same samples, planar (deinterleaving is exact).
        ffmpeg("-i", self.path("nv12.nut"), "-pix_fmt", "yuv420p", "-c:v", "rawvideo",
               self.path("yuv420p.nut"))
        outs = []
        for fmt in ("nv12", "yuv420p"):
            src, dst = self.path(fmt + ".nut"), self.path(fmt + "_out.mkv")
            self.upscale(src, dst, "--method", "bicubic", "--codec", "ffv1")
            v = video_stream(probe(dst))
            self.assertEqual((v["pix_fmt"], v["width"], v["height"]), ("yuv420p", 2 * w, 2 * h))
            outs.append(raw_frames(dst, "yuv420p"))
            if fmt == "nv12":
                self.assert_luma_equal(src, dst, w, h, "bicubic", 2, [0, 2])
        self.assertTrue(outs[0] == outs[1], "nv12 and yuv420p inputs give different frames")

    def test_nlm_window(self):
        """--method nlm --window 3: output frame i's luma is `upres fuse` of the decoded luma of
        the 3 frames around it (shifted inside the clip at its ends), reference i."""
        w, h, n, win = 96, 64, 6, 3
        src, dst = self.path("clip.mkv"), self.path("out.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=%dx%d:rate=10" % (w, h), "-frames:v", n,
               "-pix_fmt", "yuv420p", "-c:v", "ffv1", src)
        self.upscale(src, dst, "--method", "nlm", "--window", win, "--codec", "ffv1")
        a, b = raw_frames(src, "yuv420p"), raw_frames(dst, "yuv420p")
        fa, fb = w * h * 3 // 2, 4 * w * h * 3 // 2
        self.assertEqual((len(a) // fa, len(b) // fb), (n, n))
        lumas = []
        for k in range(n):
            lumas.append(self.path("y%d.pgm" % k))
            write_pgm(lumas[-1], w, h, a[k * fa:k * fa + w * h])
        for i in (0, 2, n - 1):
            start = min(max(i - win // 2, 0), n - win)
            fused = self.path("fused.pgm")
            run([UPRES, "fuse", *lumas[start:start + win], fused, "--reference", str(i - start),
                 "--quiet"])
            want = read_pgm(fused, 2 * w, 2 * h)
            self.assertTrue(want == b[i * fb:i * fb + 4 * w * h], "frame %d differs" % i)

    def test_bspline_method(self):
        """--method bspline: luma equals the single-image bspline upscale (as warp --zoom), in
        8 and 10 bits."""
        for pix_fmt, bits in (("yuv420p", 8), ("yuv420p10le", 10)):
            with self.subTest(pix_fmt=pix_fmt):
                src, dst = self.path("b%d.mkv" % bits), self.path("b%d_out.mkv" % bits)
                ffmpeg("-f", "lavfi", "-i", "testsrc2=size=80x48:rate=10", "-frames:v", 2,
                       "-pix_fmt", pix_fmt, "-c:v", "ffv1", src)
                self.upscale(src, dst, "--method", "bspline", "--scale", 3, "--codec", "ffv1")
                self.assert_luma_equal(src, dst, 80, 48, "bspline", 3, [0, 1], pix_fmt, bits)

    # ------------------------------------------------------------------ bad input

    def test_bad_input(self):
        ok = self.path("ok.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", 30,
               "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", ok)
        notvideo = self.path("notvideo.mp4")
        with open(notvideo, "w") as f:
            f.write("not a video\n")
        truncated = self.path("truncated.mkv")
        data = open(ok, "rb").read()
        with open(truncated, "wb") as f:
            f.write(data[:len(data) // 2])
        audio = self.path("audio.mkv")
        ffmpeg("-f", "lavfi", "-i", "sine=sample_rate=8000", "-t", "0.5", "-c:a", "flac", audio)
        rgb = self.path("rgb.nut")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", 2,
               "-pix_fmt", "rgb24", "-c:v", "rawvideo", rgb)
        hdr10 = self.path("ten.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", 2,
               "-pix_fmt", "yuv420p10le", "-c:v", "ffv1", hdr10)
        out = self.path("out.mkv")
        cases = [
            ([notvideo, out], "not a video"),
            ([truncated, out], "truncated"),
            ([audio, out], "no video stream"),
            ([rgb, out], "rgb24 (supported: yuv420p"),
            ([ok, out, "--codec", "nope"], "unknown video codec 'nope'"),
            ([ok, out, "--codec", "ffv1", "--crf", "10"], "ffv1 is lossless"),
            ([ok, self.path("out.mp4"), "--codec", "ffv1"], "cannot hold ffv1"),
            ([ok, os.path.join(self.tmp, "no", "such", "out.mkv")], "does not exist"),
            ([ok, out, "--preset", "fastest"], "preset 'fastest' is not one of libx264's"),
            ([hdr10, out, "--method", "lseabi"], "8-bit video only"),
            ([ok, self.path("out.png")], "needs a video output"),
            ([self.path("missing.mp4"), out], "no such file"),
            ([ok, out, "--method", "bicubic", "--window", "3"], "window applies to --method nlm"),
            ([ok, out, "--method", "nlm", "--scale", "2.5"], "nlm needs the scale 2, 3 or 4"),
            ([hdr10, out, "--hwdec", "cuda"], "ffv1 decoder has no NVDEC path"),
            ([rgb, out, "--hwdec", "cuda"], "--hwdec cuda decodes yuv420p and yuv420p10le"),
            ([ok, out, "--hwdec", "nvdec"], "unknown hardware decoder 'nvdec' (allowed: none, cuda)"),
        ]
        for args, words in cases:
            with self.subTest(args=args[1:]):
                r = self.upscale(*args, check=False)
                err = r.stderr.decode(errors="replace")
                self.assertNotEqual(r.returncode, 0, err)
                self.assertIn(words, err)
                self.assertFalse(os.path.exists(args[1]), args[1] + " exists after an error")
                folder = os.path.dirname(args[1])
                if os.path.isdir(folder):
                    self.assertEqual([f for f in os.listdir(folder) if ".partial-" in f], [])

    def test_hwdec_cuda(self):
        """--hwdec cuda: where NVDEC runs, the frames equal the CPU decoder's (H.264 decoding
        is bit-exact) and so does the output; elsewhere a clear error and no output."""
        src = self.path("h264.mp4")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-frames:v", 12,
               "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", src)
        cpu, gpu = self.path("cpu.mkv"), self.path("gpu.mkv")
        self.upscale(src, cpu, "--method", "bicubic", "--codec", "ffv1")
        r = self.upscale(src, gpu, "--method", "bicubic", "--codec", "ffv1", "--hwdec", "cuda",
                         check=False)
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace")
            self.assertIn("--hwdec cuda", err)
            self.assertIn("--hwdec none", err)
            self.assert_nothing_left(gpu)
            self.skipTest("NVDEC is not available here: its error checked, not its frames")
        self.assertEqual(raw_frames(gpu, "yuv420p"), raw_frames(cpu, "yuv420p"))

    def test_y4m_output(self):
        """y4m (raw frames for other encoders): its frame rate from the input's, 10 bits as
        the C420p10 extension, and the planes the lossless output holds."""
        src = self.path("ten.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30000/1001", "-frames:v", 4,
               "-pix_fmt", "yuv420p10le", "-c:v", "ffv1", src)
        y4m, mkv = self.path("out.y4m"), self.path("out.mkv")
        self.upscale(src, y4m, "--method", "bicubic", "--codec", "wrapped_avframe")
        self.upscale(src, mkv, "--method", "bicubic", "--codec", "ffv1")
        with open(y4m, "rb") as f:
            header = f.readline().decode()
        self.assertIn("F30000:1001", header)
        self.assertIn("C420p10", header)
        self.assertEqual(raw_frames(y4m, "yuv420p10le"), raw_frames(mkv, "yuv420p10le"))

    def test_tag_outside_its_enum(self):
        # An H.264 stream whose frames carry chroma location 33 (FFmpeg copies it from the
        # bitstream unchecked; found by fuzz_video): upscaled with the tag unspecified (the
        # sanitizer build reports it if the value is ever loaded as the enum).
        clip = os.path.join(ROOT, "fuzz", "corpus", "video", "crash_chroma_location_33.mp4")
        out = self.path("tag.mkv")
        self.upscale(clip, out, "--method", "bilinear", "--scale", 1, "--codec", "ffv1")
        s = video_stream(probe(out))
        self.assertEqual(s.get("chroma_location", "unspecified"), "unspecified")
        self.assertEqual((s["width"], s["height"]), (32, 24))

    def test_interrupt_leaves_no_file(self):
        src, dst = self.path("long.mkv"), self.path("out.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", 3000,
               "-c:v", "libx264", "-preset", "ultrafast", src)
        p = subprocess.Popen([UPRES, "upscale", src, dst, "--method", "bicubic", "--codec",
                              "ffv1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        self.assertIsNone(p.poll(), "finished before the interrupt: make the clip longer")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("interrupted", err.decode())
        self.assert_nothing_left(dst)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_video.py path/to/upres [unittest args]")
    UPRES = os.path.abspath(sys.argv.pop(1))
    if not shutil.which("ffmpeg") or not shutil.which("ffprobe"):
        print("SKIPPED: the ffmpeg and ffprobe commands are needed (scripts/deps.sh)")
        sys.exit(77)
    unittest.main(verbosity=2)
