// libFuzzer target: one upres decoder (UPRES_FUZZ_FORMAT: png, jpeg, tiff, pfm, pnm, npy), the
// row-wise TIFF reader ("tiffrows") or the .srcnn weights reader ("srcnn") on arbitrary bytes.
// The bytes go to an anonymous in-memory file (memfd) read through its /proc path, as a user's
// file would be; an upres::Error is the expected outcome for bad input, anything else (a crash,
// a sanitizer report, another exception, a leak) is a finding. Built by tools/fuzz.sh
// (docs/reliability.md).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <upres/error.hpp>
#include <upres/io.hpp>
#include <upres/srcnn.hpp>

#include "memfile.hpp"

using upres_fuzz::MemFile;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const MemFile f(data, size);
    const std::string fmt = UPRES_FUZZ_FORMAT;
    try {
        if (fmt == "srcnn") {
            (void)upres::load_srcnn_model(f.path());
        } else if (fmt == "tiffrows") {
            // The row-wise TIFF reader of tiled execution: bands with a halo at the top and at
            // the bottom (rows up to 16 MiB wide: the reader's own limit is 2^20 pixels).
            upres::TiffRowReader r(f.path());
            const std::size_t row =
                static_cast<std::size_t>(r.width()) * r.channels() * upres::pixel_size(r.type());
            if (row <= (std::size_t{16} << 20)) {
                std::vector<unsigned char> buf(row * 8);
                const std::ptrdiff_t stride =
                    static_cast<std::ptrdiff_t>(row) /
                    static_cast<std::ptrdiff_t>(upres::pixel_size(r.type()));
                for (int y = 0; y < r.height() && y < 64; y += 6)
                    r.read_rows(y, std::min(8, r.height() - y), buf.data(), stride);
                const int last = std::max(0, r.height() - 8);
                r.read_rows(last, r.height() - last, buf.data(), stride);
            }
        } else {
            // A header may declare up to max_pixels pixels, and the image is then allocated
            // (untouched until its data decodes): at the default 2^30, a 510-byte TIFF asked for
            // 6.4 GB of float samples, beyond libFuzzer's 4 GB malloc limit (-rss_limit_mb). At
            // 2^26 the largest image (4 float channels) is 1 GB, and the limit's check is fuzzed
            // as well.
            upres::ReadOptions o;
            o.max_pixels = std::int64_t{1} << 26;
            o.format = upres::parse_file_format(fmt);
            const upres::AnyImage img = upres::read_image(f.path(), o);
            (void)img;
        }
    } catch (const upres::Error&) {
        // refused with a clear error: the expected outcome for bad bytes
    }
    return 0;
}
