#!/usr/bin/python3
"""Peers of upres's CPU warp (docs/ops/warp.md): scipy.ndimage.rotate(order=3, reshape=False)
single-threaded and OpenCV warpAffine(INTER_CUBIC) with cv2.setNumThreads(N), on the same
2048^2 float32 rotation as bench/warp_cpu_bench.cpp (Warp_CpuRotate). Prints the best and the
median of several runs in milliseconds. Run in the same session as upres_bench."""
import os
import sys
import time

os.environ.setdefault('OMP_NUM_THREADS', '1')
import cv2  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.ndimage as nd  # noqa: E402


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


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    img = np.random.default_rng(1).uniform(0.05, 1.05, (n, n)).astype(np.float32)
    print(f'scipy {scipy.__version__}, opencv {cv2.__version__}, {n}x{n} float32, rotate 30 deg')
    b, m, c = timed(lambda: nd.rotate(img, 30, reshape=False, order=3, mode='mirror'), 3)
    print(f'scipy.ndimage.rotate order=3 mirror (1 thread): best {b:.1f} ms, median {m:.1f} ms, '
          f'cpu {c:.1f} ms')
    cv2.setNumThreads(threads)
    M = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), 30, 1.0)
    for name, flag in (('INTER_CUBIC', cv2.INTER_CUBIC), ('INTER_LINEAR', cv2.INTER_LINEAR)):
        b, m, c = timed(lambda: cv2.warpAffine(img, M, (n, n), flags=flag,
                                               borderMode=cv2.BORDER_REFLECT_101), 15)
        print(f'cv2.warpAffine {name} ({threads} threads): best {b:.1f} ms, median {m:.1f} ms, '
              f'cpu {c:.1f} ms')


if __name__ == '__main__':
    main()
