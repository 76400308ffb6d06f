"""upscale, srcnn, seabi, fuse, stereo, metrics, BRISQUE, colour and files from Python,
against outside oracles (scikit-image, the BRISQUE golden data) and against the command line
(the same C++ calls through files: identical bytes)."""

from __future__ import annotations

import pathlib
import subprocess

import numpy as np
import pytest
import skimage.color
import skimage.metrics

import upres

from conftest import DATA, GOLDEN, photo, requires_gpu


def upres_cli() -> pathlib.Path:
    """The command line of the build the module comes from (<build>/python/upres)."""
    p = pathlib.Path(upres.__file__).resolve().parents[2] / "upres"
    if not p.exists():
        pytest.skip(f"no upres command next to this module ({p}): an installed wheel")
    return p


@pytest.mark.parametrize("method", ["bicubic", "bilinear", "silseabi", "lseabi", "lseai", "tap6",
                                    "srcnn"])
def test_upscale_matches_the_command_line(method: str, tmp_path: pathlib.Path,
                                          baboon: np.ndarray) -> None:
    img = np.ascontiguousarray(baboon[40:140, 60:180])
    src = tmp_path / "in.png"
    upres.imwrite(src, img)
    out = tmp_path / "out.png"
    subprocess.run([str(upres_cli()), "upscale", str(src), str(out), "--method", method,
                    "--scale", "2"], check=True, capture_output=True)
    want = upres.imread(out)
    got = upres.upscale(img, 2, method)
    assert got.shape == want.shape == (200, 240, 3)
    assert np.array_equal(got, want)


def test_srcnn_and_seabi_helpers(baboon: np.ndarray) -> None:
    img = baboon[:64, :72]
    assert np.array_equal(upres.srcnn(img, 2), upres.upscale(img, 2, "srcnn"))
    assert np.array_equal(upres.seabi(img, "lseabi", 4, iterations=2),
                          upres.upscale(img, 4, "lseabi", iterations=2))
    cosited = upres.seabi(img, lattice="cosited")
    assert np.array_equal(cosited, upres.upscale(img, 2, "silseabi", lattice="cosited"))
    assert not np.array_equal(cosited, upres.seabi(img))  # the default is centre-aligned
    f = img.astype(np.float32) / 255  # centre-aligned methods take float (through a copy)
    up = upres.upscale(f, 3, "bicubic")
    assert up.dtype == np.float32 and up.shape == (192, 216, 3)
    assert abs(float(up.mean()) - float(f.mean())) < 0.01


def test_fuse_matches_the_command_line(tmp_path: pathlib.Path, camera: np.ndarray) -> None:
    rng = np.random.default_rng(7)
    base = camera[100:160, 120:200].astype(np.float64)
    frames = []
    paths = []
    for i in range(4):
        f = np.clip(np.roll(base, (i % 2, i // 2), axis=(0, 1)) + rng.normal(0, 4, base.shape),
                    0, 255).astype(np.uint8)
        frames.append(f)
        paths.append(tmp_path / f"f{i}.png")
        upres.imwrite(paths[-1], f)
    out = tmp_path / "fused.png"
    subprocess.run([str(upres_cli()), "fuse", *map(str, paths), str(out)], check=True,
                   capture_output=True)
    got = upres.fuse(frames)
    assert np.array_equal(got, upres.imread(out))
    assert np.array_equal(upres.fuse(np.stack(frames)), got)  # one (N, H, W) array


def test_stereo_on_the_motorcycle_pair() -> None:
    left = photo("motorcycle_left.png")
    right = photo("motorcycle_right.png")
    gt = np.load(DATA / "motorcycle_disp.npz")
    truth = gt[gt.files[0]]
    scale = left.shape[1] / truth.shape[1]
    d, mask = upres.stereo.disparity(left, right, disparities=96 if scale < 1 else 128,
                                     cost="census", aggregate="sgm8", lr_check=1,
                                     valid_mask=True)
    assert d.dtype == np.float32 and d.shape == left.shape[:2]
    assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 255}
    assert np.array_equal(np.isfinite(d), mask == 255)
    if truth.shape == d.shape:
        ok = np.isfinite(truth) & np.isfinite(d)
        bad = np.abs(d[ok] - truth[ok]) > 2
        assert bad.mean() < 0.3, f"bad-2 {bad.mean():.3f}"
    d2, rmap = upres.stereo.disparity(left, right, disparities=64, right_map=True, subpixel=False)
    assert rmap.shape == d2.shape
    finite = d2[np.isfinite(d2)]
    assert np.array_equal(finite, np.round(finite))


def _stereo_tiffs(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, np.ndarray,
                                                     np.ndarray]:
    left = np.ascontiguousarray(photo("motorcycle_left.png")[:230, :300])
    right = np.ascontiguousarray(photo("motorcycle_right.png")[:230, :300])
    lp, rp = tmp_path / "l.tif", tmp_path / "r.tif"
    try:
        upres.imwrite(lp, left)
        upres.imwrite(rp, right)
    except upres.UnsupportedFormatError as e:
        pytest.skip(f"this build has no TIFF: {e}")
    return lp, rp, left, right


def test_disparity_tiff_matches_the_whole_pair(tmp_path: pathlib.Path) -> None:
    """A real pair in bands of rows, file to file: the whole pair's map bit for bit (NaN where
    invalid); refused options name themselves."""
    lp, rp, left, right = _stereo_tiffs(tmp_path)
    out = tmp_path / "d.tif"
    for opts in ({"aggregate": "gauss13", "lr_check": 1},
                 {"cost": "census", "aggregate": "box", "box_size": 9, "median": True}):
        st = upres.stereo.disparity_tiff(lp, rp, out, disparities=48, band_rows=37, **opts)
        assert st["bands"] == 7
        want = upres.stereo.disparity(left, right, disparities=48, backend="cpu", **opts)
        assert upres.imread(out).tobytes() == want.tobytes(), opts
    with pytest.raises(ValueError, match="aggregation sgm8 is not tiled"):
        upres.stereo.disparity_tiff(lp, rp, out, aggregate="sgm8")
    with pytest.raises(ValueError, match="devices are for backend 'cuda'"):
        upres.stereo.disparity_tiff(lp, rp, out, devices=[0])


@requires_gpu
def test_disparity_tiff_on_the_gpu(tmp_path: pathlib.Path) -> None:
    """The bands on the GPU (one, then every one): the cpu map's bytes (both backends give the
    reference's)."""
    lp, rp, left, right = _stereo_tiffs(tmp_path)
    out = tmp_path / "d.tif"
    want = upres.stereo.disparity(left, right, disparities=48, backend="cpu", lr_check=1)
    for devices in ([], list(range(upres._upres.cuda_device_count()))):
        upres.stereo.disparity_tiff(lp, rp, out, disparities=48, band_rows=37, lr_check=1,
                                    backend="cuda", devices=devices)
        assert upres.imread(out).tobytes() == want.tobytes(), devices


def test_metrics_against_scikit_image(baboon: np.ndarray, rng: np.random.Generator) -> None:
    a = baboon[:120, :100]
    b = np.clip(a.astype(np.int16) + rng.integers(-12, 13, a.shape), 0, 255).astype(np.uint8)
    ya = skimage.color.rgb2ycbcr(a)[..., 0]
    yb = skimage.color.rgb2ycbcr(b)[..., 0]
    want_psnr = skimage.metrics.peak_signal_noise_ratio(ya, yb, data_range=255)
    assert abs(upres.psnr(a, b) - want_psnr) < 1e-3
    want_ssim = skimage.metrics.structural_similarity(ya, yb, data_range=255, gaussian_weights=True,
                                                      sigma=1.5, use_sample_covariance=False)
    assert abs(upres.ssim(a, b) - want_ssim) < 1e-4
    g = a[..., 0]
    assert abs(upres.psnr(g, b[..., 0], shave=4) - skimage.metrics.peak_signal_noise_ratio(
        g[4:-4, 4:-4], b[4:-4, 4:-4, 0], data_range=255)) < 1e-6
    assert upres.psnr(a, b, y=False) != upres.psnr(a, b)


def test_brisque_against_the_golden_data() -> None:
    names = ["baboon.jpg", "butterfly.jpg", "fruits.jpg", "smarties.png", "rubberwhale1.png",
             "astronaut.png", "chelsea.png", "coffee.png"]
    feats = np.load(GOLDEN / "brisque" / "eval_features.npy")
    scores = np.load(GOLDEN / "brisque" / "eval_scores.npy").ravel()
    for i, n in enumerate(names[:3]):
        img = photo(n)
        got = upres.brisque_features(img)
        assert np.allclose(got, feats[i], rtol=1e-3, atol=1e-6), n
        assert abs(upres.brisque(img) - scores[i]) <= 1e-3 * max(1.0, abs(scores[i])), n


def test_colour_against_scikit_image(baboon: np.ndarray) -> None:
    ycc = upres.rgb_to_ycbcr(baboon)
    assert ycc.dtype == np.float32
    assert np.abs(ycc - skimage.color.rgb2ycbcr(baboon)).max() < 1e-3
    back = upres.ycbcr_to_rgb(ycc)
    assert back.dtype == np.uint8 and np.abs(back.astype(int) - baboon).max() <= 1
    assert upres.ycbcr_to_rgb(ycc, np.float32).max() <= 1.0 + 1e-6


def test_files_round_trip(tmp_path: pathlib.Path, rng: np.random.Generator) -> None:
    for dtype, ext in ((np.uint8, "png"), (np.uint16, "png"), (np.float32, "pfm"),
                       (np.uint8, "tif"), (np.float32, "npy")):
        hi = 1 if dtype is np.float32 else np.iinfo(dtype).max
        img = (rng.random((13, 17, 3)) * hi).astype(dtype)
        path = tmp_path / f"x.{ext}"
        try:
            upres.imwrite(path, img[:, ::-1])  # a reversed view is copied into the layout first
        except upres.UnsupportedFormatError as e:
            assert ext == "tif" and "libtiff" in str(e)  # a build without libtiff says so
            continue
        back = upres.imread(path)
        assert back.dtype == np.dtype(dtype) and np.array_equal(back, img[:, ::-1]), ext
    with pytest.raises(OSError, match="missing.png"):
        upres.imread(tmp_path / "missing.png")
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(upres.CorruptDataError):
        upres.imread(tmp_path / "bad.png")
    with pytest.raises(ValueError, match="quality"):
        upres.imwrite(tmp_path / "q.jpg", np.zeros((4, 4), np.uint8), quality=0)
    assert not (tmp_path / "q.jpg").exists()


def test_spline_filter_tiff_equals_the_whole_image_prefilter(tmp_path: pathlib.Path,
                                                            baboon: np.ndarray) -> None:
    # An awkward size (odd sides, not multiples of 8), u16 and u8, bands of 37 rows (cuts
    # that are not multiples of 8): bit for bit the cpu prefilter of the whole image.
    img = baboon[:203, :157].astype(np.uint16) * 256 + 3
    src = tmp_path / "in.tif"
    try:
        upres.imwrite(src, np.ascontiguousarray(img))
    except upres.UnsupportedFormatError as e:
        pytest.skip(f"this build has no TIFF: {e}")
    out = tmp_path / "coef.tif"
    whole = img.astype(np.float32)
    st = upres.spline_filter_tiff(src, out, band_rows=37)
    assert st["bands"] == 6 and st["band_rows"] == 37
    got = upres.imread(out)
    assert got.dtype == np.float32 and got.shape == img.shape
    ref = upres.spline_filter(whole, output=np.float32, channel_axis=-1, backend="cpu")
    assert np.array_equal(got, ref)
    upres.spline_filter_tiff(src, out, axis=0, mode="reflect", prefilter="fir", band_rows=64,
                             tile=16, deflate=True)
    ref = upres.spline_filter1d(whole, axis=0, output=np.float32, mode="reflect",
                                prefilter="fir", backend="cpu")
    assert np.array_equal(upres.imread(out), ref)
    gray = tmp_path / "gray.tif"
    upres.imwrite(gray, np.ascontiguousarray(baboon[:99, :130, 1]))
    upres.spline_filter_tiff(gray, out, axis=-1, mode="nearest", max_memory_mib=1)
    ref = upres.spline_filter1d(baboon[:99, :130, 1].astype(np.float32), axis=1,
                                output=np.float32, mode="nearest", backend="cpu")
    assert np.array_equal(upres.imread(out), ref)
    with pytest.raises(ValueError, match="wrap"):
        upres.spline_filter_tiff(src, out, mode="grid-wrap")
    with pytest.raises(ValueError, match="axis 2"):
        upres.spline_filter_tiff(src, out, axis=2)
    with pytest.raises(ValueError, match="fir"):
        upres.spline_filter_tiff(src, out, prefilter="cubic")
    with pytest.raises(ValueError, match="max_memory_mib"):
        upres.spline_filter_tiff(src, out, max_memory_mib=-1)
    for tile in (20, -16):
        with pytest.raises(ValueError, match=r"tile side .* \(0: automatic\)"):
            upres.spline_filter_tiff(src, out, tile=tile)
    with pytest.raises(OSError, match="missing.tif"):
        upres.spline_filter_tiff(tmp_path / "missing.tif", out)


def test_upscale_tiff_matches_upscale(tmp_path: pathlib.Path, baboon: np.ndarray) -> None:
    src = tmp_path / "in.tif"
    img = np.ascontiguousarray(baboon[:150, :130])
    try:
        upres.imwrite(src, img)
    except upres.UnsupportedFormatError as e:
        pytest.skip(f"this build has no TIFF: {e}")
    out = tmp_path / "up.tif"
    for method, scale in (("srcnn", 2), ("srcnn", 3), ("bicubic", 2)):
        st = upres.upscale_tiff(src, out, scale, method, band_rows=64)
        assert st["bands"] > 1
        want = upres.upscale(img, scale, method, backend="cpu")
        assert np.array_equal(upres.imread(out), want), (method, scale)
    with pytest.raises(ValueError, match="method lseabi is not tiled"):
        upres.upscale_tiff(src, out, 2, "lseabi")
    with pytest.raises(ValueError, match="integer"):
        upres.upscale_tiff(src, out, 2.5, "bicubic")  # type: ignore[arg-type]
    assert not out.exists() or np.array_equal(upres.imread(out),
                                              upres.upscale(img, 2, "bicubic", backend="cpu"))
    with pytest.raises(ValueError, match="devices are for backend 'cuda'"):
        upres.upscale_tiff(src, out, 2, "bicubic", devices=[0])


@requires_gpu
def test_upscale_tiff_on_the_gpu_matches_the_whole_cuda_call(tmp_path: pathlib.Path,
                                                            baboon: np.ndarray) -> None:
    """SRCNN tiles on the GPU with named kernels: the whole cuda call's bytes, on one GPU or
    every one."""
    src = tiff_of(tmp_path, baboon[:150, :130])
    whole = tmp_path / "whole.tif"
    subprocess.run([str(upres_cli()), "upscale", str(src), str(whole), "--method", "srcnn",
                    "--scale", "2", "--backend", "cuda", "--precision", "fp16", "--variant",
                    "fused"], check=True, capture_output=True)
    want = upres.imread(whole)
    out = tmp_path / "up.tif"
    for devices in ([], list(range(upres._upres.cuda_device_count()))):
        st = upres.upscale_tiff(src, out, 2, "srcnn", band_rows=64, backend="cuda",
                                devices=devices, precision="fp16", variant="fused")
        assert st["bands"] == 5
        assert np.array_equal(upres.imread(out), want), devices


def test_fuse_tiff_matches_fuse(tmp_path: pathlib.Path, baboon: np.ndarray) -> None:
    """Frames of a real photo (shifted crops, RGB and gray) fused file to file in bands equal
    upres.fuse on the whole frames (cpu backend), with every post-step."""
    frames = [np.ascontiguousarray(baboon[dy:dy + 140, dx:dx + 90])
              for dy, dx in ((0, 0), (1, 2), (3, 1))]
    paths = [tmp_path / f"f{i}.tif" for i in range(3)]
    try:
        for p, f in zip(paths, frames):
            upres.imwrite(p, f)
    except upres.UnsupportedFormatError as e:
        pytest.skip(f"this build has no TIFF: {e}")
    out = tmp_path / "fused.tif"
    for post, gray in (("backproject", False), ("none", True), ("reconstruct", True)):
        src = paths
        fr = frames
        if gray:
            fr = [np.ascontiguousarray(f[..., 1]) for f in frames]
            src = [tmp_path / f"g{i}.tif" for i in range(3)]
            for p, f in zip(src, fr):
                upres.imwrite(p, f)
        st = upres.fuse_tiff(src, out, 2, band_rows=64, post=post, reconstructions=3)
        assert st["bands"] > 1
        want = upres.fuse(fr, 2, backend="cpu", post=post, reconstructions=3)
        assert np.array_equal(upres.imread(out), want), post
    with pytest.raises(ValueError, match="all frames alike"):
        upres.fuse_tiff([paths[0], tmp_path / "g0.tif"], out)
    with pytest.raises(ValueError, match="scale 5"):
        upres.fuse_tiff(paths, out, 5)


def tiff_of(tmp_path: pathlib.Path, image: np.ndarray) -> pathlib.Path:
    """image written to tmp_path/in.tif; the test skips on a build without TIFF."""
    src = tmp_path / "in.tif"
    try:
        upres.imwrite(src, np.ascontiguousarray(image))
    except upres.UnsupportedFormatError as e:
        pytest.skip(f"this build has no TIFF: {e}")
    return src


def test_zoom_tiff_matches_the_whole_image_command(tmp_path: pathlib.Path,
                                                   baboon: np.ndarray) -> None:
    src = tiff_of(tmp_path, baboon[:200, :150])
    whole = tmp_path / "whole.tif"
    subprocess.run([str(upres_cli()), "warp", str(src), str(whole), "--zoom", "2.5", "--interp",
                    "cubic", "--border", "reflect"], check=True, capture_output=True)
    out = tmp_path / "tiled.tif"
    st = upres.zoom_tiff(src, out, 2.5, interp="cubic", border="reflect", band_rows=37)
    assert st["bands"] == 14 and st["band_rows"] == 37
    assert np.array_equal(upres.imread(out), upres.imread(whole))
    st = upres.zoom_tiff(src, out, size=(100, 77), prefilter="fir", tile=16, deflate=True)
    assert upres.imread(out).shape == (77, 100, 3)
    with pytest.raises(ValueError, match="zoom or size"):
        upres.zoom_tiff(src, out)
    with pytest.raises(ValueError, match="wrap"):
        upres.zoom_tiff(src, out, 2, border="wrap")
    with pytest.raises(OSError, match="missing.tif"):
        upres.zoom_tiff(tmp_path / "missing.tif", out, 2)
    with pytest.raises(ValueError, match="devices are for backend 'cuda'"):
        upres.zoom_tiff(src, out, 2, devices=[0])
    with pytest.raises(ValueError, match="reference"):
        upres.zoom_tiff(src, out, 2, backend="reference")


@requires_gpu
def test_zoom_tiff_on_the_gpu_matches_the_whole_cuda_command(tmp_path: pathlib.Path,
                                                             baboon: np.ndarray) -> None:
    src = tiff_of(tmp_path, baboon[:300, :250])
    whole = tmp_path / "whole.tif"
    subprocess.run([str(upres_cli()), "warp", str(src), str(whole), "--zoom", "2", "--backend",
                    "cuda"], check=True, capture_output=True)
    out = tmp_path / "tiled.tif"
    st = upres.zoom_tiff(src, out, 2, band_rows=64, backend="cuda")
    assert st["bands"] == 10 and st["device_bytes"] > 0
    assert np.array_equal(upres.imread(out), upres.imread(whole))
    st = upres.zoom_tiff(src, out, 2, band_rows=64, backend="cuda",
                         devices=[0])
    assert np.array_equal(upres.imread(out), upres.imread(whole))
