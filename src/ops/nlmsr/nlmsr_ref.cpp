// The reference NLM fusion: eq. (5) literally, in double (upres/nlmsr.hpp).
#include <cstddef>
#include <vector>

#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

namespace upres::ref {

void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan) {
    const int W = estimate.width, H = estimate.height, pr = plan.patch_r, sr = plan.search_r;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            double num = 0.0, den = 0.0;
            for (const Span2D<const float>& u : frames)
                for (int oy = -sr; oy <= sr; ++oy)
                    for (int ox = -sr; ox <= sr; ++ox) {
                        if (!nlmsr::candidate(x + ox, y + oy, W, H)) continue;
                        double d = 0.0;
                        for (int i = -pr; i <= pr; ++i)
                            for (int j = -pr; j <= pr; ++j) {
                                const double a = estimate(nlmsr::clamp_index(x + j, W),
                                                          nlmsr::clamp_index(y + i, H));
                                const double b = u(nlmsr::clamp_index(x + ox + j, W),
                                                   nlmsr::clamp_index(y + oy + i, H));
                                d += (a - b) * (a - b);
                            }
                        const double w = nlmsr::weight(d, plan.neg_inv);
                        num += w * u(x + ox, y + oy);
                        den += w;
                    }
            out(x, y) =
                den >= nlmsr::kMinWeightSum ? static_cast<float>(num / den) : estimate(x, y);
        }
}

void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             Span2D<const float> add, float k) {
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
            const float v =
                axis == 0 ? nlmsr::psf_sample<double>(in.row(y), 1, in.width, x, taps)
                          : nlmsr::psf_sample<double>(in.data + x, in.stride, in.height, y, taps);
            out(x, y) = nlmsr::psf_epilogue(v, add.data ? &add(x, y) : nullptr, k);
        }
}

}  // namespace upres::ref
