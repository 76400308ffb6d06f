"""CuPy and PyTorch CUDA arrays: results against cupyx.scipy.ndimage (the GPU oracle) and the
host path, zero copy in and out, the caller's stream, and the errors for mixed places. Every
test here skips visibly without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

import upres

from conftest import gpu_libs, requires_gpu

pytestmark = requires_gpu


def _cupy():  # type: ignore[no-untyped-def]
    return pytest.importorskip("cupy")


def _torch():  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return torch


@pytest.mark.parametrize("order", [0, 1, 3])
@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "reflect", "grid-wrap"])
def test_cupy_against_scipy_and_cupyx(order: int, mode: str) -> None:
    """CuPy inputs against scipy.ndimage on the host (the conventions, every order and mode;
    float32 within 2e-5) and against cupyx.scipy.ndimage where cupyx follows them: mode
    'mirror', orders 1 and 3 (within 1e-4: cupyx computes the prefilter differently). cupyx
    departs from scipy at the borders elsewhere (order 0 with 'constant' rounds before its
    inside test, for one)."""
    cp = _cupy()
    import cupyx.scipy.ndimage as cnd
    import scipy.ndimage as ndi

    rng = np.random.default_rng(3)
    host = rng.random((301, 257), dtype=np.float32)
    img = cp.asarray(host)
    coords = (rng.random((2, 40, 50)) * 300).astype(np.float32)
    cases = [
        ("rotate", (30,), upres.rotate(img, 30, order=order, mode=mode)),
        ("zoom", (1.7,), upres.zoom(img, 1.7, order=order, mode=mode)),
        ("shift", ((3.3, -1.2),), upres.shift(img, (3.3, -1.2), order=order, mode=mode)),
        ("map_coordinates", (coords,),
         upres.map_coordinates(img, cp.asarray(coords), order=order, mode=mode)),
    ]
    for name, args, ours in cases:
        assert isinstance(ours, cp.ndarray)
        want = getattr(ndi, name)(host, *args, order=order, mode=mode)
        diff = np.abs(cp.asnumpy(ours) - want)
        if order == 0:
            # The CUDA kernels map coordinates in float32: a coordinate within float rounding
            # of a half-integer can round to the other neighbour than scipy's float64 one.
            assert (diff > 2e-5).mean() < 1e-3, f"{name}: {(diff > 2e-5).mean():.2%} differ"
        else:
            assert float(diff.max()) < 2e-5, name
        if mode == "mirror" and order in (1, 3):
            gpu_args = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
            theirs = getattr(cnd, name)(img, *gpu_args, order=order, mode=mode)
            assert float(cp.abs(ours - theirs).max()) < 1e-4, f"{name} vs cupyx"
    assert float(np.abs(cp.asnumpy(upres.spline_filter(img)) - ndi.spline_filter(host)).max()) < 2e-5
    assert float(cp.abs(upres.spline_filter(img) - cnd.spline_filter(img)).max()) < 1e-4
    assert float(np.abs(cp.asnumpy(upres.spline_filter1d(img, axis=0)) -
                        ndi.spline_filter1d(host, axis=0)).max()) < 2e-5


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_device_matches_host_and_writes_in_place(lib: str, baboon: np.ndarray) -> None:
    if lib not in gpu_libs():
        pytest.skip(f"{lib} with CUDA is not installed")
    host = baboon[:301, :257]
    if lib == "cupy":
        cp = _cupy()
        dev = cp.asarray(host)
        to_host = cp.asnumpy
        out = cp.empty((602, 514, 3), cp.uint8)
        ptr = out.data.ptr
    else:
        torch = _torch()
        dev = torch.from_numpy(np.ascontiguousarray(host)).cuda()
        to_host = lambda t: t.cpu().numpy()  # noqa: E731
        out = torch.empty((602, 514, 3), dtype=torch.uint8, device="cuda")
        ptr = out.data_ptr()
    want = upres.zoom(host, (2, 2, 1), mode="mirror")
    ret = upres.zoom(dev, (2, 2, 1), mode="mirror", output=out)
    assert ret is out
    assert (ret.data.ptr if lib == "cupy" else ret.data_ptr()) == ptr
    assert np.abs(to_host(ret).astype(int) - want).max() <= 1
    # Colour goes through YCbCr in float on either side (1 level); SRCNN's float network 2;
    # SIL-SEABI on a gray image is bit-identical across backends (its integer arithmetic).
    for method, tol in (("bicubic", 1), ("silseabi", 1), ("srcnn", 2)):
        h = upres.upscale(np.ascontiguousarray(host), 2, method)
        d = to_host(upres.upscale(dev, 2, method))
        assert np.abs(d.astype(int) - h).max() <= tol, method
    gray_h = np.ascontiguousarray(host[..., 1])
    gray_d = dev[..., 1] if lib == "cupy" else dev[..., 1].contiguous()
    assert np.array_equal(to_host(upres.seabi(gray_d, "lseabi")), upres.seabi(gray_h, "lseabi"))
    up_h = upres.upscale(np.ascontiguousarray(host), 2, "bicubic")
    up_d = upres.upscale(dev, 2, "bicubic")
    assert np.abs(to_host(up_d).astype(int) - up_h).max() <= 1
    with pytest.raises(upres.BackendUnavailableError, match="host"):  # metrics: host only
        upres.psnr(up_d, up_d)
    left = dev[..., 0] if lib == "cupy" else dev[..., 0].contiguous()
    dl = upres.stereo.disparity(left, left, disparities=16, aggregate="box")
    assert float(np.nanmax(np.abs(to_host(dl)))) < 0.5
    # NLM-SR: device frames run the whole call on the device (within 1 level of the cpu
    # backend, as in C++).
    frames_h = [np.ascontiguousarray(host[2 * i:2 * i + 60, 3 * i:3 * i + 70, 1]) for i in range(3)]
    if lib == "cupy":
        frames_d = [cp.asarray(f) for f in frames_h]
    else:
        frames_d = [torch.from_numpy(f).cuda() for f in frames_h]
    fused = to_host(upres.fuse(frames_d, 2))
    assert fused.shape == (120, 140)
    assert np.abs(fused.astype(int) - upres.fuse(frames_h, 2).astype(int)).max() <= 1


def test_cupy_stream_ordering() -> None:
    """A call inside `with stream:` runs on that stream after the work queued before it."""
    cp = _cupy()
    rng = np.random.default_rng(5)
    base = cp.asarray(rng.random((2048, 2048), dtype=np.float32))
    want = upres.rotate(base * 2 + 1, 30, reshape=False, mode="mirror")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = base
        for _ in range(40):  # slow producer on s: the rotate must wait for it
            x = cp.sin(x) * 0 + x
        x = x * 2 + 1
        got = upres.rotate(x, 30, reshape=False, mode="mirror")
        total = got.sum()
    s.synchronize()
    assert float(cp.abs(got - want).max()) == 0.0
    assert np.isfinite(float(total))
    # an explicit stream= is used as given
    s2 = cp.cuda.Stream(non_blocking=True)
    with s2:
        y = base * 2 + 1
    s2.synchronize()
    got2 = upres.rotate(y, 30, reshape=False, mode="mirror", stream=s2)
    s2.synchronize()
    assert float(cp.abs(got2 - want).max()) == 0.0


def test_torch_stream_ordering() -> None:
    torch = _torch()
    base = torch.rand(2048, 2048, device="cuda")
    want = upres.rotate(base * 2 + 1, 30, reshape=False, mode="mirror")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = base
        for _ in range(40):
            x = torch.sin(x) * 0 + x
        x = x * 2 + 1
        got = upres.rotate(x, 30, reshape=False, mode="mirror")
    s.synchronize()
    assert isinstance(got, torch.Tensor) and got.is_cuda
    assert float((got - want).abs().max()) == 0.0


def test_device_errors() -> None:
    cp = _cupy()
    img = cp.zeros((16, 16), cp.float32)
    with pytest.raises(upres.BackendUnavailableError, match="runs on host memory"):
        upres.zoom(img, 2, backend="cpu")
    with pytest.raises(upres.BackendUnavailableError, match="NumPy array"):
        upres.psnr(img, np.zeros((16, 16), np.float32))
    with pytest.raises(upres.InvalidArgumentError, match="coordinates are a NumPy array"):
        upres.map_coordinates(img, np.zeros((2, 4, 4)))
    with pytest.raises(upres.BackendUnavailableError):
        upres.brisque(cp.zeros((32, 32), cp.uint8))
