"""SRCNN peers of bench/srcnn_bench.cpp (docs/ops/srcnn.md, "CUDA engine and per-layer
variants"): PyTorch SRCNN 9-1-5 (64/32 channels, ReLU after layers 1 and 2, replicate padding so
the output has the input's size) on a 1x1x2160x3840 plane.

* fp32, cudnn.benchmark=True, TF32 allowed (PyTorch's default for cuDNN convolutions);
* fp32, cudnn.benchmark=True, torch.backends.cudnn.allow_tf32=False (true fp32: the peer of
  upres's accurate Fp32 mode);
* fp16, channels_last, cudnn.benchmark=True (the peer of upres's fastest mode);
* each layer alone (conv + ReLU, replicate padding) in fp32 (no TF32) and fp16 channels_last
  (the peers of the per-layer Table II);
* the 1080p -> 4K pipeline in torch: u8 RGB on the device -> YCbCr (BT.601) -> bicubic x2 of
  all planes (F.interpolate, align_corners=False: Keys a = -0.75, not MATLAB's -0.5) -> network
  (fp16 channels_last) on Y -> RGB u8. Device-resident (no host transfers).

Torch flags are global: every run sets the ones it depends on before it runs.

Measured on an H200 (2026-11-21): replicate padding costs torch a layout conversion per layer
in channels_last (F.pad returns NCHW): fp16 channels_last 23.8 ms with replicate padding, 7.6 ms
with zero padding (the *_zeropad_* diagnostics; zero padding is not SRCNN's border rule).
"""
from __future__ import annotations

from peerlib import Work, peer

W, H = 3840, 2160
LAYERS = ((64, 1, 9), (32, 64, 1), (1, 32, 5))


def _flags(torch, tf32: bool):
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32


def _convs(torch, layers, dtype, channels_last, padding_mode="replicate"):
    nn = torch.nn
    g = torch.Generator().manual_seed(1234)
    mods = []
    for i, (o, c, k) in enumerate(layers):
        conv = nn.Conv2d(c, o, k, padding=k // 2, padding_mode=padding_mode)
        with torch.no_grad():
            std = ((1.0 if i == len(layers) - 1 and o == 1 else 2.0) / (c * k * k)) ** 0.5
            conv.weight.copy_(torch.randn(conv.weight.shape, generator=g) * std)
            conv.bias.copy_(torch.randn(conv.bias.shape, generator=g) * 0.02)
        mods.append(conv)
    net = nn.ModuleList(mods).cuda().to(dtype)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    return net


def _network(ctx, dtype_name, tf32, channels_last, padding_mode="replicate"):
    torch = ctx.need("torch")
    dtype = getattr(torch, dtype_name)
    _flags(torch, tf32)
    net = _convs(torch, LAYERS, dtype, channels_last, padding_mode)
    n_bytes = 2 * W * H * 4
    xs = [ctx.torch_random((1, 1, H, W)).to(dtype) for _ in range(ctx.sets(n_bytes))]
    if channels_last:
        xs = [x.contiguous(memory_format=torch.channels_last) for x in xs]
    F = torch.nn.functional

    def run(i):
        _flags(torch, tf32)
        with torch.no_grad():
            x = xs[i % len(xs)]
            x = F.relu(net[0](x))
            x = F.relu(net[1](x))
            return net[2](x)

    return Work(run, pixels=W * H, bytes=n_bytes, sets=len(xs),
                info={"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "dtype": dtype_name, "allow_tf32": tf32, "channels_last": channels_last,
                      "cudnn.benchmark": True, "padding": padding_mode, "model": "9-1-5 64/32"})


def _layer(ctx, li, dtype_name, channels_last):
    torch = ctx.need("torch")
    dtype = getattr(torch, dtype_name)
    _flags(torch, False)
    o, c, k = LAYERS[li]
    conv = _convs(torch, [LAYERS[li]], dtype, channels_last)[0]
    n_bytes = W * H * (c + o) * 4
    xs = [ctx.torch_random((1, c, H, W)).to(dtype) for _ in range(ctx.sets(n_bytes))]
    if channels_last:
        xs = [x.contiguous(memory_format=torch.channels_last) for x in xs]
    relu = li < 2

    def run(i):
        _flags(torch, False)
        with torch.no_grad():
            y = conv(xs[i % len(xs)])
            return torch.relu_(y) if relu else y

    return Work(run, pixels=W * H, bytes=n_bytes, sets=len(xs),
                info={"torch": torch.__version__, "layer": f"{o}x{c}x{k}x{k}",
                      "dtype": dtype_name, "channels_last": channels_last, "allow_tf32": False})


def _pipeline(ctx):
    torch = ctx.need("torch")
    F = torch.nn.functional
    _flags(torch, False)
    net = _convs(torch, LAYERS, torch.float16, True)
    w, h = 1920, 1080
    rgb = ctx.torch_random((1, 3, h, w), dtype="uint8")
    m = torch.tensor([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                      [112.0, -93.786, -18.214]], device="cuda") / 255.0
    off = torch.tensor([16.0, 128.0, 128.0], device="cuda").view(1, 3, 1, 1)
    minv = torch.linalg.inv(m)

    def run(i):
        _flags(torch, False)
        with torch.no_grad():
            x = rgb.float()
            ycc = torch.einsum("ij,bjhw->bihw", m, x) + off
            up = F.interpolate(ycc, scale_factor=2, mode="bicubic", align_corners=False)
            y = (up[:, :1] / 255.0).half().contiguous(memory_format=torch.channels_last)
            y = F.relu(net[0](y))
            y = F.relu(net[1](y))
            y = net[2](y).float().clamp_(0, 1) * 255.0
            ycc2 = torch.cat([y, up[:, 1:]], dim=1) - off
            out = torch.einsum("ij,bjhw->bihw", minv, ycc2)
            return out.round_().clamp_(0, 255).to(torch.uint8)

    return Work(run, pixels=2 * w * 2 * h, bytes=w * h * 3 + 4 * w * h * 3, sets=1,
                info={"torch": torch.__version__, "input": "1920x1080 RGB u8 (device)",
                      "bicubic": "F.interpolate bicubic (a=-0.75), align_corners=False",
                      "network": "fp16 channels_last"})


peer("torch_srcnn915_fp32_tf32allowed_4k", kind="torch", ours="Cuda_SrcnnNetwork/0/",
     note="SRCNN 9-1-5 fp32, cudnn.benchmark, TF32 allowed (torch default), 3840x2160")(
    lambda ctx: _network(ctx, "float32", True, False))
peer("torch_srcnn915_fp32_4k", kind="torch", ours="Cuda_SrcnnNetwork/0/",
     note="SRCNN 9-1-5 fp32, cudnn.benchmark, cudnn.allow_tf32=False, 3840x2160")(
    lambda ctx: _network(ctx, "float32", False, False))
peer("torch_srcnn915_fp16_cl_4k", kind="torch", ours="Cuda_SrcnnNetwork/4/",
     note="SRCNN 9-1-5 fp16 channels_last, cudnn.benchmark, 3840x2160")(
    lambda ctx: _network(ctx, "float16", False, True))
# Diagnostics of the fp16 peer (is the replicate padding or the layout what costs?).
peer("torch_srcnn915_fp16_nchw_4k", kind="torch", ours="Cuda_SrcnnNetwork/4/",
     note="SRCNN 9-1-5 fp16 NCHW, cudnn.benchmark, 3840x2160")(
    lambda ctx: _network(ctx, "float16", False, False))
peer("torch_srcnn915_fp16_cl_zeropad_4k", kind="torch", ours="Cuda_SrcnnNetwork/4/",
     note="SRCNN 9-1-5 fp16 channels_last, zero padding (not SRCNN's), 3840x2160")(
    lambda ctx: _network(ctx, "float16", False, True, "zeros"))
peer("torch_srcnn915_fp32_zeropad_4k", kind="torch", ours="Cuda_SrcnnNetwork/0/",
     note="SRCNN 9-1-5 fp32 (no TF32), zero padding (not SRCNN's), 3840x2160")(
    lambda ctx: _network(ctx, "float32", False, False, "zeros"))
_RELU = (" + ReLU", " + ReLU", "")
for _li in range(3):
    peer(f"torch_srcnn_layer{_li + 1}_fp32_4k", kind="torch", ours=f"Cuda_SrcnnLayer/{_li + 1}/",
         note=f"conv{_li + 1} {LAYERS[_li]} fp32 (no TF32){_RELU[_li]}, NCHW, 3840x2160")(
        lambda ctx, li=_li: _layer(ctx, li, "float32", False))
    peer(f"torch_srcnn_layer{_li + 1}_fp16_cl_4k", kind="torch",
         ours=f"Cuda_SrcnnLayer/{_li + 1}/6/",
         note=f"conv{_li + 1} {LAYERS[_li]} fp16 channels_last{_RELU[_li]}, 3840x2160")(
        lambda ctx, li=_li: _layer(ctx, li, "float16", True))
peer("torch_srcnn_pipeline_1080p_to_4k", kind="torch", ours="Cuda_SrcnnPipeline1080p/0",
     note="u8 RGB -> YCbCr -> bicubic x2 -> SRCNN fp16 on Y -> RGB u8, device-resident")(_pipeline)
