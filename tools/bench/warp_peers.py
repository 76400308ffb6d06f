#!/usr/bin/python3
"""Peers of upres's CPU warp (docs/ops/warp.md): scipy.ndimage.rotate(order=3, reshape=False)
single-threaded and OpenCV warpAffine(INTER_CUBIC, and INTER_LINEAR and INTER_NEAREST for the
bilinear and nearest-neighbour rows) with cv2.setNumThreads(N), on the same 2048^2 float32
rotation as bench/warp_cpu_bench.cpp (Warp_CpuRotate); and, for the warp by a
displacement field (Warp_CpuFlow: PIV window deformation, optical-flow warps), OpenCV remap
(INTER_CUBIC, INTER_LINEAR) on N threads and scipy.ndimage.map_coordinates(order=3 and 1)
single-threaded on the same field (cv2.INTER_CUBIC is Keys cubic, a = -0.75). Prints the best and the median of several runs in
milliseconds. Run in the same session as upres_bench.

The 8-bit cases (Warp_CpuRotateGreyU8, Warp_CpuResizeRgbU8, Warp_CpuRotateRgbU8): a 2048^2 grey
uint8 image rotated by 30 degrees, a 1920 x 1080 RGB uint8 frame resized to 3840 x 2160 with
cv2.resize and rotated by 30 degrees with cv2.warpAffine (BORDER_REFLECT_101), INTER_LINEAR and
INTER_CUBIC, on N threads.

The perspective case (Warp_CpuPerspective): cv2.warpPerspective with WARP_INVERSE_MAP and the
keystone homography of bench_util.hpp, on N threads.

    tools/bench/warp_peers.py [N [THREADS [rotate|flow|perspective|video|all]]]"""
import os
import sys
import time

os.environ.setdefault('OMP_NUM_THREADS', '1')
import cv2  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.ndimage as nd  # noqa: E402

# The displacement field of bench_util.hpp's flow_field(), written once for the peers.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'peers'))
from peers_warp import flow_field, keystone  # noqa: E402


def timed(f, n):
    """Best and median wall time, and best process CPU time (all threads), in ms."""
    ts, cs = [], []
    for _ in range(n):
        c = time.process_time()
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
        cs.append(time.process_time() - c)
    ts.sort()
    return 1e3 * ts[0], 1e3 * ts[len(ts) // 2], 1e3 * min(cs)


def flow_peers(img, threads):
    """Output (x, y) samples img at (x + dx, y + dy); sample positions precomputed (not timed)."""
    n = img.shape[0]
    x, y, dx, dy = flow_field(np, n)
    mx = (x + dx).astype(np.float32)
    my = (y + dy).astype(np.float32)
    print(f'{n}x{n} float32, warp by a displacement field (bench_util.hpp flow_field)')
    coords = np.stack([my, mx])
    for order in (3, 1):
        b, m, c = timed(lambda: nd.map_coordinates(img, coords, order=order, mode='mirror'), 3)
        print(f'scipy.ndimage.map_coordinates order={order} mirror (1 thread): best {b:.1f} ms, '
              f'median {m:.1f} ms, cpu {c:.1f} ms')
    cv2.setNumThreads(threads)
    for name, flag in (('INTER_CUBIC', cv2.INTER_CUBIC), ('INTER_LINEAR', cv2.INTER_LINEAR)):
        b, m, c = timed(lambda: cv2.remap(img, mx, my, flag, borderMode=cv2.BORDER_REFLECT_101),
                        15)
        print(f'cv2.remap {name} float maps ({threads} threads): best {b:.1f} ms, '
              f'median {m:.1f} ms, cpu {c:.1f} ms')


def perspective_peers(img, threads):
    """cv2.warpPerspective with the inverse map (output -> input) of Warp_CpuPerspective."""
    n = img.shape[0]
    H = np.array(keystone(n), dtype=np.float64)
    print(f'{n}x{n} float32, perspective warp (bench_util.hpp keystone)')
    cv2.setNumThreads(threads)
    for name, flag in (('INTER_CUBIC', cv2.INTER_CUBIC), ('INTER_LINEAR', cv2.INTER_LINEAR)):
        b, m, c = timed(lambda: cv2.warpPerspective(img, H, (n, n),
                                                    flags=flag | cv2.WARP_INVERSE_MAP,
                                                    borderMode=cv2.BORDER_REFLECT_101), 15)
        print(f'cv2.warpPerspective {name} ({threads} threads): best {b:.1f} ms, '
              f'median {m:.1f} ms, cpu {c:.1f} ms')


def rotate_peers(img, threads):
    n = img.shape[0]
    print(f'scipy {scipy.__version__}, opencv {cv2.__version__}, {n}x{n} float32, rotate 30 deg')
    b, m, c = timed(lambda: nd.rotate(img, 30, reshape=False, order=3, mode='mirror'), 3)
    print(f'scipy.ndimage.rotate order=3 mirror (1 thread): best {b:.1f} ms, median {m:.1f} ms, '
          f'cpu {c:.1f} ms')
    cv2.setNumThreads(threads)
    M = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), 30, 1.0)
    for name, flag in (('INTER_CUBIC', cv2.INTER_CUBIC), ('INTER_LINEAR', cv2.INTER_LINEAR),
                       ('INTER_NEAREST', cv2.INTER_NEAREST)):
        b, m, c = timed(lambda: cv2.warpAffine(img, M, (n, n), flags=flag,
                                               borderMode=cv2.BORDER_REFLECT_101), 15)
        print(f'cv2.warpAffine {name} ({threads} threads): best {b:.1f} ms, median {m:.1f} ms, '
              f'cpu {c:.1f} ms')


def video_peers(threads):
    img = np.random.default_rng(4).integers(1, 256, (1080, 1920, 3), dtype=np.uint8)
    cv2.setNumThreads(threads)
    grey = np.random.default_rng(6).integers(1, 256, (2048, 2048), dtype=np.uint8)
    G = cv2.getRotationMatrix2D(((2048 - 1) / 2, (2048 - 1) / 2), 30, 1.0)
    for name, flag in (('INTER_LINEAR', cv2.INTER_LINEAR), ('INTER_CUBIC', cv2.INTER_CUBIC)):
        b, m, c = timed(lambda: cv2.warpAffine(grey, G, (2048, 2048), flags=flag,
                                               borderMode=cv2.BORDER_REFLECT_101), 15)
        print(f'2048x2048 grey uint8, cv2.warpAffine 30 deg {name} ({threads} threads): '
              f'best {b:.1f} ms, median {m:.1f} ms, cpu {c:.1f} ms')
    print('1920x1080 RGB uint8 (the video case)')
    M = cv2.getRotationMatrix2D(((1920 - 1) / 2, (1080 - 1) / 2), 30, 1.0)
    for name, flag in (('INTER_LINEAR', cv2.INTER_LINEAR), ('INTER_CUBIC', cv2.INTER_CUBIC)):
        b, m, c = timed(lambda: cv2.resize(img, (3840, 2160), interpolation=flag), 15)
        print(f'cv2.resize to 3840x2160 {name} ({threads} threads): best {b:.1f} ms, '
              f'median {m:.1f} ms, cpu {c:.1f} ms')
        b, m, c = timed(lambda: cv2.warpAffine(img, M, (1920, 1080), flags=flag,
                                               borderMode=cv2.BORDER_REFLECT_101), 15)
        print(f'cv2.warpAffine 30 deg {name} ({threads} threads): best {b:.1f} ms, '
              f'median {m:.1f} ms, cpu {c:.1f} ms')


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    which = sys.argv[3] if len(sys.argv) > 3 else 'all'
    img = np.random.default_rng(1).uniform(0.05, 1.05, (n, n)).astype(np.float32)
    if which in ('rotate', 'all'):
        rotate_peers(img, threads)
    if which in ('flow', 'all'):
        flow_peers(img, threads)
    if which in ('perspective', 'all'):
        perspective_peers(img, threads)
    if which in ('video', 'all'):
        video_peers(threads)


if __name__ == '__main__':
    main()
