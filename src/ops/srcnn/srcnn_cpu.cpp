// Optimized CPU backend of upres::srcnn (fp32, OpenMP, SIMD): a schedule of srcnn_ref.cpp.
//
//  * Tiles: the plane is cut into tiles of at most kTileW x kTileH output pixels, the grid
//    depending only on the plane's size (never on the thread count); OpenMP threads take whole
//    tiles (dynamic schedule, see cpu::srcnn_forward). Each tile runs the whole network, streaming
//    down its rows: layer 1 on the rows and columns layer 2 needs, layer 2 on those layer 3 needs,
//    layer 3 on the tile. No full-frame intermediate: per thread, ring buffers of k1 padded input
//    rows, k2 rows of layer 1 (n1 planes), one row of layer 2 and k3 rows of layer 3's partial sums
//    (below); about 280 KB for 9-1-5 64/32, within the 512 KB L2 of a Zen 3 core.
//  * Borders: replication at every layer, as the reference. Input rows are copied into the ring
//    with clamped columns; rows are clamped when the tap pointers are built; the columns of an
//    intermediate that fall outside the image are overwritten with the edge column's values
//    before the next layer reads them.
//  * Layout: planar inside the tile (channel c of a ring row is a run of wbuf floats, rows
//    64-byte aligned), so every layer is the same computation, vectorised over 8 adjacent
//    pixels: out[o][u] = bias[o] + sum_t w[t][o] * tap_t[u - r], one tap per (input channel, ky,
//    kx) (81 for layer 1, n1 * k2^2 for layer 2), tap_t a row pointer. simd::ConvRow is that
//    loop; its AVX2+FMA version (srcnn_cpu_avx2.cpp, run-time CPU check) keeps 4 output channels
//    x 24 pixels in 12 ymm accumulators (~90 % of the FMA peak on hot data); the portable version
//    below (GCC vector extensions) 4 channels x 8 pixels. Layer 3 (one output channel) is split
//    into a 1x1 layer n2 -> k3^2 (partial sums per tap, same fast loop) and a sum of k3^2
//    shifted planes (split_last_layer). Any odd kernel size and channel count take this code.
//  * Determinism: each value of layers 1 and 2 is bias + its taps in the reference's order
//    (input channel, ky, kx); layer 3 sums over channels, then over (ky, kx). Accumulation is
//    fp32 (FMA on AVX2), done by the same code whatever the tile, the position in a register
//    block or the thread: results are bit-identical for any thread count (the AVX2 and portable
//    paths differ in rounding only).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <omp.h>

#include "core/cpu_features.hpp"
#include "core/parallel.hpp"  // resolve_threads
#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_cpu_simd.hpp"
#include "ops/srcnn/srcnn_math.hpp"

namespace upres::srcnn {

namespace simd {
bool avx2_fma_usable() { return srcnn_avx2_compiled() && cpu_avx2_fma(); }

// ---------------------------------------------------------------- portable hot loop
namespace {

// 4 floats (GCC/Clang vector extension: SSE on baseline x86-64, NEON on ARM); 8 columns are two
// of them.
typedef float v4 __attribute__((vector_size(16)));
inline v4 load4(const float* p) {
    v4 v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

template <int J>
void block_portable(const ConvRow& a, const float* w, const float* bias, int o0, int u) {
    v4 acc[J][2];
    for (int j = 0; j < J; ++j) acc[j][0] = acc[j][1] = v4{} + bias[j];
    const int x = u - a.shift;
    for (int t = 0; t < a.ntaps; ++t, w += J) {
        const v4 in0 = load4(a.taps[t] + x), in1 = load4(a.taps[t] + x + 4);
        for (int j = 0; j < J; ++j) {
            acc[j][0] += w[j] * in0;
            acc[j][1] += w[j] * in1;
        }
    }
    for (int j = 0; j < J; ++j) {
        float r[8];
        std::memcpy(r, acc[j], sizeof(r));
        if (a.relu)
            for (float& v : r) v = relu(v);
        std::memcpy(a.out + (o0 + j) * a.out_plane + u, r, sizeof(r));
    }
}

}  // namespace

void conv_row_portable(const ConvRow& a) {
    for (int u = a.u0; u < a.u0 + a.count; u += 8) {
        int o = 0;
        for (; o + kBlock <= a.n_out; o += kBlock)
            block_portable<kBlock>(a, a.weights + o * a.ntaps, a.bias + o, o, u);
        const float* w = a.weights + o * a.ntaps;
        switch (a.n_out - o) {
            case 3:
                block_portable<3>(a, w, a.bias + o, o, u);
                break;
            case 2:
                block_portable<2>(a, w, a.bias + o, o, u);
                break;
            case 1:
                block_portable<1>(a, w, a.bias + o, o, u);
                break;
            default:
                break;
        }
    }
}

}  // namespace simd

namespace {

using simd::ConvRow;
using simd::kBlock;

// Tile size in output pixels (upper bounds; the grid splits the plane evenly). 256 x 128 on the
// 2-core AMD EPYC (Zen 3) of the dev machine: the ring buffers (~280 KB for 9-1-5 64/32) stay in
// L2 (they grow with the width only), and the halo recomputation costs k2 + k3 - 2 extra rows
// per 128 (3 % for 9-1-5) and as many columns per 256. On a 4K plane, 1 thread, 256 x 256 was
// 0-2 % faster (within the noise of the shared machine); on the loaded machine 128 x 128 was
// the same and 512 x 64 and 192 x 64 5-15 % slower. 4K: 15 x 17 tiles, 1080p: 8 x 9.
constexpr int kTileW = 256;
constexpr int kTileH = 128;

// ---------------------------------------------------------------- the network on tiles
// A layer's weights in the hot loop's order (srcnn_cpu_simd.hpp): output channels in blocks of
// kBlock (the last block smaller), each block [tap][channel], tap = (i * k + ky) * k + kx.
struct PackedLayer {
    int n_in = 0, n_out = 0, k = 0, r = 0, ntaps = 0;
    std::vector<float> w, bias;
};

PackedLayer pack(const SrcnnLayer& l) {
    PackedLayer p;
    p.n_in = l.in_channels;
    p.n_out = l.out_channels;
    p.k = l.kernel;
    p.r = l.kernel / 2;
    p.ntaps = p.n_in * p.k * p.k;
    const std::size_t nt = static_cast<std::size_t>(p.ntaps);
    p.w.resize(nt * static_cast<std::size_t>(p.n_out));
    for (int o = 0; o < p.n_out; o += kBlock) {
        const int nb = std::min(kBlock, p.n_out - o);
        float* dst = p.w.data() + static_cast<std::size_t>(o) * nt;
        for (std::size_t t = 0; t < nt; ++t)
            for (int j = 0; j < nb; ++j)
                dst[t * nb + j] = l.weights[static_cast<std::size_t>(o + j) * nt + t];
    }
    p.bias = l.bias;
    return p;
}

inline int round8(int n) { return (n + 7) & ~7; }
inline int floor8(int n) { return n & ~7; }

// Zero-initialised floats whose first element is 64-byte aligned (a ring row starts on a cache
// line: the 8-column vectors of the 1x1 layer then never straddle two lines).
struct AlignedFloats {
    std::vector<float> storage;
    float* p = nullptr;
    void assign(std::size_t n) {
        storage.assign(n + 16, 0.0f);
        const auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
        p = storage.data() + ((64 - addr % 64) % 64) / sizeof(float);
    }
};

// Per-thread ring buffers. Buffer column u holds image column base + u, base = x0 - R - kPad.
struct Scratch {
    AlignedFloats in, h1, h2, p3, out;
    std::vector<const float*> taps;
};

// Left margin of the buffers (columns): every layer's first computed column can then be rounded
// down to a multiple of 8 (aligned stores, aligned loads in 1x1 layers) while its taps still read
// inside the buffer (r <= 7).
constexpr int kPad = 8;

// Columns [begin, end) a layer computes: those the next layer needs, widened to whole aligned
// vectors (the extra columns read zeros or stale finite values and are never used).
struct Cols {
    int begin, end;
};

class Network {
  public:
    Network(Span2D<const float> in, Span2D<float> out, const SrcnnModel& m)
        : in_(in), out_(out), W_(in.width), H_(in.height) {
        for (int l = 0; l < 3; ++l) L_[l] = pack(m.layers[static_cast<std::size_t>(l)]);
        R_ = L_[0].r + L_[1].r + L_[2].r;
        split_last_layer(m.layers[2]);
        ntx_ = std::max(1, (W_ + kTileW - 1) / kTileW);
        nty_ = std::max(1, (H_ + kTileH - 1) / kTileH);
        const int max_tw = (W_ + ntx_ - 1) / ntx_ + 1;
        // Room for every column a layer writes or reads (see run_tile): at most
        // kPad + tw + 2R + 7 < wbuf_.
        wbuf_ = round8(kPad + max_tw + 2 * R_ + 16);
        conv_ = simd::avx2_fma_usable() ? simd::conv_row_avx2 : simd::conv_row_portable;
    }

    int tiles() const { return ntx_ * nty_; }

    Scratch make_scratch() const {
        Scratch s;
        const auto wb = static_cast<std::size_t>(wbuf_);
        s.in.assign(static_cast<std::size_t>(L_[0].k) * wb);
        s.h1.assign(static_cast<std::size_t>(L_[1].k * L_[0].n_out) * wb);
        s.h2.assign(static_cast<std::size_t>(L_[1].n_out) * wb);
        s.p3.assign(static_cast<std::size_t>(L_[2].k * P_.n_out) * wb);
        s.out.assign(wb);
        s.taps.resize(
            static_cast<std::size_t>(std::max({L_[0].ntaps, L_[1].ntaps, P_.ntaps, S_.ntaps})));
        return s;
    }

    void run_tile(int tile, Scratch& s) const {
        const int tx = tile % ntx_, ty = tile / ntx_;
        const int x0 = static_cast<int>(static_cast<long long>(W_) * tx / ntx_);
        const int x1 = static_cast<int>(static_cast<long long>(W_) * (tx + 1) / ntx_);
        const int y0 = static_cast<int>(static_cast<long long>(H_) * ty / nty_);
        const int y1 = static_cast<int>(static_cast<long long>(H_) * (ty + 1) / nty_);
        const int r1 = L_[0].r, r2 = L_[1].r, r3 = L_[2].r;
        const int base = x0 - R_ - kPad;
        const int tw = x1 - x0;
        // Columns needed: layer 3 [kPad + R, + tw), layer 2 [kPad + r1 + r2, + tw + 2 r3),
        // layer 1 [kPad + r1, + tw + 2 (r2 + r3)); each widened to aligned vectors. A layer
        // reads its input at [begin - r, end + r): inside [1, kPad + tw + 2R + 7).
        const auto cols = [](int first, int n) { return Cols{floor8(first), round8(first + n)}; };
        const Cols c1 = cols(kPad + r1, tw + 2 * (r2 + r3));
        const Cols c2 = cols(kPad + r1 + r2, tw + 2 * r3);
        const Cols c3 = cols(kPad + R_, tw);

        int next0 = 0, next1 = 0, next2 = std::max(0, y0 - r3);  // next row to produce
        next1 = std::max(0, next2 - r2);
        next0 = std::max(0, next1 - r1);
        for (int y = y0; y < y1; ++y) {
            for (const int need2 = std::min(H_ - 1, y + r3); next2 <= need2; ++next2) {
                for (const int need1 = std::min(H_ - 1, next2 + r2); next1 <= need1; ++next1) {
                    for (const int need0 = std::min(H_ - 1, next1 + r1); next0 <= need0; ++next0)
                        load_input(next0, base, s);
                    layer1(next1, base, c1, s);
                }
                layer2(next2, base, c2, s);
            }
            layer3(y, c3, s);
            std::memcpy(out_.row(y) + x0, s.out.p + kPad + R_, sizeof(float) * tw);
        }
    }

    void (*conv_)(const ConvRow&) = nullptr;

  private:
    // Layer 3 (one output channel, n2 x k3 x k3 taps) in two steps. As one ConvRow it would be
    // load-bound (one unaligned load per FMA: 45 GFLOP/s vs 90 for layers 1 and 2 on Zen 3);
    // instead, per layer-2 row j, P_(ky, kx)[u] = sum_c w3(c, ky, kx) h2(c, j)[u] (a 1x1 layer
    // with k3^2 outputs, the fast register-blocked case, aligned loads), then per output row
    // out[u] = bias + sum_{ky, kx} P_(ky, kx)(row y + ky - r3)[u + kx - r3]. Same products, summed
    // over channels first (then over taps); replication is exact because P is per column.
    void split_last_layer(const SrcnnLayer& l3) {
        const int k = l3.kernel, n2 = l3.in_channels;
        SrcnnLayer p;
        // k^2 outputs rounded up to whole register blocks (zero planes, never read): a 1-channel
        // tail block (25 = 6 x 4 + 1 for 5 x 5) would run at a quarter of the speed.
        p.out_channels = (k * k + kBlock - 1) / kBlock * kBlock;
        p.in_channels = n2;
        p.kernel = 1;
        p.weights.assign(static_cast<std::size_t>(p.out_channels * n2), 0.0f);
        for (int c = 0; c < n2; ++c)
            for (int q = 0; q < k * k; ++q)
                p.weights[static_cast<std::size_t>(q * n2 + c)] =
                    l3.weights[static_cast<std::size_t>(c * k * k + q)];
        p.bias.assign(static_cast<std::size_t>(p.out_channels), 0.0f);
        P_ = pack(p);
        SrcnnLayer sum;
        sum.out_channels = 1;
        sum.in_channels = k * k;
        sum.kernel = 1;
        sum.weights.assign(static_cast<std::size_t>(k * k), 1.0f);
        sum.bias = l3.bias;
        S_ = pack(sum);
        S_.r = l3.kernel / 2;  // the shift of the taps (they point at plane + kx)
    }

    float* ring(AlignedFloats& buf, int slot, int channels, int c) const {
        return buf.p + (static_cast<std::ptrdiff_t>(slot) * channels + c) * wbuf_;
    }

    // Input row iy, columns clamped (the replication border of layer 1).
    void load_input(int iy, int base, Scratch& s) const {
        float* dst = ring(s.in, iy % L_[0].k, 1, 0);
        const float* src = in_.row(iy);
        const int lo = std::clamp(-base, 0, wbuf_), hi = std::clamp(W_ - base, lo, wbuf_);
        std::fill(dst, dst + lo, src[0]);
        std::memcpy(dst + lo, src + base + lo, sizeof(float) * (hi - lo));
        std::fill(dst + hi, dst + wbuf_, src[W_ - 1]);
    }

    // Columns of planes [0, n) of a ring row outside the image [0, W) (buffer columns < -base or
    // >= W - base) within cols take the edge column's value: replication border of the next
    // layer.
    void replicate(float* row0, int n, int base, Cols cols) const {
        const int u0 = cols.begin, u1 = cols.end;
        const int lo = -base, hi = W_ - 1 - base;  // buffer columns of image columns 0, W - 1
        if (lo <= u0 && hi >= u1 - 1) return;
        for (int c = 0; c < n; ++c) {
            float* p = row0 + static_cast<std::ptrdiff_t>(c) * wbuf_;
            for (int u = u0; u < std::min(lo, u1); ++u) p[u] = p[lo];
            for (int u = std::max(hi + 1, u0); u < u1; ++u) p[u] = p[hi];
        }
    }

    void layer1(int i, int base, Cols c, Scratch& s) const {
        const PackedLayer& l = L_[0];
        for (int ky = 0; ky < l.k; ++ky) {
            const float* row = ring(s.in, clamp_index(i - l.r + ky, H_) % l.k, 1, 0);
            for (int kx = 0; kx < l.k; ++kx)
                s.taps[static_cast<std::size_t>(ky * l.k + kx)] = row + kx;
        }
        float* out = ring(s.h1, i % L_[1].k, l.n_out, 0);
        run(l, s, out, c, true);
        replicate(out, l.n_out, base, c);
    }

    void layer2(int j, int base, Cols cl, Scratch& s) const {
        const PackedLayer& l = L_[1];
        const int n1 = L_[0].n_out;
        std::size_t t = 0;
        for (int c = 0; c < l.n_in; ++c)
            for (int ky = 0; ky < l.k; ++ky) {
                const float* row = ring(s.h1, clamp_index(j - l.r + ky, H_) % l.k, n1, c);
                for (int kx = 0; kx < l.k; ++kx) s.taps[t++] = row + kx;
            }
        run(l, s, s.h2.p, cl, true);
        replicate(s.h2.p, l.n_out, base, cl);
        // Layer 3, first half: the k3^2 partial sums of this row (a 1x1 layer n2 -> k3^2).
        for (int c = 0; c < l.n_out; ++c) s.taps[static_cast<std::size_t>(c)] = ring(s.h2, 0, 1, c);
        run(P_, s, ring(s.p3, j % L_[2].k, P_.n_out, 0), cl, false);
    }

    // Layer 3, second half: out[u] = bias + sum_{ky, kx} P_{ky, kx}(row y + ky - r3)[u + kx - r3]
    // (weights 1: FMA by 1 is an exact add).
    void layer3(int y, Cols cl, Scratch& s) const {
        const int k = L_[2].k, r = L_[2].r;
        std::size_t t = 0;
        for (int ky = 0; ky < k; ++ky) {
            const int slot = clamp_index(y - r + ky, H_) % k;
            for (int kx = 0; kx < k; ++kx)
                s.taps[t++] = ring(s.p3, slot, P_.n_out, ky * k + kx) + kx;
        }
        run(S_, s, s.out.p, cl, false);
    }

    void run(const PackedLayer& l, Scratch& s, float* out, Cols c, bool relu) const {
        ConvRow a{};
        a.taps = s.taps.data();
        a.ntaps = l.ntaps;
        a.weights = l.w.data();
        a.bias = l.bias.data();
        a.n_out = l.n_out;
        a.relu = relu;
        a.out = out;
        a.out_plane = wbuf_;
        a.u0 = c.begin;
        a.count = c.end - c.begin;
        a.shift = l.r;
        conv_(a);
    }

    Span2D<const float> in_;
    Span2D<float> out_;
    int W_, H_;
    PackedLayer L_[3];
    PackedLayer P_, S_;  // layer 3 as a 1x1 layer n2 -> k3^2 (P_) and a sum of shifted planes (S_)
    int R_ = 0, ntx_ = 1, nty_ = 1, wbuf_ = 0;
};

}  // namespace

}  // namespace upres::srcnn

namespace upres::cpu {

using namespace srcnn;  // the CPU schedule's helpers above

void srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model,
                   int threads) {
    const Network net(in, out, model);
    const int nt = std::min(resolve_threads(threads), net.tiles());
    std::vector<Scratch> scratch;
    scratch.reserve(static_cast<std::size_t>(nt));
    for (int i = 0; i < nt; ++i) scratch.push_back(net.make_scratch());
    // Dynamic scheduling, unlike parallel_for's static split: tiles are independent and each is
    // computed the same way by any thread, so the results stay bit-identical, and on a shared
    // machine a thread whose core is also running another process does not hold the others up
    // with half of the tiles. Idle 2-core Zen 3: 1.8-2.0x the 1-thread speed.
    const int tiles = net.tiles();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int tile = 0; tile < tiles; ++tile)
        net.run_tile(tile, scratch[static_cast<std::size_t>(omp_get_thread_num())]);
}

}  // namespace upres::cpu
