// The one hot loop of the SRCNN CPU backend (srcnn_cpu.cpp), in two ISA versions: the AVX2+FMA
// one in srcnn_cpu_avx2.cpp (the only file compiled with -mavx2 -mfma, called only when the
// running CPU has both: avx2_fma_usable(), checked once at run time) and the portable one in
// srcnn_cpu.cpp (GCC/Clang vector extensions: SSE on baseline x86-64, NEON on ARM). This is an
// ISA dispatch inside the Cpu backend, not a backend fallback: both compute the same sums in the
// same order; they differ only in rounding (FMA vs multiply + add), within the Cpu-vs-Reference
// tolerance.
#pragma once

#include <cstddef>

namespace upres::srcnn::simd {

// One convolution layer on one row of a tile, as a sum over "taps": every (input channel, ky,
// kx) of the layer is a tap t whose input is a row pointer taps[t] (the input channel's row
// y + ky - r, already clamped, shifted by kx). For every output channel o in [0, n_out) and
// column u in [u0, u0 + count):
//     out[o * out_plane + u] = act(bias[o] + sum_{t = 0..ntaps-1} w(t, o) * taps[t][u - shift])
// accumulated in fp32 in the order t = 0, 1, ... (for every pixel and channel the same order,
// whatever the tile, block or thread: results do not depend on the thread count). act is ReLU
// when relu, else the identity. Weights packed by pack() (srcnn_cpu.cpp): output channels in
// blocks of kBlock (the last block may be smaller), each block [t][j] contiguous, block b
// starting at weights + b * kBlock * ntaps. count must be a multiple of 8 (the kernels write
// exactly the columns [u0, u0 + count)); the caller guarantees that every column read,
// taps[t][u0 - shift .. u0 + count - shift), lies inside its buffers.
struct ConvRow {
    const float* const* taps;
    int ntaps;
    const float* weights;
    const float* bias;
    int n_out;
    bool relu;
    float* out;
    std::ptrdiff_t out_plane;
    int u0;
    int count;
    int shift;
};

inline constexpr int kBlock = 4;  // output channels per register block

// True when srcnn_cpu_avx2.cpp was compiled with AVX2 + FMA, the CPU has both, and
// UPRES_CPU_BASELINE is not set (evaluated once; defined in srcnn_cpu.cpp).
bool avx2_fma_usable();
// True when srcnn_cpu_avx2.cpp was compiled with -mavx2 -mfma (false: conv_row_avx2 is a stub).
bool srcnn_avx2_compiled();
void conv_row_avx2(const ConvRow& a);
// The portable version (srcnn_cpu.cpp; any CPU). Both are tested directly in
// tests/ops/srcnn_cpu_test.cpp (SrcnnCpuKernel).
void conv_row_portable(const ConvRow& a);

}  // namespace upres::srcnn::simd
