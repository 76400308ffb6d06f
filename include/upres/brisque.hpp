// BRISQUE, the blind/referenceless image spatial quality evaluator (Mittal, Moorthy and Bovik,
// "No-reference image quality assessment in the spatial domain", IEEE TIP 2012), as the
// reference implementation upres follows computes it (the `brisque` package, Apache-2.0, whose
// SVR model upres ships: models/brisque_svm.txt, models/brisque_range.txt; docs/ops/brisque.md).
// Lower scores are better (about 0 to 100).
//
//   Gray: BT.709 luma 0.2125 R + 0.7154 G + 0.0721 B on [0, 1] (scikit-image's rgb2gray;
//   u8 / 255, u16 / 65535, f32 as is); gray images as they are; alpha ignored.
//   MSCN coefficients: (I - mu) / (sigma + 1/255), mu and E[I^2] the image filtered by the
//   normalised 7 x 7 Gaussian of sigma 7/6 with zero padding (scipy.signal.convolve2d 'same'),
//   sigma = sqrt(|mu^2 - E[I^2]|).
//   Five coefficient sets: the MSCN map and its products with the right, lower, lower-right
//   neighbour and (lower-left, upper-right) pairs.
//   Asymmetric generalised Gaussian fit of each: r = mean|x|^2 / mean x^2, gamma = sigma_l /
//   sigma_r (sigma_l^2 the mean of x^2 over x < 0, sigma_r^2 over x >= 0), R = r (gamma^3 + 1)
//   (gamma + 1) / (gamma^2 + 1)^2, alpha the root of Gamma(2/a)^2 / (Gamma(1/a) Gamma(3/a)) = R,
//   mean = (sigma_r - sigma_l) sqrt(Gamma(1/a) / Gamma(3/a)) Gamma(2/a) / Gamma(1/a).
//   Features: MSCN: alpha, (sigma_l^2 + sigma_r^2) / 2; each product: alpha, mean, sigma_l^2,
//   sigma_r^2: 18 per scale; the second scale is the gray image halved by OpenCV's INTER_CUBIC
//   resize (Keys a = -0.75, centre-aligned, replicated borders, size rounded half to even).
//   Score: the 36 features scaled to [-1, 1] by the model's ranges, then the epsilon-SVR with
//   an RBF kernel: sum_i c_i exp(-gamma |x - s_i|^2) - rho.
//
// Input: 1, 3 or 4 channels (u8, u16, f32 on [0, 1], finite), host memory, at least 14 x 14
// (the half-size scale needs the 7 x 7 window); an image whose coefficients have no spread (a
// flat image) cannot be fitted: InvalidArgument. The arithmetic follows the reference
// package's bit for bit up to the MSCN map (gray, window values, summation order; on flat
// regions the MSCN values are rounding noise whose signs decide the fit), so the features agree
// with it within 1e-3 relative on the eval photos (tests). Backends: Reference and Cpu (the
// same arithmetic, OpenMP over rows), equal within 1e-9 relative (the sums' order); Cuda:
// BackendUnavailable. The model: `model_dir` (default: the directory of the bundled models,
// srcnn_model_dir()); a missing file is Error(IoError), a malformed one Error(CorruptData).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

inline constexpr int kBrisqueFeatures = 36;
using BrisqueFeatures = std::array<double, kBrisqueFeatures>;

struct BrisqueOptions {
    std::string model_dir;  // where brisque_svm.txt and brisque_range.txt are; "": the bundled
};

BrisqueFeatures brisque_features(ImageView<const std::uint8_t> img, const Context& ctx = {});
BrisqueFeatures brisque_features(ImageView<const std::uint16_t> img, const Context& ctx = {});
BrisqueFeatures brisque_features(ImageView<const float> img, const Context& ctx = {});

// The score of features (the model's SVR).
double brisque_score(const BrisqueFeatures& features, const BrisqueOptions& opts = {});

double brisque(ImageView<const std::uint8_t> img, const BrisqueOptions& opts = {},
               const Context& ctx = {});
double brisque(ImageView<const std::uint16_t> img, const BrisqueOptions& opts = {},
               const Context& ctx = {});
double brisque(ImageView<const float> img, const BrisqueOptions& opts = {},
               const Context& ctx = {});
double brisque(const AnyImage& img, const BrisqueOptions& opts = {}, const Context& ctx = {});

}  // namespace upres
