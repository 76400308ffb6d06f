#!/usr/bin/env python3
"""Regenerates the "current performance" tables of the docs from the latest benchmark reports.

    python3 tools/perf_tables.py            # rewrite the tables in place
    python3 tools/perf_tables.py --check    # exit 1 if a table is out of date (CTest runs this)
    python3 tools/perf_tables.py --plots    # also redraw docs/ops/img/*_peers_*.png and the
                                            # scaling charts (matplotlib)

Reports: docs/bench_reports/<date>-<machine>-<commit>.json (upres_bench --benchmark_format=json,
medians of repetitions) and <same stem>-peers.json (tools/peers/run_peers.py), where <machine>
is h100, h200 (the GPU models the device machine lends) or cpu (the 2-core CI / developer
machine). Each table takes, per machine, the report (by the run's date, newest first) that ran
the most of its benchmarks, so one table never mixes runs and its peers ran with it;
docs/bench_reports keeps the reports some table uses. A table lives in a doc between the lines

    <!-- perf:KEY begin -->
    <!-- perf:KEY end -->

and lists, per case of TABLES[KEY]: our median time on each machine, and each peer's time in
the same run with the speed-up (peer time / our time; above 1: upres faster). A case or peer a
report does not contain shows "-". Standard library only.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_report import fmt_time  # noqa: E402  (the reports' own time format)
REPORTS = os.path.join(ROOT, "docs", "bench_reports")
UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}

# KEY: (machines, docs, rows); a row: (case, upres benchmark name prefix, [(peer, label)]).
GPU = ("h100", "h200")
ROT = "2048^2 f32 rotation by 30 degrees"
TABLES = {
    "warp-gpu": (GPU, ["docs/ops/warp.md", "docs/benchmarks.md"], [
        (f"{ROT}, nearest", "Cuda_WarpRotate/0/2048", []),
        (f"{ROT}, bilinear", "Cuda_WarpRotate/1/2048", [
            ("npp_rotate_linear_2048_f32", "NPP nppiRotate"),
            ("torch_grid_sample_bilinear_rotate_2048", "PyTorch grid_sample"),
            ("cupyx_rotate_order1_mirror_2048", "cupyx rotate order=1")]),
        (f"{ROT}, Keys cubic", "Cuda_WarpRotate/2/2048", [
            ("npp_rotate_cubic_2048_f32", "NPP nppiRotate"),
            ("torch_grid_sample_bicubic_rotate_2048", "PyTorch grid_sample")]),
        (f"{ROT}, exact B-spline (public call, prefilter included)", "Api_CudaWarp/0/1", [
            ("cupyx_rotate_order3_mirror_2048", "cupyx rotate order=3")]),
        (f"{ROT}, B-spline with the FIR15 prefilter (public call)", "Api_CudaWarp/1/1", []),
        ("2048^2 u16 grey rotation, bilinear", "Cuda_WarpSplitTypes/2/0/", [
            ("npp_rotate_linear_2048_u16", "NPP nppiRotate"),
            ("cupyx_rotate_order1_mirror_2048_u16", "cupyx rotate order=1")]),
        ("2048^2 u8 grey rotation, bilinear", "Cuda_WarpSplitTypes/4/0/", [
            ("npp_rotate_linear_2048_u8", "NPP nppiRotate")]),
        ("2048^2 u8 RGB rotation, bilinear", "Cuda_WarpSplitTypes/5/0/", [
            ("npp_rotate_linear_2048_u8_c3", "NPP nppiRotate")]),
        ("2048^2 u8 RGBA rotation, bilinear", "Cuda_WarpSplitTypes/10/0/", [
            ("npp_rotate_linear_2048_u8_c4", "NPP nppiRotate")]),
        ("2048^2 f32 rotation scaled by 0.7 (every output inside), bilinear",
         "Cuda_WarpRotateInside/1/2048", [
             ("npp_warpaffine_linear_inside_2048_f32", "NPP nppiWarpAffineBack")]),
        ("2048^2 f32 flow warp, bilinear (public call)", "Api_CudaWarp/5/1/", [
            ("cupyx_map_coordinates_order1_mirror_flow_2048", "cupyx map_coordinates order=1"),
            ("torch_grid_sample_bilinear_flow_2048", "PyTorch grid_sample")]),
        ("2048^2 f32 flow warp, exact B-spline (public call)", "Api_CudaWarp/4/1/", [
            ("cupyx_map_coordinates_order3_mirror_flow_2048", "cupyx map_coordinates order=3")]),
        ("2048^2 f32 keystone homography, bilinear (public call)", "Api_CudaWarp/6/1/", [
            ("npp_perspective_linear_keystone_2048_f32", "NPP nppiWarpPerspectiveBack"),
            ("torch_grid_sample_bilinear_keystone_2048", "PyTorch grid_sample")]),
        ("2048^2 f32 keystone homography, Keys cubic (public call)", "Api_CudaWarp/7/1/", [
            ("npp_perspective_cubic_keystone_2048_f32", "NPP nppiWarpPerspectiveBack")]),
        ("1080p -> 4K RGB u8, bilinear", "Cuda_WarpVideo/1/3", [
            ("npp_resize_linear_x2_1080p_u8_c3", "NPP nppiResize"),
            ("torch_bilinear_x2_1080p_u8", "PyTorch interpolate")]),
        ("1080p -> 4K RGB u8, Keys cubic", "Cuda_WarpVideo/2/3", [
            ("npp_resize_cubic_x2_1080p_u8_c3", "NPP nppiResize"),
            ("torch_bicubic_x2_1080p_u8", "PyTorch interpolate")]),
        ("1080p -> 4K RGB u8, exact B-spline (public call)", "Api_CudaWarp/2/1/", [
            ("cupyx_zoom_rgb_u8_1080p_to_4k_order3_mirror", "cupyx zoom order=3")]),
    ]),
    "bspline-gpu": (GPU, ["docs/ops/bspline.md", "docs/benchmarks.md"], [
        ("2048^2 f32 exact (IIR) prefilter", "Bspline_Prefilter_Cuda/n:2048/fir:0/variant:4/", [
            ("cupyx_spline_filter_order3_mirror_2048", "cupyx spline_filter")]),
        ("2048^2 f32 FIR15 prefilter", "Bspline_Prefilter_Cuda/n:2048/fir:15/variant:3/", []),
        ("2048^2 f32 FIR15 prefilter, public call", "Cuda_BsplinePrefilter/15/2048", []),
    ]),
    "srcnn-gpu": (GPU, ["docs/ops/srcnn.md", "docs/benchmarks.md"], [
        ("SRCNN 9-1-5 network on a 4K luma plane, fp32", "Cuda_SrcnnNetwork/0/", [
            ("torch_srcnn915_fp32_4k", "PyTorch cuDNN fp32 (no TF32)"),
            ("torch_srcnn915_fp32_tf32allowed_4k", "PyTorch cuDNN, TF32 allowed")]),
        ("SRCNN 9-1-5 network on a 4K luma plane, fp16", "Cuda_SrcnnNetwork/4/", [
            ("torch_srcnn915_fp16_cl_4k", "PyTorch cuDNN fp16 channels_last")]),
        ("1080p RGB u8 -> 4K, whole pipeline on the device, fp16",
         "Cuda_SrcnnPipeline1080p/0", [
             ("torch_srcnn_pipeline_1080p_to_4k", "PyTorch, the same pipeline")]),
        ("the same, pinned host images in and out (one upload, one download)",
         "Cuda_SrcnnPipeline1080p/1", []),
    ]),
    "seabi-gpu": (GPU, ["docs/ops/seabi.md", "docs/benchmarks.md"], [
        ("SIL-SEABI 1080p -> 4K u8 luma, all kernels (centre-aligned lattice)",
         "Cuda_Seabi/silseabi_kernels", [
             ("torch_bicubic_x2_1080p_luma_u8", "PyTorch bicubic x2 of the luma plane"),
             ("torch_bicubic_x2_1080p_f32", "PyTorch bicubic x2, RGB f32")]),
        ("SIL-SEABI 1080p -> 4K u8 luma, all kernels (co-sited lattice)",
         "Cuda_Seabi/silseabi_cosited_kernels", []),
        ("L-SEAI 1080p -> 4K u8 luma (centre-aligned)", "Cuda_Seabi/lseai_kernels", []),
        ("L-SEAI 1080p -> 4K u8 luma (co-sited)", "Cuda_Seabi/lseai_cosited_kernels", []),
        ("upscale() SIL-SEABI 1080p -> 4K RGB u8, device-resident, co-sited",
         "Cuda_UpscaleResident1080p/0/",
         []),
        ("upscale() L-SEABI 1080p -> 4K RGB u8, device-resident, co-sited",
         "Cuda_UpscaleResident1080p/1/",
         []),
        ("upscale() tap4 1080p -> 4K RGB u8, device-resident, co-sited",
         "Cuda_UpscaleResident1080p/3/",
         []),
    ]),
    "video-gpu": (GPU, ["docs/ops/video.md", "docs/benchmarks.md"], [
        ("upscale_yuv 1080p -> 4K yuv420p, SRCNN fastest, device planes",
         "Cuda_UpscaleYuv1080p/0/0/", []),
        ("upscale_yuv 1080p -> 4K yuv420p, SIL-SEABI, device planes",
         "Cuda_UpscaleYuv1080p/1/0/", []),
        ("upscale_yuv 1080p -> 4K yuv420p, bicubic, device planes",
         "Cuda_UpscaleYuv1080p/2/0/", []),
        ("SRCNN fastest, page-locked host planes (the video command with --backend cuda)",
         "Cuda_UpscaleYuv1080p/0/2/", []),
        ("SIL-SEABI, page-locked host planes", "Cuda_UpscaleYuv1080p/1/2/", []),
        ("bicubic, page-locked host planes", "Cuda_UpscaleYuv1080p/2/2/", []),
        ("SRCNN fastest, pageable host planes", "Cuda_UpscaleYuv1080p/0/1/", []),
        ("nlm_fuse_yuv, 5 frames 1080p -> 4K, the window on the device (the video command)",
         "Cuda_NlmYuvWindow1080p/0/", []),
        ("nlm_fuse_yuv, 5 frames in pageable host memory, uploaded per call",
         "Cuda_NlmYuvWindow1080p/1/", []),
    ]),
    "devices": (GPU, ["docs/scale.md", "docs/benchmarks.md"], [
        ("SRCNN batch, 32 x 960x540 RGB -> x2 (fastest), device-resident: 1 GPU",
         "Cuda_SrcnnBatchDevices/1/", []),
        ("the same batch spread over 2 GPUs of the host (a thread per GPU)",
         "Cuda_SrcnnBatchDevices/2/", []),
        ("B-spline zoom x2 of a 16000^2 u16 image to a gigapixel, host memory to host memory "
         "(warp_tiled, bands on the device): 1 GPU", "Cuda_ZoomTiledDevices/1/", []),
        ("the same zoom, bands spread over 2 GPUs of the host", "Cuda_ZoomTiledDevices/2/", []),
        ("the same zoom, the image and the output in page-locked host memory "
         "(alloc_host_frame_memory): 1 GPU", "Cuda_ZoomTiledDevicesPinned/1/", []),
        ("the same, page-locked, bands spread over 2 GPUs", "Cuda_ZoomTiledDevicesPinned/2/", []),
        ("exact B-spline rotation by 30 degrees of a 16384^2 RGB u8 image, page-locked host "
         "memory to host memory (warp_tiled, boxes on the device): 1 GPU",
         "Cuda_RotateTiledDevices/1/", []),
        ("the same rotation, bands spread over 2 GPUs", "Cuda_RotateTiledDevices/2/", []),
        ("the same rotation on the cpu backend, every core of the host", "Cpu_RotateTiled/", []),
    ]),
    "warp-cpu": (("cpu",), ["docs/ops/warp.md", "docs/benchmarks.md"], [
        (f"{ROT}, exact B-spline, 2 threads", "Warp_CpuRotate/size:2048/threads:0/interp:3/fir:0/",
         [("scipy_rotate_order3_mirror_cpu_1thread", "scipy rotate order=3, 1 thread")]),
        (f"{ROT}, exact B-spline, 1 thread", "Warp_CpuRotate/size:2048/threads:1/interp:3/fir:0/",
         [("scipy_rotate_order3_mirror_cpu_1thread", "scipy rotate order=3, 1 thread")]),
        (f"{ROT}, Keys cubic", "Warp_CpuRotate/size:2048/threads:0/interp:2/fir:0/", [
            ("cv2_warpaffine_cubic_cpu_allthreads", "OpenCV warpAffine INTER_CUBIC")]),
        (f"{ROT}, bilinear", "Warp_CpuRotate/size:2048/threads:0/interp:1/fir:0/", [
            ("cv2_warpaffine_linear_cpu_allthreads", "OpenCV warpAffine INTER_LINEAR")]),
        (f"{ROT}, nearest", "Warp_CpuRotate/size:2048/threads:0/interp:0/fir:0/", [
            ("cv2_warpaffine_nearest_cpu_allthreads", "OpenCV warpAffine INTER_NEAREST")]),
        ("2048^2 f32 flow warp, bilinear", "Warp_CpuFlow/threads:0/interp:1/", [
            ("cv2_remap_linear_flow_cpu_allthreads", "OpenCV remap INTER_LINEAR")]),
        ("2048^2 f32 flow warp, Keys cubic", "Warp_CpuFlow/threads:0/interp:2/", [
            ("cv2_remap_cubic_flow_cpu_allthreads", "OpenCV remap INTER_CUBIC")]),
        ("2048^2 f32 flow warp, exact B-spline", "Warp_CpuFlow/threads:0/interp:3/", []),
        ("2048^2 f32 keystone, bilinear", "Warp_CpuPerspective/threads:0/interp:1/", [
            ("cv2_warpperspective_linear_cpu_allthreads", "OpenCV warpPerspective")]),
        ("2048^2 f32 keystone, Keys cubic", "Warp_CpuPerspective/threads:0/interp:2/", [
            ("cv2_warpperspective_cubic_cpu_allthreads", "OpenCV warpPerspective")]),
        ("2048^2 grey u8 rotation, bilinear", "Warp_CpuRotateGreyU8/threads:0/interp:1/", [
            ("cv2_warpaffine_linear_grey_u8_cpu_allthreads", "OpenCV warpAffine")]),
        ("2048^2 grey u8 rotation, Keys cubic", "Warp_CpuRotateGreyU8/threads:0/interp:2/", [
            ("cv2_warpaffine_cubic_grey_u8_cpu_allthreads", "OpenCV warpAffine")]),
        ("1080p RGB u8 rotation, bilinear", "Warp_CpuRotateRgbU8/threads:0/interp:1/", [
            ("cv2_warpaffine_linear_rgb_u8_1080p_cpu_allthreads", "OpenCV warpAffine")]),
        ("1080p RGB u8 rotation, Keys cubic", "Warp_CpuRotateRgbU8/threads:0/interp:2/", [
            ("cv2_warpaffine_cubic_rgb_u8_1080p_cpu_allthreads", "OpenCV warpAffine")]),
        ("1080p RGB u8 -> 4K, bilinear", "Warp_CpuResizeRgbU8/threads:0/interp:1/", [
            ("cv2_resize_linear_rgb_u8_1080p_to_4k_cpu_allthreads", "OpenCV resize")]),
        ("1080p RGB u8 -> 4K, Keys cubic", "Warp_CpuResizeRgbU8/threads:0/interp:2/", [
            ("cv2_resize_cubic_rgb_u8_1080p_to_4k_cpu_allthreads", "OpenCV resize")]),
        ("1080p RGB u8 -> 4K, exact B-spline", "Warp_CpuResizeRgbU8/threads:0/interp:3/", []),
    ]),
    "bspline-cpu": (("cpu",), ["docs/ops/bspline.md", "docs/benchmarks.md"], [
        ("2048^2 f32 exact prefilter, 2 threads", "Bspline_Prefilter_Cpu/n:2048/fir:0/c:1/threads:2/",
         []),
        ("2048^2 f32 FIR15 prefilter, 2 threads",
         "Bspline_Prefilter_Cpu/n:2048/fir:15/c:1/threads:2/", []),
        ("1024^2 RGB f32 exact prefilter, 2 threads",
         "Bspline_Prefilter_Cpu/n:1024/fir:0/c:3/threads:2/", []),
    ]),
    "stereo-gpu": (GPU, ["docs/ops/stereo.md", "docs/benchmarks.md"], [
        ("the paper's workload: 1120 x 1120 u8 pair, 200 disparities, Gauss 13 x 13, both maps, "
         "LR check, sub-pixel; stream variant (default)", "Cuda_Stereo/stream", [
             ("cv2_stereobm_13x13_d208_1120_allthreads",
              "OpenCV StereoBM, 208 disparities, 13 x 13, the host's cores"),
             ("torch_stereo_gauss13_d200_1120", "PyTorch, the same matcher")]),
        ("the same, the paper's kernels, one cube (cube1)", "Cuda_Stereo/cube1", []),
        ("the same, the paper's kernels, dual cube (cube2)", "Cuda_Stereo/cube2", []),
        ("semi-global matcher, 1282 x 1110 u8 pair, 256 disparities, census, 4 paths, check 1",
         "Cuda_StereoSgm/paths:4/", []),
        ("the same, 8 paths", "Cuda_StereoSgm/paths:8/", []),
    ]),
    "stereo-cpu": (("cpu",), ["docs/ops/stereo.md", "docs/benchmarks.md"], [
        ("1282 x 1110 u8 pair, 64 disparities, Gauss 7 x 7, all cores", "Stereo_Cpu/agg:0/threads:0/",
         [("cv2_stereobm_7x7_d64_cpu_allthreads", "OpenCV StereoBM 7 x 7")]),
        ("the same, Gauss 13 x 13", "Stereo_Cpu/agg:1/threads:0/", []),
        ("the same, box 7 x 7", "Stereo_Cpu/agg:2/threads:0/", []),
        ("the same, Gauss 7 x 7, 1 thread", "Stereo_Cpu/agg:0/threads:1/", []),
        ("the same pair, semi-global matcher, census, 4 paths, check 1, all cores",
         "Stereo_CpuSgm/paths:4/", [("cv2_stereosgbm3way_d64_cpu_allthreads",
                                     "OpenCV StereoSGBM 3-way")]),
        ("the same, 8 paths", "Stereo_CpuSgm/paths:8/", []),
    ]),
    "nlmsr-block": (GPU, ["docs/ops/nlmsr.md"], [
        ("block 8 x 8 x 4 (the paper's, the default)", "Cuda_NlmsrSharedBlock/bx:8/by:8/bz:4/", []),
        ("block 8 x 8 x 1", "Cuda_NlmsrSharedBlock/bx:8/by:8/bz:1/", []),
        ("block 8 x 8 x 2", "Cuda_NlmsrSharedBlock/bx:8/by:8/bz:2/", []),
        ("block 16 x 8 x 1", "Cuda_NlmsrSharedBlock/bx:16/by:8/bz:1/", []),
        ("block 16 x 8 x 2", "Cuda_NlmsrSharedBlock/bx:16/by:8/bz:2/", []),
        ("block 16 x 8 x 4", "Cuda_NlmsrSharedBlock/bx:16/by:8/bz:4/", []),
        ("block 16 x 16 x 1", "Cuda_NlmsrSharedBlock/bx:16/by:16/bz:1/", []),
        ("block 16 x 16 x 2", "Cuda_NlmsrSharedBlock/bx:16/by:16/bz:2/", []),
        ("block 16 x 16 x 4", "Cuda_NlmsrSharedBlock/bx:16/by:16/bz:4/", []),
        ("block 32 x 4 x 1", "Cuda_NlmsrSharedBlock/bx:32/by:4/bz:1/", []),
        ("block 32 x 4 x 4", "Cuda_NlmsrSharedBlock/bx:32/by:4/bz:4/", []),
        ("block 32 x 8 x 1", "Cuda_NlmsrSharedBlock/bx:32/by:8/bz:1/", []),
        ("block 32 x 8 x 2", "Cuda_NlmsrSharedBlock/bx:32/by:8/bz:2/", []),
        ("block 32 x 8 x 4", "Cuda_NlmsrSharedBlock/bx:32/by:8/bz:4/", []),
    ]),
    "nlmsr-gpu": (GPU, ["docs/ops/nlmsr.md", "docs/benchmarks.md"], [
        ("the paper's workload: fusion of 4 frames on a 256 x 256 grid, patch 13, search 5; the "
         "paper's simple kernel", "Cuda_NlmsrFuse/simple/frames:4/w:256/", []),
        ("the same, the paper's shared-memory kernel (8 x 8 x 4)",
         "Cuda_NlmsrFuse/shared/frames:4/w:256/", []),
        ("the same, the fast variant (default)", "Cuda_NlmsrFuse/fast/frames:4/w:256/", []),
        ("fusion of 5 frames on 1920 x 1080, search 5, fast",
         "Cuda_NlmsrFuse/fast/frames:5/w:1920/h:1080/search:5/", []),
        ("the same, search 11", "Cuda_NlmsrFuse/fast/frames:5/w:1920/h:1080/search:11/", []),
        ("the same, search 21", "Cuda_NlmsrFuse/fast/frames:5/w:1920/h:1080/search:21/", []),
        ("2 frames, search 5", "Cuda_NlmsrFuse/fast/frames:2/w:1920/h:1080/search:5/", []),
        ("8 frames, search 5", "Cuda_NlmsrFuse/fast/frames:8/w:1920/h:1080/search:5/", []),
        ("16 frames, search 5", "Cuda_NlmsrFuse/fast/frames:16/w:1920/h:1080/search:5/", []),
        ("the whole call, device frames and output: 5 gray u8 frames 960 x 540 -> 1920 x 1080, "
         "patch 13, search 5, back-projection", "Cuda_Nlmsr/frames:5/search:5/", []),
        ("the same, search 3 (the default)", "Cuda_Nlmsr/frames:5/search:3/", []),
        ("the same, search 3, post reconstruct (SRCNN fp32 start, camera model, 10 rounds)",
         "Cuda_NlmsrReconstruct/frames:5/search:3/rounds:10/fastest:0/", []),
        ("the same, SRCNN at its fastest precision (--precision fastest)",
         "Cuda_NlmsrReconstruct/frames:5/search:3/rounds:10/fastest:1/", []),
        ("the same, fp32, 1 round", "Cuda_NlmsrReconstruct/frames:5/search:3/rounds:1/fastest:0/",
         []),
    ]),
    "nlmsr-cpu": (("cpu",), ["docs/ops/nlmsr.md", "docs/benchmarks.md"], [
        ("the paper's workload (fusion, 4 x 256 x 256, patch 13, search 5), 1 thread",
         "Nlmsr_CpuFuse/threads:1/", []),
        ("the same, all cores", "Nlmsr_CpuFuse/threads:0/", []),
        ("the whole call: 5 gray u8 frames 480 x 270 -> 960 x 540, all cores", "Nlmsr_Cpu/frames:5",
         [("cv2_fastnlmeansmulti_5f_t13_s5_cpu_allthreads",
           "OpenCV fastNlMeansDenoisingMulti, 5 x 960 x 540, template 13, search 5")]),
    ]),
}
MACHINE_NAMES = {"h100": "H100", "h200": "H200", "cpu": "2-core CPU"}
# Docs holding the Python module's table (python_table(), from tools/bench_python.py reports).
PYTHON_DOCS = ["docs/python.md", "docs/benchmarks.md"]
VIDEO_DOCS = ["docs/ops/video.md", "docs/benchmarks.md"]


def reports():
    """{machine: [(bench_path, peers_path or None), ...]}, newest run first (by the run's date
    in the benchmark JSON)."""
    found = {}
    for path in glob.glob(os.path.join(REPORTS, "*.json")):
        name = os.path.basename(path)
        m = re.match(r"(\d{4}-\d{2}-\d{2})-(h100|h200|cpu)-([0-9a-f]+)\.json$", name)
        if not m:
            continue
        with open(path) as f:
            date = json.load(f).get("context", {}).get("date", m.group(1))
        peers = path[:-5] + "-peers.json"
        found.setdefault(m.group(2), []).append((date, path, peers if os.path.exists(peers) else None))
    return {k: [(b, p) for _, b, p in sorted(v, reverse=True)] for k, v in found.items()}


def pick(key, runs):
    """{machine: (bench_path, times, peers)}: for each machine of table `key`, the report that ran
    the most of the table's benchmarks, the newest of those (a table never mixes runs: its peers
    ran with it)."""
    machines, _, rows = TABLES[key]
    out = {}
    for m in machines:
        best = 0
        for rep in runs.get(m, []):  # newest first: a later report must run more to win
            n = sum(find(rep[1], bench) is not None for _, bench, _ in rows)
            if n > best:
                best, out[m] = n, rep
    return out


def run_key(name):
    """The benchmark's run name without the aggregate and timing suffixes."""
    for suffix in ("_median", "_mean", "_stddev", "_cv"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for suffix in ("/manual_time", "/real_time", "/process_time"):
        name = name.replace(suffix, "")
    name = re.sub(r"/min_time:[0-9.]+", "", name)
    name = re.sub(r"/iterations:\d+", "", name)
    return name


def load_times(path):
    """{run key: median time in us} of an upres_bench JSON."""
    with open(path) as f:
        doc = json.load(f)
    times, plain = {}, {}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        us = b["real_time"] * UNIT_TO_US[b.get("time_unit", "ns")]
        key = run_key(b["name"])
        if b.get("aggregate_name") == "median":
            times[key] = us
        elif b.get("run_type", "iteration") == "iteration":
            plain.setdefault(key, []).append(us)
    for key, v in plain.items():  # reports without repetitions: the median of the runs
        times.setdefault(key, sorted(v)[len(v) // 2])
    return times


def load_peers(path):
    if not path:
        return {}
    with open(path) as f:
        doc = json.load(f)
    return {r["name"]: r["median_ms"] * 1e3 for r in doc.get("results", [])
            if r.get("status") == "ok"}


def find(times, prefix):
    """Our time for a benchmark name prefix (exact run key, or a key under it)."""
    p = prefix.rstrip("/")
    if p in times:
        return times[p]
    hits = [v for k, v in times.items() if k.startswith(p + "/")]
    return hits[0] if len(hits) == 1 else None


def fmt_us(us):
    return fmt_time(None if us is None else us / 1e3)


def table(key, data):
    machines, _, rows = TABLES[key]
    have = [m for m in machines if m in data]
    if not have:
        return ["(No report for " + ", ".join(MACHINE_NAMES[m] for m in machines) +
                " in docs/bench_reports yet.)"]
    srcs = ", ".join(os.path.basename(data[m][0]) for m in have)
    out = [f"Generated by `tools/perf_tables.py` from `docs/bench_reports/` ({srcs}): medians; "
           "a peer in the same run as upres on the same machine; speed-up = peer time / upres "
           "time (above 1: upres faster).", ""]
    head = "| case | " + " | ".join(f"upres, {MACHINE_NAMES[m]}" for m in have) + " | peers |"
    out += [head, "| --- | " + " | ".join("---:" for _ in have) + " | --- |"]
    body = len(out)
    for case, bench, peers in rows:
        ours = [find(data[m][1], bench) for m in have]
        if all(t is None for t in ours):
            continue
        cells = []
        for peer, label in peers:
            vals = []
            for m, t in zip(have, ours):
                pt = data[m][2].get(peer)
                if pt is None:
                    vals.append("-")
                elif t is None:
                    vals.append(fmt_us(pt))
                else:
                    vals.append(f"{fmt_us(pt)} ({pt / t:.2f}x)")
            if any(v != "-" for v in vals):
                cells.append(f"{label}: " + " / ".join(vals))
        out.append(f"| {case} | " + " | ".join(fmt_us(t) for t in ours) + " | " +
                   ("; ".join(cells) if cells else "") + " |")
    if len(out) == body:
        return ["(Not measured in the latest reports: " + ", ".join(srcs.split(", ")) + ".)"]
    if len(have) > 1:
        out += ["", "Peer cells list the " + " / ".join(MACHINE_NAMES[m] for m in have) +
                " values in that order."]
    return out


# KEY -> (image, machine): the bar charts drawn by --plots (upres against each peer, log scale).
PLOTS = {
    "warp-gpu": ("docs/ops/img/warp_peers_gpu.png", "h200"),
    "warp-cpu": ("docs/ops/img/warp_peers_cpu.png", "cpu"),
}


def plot(key, data, path, machine):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, _, rows = TABLES[key]
    if machine not in data:
        return False
    _, times, peers = data[machine]
    cases = []
    for case, bench, prs in rows:
        ours = find(times, bench)
        best = [(peers[p], label) for p, label in prs if p in peers]
        if ours is None or not best:
            continue
        pt, label = min(best)  # the fastest peer
        cases.append((case, ours, pt, label))
    if not cases:
        return False
    cases.reverse()  # first case on top
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(cases) + 1.4))
    h = 0.38
    for i, (case, ours, pt, label) in enumerate(cases):
        ax.barh(i + h / 2, ours, h, color="tab:blue", label="upres" if i == 0 else None)
        ax.barh(i - h / 2, pt, h, color="lightgray", label="fastest peer" if i == 0 else None)
        ax.text(pt, i - h / 2, f" {label}", va="center", fontsize=7)
        ax.text(ours, i + h / 2, f" {pt / ours:.2f}x", va="center", fontsize=7, color="tab:blue")
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([c[0] for c in cases], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("median time (us, log scale); the blue label: peer time / upres time")
    src = os.path.basename(data[machine][0])
    ax.set_title(f"upres against the fastest peer, {MACHINE_NAMES[machine]} ({src})", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, path), dpi=110)
    plt.close(fig)
    return True


# Line charts of how one benchmark family grows with a parameter (drawn by --plots).
SCALING_PLOTS = {
    "docs/ops/img/nlmsr_scaling_gpu.png": ("h200", "nlmsr-gpu", [
        ("frames (1920 x 1080, search 5)", [2, 5, 8, 16],
         "Cuda_NlmsrFuse/fast/frames:{}/w:1920/h:1080/search:5/"),
        ("search side (5 frames of 1920 x 1080; offsets = side^2)", [5, 11, 21],
         "Cuda_NlmsrFuse/fast/frames:5/w:1920/h:1080/search:{}/"),
    ]),
}


def plot_scaling(path, machine, key, panels, runs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401  (matplotlib.ticker below)

    data = pick(key, runs)
    if machine not in data:
        return False
    bench, times, _ = data[machine]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.4))
    for ax, (xlabel, xs, pattern) in zip(axes, panels):
        pts = [(x, find(times, pattern.format(x))) for x in xs]
        pts = [(x, t / 1000.0) for x, t in pts if t is not None]
        if not pts:
            return False
        ax.plot([x for x, _ in pts], [t for _, t in pts], "o-", color="tab:blue")
        for x, t in pts:
            ax.annotate(f"{t:.2f} ms", (x, t), textcoords="offset points", xytext=(4, 4),
                        fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("fusion time (ms, log)", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"NLM fusion, fast variant, patch 13: {MACHINE_NAMES[machine]} "
                 f"({os.path.basename(bench)})", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, path), dpi=110)
    plt.close(fig)
    return True


def python_reports():
    """{machine: path} of the newest tools/bench_python.py report per machine
    (<date>-<machine>-<commit>-python.json)."""
    found = {}
    for path in glob.glob(os.path.join(REPORTS, "*-python.json")):
        m = re.match(r"(\d{4}-\d{2}-\d{2})-(h100|h200|cpu)-([0-9a-f]+)-python\.json$",
                     os.path.basename(path))
        if m:
            found.setdefault(m.group(2), []).append((os.path.getmtime(path), m.group(1), path))
    return {k: sorted(v)[-1][2] for k, v in found.items()}


def python_table():
    """The Python module's table: per-call overhead against the C++ call, NumPy against
    scipy.ndimage, CuPy against the C++ call and cupyx (tools/bench_python.py)."""
    reps = python_reports()
    if not reps:
        return ["(No tools/bench_python.py report in docs/bench_reports yet.)"]
    srcs = ", ".join(os.path.basename(reps[m]) for m in sorted(reps))
    out = [f"Generated by `tools/perf_tables.py` from `docs/bench_reports/` ({srcs}): medians "
           "of repeated batches; every peer in the same run on the same machine.", "",
           "| machine | case | upres from Python | reference | ratio |", "| --- | --- | ---: | --- | ---: |"]
    for m in sorted(reps):
        with open(reps[m]) as f:
            rows = json.load(f)["rows"]
        name = MACHINE_NAMES[m]
        for r in rows:
            case = r["case"]
            cpp = r.get("cpp")
            cpp_txt = "C++ call: " + (fmt_us(cpp * 1e6) if cpp else "-")
            if "overhead_us" in r:
                extra = f"+{r['overhead_us']:.1f} us" if cpp else "-"
                out.append(f"| {name} | {case} | {fmt_us(r['upres'] * 1e6)} | {cpp_txt} | {extra} |")
            elif "speedup_1thread" in r:
                scipy_txt = f"scipy.ndimage (1 thread): {fmt_us(r['scipy'] * 1e6)}"
                out.append(f"| {name} | {case}, 1 thread | {fmt_us(r['upres_1thread'] * 1e6)} | "
                           f"{scipy_txt} | {r['speedup_1thread']:.1f}x faster |")
                out.append(f"| {name} | {case}, all cores | {fmt_us(r['upres_all'] * 1e6)} | "
                           f"{scipy_txt} | {r['speedup_all']:.1f}x faster |")
            elif "vs_cupyx" in r:
                ratio = f"{r['vs_cpp']:.3f}x the C++ time" if cpp else "-"
                out.append(f"| {name} | {case} | {fmt_us(r['upres_new'] * 1e6)} | {cpp_txt} | "
                           f"{ratio} |")
                out.append(f"| {name} | {case} | {fmt_us(r['upres_new'] * 1e6)} | "
                           f"cupyx.scipy.ndimage.rotate: {fmt_us(r['cupyx'] * 1e6)} | "
                           f"{r['vs_cupyx']:.1f}x faster |")
    return out


def video_table():
    """The video command end to end (tools/video_gpu_bench.sh: one --json line per run, in the
    newest <date>-<machine>-<commit>-video.jsonl)."""
    found = sorted(glob.glob(os.path.join(REPORTS, "*-video.jsonl")), key=os.path.basename)
    if not found:
        return ["(No tools/video_gpu_bench.sh report in docs/bench_reports yet.)"]
    path = found[-1]
    m = re.match(r"\d{4}-\d{2}-\d{2}-(h100|h200|cpu)-", os.path.basename(path))
    name = MACHINE_NAMES[m.group(1)] if m else "?"
    out = [f"Generated by `tools/perf_tables.py` from `docs/bench_reports/` "
           f"({os.path.basename(path)}): one run each on {name}, `upres upscale IN OUT --backend "
           "cuda --preset ultrafast --json` (libx264 on the host's cores; the last row re-encodes "
           "the 4K output: the encoder with a 4K decoder and a copy). A stage's fps: frames over "
           "the time its thread spent on them, in the pipeline.", "",
           "| input -> output, method | frames | end to end | decode | upscale | encode | "
           "end to end / slowest stage |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            st = r["stages"]
            slow = min(st[k]["fps"] for k in ("decode", "upscale", "encode"))
            (w, h), (ow, oh) = r["input_size"], r["output_size"]
            dec = ", NVDEC" if r.get("hwdec") == "cuda" else ""
            out.append(f"| {w} x {h} -> {ow} x {oh}, {r['method']} x{r['scale']:g}{dec} | "
                       f"{r['frames']} | {r['fps']:.1f} fps | {st['decode']['fps']:.0f} | "
                       f"{st['upscale']['fps']:.0f} | {st['encode']['fps']:.1f} | "
                       f"{100 * r['fps'] / slow:.1f} % |")
    return out


def table_regex(kind, peers=False):
    """The regex of the benchmark cases (or, with peers, the peer names) that the tables of a
    GPU machine (kind 'gpu') or of the CPU machine ('cpu') take: a run with it regenerates them
    all (tools/gpu_check.sh BENCH_FILTER=tables, PEERS_ARGS=tables)."""
    names = set()
    for machines, _, rows in TABLES.values():
        if (kind == "cpu") != ("cpu" in machines):
            continue
        for _, case, peer_list in rows:
            if peers:
                names.update(p for p, _ in peer_list)
            else:
                names.add(case)
    def esc(n):  # the names hold letters, digits and _ / : - . only
        return n.replace(".", "\\.")
    return "^(" + "|".join(esc(n) for n in sorted(names)) + ")"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if a table is out of date")
    ap.add_argument("--plots", action="store_true", help="redraw the bar charts (matplotlib)")
    ap.add_argument("--filter", choices=["gpu", "cpu"],
                    help="print the upres_bench --benchmark_filter regex of every case the tables "
                         "of that kind of machine use, and exit")
    ap.add_argument("--peers", choices=["gpu", "cpu"],
                    help="print the run_peers.py --only regex of every peer those tables use, "
                         "and exit")
    args = ap.parse_args(argv)
    if args.filter or args.peers:
        print(table_regex(args.filter or args.peers, peers=bool(args.peers)))
        return 0
    runs = {m: [(b, load_times(b), load_peers(p)) for b, p in lst]
            for m, lst in reports().items()}
    if args.plots:
        for key, (path, machine) in PLOTS.items():
            drew = plot(key, pick(key, runs), path, machine)
            print(f"perf_tables: {'drew' if drew else 'no data for'} {path}")
        for path, (machine, key, panels) in SCALING_PLOTS.items():
            drew = plot_scaling(path, machine, key, panels, runs)
            print(f"perf_tables: {'drew' if drew else 'no data for'} {path}")
    stale = []
    docs = sorted({d for _, ds, _ in TABLES.values() for d in ds} | set(PYTHON_DOCS) |
                  set(VIDEO_DOCS))
    for doc in docs:
        path = os.path.join(ROOT, doc)
        with open(path) as f:
            text = f.read()
        new = text
        for key, (_, ds, _) in TABLES.items():
            if doc not in ds:
                continue
            begin, end = f"<!-- perf:{key} begin -->", f"<!-- perf:{key} end -->"
            i, j = new.find(begin), new.find(end)
            if i < 0 or j < i:
                sys.exit(f"perf_tables: {doc} has no '{begin}' ... '{end}' block")
            new = (new[: i + len(begin)] + "\n" + "\n".join(table(key, pick(key, runs))) + "\n" +
                   new[j:])
        for docs_of, key, lines in ((PYTHON_DOCS, "python", python_table),
                                    (VIDEO_DOCS, "video-e2e", video_table)):
            if doc not in docs_of:
                continue
            begin, end = f"<!-- perf:{key} begin -->", f"<!-- perf:{key} end -->"
            i, j = new.find(begin), new.find(end)
            if i < 0 or j < i:
                sys.exit(f"perf_tables: {doc} has no '{begin}' ... '{end}' block")
            new = new[: i + len(begin)] + "\n" + "\n".join(lines()) + "\n" + new[j:]
        if new != text:
            stale.append(doc)
            if not args.check:
                with open(path, "w") as f:
                    f.write(new)
    if args.check and stale:
        print("perf_tables: out of date (run python3 tools/perf_tables.py): " + ", ".join(stale))
        return 1
    print(("perf_tables: up to date: " if args.check else "perf_tables: wrote ") +
          ", ".join(docs if args.check else stale or ["nothing (all up to date)"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
