// A random SRCNN model shaped like trained ones, shared by the SRCNN tests and the differential
// fuzzer: weights N(0, sigma_l), biases N(0, 0.02); sigma_1 given (trained first layers hold
// 1e-3 .. 1e-1), later layers 0.5 / sqrt(taps) capped at 0.1 so that the activations stay
// O(0.1 .. 1).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>

#include <upres/srcnn.hpp>

namespace upres::test {

// kernels[l]: odd kernel sizes of the three layers; n1, n2: the hidden channel counts.
template <class Engine>
SrcnnModel random_srcnn_model(Engine& rng, const int (&kernels)[3], int n1, int n2, double sigma1,
                              int scale) {
    SrcnnModel m;
    m.scale = scale;
    m.description = "random test model";
    const int ins[3] = {1, n1, n2}, outs[3] = {n1, n2, 1};
    for (int l = 0; l < 3; ++l) {
        SrcnnLayer& L = m.layers[static_cast<std::size_t>(l)];
        L.out_channels = outs[l];
        L.in_channels = ins[l];
        L.kernel = kernels[l];
        const double taps = double(ins[l]) * kernels[l] * kernels[l];
        const double sigma = l == 0 ? sigma1 : std::min(0.1, 0.5 / std::sqrt(taps));
        std::normal_distribution<double> wd(0.0, sigma), bd(0.0, 0.02);
        L.weights.resize(static_cast<std::size_t>(outs[l] * taps));
        for (float& w : L.weights) w = static_cast<float>(wd(rng));
        L.bias.resize(static_cast<std::size_t>(outs[l]));
        for (float& b : L.bias) b = static_cast<float>(bd(rng));
    }
    return m;
}

}  // namespace upres::test
