#!/usr/bin/python3
"""Golden data of upres SRCNN (tests/data/srcnn), from an outside oracle: PyTorch's
torch.nn.functional.conv2d in float64 with F.pad(mode='replicate') before every layer (the
replication border of the original SRCNN test code), ReLU after layers 1 and 2.

Cases (small random models with fixed seeds, plus one full-size 9-1-5 64/32 model):
  <case>.srcnn        the model, written by write_srcnn() below (docs/ops/srcnn.md byte layout)
  <case>_in.npy       H x W float32 input plane in [0, 1]
  <case>_l1.npy ...   per layer: the layer's output from the float32-rounded previous golden
                      output (planes stacked as a (C * H) x W float32 array, CHW order)
  <case>_out.npy      the whole network in float64 from <case>_in (no intermediate rounding)
Pipeline and degradation:
  pipe_gray_in.npy    u8 H x W gray image; pipe_gray_out.npy: srcnn_upscale
                      (Y = v / 255, MATLAB bicubic x2, network pipe.srcnn, clamp, round)
  degrade_in.npy      float32 image; degrade_x3.npy: srcnn_degrade(.., 3) = modcrop + MATLAB
                      antialiased bicubic 1/3 (matlab_imresize.py)
Run:  /usr/bin/python3 tools/golden/gen_srcnn.py      (re-runnable; overwrites tests/data/srcnn)
"""
import os
import struct
import sys
import zlib

import numpy as np
try:
    import torch
    import torch.nn.functional as F
except ImportError:  # write_srcnn and random_model (gen_nlmsr.py) need NumPy alone
    torch = F = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matlab_imresize  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                   'srcnn')


def write_srcnn(path, scale, layers, description=''):
    """layers: [(weights OIHW float32 array, bias float32 array)] * 3."""
    desc = description.encode('utf-8')
    b = bytearray(b'UPRES-SRCNN\0')
    b += struct.pack('<III', 1, scale, len(desc)) + desc
    for w, bias in layers:
        o, i, k, k2 = w.shape
        assert k == k2 and bias.shape == (o,)
        b += struct.pack('<III', o, i, k)
        b += np.ascontiguousarray(w, dtype='<f4').tobytes()
        b += np.ascontiguousarray(bias, dtype='<f4').tobytes()
    b += struct.pack('<I', zlib.crc32(bytes(b)) & 0xFFFFFFFF)
    with open(path, 'wb') as f:
        f.write(bytes(b))


def random_model(seed, kernels, n1, n2):
    rng = np.random.default_rng(seed)
    chans = [(n1, 1), (n2, n1), (1, n2)]
    layers = []
    for (o, i), k in zip(chans, kernels):
        std = 1.0 / np.sqrt(i * k * k)
        w = (rng.standard_normal((o, i, k, k)) * std).astype(np.float32)
        bias = rng.uniform(-0.1, 0.2, o).astype(np.float32)
        layers.append((w, bias))
    return layers


def conv(x, w, b, relu):
    """x: (C, H, W) float64 tensor; replication padding, output of the input's size."""
    r = w.shape[-1] // 2
    xp = F.pad(x[None], (r, r, r, r), mode='replicate') if r > 0 else x[None]
    y = F.conv2d(xp, torch.from_numpy(w.astype(np.float64)), torch.from_numpy(
        b.astype(np.float64)))[0]
    return torch.relu(y) if relu else y


def network(plane, layers):
    x = torch.from_numpy(np.asarray(plane, np.float64))[None]
    for j, (w, b) in enumerate(layers):
        x = conv(x, w, b, j < 2)
    return x[0].numpy()


def save(name, arr):
    np.save(os.path.join(OUT, name), arr)


def model_case(name, seed, kernels, n1, n2, w, h, scale):
    layers = random_model(seed, kernels, n1, n2)
    write_srcnn(os.path.join(OUT, name + '.srcnn'), scale, layers,
                f'gen_srcnn.py random model {name} seed {seed}')
    rng = np.random.default_rng(seed + 1000)
    x = rng.uniform(0.0, 1.0, (h, w)).astype(np.float32)
    save(name + '_in.npy', x)
    cur = x[None].astype(np.float32)
    for j, (wt, b) in enumerate(layers):
        y = conv(torch.from_numpy(cur.astype(np.float64)), wt, b, j < 2).numpy()
        cur = y.astype(np.float32)
        save(f'{name}_l{j + 1}.npy', cur.reshape(-1, w))
    save(name + '_out.npy', network(x, layers).astype(np.float32))
    return layers


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []
    model_case('s915', 11, (9, 1, 5), 8, 4, 17, 13, 2)
    cases.append('s915: 9-1-5 8/4, 17 x 13, scale 2')
    model_case('s955', 12, (9, 5, 5), 6, 3, 31, 29, 3)
    cases.append('s955: 9-5-5 6/3, 31 x 29, scale 3')
    model_case('t313', 13, (3, 1, 3), 4, 2, 7, 5, 4)
    cases.append('t313: 3-1-3 4/2, 7 x 5, scale 4')
    model_case('full915', 14, (9, 1, 5), 64, 32, 16, 15, 2)
    cases.append('full915: 9-1-5 64/32, 16 x 15, scale 2')

    # Whole pipeline on a gray u8 image with a near-identity 9-1-5 8/4 model (the identity
    # through channel 0 of each layer plus small random weights), so few outputs clip.
    pipe = random_model(15, (9, 1, 5), 8, 4)
    for j, (w, b) in enumerate(pipe):
        w *= 0.05
        b *= 0.05
        w[0, 0, w.shape[2] // 2, w.shape[3] // 2] += 1.0
    write_srcnn(os.path.join(OUT, 'pipe.srcnn'), 2, pipe, 'gen_srcnn.py near-identity model')
    rng = np.random.default_rng(21)
    g = rng.integers(0, 256, (10, 12), dtype=np.uint8)
    save('pipe_gray_in.npy', g)
    y = (g.astype(np.float64) / 255.0).astype(np.float32)
    yb = matlab_imresize.imresize(y, (20, 24), 'bicubic', antialias=True).astype(np.float32)
    net = np.clip(network(yb, pipe), 0.0, 1.0)
    save('pipe_gray_out.npy', np.rint(net * 255.0).astype(np.uint8))
    cases.append('pipe_gray: 12 x 10 u8 -> 24 x 20 with pipe.srcnn (near identity, scale 2)')

    # The degradation: modcrop to a multiple of 3, antialiased MATLAB bicubic by 1/3.
    d = rng.uniform(0.0, 1.0, (14, 19, 3)).astype(np.float32)
    save('degrade_in.npy', d)
    crop = d[:12, :18].astype(np.float64)
    save('degrade_x3.npy',
         matlab_imresize.imresize(crop, (4, 6), 'bicubic', antialias=True).astype(np.float32))
    cases.append('degrade: 19 x 14 x 3 f32, scale 3 -> 6 x 4')

    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_srcnn.py (+ tools/golden/matlab_imresize.py)\n')
        f.write(f'python: {sys.version.split()[0]}\n')
        f.write(f'numpy: {np.__version__}\n')
        f.write(f'torch: {torch.__version__}\n')
        f.write('oracle: torch.nn.functional.conv2d (float64) after F.pad(mode=replicate)\n')
        f.write('cases:\n')
        for c in cases:
            f.write(f'  {c}\n')
        f.write('per-layer planes stacked as (C * H) x W float32 (CHW order)\n')


if __name__ == '__main__':
    main()
