"""CPU peers of the stereo matcher (bench/stereo_bench.cpp): OpenCV on all of the host's cores,
the same work as the upres benchmark each names in `ours` (its threads:0 form): a 1282 x 1110
gray uint8 pair of random texture (Aloe's size), the right image the left shifted by 20 pixels,
64 disparities.

* cv2.StereoBM with a 7 x 7 block (the issue's comparison for the paper's 7 x 7 matcher: SAD
  over x-Sobel-prefiltered images, WTA, uniqueness, sub-pixel; OpenCV's defaults otherwise).
* cv2.StereoSGBM in its 3-way mode (the issue's comparison for the semi-global matcher), with
  the parameters of OpenCV's stereo_match.py sample (block 3, P1 8 bs^2, P2 32 bs^2,
  uniqueness 10, speckle window 100, disp12MaxDiff 1).

Same work (the window matcher over the same range), not the same numbers.
"""
from __future__ import annotations

from peerlib import Work, peer

W, H, SHIFT, D = 1282, 1110, 20, 64


def _pair(ctx):
    base = ctx.numpy_random((H, W + SHIFT), "uint8")
    return base[:, :W].copy(), base[:, SHIFT:SHIFT + W].copy()


@peer("cv2_stereobm_7x7_d64_cpu_allthreads", kind="cpu",
      ours="Stereo_Cpu/agg:0/threads:0/",
      note="cv2.StereoBM numDisparities 64, blockSize 7, 1282 x 1110 u8 pair, all cores")
def stereobm_7(ctx):
    cv2 = ctx.need("cv2")
    cv2.setNumThreads(ctx.threads)
    left, right = _pair(ctx)
    bm = cv2.StereoBM_create(numDisparities=D, blockSize=7)

    def run(_):
        bm.compute(left, right)

    return Work(run, pixels=W * H, bytes=2 * W * H + 2 * W * H, sets=1,
                info={"cv2": cv2.__version__, "size": f"{W}x{H} uint8",
                      "threads": cv2.getNumThreads(), "numDisparities": D, "blockSize": 7})


@peer("cv2_stereosgbm3way_d64_cpu_allthreads", kind="cpu",
      ours="Stereo_CpuSgm/paths:4/",
      note="cv2.StereoSGBM MODE_SGBM_3WAY numDisparities 64, blockSize 3, 1282 x 1110 u8 pair, "
           "all cores")
def stereosgbm_3way(ctx):
    cv2 = ctx.need("cv2")
    cv2.setNumThreads(ctx.threads)
    left, right = _pair(ctx)
    bs = 3
    sgbm = cv2.StereoSGBM_create(minDisparity=0, numDisparities=D, blockSize=bs, P1=8 * bs * bs,
                                 P2=32 * bs * bs, disp12MaxDiff=1, uniquenessRatio=10,
                                 speckleWindowSize=100, speckleRange=32,
                                 mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY)

    def run(_):
        sgbm.compute(left, right)

    return Work(run, pixels=W * H, bytes=2 * W * H + 2 * W * H, sets=1,
                info={"cv2": cv2.__version__, "size": f"{W}x{H} uint8",
                      "threads": cv2.getNumThreads(), "numDisparities": D, "blockSize": bs,
                      "mode": "SGBM_3WAY"})
