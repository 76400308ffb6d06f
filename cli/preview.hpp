// Colour-mapped previews of scalar maps for the CLI's --preview options (a picture to look at,
// not data: the maps themselves go to float files).
#pragma once

#include <cstdint>

#include <upres/image.hpp>

namespace upres::cli {

// RGB u8: `map` coloured with the Turbo colour map over [lo, hi] (values outside clamped,
// non-finite values black), with a legend band below: the colour bar over the width and the
// values at its ends and middle.
Image<std::uint8_t> colour_preview(ImageView<const float> map, double lo, double hi);

}  // namespace upres::cli
