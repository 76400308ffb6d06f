// libFuzzer target: one upres decoder (UPRES_FUZZ_FORMAT: png, jpeg, tiff, pfm, pnm, npy) or
// the .srcnn weights reader ("srcnn") on arbitrary bytes. The bytes go to an anonymous
// in-memory file (memfd) read through its /proc path, as a user's file would be; an
// upres::Error is the expected outcome for bad input, anything else (a crash, a sanitizer
// report, another exception, a leak) is a finding. Built by tools/fuzz.sh (docs/reliability.md).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

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
        } else {
            upres::ReadOptions o;
            o.format = upres::parse_file_format(fmt);
            const upres::AnyImage img = upres::read_image(f.path(), o);
            (void)img;
        }
    } catch (const upres::Error&) {
        // refused with a clear error: the expected outcome for bad bytes
    }
    return 0;
}
