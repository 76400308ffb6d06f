#!/usr/bin/env python3
"""PyTorch CPU peer of bench/srcnn_cpu_bench.cpp (SrcnnCpu/*): the SRCNN network on one Y plane.

Same semantics as upres::srcnn_forward (include/upres/srcnn.hpp): three F.conv2d layers
(k1, k2, k3 with n1, n2 channels, default 9-1-5 64/32), each preceded by
F.pad(..., mode='replicate') so the output has the input's size, ReLU after the first two.
float32, batch 1, input 1x1xHxW of fresh non-zero random values in [0.05, 1.05), random weights
N(0, 0.05) (the speed does not depend on the values). Sizes 1920x1080 and 3840x2160, thread
counts 1 and 2 (torch.set_num_threads), and, when PyTorch has oneDNN (mkldnn), once with
torch.backends.mkldnn enabled and once disabled (the native "thnn"/slow_conv2d path).

Each case: one warm-up run, then the median of --reps timed runs (time.perf_counter, whole
network, torch.no_grad()), and the process CPU time of the same runs (time.process_time, all
threads: on a shared, loaded machine compare it with the CPU column of upres_bench). Prints a
markdown table (wall ms, CPU ms, Mpixel/s, GFLOP/s = 2 * MACs / wall s); --json writes the
numbers too. Debian's python3-torch 1.13 uses the system oneDNN (libdnnl.so.2) when mkldnn is
enabled, and im2col + the netlib reference BLAS (BLAS_INFO=generic) when it is disabled.

Run (Debian's python3-torch; the machine's other load matters, note `uptime`). With mkldnn
disabled one 4K run takes over a minute of CPU, so the 4K case is usually run with mkldnn only:
    /usr/bin/python3 tools/peers/srcnn_cpu_peer.py --sizes 1920x1080 --reps 3
    /usr/bin/python3 tools/peers/srcnn_cpu_peer.py --sizes 3840x2160 --mkldnn on --reps 2
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--kernels", default="9,1,5")
    ap.add_argument("--channels", default="64,32")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mkldnn", default="on,off", help="on, off or on,off")
    ap.add_argument("--json", default="")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    k = [int(v) for v in args.kernels.split(",")]
    n1, n2 = [int(v) for v in args.channels.split(",")]
    chans = [(1, n1), (n1, n2), (n2, 1)]
    g = torch.Generator().manual_seed(1)
    weights = [(torch.randn(o, i, kk, kk, generator=g) * 0.05, torch.randn(o, generator=g) * 0.05)
               for (i, o), kk in zip(chans, k)]
    macs = k[0] * k[0] * n1 + k[1] * k[1] * n1 * n2 + k[2] * k[2] * n2

    def net(x):
        for li, (w, b) in enumerate(weights):
            r = w.shape[-1] // 2
            x = F.conv2d(F.pad(x, (r, r, r, r), mode="replicate"), w, b)
            if li < 2:
                x = F.relu(x)
        return x

    modes = [m for m in args.mkldnn.split(",") if m]
    if not torch.backends.mkldnn.is_available():
        modes = ["n/a"]
    rows = []
    print(f"torch {torch.__version__}, mkldnn available: {torch.backends.mkldnn.is_available()}, "
          f"CPU capability: {torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, 'cpu') else '?'}, "
          f"load: {os.getloadavg()}", flush=True)
    print(f"model {k[0]}-{k[1]}-{k[2]} {n1}/{n2}: {macs} MAC/pixel", flush=True)
    print("| size | threads | mkldnn | wall ms (median) | CPU ms (median) | Mpixel/s | GFLOP/s |")
    print("|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        w, h = [int(v) for v in size.split("x")]
        x = torch.rand(1, 1, h, w, generator=g) + 0.05
        for th in [int(v) for v in args.threads.split(",")]:
            torch.set_num_threads(th)
            for mode in modes:
                if mode != "n/a":
                    torch.backends.mkldnn.enabled = mode == "on"
                with torch.no_grad():
                    net(x)  # warm-up
                    times, cpu = [], []
                    for _ in range(args.reps):
                        t0, c0 = time.perf_counter(), time.process_time()
                        net(x)
                        times.append(time.perf_counter() - t0)
                        cpu.append(time.process_time() - c0)
                t = statistics.median(times)
                row = dict(size=size, threads=th, mkldnn=mode, seconds=t, times=times,
                           cpu_seconds=statistics.median(cpu), cpu_times=cpu,
                           mpix_s=w * h / t / 1e6, gflops=2.0 * macs * w * h / t / 1e9,
                           loadavg=os.getloadavg())
                rows.append(row)
                print(f"| {size} | {th} | {mode} | {t * 1e3:.0f} | {row['cpu_seconds'] * 1e3:.0f} | "
                      f"{row['mpix_s']:.2f} | {row['gflops']:.1f} |", flush=True)
    torch.backends.mkldnn.enabled = True
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(torch=torch.__version__, kernels=k, channels=[n1, n2], rows=rows), f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
