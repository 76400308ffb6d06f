// Uses an installed upres: prints the build, writes an image to a PNG file, reads it back and
// checks every pixel, and converts u8 -> f32 -> u8 exactly. Exit code 0 when all is well.
//   upres_consumer OUT.png
#include <cstdint>
#include <cstdio>

#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/io.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: upres_consumer OUT.png\n");
        return 1;
    }
    try {
        const upres::BuildInfo b = upres::build_info();
        std::printf("upres %s, CUDA backends %s, OpenMP %s\n", b.version.c_str(),
                    b.cuda ? "yes" : "no", b.openmp ? "yes" : "no");

        // A 37 x 23 RGB gradient (odd sizes on purpose).
        upres::Image<std::uint8_t> img(37, 23, 3);
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                for (int c = 0; c < 3; ++c)
                    img(x, y, c) = static_cast<std::uint8_t>((x * 7 + y * 11 + c * 50) % 256);

        upres::write_image(argv[1], img.view());
        upres::AnyImage back = upres::read_image(argv[1]);
        const auto& r = back.as<std::uint8_t>();
        if (r.width() != img.width() || r.height() != img.height() || r.channels() != 3) {
            std::fprintf(stderr, "upres_consumer: read back %d x %d x %d\n", r.width(), r.height(),
                         r.channels());
            return 1;
        }
        upres::Image<float> f(img.width(), img.height(), 3);
        upres::convert(r.view(), f.view());  // u8 [0, 255] -> f32 [0, 1]
        upres::Image<std::uint8_t> u(img.width(), img.height(), 3);
        upres::convert(f.view(), u.view());  // and back, rounding to nearest
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                for (int c = 0; c < 3; ++c)
                    if (r(x, y, c) != img(x, y, c) || u(x, y, c) != img(x, y, c)) {
                        std::fprintf(stderr, "upres_consumer: pixel (%d, %d, %d) differs\n", x, y,
                                     c);
                        return 1;
                    }
        std::printf("PNG and u8 -> f32 -> u8 round trips of a %d x %d image: exact (%s)\n",
                    img.width(), img.height(), argv[1]);
    } catch (const upres::Error& e) {
        std::fprintf(stderr, "upres_consumer: %s error: %s\n", upres::to_string(e.code()),
                     e.what());
        return 2;
    }
    return 0;
}
