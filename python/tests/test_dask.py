"""upres.dask: tiled zoom, prefilter, rotation and affine transforms on dask arrays,
bit-identical to the whole-image calls, on the threaded scheduler and on a
distributed.LocalCluster of two worker processes."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import upres

from conftest import requires_gpu

da = pytest.importorskip("dask.array", reason="dask is not installed (scripts/test installs it)")
import upres.dask as ud  # noqa: E402

MODES = ("mirror", "reflect", "nearest", "constant")


def _image(rng: np.random.Generator, h: int, w: int, c: int, dtype: type) -> np.ndarray:
    shape = (h, w) if c == 1 else (h, w, c)
    if dtype == np.float32:
        return (rng.random(shape, dtype=np.float32) * 3 - 1).astype(np.float32)
    hi = np.iinfo(dtype).max
    return rng.integers(1, hi, shape, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("c", [1, 3])
def test_zoom_bit_identical(dtype: type, c: int) -> None:
    rng = np.random.default_rng(11 + c)
    a = _image(rng, 173, 91, c, dtype)
    x = da.from_array(a, chunks=(40, 50) + ((c,) if c > 1 else ()))
    for z in (2.0, 0.37, 1.7):
        zz = z if c == 1 else (z, z, 1)
        for mode in MODES:
            for order in (0, 1, 3):
                ref = upres.zoom(a, zz, order=order, mode=mode, cval=0.5, grid_mode=True,
                                 backend="cpu")
                # Bands of one row (every seam) for the exact B-spline only: a task per row
                # costs Dask's overhead, not upres's.
                for rows in ((1, 37, None) if order == 3 and mode == "mirror" else (37,)):
                    got = ud.zoom(x, zz, order=order, mode=mode, cval=0.5, grid_mode=True,
                                  chunk_rows=rows).compute(scheduler="threads")
                    assert got.dtype == a.dtype and got.shape == ref.shape
                    assert np.array_equal(got, ref), (z, mode, order, rows)


def test_zoom_options_and_views(baboon: np.ndarray) -> None:
    # A sub-image view of a real photo, the FIR prefilter, Keys cubic, an explicit shape.
    view = baboon[37:411, 21:300]
    x = da.from_array(view, chunks=(64, 64, 3))
    for kw in ({"prefilter": "fir"}, {"interp": "keys"}, {"order": 3}):
        ref = upres.zoom(np.ascontiguousarray(view), (1.5, 1.5, 1), mode="mirror",
                         grid_mode=True, backend="cpu", **kw)
        got = ud.zoom(x, (1.5, 1.5, 1), mode="mirror", grid_mode=True, chunk_rows=100,
                      **kw).compute()
        assert np.array_equal(got, ref), kw
        # Corner pixels aligned (upres.zoom's and scipy's default): 2-D tiles.
        ref = upres.zoom(np.ascontiguousarray(view), (1.5, 1.5, 1), mode="mirror",
                         backend="cpu", **kw)
        got = ud.zoom(x, (1.5, 1.5, 1), mode="mirror", output_chunks=(90, 111), **kw).compute()
        assert np.array_equal(got, ref), (kw, "grid_mode=False")
    got = ud.zoom(x, 1, output_shape=(500, 120), mode="mirror", grid_mode=True).compute()
    ref = np.empty((500, 120, 3), np.uint8)
    from upres import _upres
    _upres.warp(np.ascontiguousarray(view), ref, "resize", [], None,
                _upres.warp_options({"interp": "bspline", "border": "mirror"}), "cpu", 0, 0)
    assert np.array_equal(got, ref)
    # Coefficients in, prefilter=False.
    coef = upres.spline_filter(baboon[..., 0], output=np.float32, backend="cpu")
    ref = upres.zoom(coef, 2, mode="mirror", prefilter=False, grid_mode=True, backend="cpu")
    got = ud.zoom(da.from_array(coef, chunks=(100, 512)), 2, mode="mirror", prefilter=False,
                  grid_mode=True)
    assert np.array_equal(got.compute(), ref)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_spline_filter_bit_identical(dtype: type) -> None:
    rng = np.random.default_rng(5)
    a = _image(rng, 211, 67, 1, dtype)
    x = da.from_array(a, chunks=(50, 30))
    for mode in ("mirror", "reflect", "nearest"):
        for prefilter in ("iir", "fir"):
            ref = upres.spline_filter(a, output=np.float32, mode=mode, prefilter=prefilter,
                                      backend="cpu")
            for rows in ((1, 9, None) if mode == "mirror" and prefilter == "iir" else (9,)):
                got = ud.spline_filter(x, output=np.float32, mode=mode, prefilter=prefilter,
                                       chunk_rows=rows).compute()
                assert got.dtype == np.float32 and np.array_equal(got, ref), (mode, rows)
            for axis in (0, 1):
                ref = upres.spline_filter1d(a, axis=axis, output=np.float32, mode=mode,
                                            prefilter=prefilter, backend="cpu")
                got = ud.spline_filter1d(x, axis=axis, output=np.float32, mode=mode,
                                         prefilter=prefilter, chunk_rows=33).compute()
                assert np.array_equal(got, ref), (mode, axis)
    rgb = _image(rng, 90, 40, 3, np.float32)
    ref = upres.spline_filter(rgb, channel_axis=-1, backend="cpu")
    got = ud.spline_filter(da.from_array(rgb, chunks=(20, 40, 3)), channel_axis=-1,
                           chunk_rows=16).compute()
    assert got.dtype == np.float64 and np.array_equal(got, ref)


@pytest.mark.parametrize("dtype,c", [(np.uint8, 3), (np.uint16, 1), (np.float32, 2)])
def test_rotate_affine_bit_identical(dtype: type, c: int) -> None:
    # 2-D tiles, each computed from only its source box (the prefilter's warm-up at every cut):
    # the bytes of the whole-image call, for rotations (the output larger, corners outside) and
    # a shear with a shift, with tiles of awkward sizes over a source chunked another way.
    rng = np.random.default_rng(5 + c)
    a = _image(rng, 211, 187, c, dtype)
    tail = (c,) if c > 1 else ()
    x = da.from_array(a, chunks=(50, 70) + tail)
    mat = np.eye(3)[:2, :2] if c == 1 else np.eye(3)
    mat[:2, :2] = [[0.9, 0.21], [-0.13, 1.08]]
    off = (-6.5, 9.25) + ((0.0,) if c > 1 else ())
    for mode in MODES:
        for order, pf in ((0, True), (1, True), (3, True), (3, "fir")):
            kw = dict(order=order, mode=mode, cval=0.5, prefilter=pf)
            ref = upres.rotate(a, 31, backend="cpu", **kw)
            got = ud.rotate(x, 31, output_chunks=(67, 45), **kw).compute()
            assert got.dtype == ref.dtype and np.array_equal(got, ref), (mode, order, pf)
            ref = upres.affine_transform(a, mat, off, output_shape=(190, 230) + tail,
                                         backend="cpu", **kw)
            got = ud.affine_transform(x, mat, off, output_shape=(190, 230) + tail,
                                      output_chunks=(100, 57), **kw).compute()
            assert np.array_equal(got, ref), (mode, order, pf, "affine")
    if dtype == np.float32:  # prefilter=False: the input holds coefficients; wrap allowed
        coef = upres.spline_filter(a[..., 0], output=np.float32)
        ref = upres.rotate(coef, 12, prefilter=False, mode="grid-wrap", backend="cpu")
        got = ud.rotate(da.from_array(coef, chunks=64), 12, prefilter=False, mode="grid-wrap",
                        output_chunks=(50, 50)).compute()
        assert np.array_equal(got, ref)


@pytest.mark.parametrize("dtype,c", [(np.uint8, 3), (np.float32, 1)])
def test_map_coordinates_bit_identical(dtype: type, c: int) -> None:
    # Each chunk of coordinates holds its source box only (from the chunk's range, computed
    # first); 2-D, flat and 3-D coordinate arrays, a sample far outside.
    rng = np.random.default_rng(3 + c)
    a = _image(rng, 131, 117, c, dtype)
    x = da.from_array(a, chunks=(40, 50) + ((c,) if c > 1 else ()))
    yy, xx = np.mgrid[0:90, 0:100].astype(np.float64)
    co = np.stack([yy * 1.3 - 9 + 3 * np.sin(xx / 7), xx * 1.15 - 5 + 2 * np.cos(yy / 5)])
    co[:, 3, 5] = (400, -300)
    for mode in MODES:
        for order in (0, 1, 3):
            ref = upres.map_coordinates(a, co, order=order, mode=mode, cval=0.5, backend="cpu")
            got = ud.map_coordinates(x, da.from_array(co, chunks=(2, 40, 33)), order=order,
                                     mode=mode, cval=0.5).compute()
            assert got.shape == ref.shape and np.array_equal(got, ref), (mode, order)
    flat = co.reshape(2, -1)
    assert np.array_equal(ud.map_coordinates(x, da.from_array(flat, chunks=(2, 2000))).compute(),
                          upres.map_coordinates(a, flat, backend="cpu"))
    # A chunk of more samples than a row holds (rows of 4096, the last one padded).
    long = np.tile(flat, 8)[:, :70001]
    assert np.array_equal(ud.map_coordinates(x, da.from_array(long, chunks=(2, 70001))).compute(),
                          upres.map_coordinates(a, long, backend="cpu"))
    deep = co.reshape(2, 30, 3, 100)
    assert np.array_equal(ud.map_coordinates(x, deep).compute(),
                          upres.map_coordinates(a, deep, backend="cpu"))


def test_map_coordinates_in_the_cuda_layout() -> None:
    # The cuda backend's tiling of map_coordinates (the whole call's layout of the samples, tiles
    # on the kernels' 64 x 64 tiles), run here with the cpu backend: the layout, its padding and
    # the reshapes give the whole call's samples for 2-D, flat, 3-D and long coordinates.
    rng = np.random.default_rng(8)
    a = _image(rng, 131, 117, 3, np.float32)
    x = da.from_array(a, chunks=(40, 50, 3))
    yy, xx = np.mgrid[0:190, 0:300].astype(np.float64)
    co = np.stack([yy * 0.6 - 9 + 3 * np.sin(xx / 7), xx * 0.4 - 5 + 2 * np.cos(yy / 5)])
    opts, handle = ud._point_options("test", ud._image(a, "test"), 3, None, "mirror", 0.0, True)
    for shaped in (co, co.reshape(2, -1), co.reshape(2, 19, 10, 300),
                   np.tile(co.reshape(2, -1), 2)[:, :100001]):
        c = da.from_array(shaped, chunks=(2,) + tuple(max(1, s // 3) for s in shaped.shape[1:]))
        ref = upres.map_coordinates(a, shaped, mode="mirror", backend="cpu")
        for tile in ((64, 128), (1024, 1024)):  # tiles that cut every layout here, and few
            got = ud._map_coordinates_in_layout(x, c, opts, handle, (3,), 1, "cpu",
                                                tile).compute()
            assert got.shape == ref.shape and np.array_equal(got, ref), (shaped.shape, tile)


def test_rotate_tiles_outside() -> None:
    # Tiles whose every output falls outside the source (constant border) read nothing.
    a = np.arange(40 * 30, dtype=np.uint16).reshape(40, 30) + 1
    ref = upres.affine_transform(a, np.eye(2), (-100, 0), output_shape=(200, 30), mode="constant",
                                 cval=7, backend="cpu")
    got = ud.affine_transform(a, np.eye(2), (-100, 0), output_shape=(200, 30), mode="constant",
                              cval=7, output_chunks=(20, 30)).compute()
    assert np.array_equal(got, ref) and (got[:90] == 7).all()


def test_imread_tiff(tmp_path: pathlib.Path) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(1, 65535, (300, 170, 3), dtype=np.uint16)
    p = tmp_path / "in.tif"
    try:
        upres.imwrite(p, a)
    except upres.UnsupportedFormatError:
        pytest.skip("this build has no libtiff")
    x = ud.imread_tiff(p, chunk_rows=64)
    assert x.shape == a.shape and x.dtype == a.dtype and x.chunks[0][0] == 64
    assert np.array_equal(x.compute(), a)


def _tiff(tmp_path: pathlib.Path, a: np.ndarray, name: str = "big.tif") -> pathlib.Path:
    """`a` as tmp_path/name; skips where the build has no libtiff."""
    p = tmp_path / name
    try:
        upres.imwrite(p, a)
    except upres.UnsupportedFormatError:
        pytest.skip("this build has no libtiff")
    return p


def test_local_cluster(tmp_path: pathlib.Path) -> None:
    distributed = pytest.importorskip("distributed",
                                      reason="distributed is not installed (scripts/test does)")
    a = np.random.default_rng(8).integers(1, 65535, (530, 210), dtype=np.uint16)
    p = _tiff(tmp_path, a)
    ref = upres.zoom(a, 2, mode="mirror", grid_mode=True, backend="cpu")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            x = ud.imread_tiff(p, chunk_rows=100)
            y = ud.zoom(x, 2, mode="mirror", grid_mode=True, chunk_rows=128)
            y = y.persist()
            distributed.wait(y)
            # The bands ran on both workers.
            holders = {w for ws in client.who_has(y).values() for w in ws}
            assert len(holders) == 2, holders
            got = y.compute()
            # A stereo map's bands on the workers (the band object pickled to them).
            pair = [np.roll(a[:200] >> 8, k, axis=1).astype(np.uint8) for k in (4, 0)]
            d = ud.disparity(pair[0], pair[1], disparities=16, chunk_rows=50).compute()
    assert np.array_equal(got, ref)
    assert d.tobytes() == upres.stereo.disparity(pair[0], pair[1], disparities=16,
                                                 backend="cpu").tobytes()


def test_bad_input(tmp_path: pathlib.Path) -> None:
    x = da.from_array(np.ones((20, 20), np.float32))
    with pytest.raises(upres.InvalidArgumentError, match="wrap"):
        ud.zoom(x, 2, mode="grid-wrap", grid_mode=True)
    with pytest.raises(upres.InvalidArgumentError, match="wrap"):
        ud.zoom(x, 2, mode="grid-wrap")
    with pytest.raises(upres.InvalidArgumentError, match="dtype"):
        ud.zoom(x.astype(np.float64), 2)
    with pytest.raises(upres.InvalidArgumentError, match="chunk_rows"):
        ud.zoom(x, 2, grid_mode=True, chunk_rows=0)
    with pytest.raises(upres.InvalidArgumentError, match="empty"):
        ud.zoom(x, 0.01)
    with pytest.raises(upres.InvalidArgumentError, match="mode"):
        ud.spline_filter(x, mode="grid-wrap")
    with pytest.raises(upres.InvalidArgumentError, match="channel_axis"):
        ud.spline_filter(da.ones((8, 8, 3), dtype=np.float32))
    with pytest.raises(upres.InvalidArgumentError, match="shape"):
        ud.zoom(da.ones((4, 4, 4, 4), dtype=np.float32), 2)
    with pytest.raises(upres.Error):
        ud.imread_tiff(tmp_path / "missing.tif")
    # NaN: found by the band that holds it, when computed.
    bad = np.ones((64, 64), np.float32)
    bad[40, 3] = np.nan
    with pytest.raises(upres.InvalidArgumentError, match="NaN"):
        ud.zoom(da.from_array(bad), 2, grid_mode=True, chunk_rows=16).compute()
    with pytest.raises(upres.InvalidArgumentError, match="NaN"):
        ud.rotate(da.from_array(bad), 10, output_chunks=(16, 16)).compute()
    with pytest.raises(upres.InvalidArgumentError, match="wrap"):
        ud.rotate(x, 10, mode="grid-wrap")
    with pytest.raises(upres.InvalidArgumentError, match="coefficients"):
        ud.rotate(x.astype(np.uint8), 10, prefilter=False)
    with pytest.raises(upres.InvalidArgumentError, match="singular"):
        ud.affine_transform(x, [[1, 0], [2, 0]])
    with pytest.raises(upres.InvalidArgumentError, match="output_chunks"):
        ud.rotate(x, 10, output_chunks=(0, 8))
    with pytest.raises(upres.InvalidArgumentError, match="axes"):
        ud.rotate(x, 10, axes=(0, 2))
    with pytest.raises(upres.InvalidArgumentError, match="finite"):
        ud.map_coordinates(x, np.array([[1.0, np.nan], [2.0, 3.0]]))
    with pytest.raises(upres.InvalidArgumentError, match="coordinates of shape"):
        ud.map_coordinates(x, np.ones((3, 4)))


@pytest.mark.parametrize("post", ["backproject", "none", "reconstruct"])
def test_fuse_bit_identical(post: str, camera: np.ndarray) -> None:
    """NLM-SR over dask frames (a photo's shifted crops, gray u8; random RGB u16 and gray f32)
    equals upres.fuse (cpu) bit for bit: the noise streamed on the client, bands of 64 output
    rows and the automatic height, chunks that cut anywhere."""
    rng = np.random.default_rng(17)
    # Noise of 6 levels: over the weight scales' floors, so the noise estimate counts.
    crops = [np.clip(camera[dy:dy + 150, dx:dx + 70] + rng.normal(0, 6, (150, 70)), 0,
                     255).astype(np.uint8) for dy, dx in ((0, 0), (2, 1), (1, 3))]
    cases = [crops,
             [rng.integers(1, 65535, (97, 41, 3), dtype=np.uint16) for _ in range(2)],
             [(rng.random((83, 29), dtype=np.float32)) for _ in range(3)]]
    for k, frames in enumerate(cases):
        ref = upres.fuse(frames, 2, backend="cpu", post=post, reconstructions=3)
        xs = [da.from_array(f, chunks=(37,) + f.shape[1:]) for f in frames]
        for rows in (64, None):
            got = ud.fuse(xs, 2, chunk_rows=rows, post=post, reconstructions=3).compute()
            assert np.array_equal(got, ref), (k, rows)
    with pytest.raises(upres.InvalidArgumentError, match="all frames alike"):
        ud.fuse([xs[0], xs[0][:, :20]])
    with pytest.raises(upres.InvalidArgumentError, match="scale 5"):
        ud.fuse(xs, 5)


def test_backend_choice() -> None:
    """backend: 'cpu' or 'cuda', named, never substituted; without a GPU the cuda bands fail
    when computed with the backend's error (the graph may be built where no GPU is)."""
    x = da.from_array(np.ones((40, 40), np.float32), chunks=(10, 40))
    with pytest.raises(upres.InvalidArgumentError, match="backend 'gpu'"):
        ud.zoom(x, 2, grid_mode=True, backend="gpu")
    with pytest.raises(upres.InvalidArgumentError, match="grid_mode=True"):
        ud.zoom(x, 2, backend="cuda")
    # SRCNN's bands on the GPUs run named kernels (a choice by timing could differ per task).
    with pytest.raises(upres.InvalidArgumentError, match="'auto' and 'fastest'"):
        ud.upscale(x, 2, "srcnn", backend="cuda", variant="auto")
    with pytest.raises(upres.InvalidArgumentError, match="'auto' and 'fastest'"):
        ud.upscale(x, 2, "srcnn", backend="cuda", precision="fastest")
    with pytest.raises(upres.InvalidArgumentError, match="cpu backend computes in fp32"):
        ud.upscale(x, 2, "srcnn", precision="fp16")
    with pytest.raises(upres.InvalidArgumentError, match="backend 'gpu'"):
        ud.disparity(x, x, disparities=16, backend="gpu")
    # The cuda rows hold the cpu rows (two of the GPU prefilter's units beyond the taps).
    opts = upres._upres.warp_options({"interp": "bspline", "border": "mirror"})
    c0, c1 = upres._upres.zoom_source_rows(500, 4000, 1000, 8000, opts, 4000, 4100)
    g0, g1 = upres._upres.zoom_source_rows(500, 4000, 1000, 8000, opts, 4000, 4100, "cuda")
    assert g0 <= c0 - 256 and g1 >= c1 + 256
    if not upres.cuda_available():
        y = ud.zoom(x, 2, grid_mode=True, backend="cuda", chunk_rows=20)
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            y.compute()
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            ud.upscale(x, 2, "srcnn", backend="cuda", chunk_rows=20).compute()
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            ud.disparity(x, x, disparities=16, backend="cuda", chunk_rows=20).compute()
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            ud.fuse([x, x], 2, noise=2.0, backend="cuda", chunk_rows=64).compute()
        # The point maps' source boxes need a CUDA build, not a device: without CUDA the graph
        # is refused, without a device its tasks.
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            ud.rotate(x, 10, backend="cuda", output_chunks=(20, 20)).compute()
        with pytest.raises(upres.BackendUnavailableError, match="cuda"):
            ud.map_coordinates(x, np.full((2, 5, 5), 3.5), backend="cuda").compute()
    with pytest.raises(upres.InvalidArgumentError, match="backend 'gpu'"):
        ud.rotate(x, 10, backend="gpu")
    with pytest.raises(upres.InvalidArgumentError, match="backend 'gpu'"):
        ud.map_coordinates(x, np.full((2, 5, 5), 3.5), backend="gpu")
    with pytest.raises(upres.InvalidArgumentError, match="backend 'gpu'"):
        ud.fuse([x], 2, backend="gpu")
    with pytest.raises(upres.InvalidArgumentError, match="cuda variant"):
        ud.fuse([x], 2, variant="shared")
    with pytest.raises(upres.InvalidArgumentError, match="chooses kernels by timing"):
        ud.fuse([x], 2, post="reconstruct", backend="cuda")
        with pytest.raises(upres.BackendUnavailableError, match="no CUDA device"):
            ud.local_gpu_cluster()


def _cuda_cases() -> list[tuple[str, dict[str, object]]]:
    return [("bspline", {"order": 3, "mode": "mirror"}),
            ("bspline-fir", {"order": 3, "mode": "nearest", "prefilter": "fir17"}),
            ("keys", {"interp": "keys", "mode": "reflect"}),
            ("linear", {"order": 1, "mode": "constant", "cval": 3.0}),
            ("nearest", {"order": 0, "mode": "mirror"})]


@requires_gpu
@pytest.mark.parametrize("dtype,c,h,w", [(np.uint8, 3, 1100, 700), (np.uint16, 1, 1211, 300),
                                         (np.float32, 4, 701, 129)])
def test_zoom_on_the_gpu_bit_identical(dtype: type, c: int, h: int, w: int) -> None:
    """backend='cuda' bands against upres.zoom(grid_mode=True, backend='cuda') on the whole
    image: NumPy chunks and CuPy chunks (CuPy out), bands of 37 rows, 256 and the automatic
    height, zooms up, down and odd. u8 RGB 700 x 1100 runs the prefilter's streaming kernel."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(21 + c)
    a = _image(rng, h, w, c, dtype)
    ad = cp.asarray(a)
    x = da.from_array(a, chunks=(150,) + a.shape[1:])

    def whole(f: object, *args: object, **kw: object) -> np.ndarray:
        return cp.asnumpy(f(ad, *args, backend="cuda", **kw))  # type: ignore[operator]

    for name, kw in _cuda_cases():
        for z in (2.0, 0.7, 1.37):
            zz = z if c == 1 else (z, z, 1)
            ref = whole(upres.zoom, zz, grid_mode=True, **kw)
            for rows in (37, 256, None):
                y = ud.zoom(x, zz, grid_mode=True, backend="cuda", chunk_rows=rows,
                            **kw)  # type: ignore[arg-type]
                assert np.array_equal(y.compute(), ref), (name, z, rows)
    xc = x.map_blocks(cp.asarray)
    zz = 2.0 if c == 1 else (2.0, 2.0, 1)
    y = ud.zoom(xc, zz, grid_mode=True, backend="cuda", chunk_rows=100, mode="mirror")
    got = y.compute()
    assert isinstance(got, cp.ndarray)
    assert np.array_equal(cp.asnumpy(got), whole(upres.zoom, zz, grid_mode=True, mode="mirror"))
    # The resizes of upscale on the GPU, and CuPy chunks through the cpu backend.
    up = ud.upscale(x, 3, "bicubic", backend="cuda", chunk_rows=200).compute()
    assert np.array_equal(up, whole(upres.upscale, 3, "bicubic"))
    r = ud.rotate(xc, 17, mode="mirror", output_chunks=(300, 300)).compute()
    assert isinstance(r, cp.ndarray)
    assert np.array_equal(cp.asnumpy(r), upres.rotate(a, 17, mode="mirror", backend="cpu"))


@requires_gpu
def test_srcnn_and_disparity_on_the_gpu_bit_identical(baboon: np.ndarray) -> None:
    """SRCNN and the window matcher band by band on the GPU against the whole cuda call (named
    kernels: fused fp32 / fp16, tensor-core bf16), a photo's sub-image view and random data,
    bands that cut everywhere, NumPy and CuPy chunks."""
    cp = pytest.importorskip("cupy")
    from conftest import photo

    view = np.ascontiguousarray(baboon[33:233, 17:190])
    x = da.from_array(view, chunks=(70, 60, 3))
    for scale, rows, kw in ((2, 37, {}), (3, 64, {"precision": "fp16"}),
                            (2, None, {"precision": "bf16", "variant": "tensor-core"})):
        ref = cp.asnumpy(upres.upscale(cp.asarray(view), scale, "srcnn", backend="cuda",
                                       precision=kw.get("precision", "fp32"),
                                       variant=kw.get("variant", "fused")))
        got = ud.upscale(x, scale, "srcnn", backend="cuda", chunk_rows=rows,
                         **kw).compute(scheduler="threads")  # type: ignore[arg-type]
        assert np.array_equal(got, ref), (scale, rows, kw)
    a = _image(np.random.default_rng(12), 131, 77, 1, np.uint16)
    ref = cp.asnumpy(upres.upscale(cp.asarray(a), 2, "srcnn", backend="cuda", variant="fused"))
    got = ud.upscale(da.from_array(a, chunks=(40, 77)), 2, "srcnn", backend="cuda",
                     chunk_rows=19).compute()
    assert np.array_equal(got, ref)

    left = np.ascontiguousarray(photo("motorcycle_left.png")[40:250, 100:420])
    right = np.ascontiguousarray(photo("motorcycle_right.png")[40:250, 100:420])
    chunks = (60,) + left.shape[1:]
    for opts, rows in (({"aggregate": "gauss13", "lr_check": 1}, 1),
                       ({"cost": "census", "aggregate": "box", "box_size": 9, "median": True},
                        37)):
        ref = upres.stereo.disparity(left, right, disparities=48, backend="cpu", **opts)
        got = ud.disparity(da.from_array(left, chunks=chunks), right, disparities=48,
                           chunk_rows=rows, backend="cuda", **opts).compute(scheduler="threads")
        assert got.tobytes() == ref.tobytes(), (opts, rows)
    lc = da.from_array(left, chunks=chunks).map_blocks(cp.asarray)
    rc = da.from_array(right, chunks=chunks).map_blocks(cp.asarray)
    got = ud.disparity(lc, rc, disparities=48, backend="cuda", chunk_rows=50).compute()
    assert isinstance(got, cp.ndarray)
    ref = upres.stereo.disparity(left, right, disparities=48, backend="cpu")
    assert cp.asnumpy(got).tobytes() == ref.tobytes()


@requires_gpu
def test_fuse_on_the_gpu_bit_identical(camera: np.ndarray, tmp_path: pathlib.Path) -> None:
    """NLM-SR band by band on the GPU (dask, and upres.fuse_tiff over the devices) against the
    whole cuda call: every cuda variant, post backproject and none, CuPy chunks."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(23)
    crops = [np.clip(camera[dy:dy + 300, dx:dx + 90] + rng.normal(0, 6, (300, 90)), 0,
                     255).astype(np.uint8) for dy, dx in ((0, 0), (2, 1), (1, 3))]
    rgb = [rng.integers(1, 65535, (97, 41, 3), dtype=np.uint16) for _ in range(2)]
    def whole(frames: list[np.ndarray], **opts: object) -> np.ndarray:
        return cp.asnumpy(upres.fuse([cp.asarray(f) for f in frames], 2, backend="cuda",
                                     **opts))

    for frames, opts in ((crops, {}), (crops, {"post": "none", "variant": "shared"}),
                         (rgb, {"post": "none", "variant": "simple"})):
        ref = whole(frames, **opts)
        xs = [da.from_array(f, chunks=(37,) + f.shape[1:]) for f in frames]
        for rows in (64, None):
            got = ud.fuse(xs, 2, chunk_rows=rows, backend="cuda", **opts).compute()
            assert np.array_equal(got, ref), (opts, rows)
    xc = [da.from_array(f, chunks=(100, 90)).map_blocks(cp.asarray) for f in crops]
    got = ud.fuse(xc, 2, chunk_rows=128, backend="cuda").compute()
    assert isinstance(got, cp.ndarray)
    assert np.array_equal(cp.asnumpy(got), whole(crops))
    paths = [str(_tiff(tmp_path, f, name=f"f{i}.tif")) for i, f in enumerate(crops)]
    n = upres._upres.cuda_device_count()
    st = upres.fuse_tiff(paths, str(tmp_path / "o.tif"), 2, band_rows=128, backend="cuda",
                         devices=list(range(min(n, 2))))
    assert st["bands"] == 5
    assert np.array_equal(upres.imread(str(tmp_path / "o.tif")), whole(crops))


@requires_gpu
@pytest.mark.parametrize("dtype,c,h,w", [(np.uint8, 3, 700, 650), (np.uint16, 1, 411, 523),
                                         (np.float32, 1, 389, 301), (np.float32, 3, 211, 187)])
def test_point_maps_on_the_gpu_bit_identical(dtype: type, c: int, h: int, w: int) -> None:
    """rotate, affine_transform and map_coordinates with backend='cuda' against the whole cuda
    call: tiles of awkward sizes (not on the kernels' 64 x 64 tiles) each from its cuda source
    box, NumPy and CuPy chunks. u8 RGB 700 x 650 runs the prefilter's streaming kernel (its row
    unit depends on the device), float grey rotations the recursive fused kernel; map_coordinates
    with 2-D, flat and 3-D coordinates (float RGB: the split kernel's bits depend on the samples
    a thread shares)."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(31 + c)
    a = _image(rng, h, w, c, dtype)
    ad = cp.asarray(a)
    tail = (c,) if c > 1 else ()
    x = da.from_array(a, chunks=(150, 170) + tail)
    mat = np.eye(3)[:2, :2] if c == 1 else np.eye(3)
    mat[:2, :2] = [[0.9, 0.21], [-0.13, 1.08]]
    off = (-6.5, 9.25) + ((0.0,) if c > 1 else ())
    yy, xx = np.mgrid[0:90, 0:100].astype(np.float64)
    co = np.stack([yy * 1.3 - 9 + 3 * np.sin(xx / 7), xx * 1.15 - 5 + 2 * np.cos(yy / 5)])
    co[:, 3, 5] = (400, -300)
    for name, kw in _cuda_cases():
        ref = cp.asnumpy(upres.rotate(ad, 31, backend="cuda", **kw))  # type: ignore[arg-type]
        got = ud.rotate(x, 31, output_chunks=(67, 45), backend="cuda",
                        **kw).compute()  # type: ignore[arg-type]
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (name, "rotate")
        ref = cp.asnumpy(upres.affine_transform(ad, mat, off, output_shape=(190, 230) + tail,
                                                backend="cuda", **kw))  # type: ignore[arg-type]
        got = ud.affine_transform(x, mat, off, output_shape=(190, 230) + tail,
                                  output_chunks=(100, 57), backend="cuda",
                                  **kw).compute()  # type: ignore[arg-type]
        assert np.array_equal(got, ref), (name, "affine")
        ref = cp.asnumpy(upres.map_coordinates(ad, cp.asarray(co), backend="cuda",
                                               **kw))  # type: ignore[arg-type]
        got = ud.map_coordinates(x, da.from_array(co, chunks=(2, 40, 33)), backend="cuda",
                                 **kw).compute()  # type: ignore[arg-type]
        assert np.array_equal(got, ref), (name, "map_coordinates")
    for shaped in (co.reshape(2, -1), co.reshape(2, 30, 3, 100)):
        ref = cp.asnumpy(upres.map_coordinates(ad, cp.asarray(shaped), backend="cuda"))
        got = ud.map_coordinates(x, da.from_array(shaped, chunks=(2,) + (7,) * (shaped.ndim - 1)),
                                 backend="cuda").compute()
        assert got.shape == ref.shape and np.array_equal(got, ref), shaped.shape
    xc = x.map_blocks(cp.asarray)
    r = ud.rotate(xc, 17, mode="mirror", output_chunks=(128, 128), backend="cuda").compute()
    assert isinstance(r, cp.ndarray)
    assert np.array_equal(cp.asnumpy(r), cp.asnumpy(upres.rotate(ad, 17, mode="mirror",
                                                                  backend="cuda")))


@requires_gpu
def test_local_gpu_cluster(tmp_path: pathlib.Path) -> None:
    """One worker process per GPU, each seeing its own device only; the bands of a TIFF zoomed
    on the GPUs equal the whole cuda call, and every worker computed some."""
    distributed = pytest.importorskip("distributed",
                                      reason="distributed is not installed (scripts/test does)")
    a = np.random.default_rng(9).integers(1, 65535, (1530, 410), dtype=np.uint16)
    p = _tiff(tmp_path, a)
    cp = pytest.importorskip("cupy")
    n = upres._upres.cuda_device_count()
    ref = cp.asnumpy(upres.zoom(cp.asarray(a), 2, mode="mirror", grid_mode=True, backend="cuda"))
    with ud.local_gpu_cluster(dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            seen = client.run(lambda: __import__("os").environ["CUDA_VISIBLE_DEVICES"])
            assert len(seen) == n and len(set(seen.values())) == n, seen
            x = ud.imread_tiff(p, chunk_rows=200)
            y = ud.zoom(x, 2, mode="mirror", grid_mode=True, chunk_rows=128, backend="cuda")
            y = y.persist()
            distributed.wait(y)
            holders = {w for ws in client.who_has(y).values() for w in ws}
            assert len(holders) == n, holders
            got = y.compute()
            # SRCNN and the window matcher's bands on the GPU workers.
            b = a[:300, :200]
            up = ud.upscale(da.from_array(b, chunks=(100, 200)), 2, "srcnn", backend="cuda",
                            chunk_rows=64).persist()
            distributed.wait(up)
            assert len({w for ws in client.who_has(up).values() for w in ws}) == n
            up_ref = cp.asnumpy(upres.upscale(cp.asarray(b), 2, "srcnn", backend="cuda",
                                              variant="fused"))
            assert np.array_equal(up.compute(), up_ref)
            d = ud.disparity(da.from_array(b, chunks=(100, 200)), np.roll(b, -3, axis=1),
                             disparities=16, backend="cuda", chunk_rows=40).compute()
            d_ref = upres.stereo.disparity(b, np.roll(b, -3, axis=1), disparities=16,
                                           backend="cpu")
            assert d.tobytes() == d_ref.tobytes()
            # A rotation's tiles on the GPU workers.
            r = ud.rotate(da.from_array(b, chunks=(100, 200)), 23, backend="cuda",
                          output_chunks=(64, 128)).persist()
            distributed.wait(r)
            assert len({w for ws in client.who_has(r).values() for w in ws}) == n
            r_ref = cp.asnumpy(upres.rotate(cp.asarray(b), 23, backend="cuda"))
            assert np.array_equal(r.compute(), r_ref)
    assert np.array_equal(got, ref)
    with pytest.raises(upres.InvalidArgumentError, match="distinct"):
        ud.local_gpu_cluster([0, 0])
    with pytest.raises(upres.InvalidArgumentError, match="distinct"):
        ud.local_gpu_cluster([n])


def test_doctests() -> None:
    import doctest

    r = doctest.testmod(ud, optionflags=doctest.ELLIPSIS)
    assert r.attempted > 0 and r.failed == 0


def test_upscale_bit_identical(baboon: np.ndarray) -> None:
    # SRCNN band by band (its source rows and the network's reach), and the resizes through
    # ud.zoom, against upres.upscale on the whole image (cpu backend): a photo's sub-image view,
    # random data, every dtype, bands that cut everywhere.
    view = np.ascontiguousarray(baboon[33:203, 17:150])
    x = da.from_array(view, chunks=(50, 60, 3))
    for method, scale, rows in (("srcnn", 2, 37), ("srcnn", 3, 64), ("auto", 2, None),
                                ("bicubic", 2, 23), ("bilinear", 3, 40), ("bspline", 2, 31)):
        ref = upres.upscale(view, scale, method, backend="cpu")
        got = ud.upscale(x, scale, method, chunk_rows=rows).compute(scheduler="threads")
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (method, scale, rows)
    rng = np.random.default_rng(5)
    for dtype in (np.uint16, np.float32):
        a = _image(rng, 90, 70, 1, dtype)
        if dtype == np.float32:
            a = np.clip(a, 0, 1)
        ref = upres.upscale(a, 2, "srcnn", backend="cpu")
        got = ud.upscale(da.from_array(a, chunks=(30, 70)), 2, "srcnn", chunk_rows=17).compute()
        assert np.array_equal(got, ref), dtype
    with pytest.raises(ValueError, match="not tiled"):
        ud.upscale(x, 2, "silseabi")
    with pytest.raises(ValueError, match="integer"):
        ud.upscale(x, 2.5, "bicubic")


def test_disparity_bit_identical() -> None:
    # The window matcher band by band (both images' rows and the windows' reach) against
    # upres.stereo.disparity on the whole pair (cpu backend): the Motorcycle pair (a sub-image
    # view), random data in every dtype, bands that cut everywhere; what is not local refused.
    from conftest import photo

    left = np.ascontiguousarray(photo("motorcycle_left.png")[40:250, 100:420])
    right = np.ascontiguousarray(photo("motorcycle_right.png")[40:250, 100:420])
    chunks = (60,) + left.shape[1:]
    for opts, rows in (({"aggregate": "gauss7"}, 1), ({"aggregate": "gauss13", "lr_check": 1}, 37),
                       ({"cost": "census", "aggregate": "box", "box_size": 11, "median": True,
                         "uniqueness": 10}, None)):
        ref = upres.stereo.disparity(left, right, disparities=48, backend="cpu", **opts)
        got = ud.disparity(da.from_array(left, chunks=chunks), right, disparities=48,
                           chunk_rows=rows, **opts).compute(scheduler="threads")
        assert got.dtype == np.float32 and got.tobytes() == ref.tobytes(), (opts, rows)
    rng = np.random.default_rng(9)
    for dtype in (np.uint16, np.float32):
        a, b = _image(rng, 75, 64, 3, dtype), _image(rng, 75, 64, 3, dtype)
        if dtype == np.float32:
            a, b = np.clip(a, 0, 1), np.clip(b, 0, 1)
        ref = upres.stereo.disparity(a, b, disparities=16, backend="cpu", subpixel=False)
        got = ud.disparity(a, b, disparities=16, chunk_rows=13, subpixel=False).compute()
        assert got.tobytes() == ref.tobytes(), dtype
    with pytest.raises(ValueError, match="aggregation sgm4 is not tiled"):
        ud.disparity(left, right, aggregate="sgm4")
    with pytest.raises(ValueError, match="they must match"):
        ud.disparity(left, right[:100])
    with pytest.raises(ValueError, match="2 channels"):
        ud.disparity(np.zeros((20, 30, 2), np.uint8), np.zeros((20, 30, 2), np.uint8))
