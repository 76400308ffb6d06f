// SRCNN math written once (host and device): limits of the accepted models, the replication
// border and the activation. docs/ops/srcnn.md.
#pragma once

#include "core/hd.hpp"

namespace upres::srcnn {

inline constexpr int kMaxKernel = 15;          // odd kernel sizes 1..15
inline constexpr int kMaxLayerChannels = 128;  // hidden channel counts 1..128
inline constexpr int kMinScale = 2;
inline constexpr int kMaxScale = 8;
inline constexpr int kMaxDescription = 64 * 1024;  // bytes

// Replication border: every layer reads its input at clamped coordinates, so each layer's
// output has its input's size (the original SRCNN test code pads by replication).
UPRES_HD int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// ReLU after layers 1 and 2 (NaN is never produced from finite inputs and weights).
template <class T>
UPRES_HD T relu(T v) {
    return v > T(0) ? v : T(0);
}

}  // namespace upres::srcnn
