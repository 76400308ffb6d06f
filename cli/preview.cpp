// Colour-mapped previews of scalar maps (preview.hpp).
#include "preview.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/core.h>

namespace upres::cli {

namespace {

// Turbo (Mikhailov, Google 2019), its published polynomial fit: t in [0, 1] -> RGB in [0, 1].
void turbo(double t, std::uint8_t* rgb) {
    t = std::clamp(t, 0.0, 1.0);
    const double t2 = t * t, t3 = t2 * t, t4 = t3 * t, t5 = t4 * t;
    const double r = 0.13572138 + 4.61539260 * t - 42.66032258 * t2 + 132.13108234 * t3 -
                     152.94239396 * t4 + 59.28637943 * t5;
    const double g = 0.09140261 + 2.19418839 * t + 4.84296658 * t2 - 14.18503333 * t3 +
                     4.27729857 * t4 + 2.82956604 * t5;
    const double b = 0.10667330 + 12.64194608 * t - 60.58204836 * t2 + 110.36276771 * t3 -
                     89.90310912 * t4 + 27.34824973 * t5;
    auto to8 = [](double v) {
        return static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(v, 0.0, 1.0)));
    };
    rgb[0] = to8(r);
    rgb[1] = to8(g);
    rgb[2] = to8(b);
}

// A 3 x 5 pixel font for the legend's numbers: rows top to bottom, 3 bits each (MSB left).
int glyph_row(char c, int row) {
    // Rows of '0'..'9', '-', '.', ' ' as 3-bit masks.
    static const int kRows[13][5] = {
        {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
        {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
        {0, 0, 7, 0, 0}, {0, 0, 0, 0, 2}, {0, 0, 0, 0, 0}};
    int i = 12;
    if (c >= '0' && c <= '9')
        i = c - '0';
    else if (c == '-')
        i = 10;
    else if (c == '.')
        i = 11;
    return kRows[i][row];
}

// Draws `text` with its top-left corner at (x0, y0), each font pixel a scale x scale square.
void draw_text(ImageView<std::uint8_t> img, int x0, int y0, const std::string& text, int scale) {
    for (std::size_t k = 0; k < text.size(); ++k)
        for (int row = 0; row < 5; ++row) {
            const int bits = glyph_row(text[k], row);
            for (int col = 0; col < 3; ++col) {
                if (!(bits & (4 >> col))) continue;
                for (int dy = 0; dy < scale; ++dy)
                    for (int dx = 0; dx < scale; ++dx) {
                        const int x = x0 + (static_cast<int>(k) * 4 + col) * scale + dx,
                                  y = y0 + row * scale + dy;
                        if (x < 0 || y < 0 || x >= img.width() || y >= img.height()) continue;
                        std::uint8_t* p = img.row(y) + 3 * x;
                        p[0] = p[1] = p[2] = 255;
                    }
            }
        }
}

std::string label(double v) {
    std::string s = fmt::format("{:.1f}", v);
    if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
    return s;
}

}  // namespace

Image<std::uint8_t> colour_preview(ImageView<const float> map, double lo, double hi) {
    const int w = map.width(), h = map.height();
    const int scale = std::max(1, std::min(4, w / 160));
    const int bar = 6 * scale, text = 7 * scale, band = bar + text + 2 * scale;
    Image<std::uint8_t> out(w, h + band, 3);
    const double span = hi > lo ? hi - lo : 1.0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const float v = map.row(y)[x];
            std::uint8_t* p = out.view().row(y) + 3 * x;
            if (!std::isfinite(v))
                p[0] = p[1] = p[2] = 0;
            else
                turbo((v - lo) / span, p);
        }
    for (int y = h; y < h + band; ++y)
        for (int x = 0; x < w; ++x) {
            std::uint8_t* p = out.view().row(y) + 3 * x;
            if (y < h + scale + bar && y >= h + scale)
                turbo(w > 1 ? double(x) / (w - 1) : 0.0, p);
            else
                p[0] = p[1] = p[2] = 0;
        }
    // Labels: the range's ends and middle under the bar.
    const int ty = h + 2 * scale + bar;
    const std::string a = label(lo), m = label((lo + hi) / 2), b = label(hi);
    auto width_of = [&](const std::string& s) { return static_cast<int>(s.size()) * 4 * scale; };
    draw_text(out.view(), scale, ty, a, scale);
    draw_text(out.view(), (w - width_of(m)) / 2, ty, m, scale);
    draw_text(out.view(), w - width_of(b), ty, b, scale);
    return out;
}

}  // namespace upres::cli
