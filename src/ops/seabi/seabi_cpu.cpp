// SEABI CPU backend: the paper's FPGA scheme on cores. The image is cut into P horizontal
// stripes; each stripe runs the whole pipeline (construction -> blur + decimation -> error ->
// CxHD -> back-projection -> add) on its own rows plus the halo its kernels need, O = 9
// low-resolution rows (4 above, 5 below), recomputing the halo instead of communicating.
// Stripes are independent, so they run one per core with no synchronisation inside the
// pipeline; the only global steps are the total variation (a sum before the construction) and,
// for L-SEABI, the l1 norm of each iteration (a sum after it). Buffers inside a stripe are
// addressed with global row numbers and clamp-to-edge rules, so the halo rows are exactly the
// rows the reference computes and the result is bit-identical for every P (tests check P = 1..7).
//
// Tuning: stripes of at most kRowsPerStripe low-resolution rows keep a stripe's buffers in the
// L2 cache; the buffers are per-thread scratch (thread_local, grow-only) so repeated calls do
// not pay for page faults and zeroing (that was 20 % of the time). SIL-SEABI 1080p -> 2160p,
// before that change: 21.2 ms on one core, 2.0 ms on 16 cores (EPYC, GPU host); after it:
// 74-76 ms on the loaded 2-core CPU
// machine where OpenCV resize(INTER_CUBIC) took 41-48 ms in the same run (docs/ops/seabi.md).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/parallel.hpp"
#include "ops/seabi/seabi_backends.hpp"
#include "ops/seabi/seabi_math.hpp"

namespace upres::seabi {

namespace {

constexpr int kRowsPerStripe = 48;

int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Rows [lo, hi) of a plane (global row numbers), each padded by `pad` columns of edge copies
// on both sides. row(y) clamps y to the image first: callers must only ask for rows whose
// clamped index is stored (the halo arithmetic guarantees it).
template <class T>
struct Rows {
    int lo = 0, hi = 0, width = 0, pad = 0, image_rows = 0;
    std::vector<T> v;
    void init(int lo_, int hi_, int width_, int pad_, int image_rows_) {
        lo = lo_, hi = hi_, width = width_, pad = pad_, image_rows = image_rows_;
        const std::size_t n = static_cast<std::size_t>(hi - lo) * (width + 2 * pad);
        if (v.size() < n) v.resize(n);  // grow only: reused buffers are not cleared again
    }
    // Pointer to column 0 of row y (columns -pad .. width + pad - 1 are valid).
    T* row(int y) {
        const int yc = clampi(y, 0, image_rows - 1);
        return v.data() + static_cast<std::size_t>(yc - lo) * (width + 2 * pad) + pad;
    }
    void pad_row(int y) {
        T* r = row(y);
        for (int k = 1; k <= pad; ++k) {
            r[-k] = r[0];
            r[width - 1 + k] = r[width - 1];
        }
    }
};

// Hot rows, compiled for AVX2 and for the baseline ISA (the loader picks one): the 4 x 4
// neighbourhoods of a cell row read from four padded rows (pad >= 2), all pointers restrict so
// the loops vectorise (the rows only read may coincide at the image border).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define UPRES_SEABI_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define UPRES_SEABI_CLONES
#endif

UPRES_SEABI_CLONES
void lseai_row(const std::int16_t* __restrict r0, const std::int16_t* __restrict r1,
               const std::int16_t* __restrict r2, const std::int16_t* __restrict r3, int w, int tq,
               int t, std::uint8_t* __restrict top, std::uint8_t* __restrict bot) {
    for (int x = 0; x < w; ++x) {
        const int p[4][4] = {{r0[x - 1], r0[x], r0[x + 1], r0[x + 2]},
                             {r1[x - 1], r1[x], r1[x + 1], r1[x + 2]},
                             {r2[x - 1], r2[x], r2[x + 1], r2[x + 2]},
                             {r3[x - 1], r3[x], r3[x + 1], r3[x + 2]}};
        const Cell c = lseai_cell(p, tq, t);
        top[2 * x] = static_cast<std::uint8_t>(p[1][1]);
        top[2 * x + 1] = static_cast<std::uint8_t>(c.h);
        bot[2 * x] = static_cast<std::uint8_t>(c.v);
        bot[2 * x + 1] = static_cast<std::uint8_t>(c.d);
    }
}

// Centre-aligned lattice: blocks k = 0 .. w read columns k - 2 .. k + 1 of four padded rows
// and write columns 2k - 1 and 2k of top / bot (columns -1 .. 2w must be writable).
UPRES_SEABI_CLONES
void lseai_row_centered(const std::int16_t* __restrict r0, const std::int16_t* __restrict r1,
                        const std::int16_t* __restrict r2, const std::int16_t* __restrict r3, int w,
                        int tq, int t, std::uint8_t* __restrict top, std::uint8_t* __restrict bot) {
    for (int k = 0; k <= w; ++k) {
        const int x = k - 1;
        const int p[4][4] = {{r0[x - 1], r0[x], r0[x + 1], r0[x + 2]},
                             {r1[x - 1], r1[x], r1[x + 1], r1[x + 2]},
                             {r2[x - 1], r2[x], r2[x + 1], r2[x + 2]},
                             {r3[x - 1], r3[x], r3[x + 1], r3[x + 2]}};
        const Quad q = lseai_quad(p, tq, t);
        top[2 * k - 1] = static_cast<std::uint8_t>(q.q00);
        top[2 * k] = static_cast<std::uint8_t>(q.q10);
        bot[2 * k - 1] = static_cast<std::uint8_t>(q.q01);
        bot[2 * k] = static_cast<std::uint8_t>(q.q11);
    }
}

UPRES_SEABI_CLONES
void cubic_row_centered(const std::int16_t* __restrict r0, const std::int16_t* __restrict r1,
                        const std::int16_t* __restrict r2, const std::int16_t* __restrict r3, int w,
                        std::int16_t* __restrict top, std::int16_t* __restrict bot) {
    for (int k = 0; k <= w; ++k) {
        const int x = k - 1;
        const int p[4][4] = {{r0[x - 1], r0[x], r0[x + 1], r0[x + 2]},
                             {r1[x - 1], r1[x], r1[x + 1], r1[x + 2]},
                             {r2[x - 1], r2[x], r2[x + 1], r2[x + 2]},
                             {r3[x - 1], r3[x], r3[x + 1], r3[x + 2]}};
        const Quad q = cubic_quad(p);
        top[2 * k - 1] = static_cast<std::int16_t>(q.q00);
        top[2 * k] = static_cast<std::int16_t>(q.q10);
        bot[2 * k - 1] = static_cast<std::int16_t>(q.q01);
        bot[2 * k] = static_cast<std::int16_t>(q.q11);
    }
}

UPRES_SEABI_CLONES
void cxhd_row(const std::int16_t* __restrict r0, const std::int16_t* __restrict r1,
              const std::int16_t* __restrict r2, const std::int16_t* __restrict r3, int w,
              std::int16_t* __restrict top, std::int16_t* __restrict bot) {
    for (int x = 0; x < w; ++x) {
        const int p[4][4] = {{r0[x - 1], r0[x], r0[x + 1], r0[x + 2]},
                             {r1[x - 1], r1[x], r1[x + 1], r1[x + 2]},
                             {r2[x - 1], r2[x], r2[x + 1], r2[x + 2]},
                             {r3[x - 1], r3[x], r3[x + 1], r3[x + 2]}};
        const Cell c = cxhd_cell(p);
        top[2 * x] = static_cast<std::int16_t>(p[1][1]);
        top[2 * x + 1] = static_cast<std::int16_t>(c.h);
        bot[2 * x] = static_cast<std::int16_t>(c.v);
        bot[2 * x + 1] = static_cast<std::int16_t>(c.d);
    }
}

// R5 vertical pass at one even HR row and horizontal pass + error at its LR row.
UPRES_SEABI_CLONES
void blur_rows(const std::uint8_t* __restrict y0, const std::uint8_t* __restrict y1,
               const std::uint8_t* __restrict y2, const std::uint8_t* __restrict y3,
               const std::uint8_t* __restrict y4, int w2, std::uint8_t* __restrict cb) {
    for (int x = 0; x < w2; ++x)
        cb[x] = static_cast<std::uint8_t>(blur5(y0[x], y1[x], y2[x], y3[x], y4[x]));
}

UPRES_SEABI_CLONES
int error_row(const std::uint8_t* __restrict cb, const std::uint8_t* __restrict lr, int w,
              std::int16_t* __restrict e) {
    int l1 = 0;
    for (int i = 0; i < w; ++i) {
        const int d = blur5(cb[2 * i - 2], cb[2 * i - 1], cb[2 * i], cb[2 * i + 1], cb[2 * i + 2]);
        const int ev = lr[i] - d;
        e[i] = static_cast<std::int16_t>(ev);
        l1 += iabs(ev);
    }
    return l1;
}

// C5 vertical pass (output rows 2j - 2 .. 2j + 3) and horizontal pass + error.
UPRES_SEABI_CLONES
void blur_rows_centered(const std::uint8_t* __restrict y0, const std::uint8_t* __restrict y1,
                        const std::uint8_t* __restrict y2, const std::uint8_t* __restrict y3,
                        const std::uint8_t* __restrict y4, const std::uint8_t* __restrict y5,
                        int w2, std::uint8_t* __restrict cb) {
    for (int x = 0; x < w2; ++x)
        cb[x] = static_cast<std::uint8_t>(cblur6(y0[x], y1[x], y2[x], y3[x], y4[x], y5[x]));
}

UPRES_SEABI_CLONES
int error_row_centered(const std::uint8_t* __restrict cb, const std::uint8_t* __restrict lr, int w,
                       std::int16_t* __restrict e) {
    int l1 = 0;
    for (int i = 0; i < w; ++i) {
        const int d = cblur6(cb[2 * i - 2], cb[2 * i - 1], cb[2 * i], cb[2 * i + 1], cb[2 * i + 2],
                             cb[2 * i + 3]);
        const int ev = lr[i] - d;
        e[i] = static_cast<std::int16_t>(ev);
        l1 += iabs(ev);
    }
    return l1;
}

// R8 + R9 for one HR row.
UPRES_SEABI_CLONES
void bp_row(const std::int16_t* __restrict e0, const std::int16_t* __restrict e1,
            const std::int16_t* __restrict e2, const std::int16_t* __restrict e3,
            const std::int16_t* __restrict e4, int w2, int* __restrict v,
            const std::uint8_t* __restrict yr, std::uint8_t* __restrict o) {
    for (int x = -2; x < w2 + 2; ++x) v[x] = bp_g5(e0[x], e1[x], e2[x], e3[x], e4[x]);
    for (int x = 0; x < w2; ++x) {
        const int r = bp_finish(e2[x], bp_g5(v[x - 2], v[x - 1], v[x], v[x + 1], v[x + 2]));
        o[x] = static_cast<std::uint8_t>(add_clamp(yr[x], r));
    }
}

struct Stripe {
    int r0, r1;  // own low-resolution rows
};

std::vector<Stripe> make_stripes(int h, int p) {
    std::vector<Stripe> s;
    for (int i = 0; i < p; ++i) {
        const int a = static_cast<int>(std::int64_t{h} * i / p);
        const int b = static_cast<int>(std::int64_t{h} * (i + 1) / p);
        if (b > a) s.push_back({a, b});
    }
    return s;
}

// Low-resolution rows [lo, hi) of the input, padded by 2 columns.
// In: any row source with width, height and row(y) (Span2D, or the streaming window).
template <class In>
void load_lr(const In& in, Rows<std::int16_t>& lr, int lo, int hi) {
    lr.init(lo, hi, in.width, 2, in.height);
    for (int y = lo; y < hi; ++y) {
        const std::uint8_t* s = in.row(y);
        std::int16_t* d = lr.row(y);
        for (int x = 0; x < in.width; ++x) d[x] = s[x];
        lr.pad_row(y);
    }
}

// R2-R4 for cell rows [c0, c1): writes HR rows 2cy and 2cy + 1 through out_row(y).
// Centered: block rows [c0, c1) write HR rows 2ky - 1 and 2ky; out_row(y) must accept every
// such y (returning a scratch row for rows that are not kept) and give rows whose columns -1 and
// 2w are writable.
template <bool kCentered, class OutRow>
void construct_rows(Rows<std::int16_t>& lr, int c0, int c1, int w, const Threshold& th,
                    OutRow&& out_row) {
    for (int cy = c0; cy < c1; ++cy) {
        if constexpr (kCentered)
            lseai_row_centered(lr.row(cy - 2), lr.row(cy - 1), lr.row(cy), lr.row(cy + 1), w, th.tq,
                               th.t, out_row(2 * cy - 1), out_row(2 * cy));
        else
            lseai_row(lr.row(cy - 1), lr.row(cy), lr.row(cy + 1), lr.row(cy + 2), w, th.tq, th.t,
                      out_row(2 * cy), out_row(2 * cy + 1));
    }
}

// The padded scratch row (columns -1 .. width) for rows a centred block writes but the caller
// does not keep; one per thread.
template <class T>
T* discard_row(int width) {
    thread_local std::vector<T> v;
    if (v.size() < static_cast<std::size_t>(width) + 4)
        v.resize(static_cast<std::size_t>(width) + 4);
    return v.data() + 2;
}

// Centered construction straight into an unpadded image: each block row goes through two
// padded scratch rows, and only rows [keep0, keep1) are copied out.
template <class Out>
void construct_rows_into(Rows<std::int16_t>& lr, int c0, int c1, int w, const Threshold& th,
                         const Out& out, int keep0, int keep1) {
    thread_local std::vector<std::uint8_t> scratch;
    const std::size_t rw = static_cast<std::size_t>(2) * w + 4;
    if (scratch.size() < 2 * rw) scratch.resize(2 * rw);
    std::uint8_t* rows[2] = {scratch.data() + 2, scratch.data() + rw + 2};
    for (int cy = c0; cy < c1; ++cy) {
        lseai_row_centered(lr.row(cy - 2), lr.row(cy - 1), lr.row(cy), lr.row(cy + 1), w, th.tq,
                           th.t, rows[0], rows[1]);
        for (int j = 0; j < 2; ++j) {
            const int y = 2 * cy - 1 + j;
            if (y >= keep0 && y < keep1)
                std::memcpy(out.row(y), rows[j], 2 * static_cast<std::size_t>(w));
        }
    }
}

// Y row source: a function y -> const uint8_t* (clamped global HR row).
// Refines one stripe: error rows, CxHD (centred: the cubic up-sampling), back-projection, add;
// writes HR rows [2 r0, 2 r1) of dst. Returns the l1 norm of the stripe's own error rows.
template <bool kCentered, class In, class YRow, class Out>
std::int64_t refine_stripe(const In& in, YRow&& yrow, const Out& dst, int r0, int r1) {
    const int w = in.width, h = in.height, w2 = 2 * w, h2 = 2 * h;
    // R5 + R6: error rows [elo, ehi).
    const int elo = std::max(0, r0 - (kCentered ? 3 : 2)), ehi = std::min(h, r1 + 3);
    thread_local Rows<std::int16_t> err;  // per-thread scratch, reused across stripes and calls
    err.init(elo, ehi, w, 2, h);
    thread_local std::vector<std::uint8_t> colb;
    if (colb.size() < static_cast<std::size_t>(w2) + 4)
        colb.resize(static_cast<std::size_t>(w2) + 4);
    std::int64_t l1 = 0;
    for (int j = elo; j < ehi; ++j) {
        std::uint8_t* cb = colb.data() + 2;
        if constexpr (kCentered)
            blur_rows_centered(yrow(2 * j - 2), yrow(2 * j - 1), yrow(2 * j), yrow(2 * j + 1),
                               yrow(2 * j + 2), yrow(2 * j + 3), w2, cb);
        else
            blur_rows(yrow(2 * j - 2), yrow(2 * j - 1), yrow(2 * j), yrow(2 * j + 1),
                      yrow(2 * j + 2), w2, cb);
        cb[-2] = cb[-1] = cb[0];
        cb[w2] = cb[w2 + 1] = cb[w2 - 1];
        const int row_l1 = kCentered ? error_row_centered(cb, in.row(j), w, err.row(j))
                                     : error_row(cb, in.row(j), w, err.row(j));
        if (j >= r0 && j < r1) l1 += row_l1;
        err.pad_row(j);
    }
    // R7: up-sampled error rows, padded by 2. Co-sited: cell rows [hlo, hhi) -> HR rows
    // [2 hlo, 2 hhi); centred: block rows [hlo, hhi) -> HR rows [2 hlo - 1, 2 hhi - 1).
    thread_local Rows<std::int16_t> eh;
    if constexpr (kCentered) {
        const int hlo = std::max(0, r0 - 1), hhi = std::min(h + 1, r1 + 2);
        const int ylo = std::max(0, 2 * hlo - 1), yhi = std::min(h2, 2 * hhi - 1);
        eh.init(ylo, yhi, w2, 2, h2);
        auto erow = [&](int y) {
            return y >= ylo && y < yhi ? eh.row(y) : discard_row<std::int16_t>(w2);
        };
        for (int ky = hlo; ky < hhi; ++ky)
            cubic_row_centered(err.row(ky - 2), err.row(ky - 1), err.row(ky), err.row(ky + 1), w,
                               erow(2 * ky - 1), erow(2 * ky));
        for (int y = ylo; y < yhi; ++y) eh.pad_row(y);
    } else {
        const int hlo = std::max(0, r0 - 1), hhi = std::min(h, r1 + 1);
        eh.init(2 * hlo, 2 * hhi, w2, 2, h2);
        for (int cy = hlo; cy < hhi; ++cy) {
            cxhd_row(err.row(cy - 1), err.row(cy), err.row(cy + 1), err.row(cy + 2), w,
                     eh.row(2 * cy), eh.row(2 * cy + 1));
            eh.pad_row(2 * cy);
            eh.pad_row(2 * cy + 1);
        }
    }
    // R8 + R9: back-projection (identity minus the separable g (x) g) and add.
    thread_local std::vector<int> vs;
    if (vs.size() < static_cast<std::size_t>(w2) + 4) vs.resize(static_cast<std::size_t>(w2) + 4);
    for (int y = 2 * r0; y < 2 * r1; ++y) {
        bp_row(eh.row(y - 2), eh.row(y - 1), eh.row(y), eh.row(y + 1), eh.row(y + 2), w2,
               vs.data() + 2, yrow(y), dst.row(y));
    }
    return l1;
}

}  // namespace

}  // namespace upres::seabi

namespace upres::cpu {

using namespace seabi;  // the CPU schedule's helpers above

namespace {

// Construction of a stripe's own rows [2 r0, 2 r1) straight into out.
template <bool kCentered, class In, class Out>
void construct_stripe_into(const In& in, const Out& out, const Threshold& th, int r0, int r1) {
    const int h = in.height;
    thread_local Rows<std::int16_t> lr;
    if constexpr (kCentered) {
        load_lr(in, lr, std::max(0, r0 - 2), std::min(h, r1 + 2));
        construct_rows_into(lr, r0, r1 + 1, in.width, th, out, 2 * r0, 2 * r1);
    } else {
        load_lr(in, lr, std::max(0, r0 - 1), std::min(h, r1 + 2));
        construct_rows<false>(lr, r0, r1, in.width, th, [&](int y) { return out.row(y); });
    }
}

// SIL-SEABI of one stripe: construction of its rows plus halo into per-thread buffers, then the
// refinement of its own output rows [2 r0, 2 r1) into out. Returns the stripe's l1 norm.
template <bool kCentered, class In, class Out>
std::int64_t sil_stripe(const In& in, const Out& out, const Threshold& th, int r0, int r1) {
    const int w = in.width, h = in.height, w2 = 2 * w, h2 = 2 * h;
    thread_local Rows<std::int16_t> lr;
    thread_local Rows<std::uint8_t> y0;
    if constexpr (kCentered) {
        // Block rows [clo, chi) -> HR rows [2 clo - 1, 2 chi - 1): the error rows r0 - 3 ..
        // r1 + 2 read HR rows 2 r0 - 8 .. 2 r1 + 7.
        const int clo = std::max(0, r0 - 4), chi = std::min(h + 1, r1 + 5);
        const int ylo = std::max(0, 2 * clo - 1), yhi = std::min(h2, 2 * chi - 1);
        load_lr(in, lr, std::max(0, clo - 2), std::min(h, chi + 1));
        y0.init(ylo, yhi, w2, 1, h2);
        construct_rows<true>(lr, clo, chi, w, th, [&](int y) {
            return y >= ylo && y < yhi ? y0.row(y) : discard_row<std::uint8_t>(w2);
        });
    } else {
        const int clo = std::max(0, r0 - 3), chi = std::min(h, r1 + 4);
        load_lr(in, lr, std::max(0, clo - 1), std::min(h, chi + 2));
        y0.init(2 * clo, 2 * chi, w2, 0, h2);
        construct_rows<false>(lr, clo, chi, w, th, [&](int y) { return y0.row(y); });
    }
    return refine_stripe<kCentered>(
        in, [&](int y) -> const std::uint8_t* { return y0.row(y); }, out, r0, r1);
}

template <bool kCentered>
SeabiStats run(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, const SeabiOptions& opts,
               int threads) {
    const int w = in.width, h = in.height, w2 = 2 * w, h2 = 2 * h;
    const int nthreads = resolve_threads(threads);
    const int p = opts.stripes > 0 ? opts.stripes
                                   : std::max(nthreads, (h + kRowsPerStripe - 1) / kRowsPerStripe);
    const std::vector<Stripe> stripes = make_stripes(h, p);
    const int ns = static_cast<int>(stripes.size());
    std::vector<std::int64_t> part(ns, 0);

    // R1: total variation, summed per stripe (integers: the order does not matter).
    parallel_for(0, ns, threads, [&](int s) {
        std::int64_t acc = 0;
        for (int y = stripes[s].r0; y < stripes[s].r1; ++y) {
            const std::uint8_t* r = in.row(y);
            const std::uint8_t* b = in.row(std::min(y + 1, h - 1));
            for (int x = 0; x < w; ++x) acc += tv_term(r[x], r[std::min(x + 1, w - 1)], b[x]);
        }
        part[s] = acc;
    });
    std::int64_t tv = 0;
    for (std::int64_t v : part) tv += v;
    const Threshold th = make_threshold(tv, std::int64_t{w} * h);
    SeabiStats stats;
    stats.threshold = th.t;

    if (opts.method == SeabiMethod::LSeai) {
        parallel_for(0, ns, threads, [&](int s) {
            construct_stripe_into<kCentered>(in, out, th, stripes[s].r0, stripes[s].r1);
        });
        return stats;
    }

    if (opts.method == SeabiMethod::SilSeabi) {
        // Fully fused: each stripe constructs its rows plus halo locally, then refines.
        parallel_for(0, ns, threads, [&](int s) {
            part[s] = sil_stripe<kCentered>(in, out, th, stripes[s].r0, stripes[s].r1);
        });
        stats.iterations = 1;
        stats.last_l1 = 0;
        for (std::int64_t v : part) stats.last_l1 += v;
        return stats;
    }

    // L-SEABI: construction into `out`, then ping-pong between out and a second image; each
    // iteration computes the l1 norm and (speculatively) the refined image in one pass, and
    // keeps the refined image only when the l1 norm says to continue.
    parallel_for(0, ns, threads, [&](int s) {
        construct_stripe_into<kCentered>(in, out, th, stripes[s].r0, stripes[s].r1);
    });
    std::vector<std::uint8_t> tmp(static_cast<std::size_t>(w2) * h2);
    Span2D<std::uint8_t> bufs[2] = {out, {tmp.data(), w2, h2, 1, w2}};
    int cur = 0;
    for (int it = 0; it < opts.max_iterations; ++it) {
        const Span2D<std::uint8_t> src = bufs[cur], dst = bufs[1 - cur];
        parallel_for(0, ns, threads, [&](int s) {
            part[s] = refine_stripe<kCentered>(
                in, [&](int y) -> const std::uint8_t* { return src.row(clampi(y, 0, h2 - 1)); },
                dst, stripes[s].r0, stripes[s].r1);
        });
        std::int64_t l1 = 0;
        for (std::int64_t v : part) l1 += v;
        stats.last_l1 = l1;
        if (converged(l1, opts.max_error, std::int64_t{w} * h)) break;
        cur = 1 - cur;
        ++stats.iterations;
    }
    if (cur == 1)
        for (int y = 0; y < h2; ++y) std::memcpy(out.row(y), bufs[1].row(y), w2);
    return stats;
}

}  // namespace

SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts, int threads) {
    return opts.lattice == Lattice::CoSited ? run<false>(in, out, opts, threads)
                                            : run<true>(in, out, opts, threads);
}

std::int64_t seabi_tv_rows(const std::uint8_t* row, const std::uint8_t* below, int w) {
    std::int64_t acc = 0;
    for (int x = 0; x < w; ++x) acc += tv_term(row[x], row[std::min(x + 1, w - 1)], below[x]);
    return acc;
}

void seabi_stream_stripes(const SeabiRowsIn& in, const SeabiRowsOut& out, SeabiMethod method,
                          bool centered, std::int64_t tv, std::int64_t tv_pixels, int r0, int r1,
                          int stripe_rows, int threads) {
    const Threshold th = make_threshold(tv, tv_pixels);
    std::vector<Stripe> stripes;
    for (int a = r0; a < r1; a += stripe_rows)
        stripes.push_back({a, std::min(r1, a + stripe_rows)});
    parallel_for(0, static_cast<int>(stripes.size()), threads, [&](int s) {
        const Stripe st = stripes[s];
        if (method == SeabiMethod::LSeai) {
            if (centered)
                construct_stripe_into<true>(in, out, th, st.r0, st.r1);
            else
                construct_stripe_into<false>(in, out, th, st.r0, st.r1);
        } else if (centered) {
            sil_stripe<true>(in, out, th, st.r0, st.r1);
        } else {
            sil_stripe<false>(in, out, th, st.r0, st.r1);
        }
    });
}

namespace {

// Centre-aligned tap filters: the horizontal pass of input rows [y0 - 3, y1 + 3) (clamped),
// then the vertical pass of output rows [2 y0, 2 y1); output X reads input (X + 1) / 2 - 3 ..
// + 2 (tap_quarter).
void tap_centered(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, bool tap6, int threads) {
    const int w = in.width, h = in.height, ch = in.channels, w2 = 2 * w;
    const int block = 32;
    const int nb = (h + block - 1) / block;
    parallel_for(0, nb, threads, [&](int b) {
        const int y0 = b * block, y1 = std::min(h, y0 + block);
        const int lo = std::max(0, y0 - 3), hi = std::min(h, y1 + 3);
        const std::size_t rw = static_cast<std::size_t>(w2) * ch;
        std::vector<std::uint8_t> mid(static_cast<std::size_t>(hi - lo) * rw);
        std::vector<int> pad(static_cast<std::size_t>(w + 8));
        int* pr = pad.data() + 4;
        for (int y = lo; y < hi; ++y) {
            std::uint8_t* m = mid.data() + static_cast<std::size_t>(y - lo) * rw;
            const std::uint8_t* s = in.row(y);
            for (int c = 0; c < ch; ++c) {
                for (int x = -4; x < w + 4; ++x) pr[x] = s[clampi(x, 0, w - 1) * ch + c];
                for (int x = 0; x < w2; ++x) {
                    const int k = (x + 1) / 2;
                    const int p[6] = {pr[k - 3], pr[k - 2], pr[k - 1], pr[k], pr[k + 1], pr[k + 2]};
                    m[x * ch + c] = static_cast<std::uint8_t>(tap_quarter(p, tap6, x % 2 == 0));
                }
            }
        }
        auto mrow = [&](int y) {
            return mid.data() + static_cast<std::size_t>(clampi(y, 0, h - 1) - lo) * rw;
        };
        for (int y = 2 * y0; y < 2 * y1; ++y) {
            const int k = (y + 1) / 2;
            const std::uint8_t* r[6];
            for (int j = 0; j < 6; ++j) r[j] = mrow(k - 3 + j);
            std::uint8_t* o = out.row(y);
            const bool mirror = y % 2 == 0;
            for (std::size_t x = 0; x < rw; ++x) {
                const int p[6] = {r[0][x], r[1][x], r[2][x], r[3][x], r[4][x], r[5][x]};
                o[x] = static_cast<std::uint8_t>(tap_quarter(p, tap6, mirror));
            }
        }
    });
}

}  // namespace

void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered, int threads) {
    if (centered) return tap_centered(in, out, f == TapFilter::Tap6, threads);
    const int w = in.width, h = in.height, ch = in.channels;
    const bool t4 = f == TapFilter::Tap4;
    // Rows are independent after the horizontal pass: compute the horizontal pass per row
    // (padded by 3 rows of clamped context) inside blocks of output rows.
    const int block = 32;
    const int nb = (h + block - 1) / block;
    parallel_for(0, nb, threads, [&](int b) {
        const int y0 = b * block, y1 = std::min(h, y0 + block);
        const int lo = std::max(0, y0 - 2), hi = std::min(h, y1 + 3);
        const int rw = 2 * w * ch;
        std::vector<std::uint8_t> mid(static_cast<std::size_t>(hi - lo) * rw);
        std::vector<int> pad(static_cast<std::size_t>(w + 6));
        for (int y = lo; y < hi; ++y) {
            std::uint8_t* m = mid.data() + static_cast<std::size_t>(y - lo) * rw;
            for (int c = 0; c < ch; ++c) {
                int* pr = pad.data() + 3;
                const std::uint8_t* s = in.row(y);
                for (int x = -3; x < w + 3; ++x) pr[x] = s[clampi(x, 0, w - 1) * ch + c];
                for (int x = 0; x < w; ++x) {
                    m[2 * x * ch + c] = static_cast<std::uint8_t>(pr[x]);
                    const int v =
                        t4 ? c4(pr[x - 1], pr[x], pr[x + 1], pr[x + 2])
                           : c6(pr[x - 2], pr[x - 1], pr[x], pr[x + 1], pr[x + 2], pr[x + 3]);
                    m[(2 * x + 1) * ch + c] = static_cast<std::uint8_t>(clamp255(v));
                }
            }
        }
        auto mrow = [&](int y) {
            return mid.data() + static_cast<std::size_t>(clampi(y, 0, h - 1) - lo) * rw;
        };
        for (int y = y0; y < y1; ++y) {
            const std::uint8_t* a = mrow(y - 2);
            const std::uint8_t* b1 = mrow(y - 1);
            const std::uint8_t* c0 = mrow(y);
            const std::uint8_t* d = mrow(y + 1);
            const std::uint8_t* e = mrow(y + 2);
            const std::uint8_t* g = mrow(y + 3);
            std::uint8_t* o0 = out.row(2 * y);
            std::uint8_t* o1 = out.row(2 * y + 1);
            std::memcpy(o0, c0, rw);
            for (int x = 0; x < rw; ++x) {
                const int v =
                    t4 ? c4(b1[x], c0[x], d[x], e[x]) : c6(a[x], b1[x], c0[x], d[x], e[x], g[x]);
                o1[x] = static_cast<std::uint8_t>(clamp255(v));
            }
        }
    });
}

}  // namespace upres::cpu
