// SRCNN reference backend: direct loops in double precision, replication borders at every
// layer (clamped reads), ReLU after layers 1 and 2. Slow on purpose: the oracle of the CPU and
// CUDA backends, itself checked against PyTorch golden data (tools/golden/gen_srcnn.py).
#include <cstddef>
#include <vector>

#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_math.hpp"

namespace upres::srcnn {

namespace {

// out[o][y][x] = bias[o] + sum_{i, ky, kx} w[o][i][ky][kx] * in[i][clamp(y + ky - r)][clamp(x +
// kx - r)], accumulated in double in the order i, ky, kx. Planar CHW buffers of w x h.
template <class In, class Out>
void conv_planes(const In* in, Out* out, int w, int h, const SrcnnLayer& layer, bool relu_on) {
    const int k = layer.kernel, r = k / 2;
    const int ni = layer.in_channels, no = layer.out_channels;
    const std::size_t plane = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
    for (int o = 0; o < no; ++o) {
        const float* wo = layer.weights.data() + static_cast<std::size_t>(o) * ni * k * k;
        Out* dst = out + static_cast<std::size_t>(o) * plane;
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                double acc = layer.bias[static_cast<std::size_t>(o)];
                for (int i = 0; i < ni; ++i) {
                    const In* src = in + static_cast<std::size_t>(i) * plane;
                    const float* wi = wo + static_cast<std::size_t>(i) * k * k;
                    for (int ky = 0; ky < k; ++ky) {
                        const In* row =
                            src + static_cast<std::size_t>(clamp_index(y + ky - r, h)) * w;
                        for (int kx = 0; kx < k; ++kx)
                            acc += static_cast<double>(wi[ky * k + kx]) *
                                   static_cast<double>(row[clamp_index(x + kx - r, w)]);
                    }
                }
                dst[static_cast<std::size_t>(y) * w + x] =
                    static_cast<Out>(relu_on ? relu(acc) : acc);
            }
        }
    }
}

}  // namespace

void conv_reference(const float* in, float* out, int w, int h, const SrcnnLayer& layer, bool relu) {
    conv_planes(in, out, w, h, layer, relu);
}

}  // namespace upres::srcnn

namespace upres::ref {

using namespace srcnn;  // the reference's loops above

void srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model) {
    const int w = in.width, h = in.height;
    const std::size_t plane = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
    // Intermediates stay in double: the oracle rounds once, at the end.
    std::vector<double> x0(plane);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) x0[static_cast<std::size_t>(y) * w + x] = in(x, y);
    const SrcnnLayer& l1 = model.layers[0];
    const SrcnnLayer& l2 = model.layers[1];
    const SrcnnLayer& l3 = model.layers[2];
    std::vector<double> x1(plane * static_cast<std::size_t>(l1.out_channels));
    conv_planes(x0.data(), x1.data(), w, h, l1, true);
    std::vector<double> x2(plane * static_cast<std::size_t>(l2.out_channels));
    conv_planes(x1.data(), x2.data(), w, h, l2, true);
    x1 = {};
    conv_planes(x2.data(), x0.data(), w, h, l3, false);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            out(x, y) = static_cast<float>(x0[static_cast<std::size_t>(y) * w + x]);
}

}  // namespace upres::ref
