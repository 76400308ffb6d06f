"""CPU peer of NLM multi-frame super-resolution (bench/nlmsr_bench.cpp, Nlmsr_Cpu): OpenCV's
multi-frame non-local-means denoiser on all of the host's cores, the issue's comparison point:
cv2.fastNlMeansDenoisingMulti over the same frame count (5, temporal window 5, the middle frame
denoised), template 13, search 5, on 960 x 540 gray uint8 frames of random texture (the output
size of upres's 480 x 270 -> 960 x 540 call). Same kind of work (patch-weighted averages over
5 frames and a 5 x 5 search), not the same numbers: OpenCV's patch distances are integer SSDs
over 8-bit frames, its weights a table.
"""
from __future__ import annotations

from peerlib import Work, peer

W, H, N = 960, 540, 5


@peer("cv2_fastnlmeansmulti_5f_t13_s5_cpu_allthreads", kind="cpu", ours="Nlmsr_Cpu/frames:5",
      note="cv2.fastNlMeansDenoisingMulti, 5 frames 960 x 540 u8, template 13, search 5, h 8, "
           "all cores")
def nlmeans_multi(ctx):
    cv2 = ctx.need("cv2")
    cv2.setNumThreads(ctx.threads)
    frames = [ctx.numpy_random((H, W), "uint8") for _ in range(N)]

    def run(_):
        cv2.fastNlMeansDenoisingMulti(frames, N // 2, N, None, 8.0, 13, 5)

    return Work(run, pixels=W * H, bytes=N * W * H + W * H, sets=1,
                info={"cv2": cv2.__version__, "size": f"{W}x{H} uint8", "frames": N,
                      "threads": cv2.getNumThreads(), "templateWindowSize": 13,
                      "searchWindowSize": 5})
