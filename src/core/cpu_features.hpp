// The CPU features the SIMD kernels dispatch on at run time (an ISA dispatch inside the Cpu
// backend, not a backend fallback).
#pragma once

namespace upres {

// True when this x86-64 CPU has AVX2 and FMA and UPRES_CPU_BASELINE is not set in the
// environment (UPRES_CPU_BASELINE=1 forces the portable paths, to test them on AVX2 machines).
// Checked once. An operation combines it with whether its *_avx2.cpp file was compiled with
// those instructions.
bool cpu_avx2_fma() noexcept;

// True when cpu_avx2_fma() holds, the CPU has AVX-512 F, BW, VL and VPOPCNTDQ, and neither
// UPRES_CPU_BASELINE nor UPRES_CPU_NO_AVX512 is set (the latter keeps the AVX2 paths, to test
// them on AVX-512 machines). Checked once.
bool cpu_avx512_popcnt() noexcept;

}  // namespace upres
