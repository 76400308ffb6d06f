// The libSGM peer of the semi-global matcher (tools/peers/libsgm_peer.sh builds it against a
// libSGM source tree fetched beside upres; libSGM's code is not part of upres).
//
//   libsgm_driver time W H D PATHS          timing on a random-texture pair (the right image
//                                          the left shifted by 20), device-resident, events:
//                                          prints "libsgm_time paths=P ms=<median of 50>"
//   libsgm_driver run L.raw R.raw W H D PATHS OUT.raw
//                                          the disparities of a gray u8 pair (raw, row-major)
//                                          as u16 x 16 (libSGM's sub-pixel fixed point),
//                                          invalid = libSGM's invalid value
//
// Parameters: census 9 x 7 (the full window, as upres's), P1 10, P2 120, uniqueness 0.95,
// left-right tolerance 1, sub-pixel on: libSGM's defaults but for the census type.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <libsgm.h>

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

sgm::StereoSGM::Parameters params(int paths) {
    sgm::StereoSGM::Parameters p(10, 120, 0.95f, true,
                                 paths == 8 ? sgm::PathType::SCAN_8PATH : sgm::PathType::SCAN_4PATH,
                                 0, 1, sgm::CensusType::CENSUS_9x7);
    return p;
}

std::vector<std::uint8_t> read_raw(const char* path, std::size_t n) {
    std::vector<std::uint8_t> v(n);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n));
    if (!f) {
        std::fprintf(stderr, "cannot read %zu bytes from %s\n", n, path);
        std::exit(1);
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 6 && std::string(argv[1]) == "time") {
        const int w = std::atoi(argv[2]), h = std::atoi(argv[3]), d = std::atoi(argv[4]),
                  paths = std::atoi(argv[5]), shift = 20;
        const std::size_t n = static_cast<std::size_t>(w) * h;
        std::vector<std::uint8_t> base(static_cast<std::size_t>(w + shift) * h), l(n), r(n);
        std::mt19937 rng(12);
        for (auto& v : base) v = static_cast<std::uint8_t>(rng() & 255);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                l[static_cast<std::size_t>(y) * w + x] =
                    base[static_cast<std::size_t>(y) * (w + shift) + x];
                r[static_cast<std::size_t>(y) * w + x] =
                    base[static_cast<std::size_t>(y) * (w + shift) + x + shift];
            }
        void *dl, *dr, *dd;
        check(cudaMalloc(&dl, n), "cudaMalloc");
        check(cudaMalloc(&dr, n), "cudaMalloc");
        check(cudaMalloc(&dd, 2 * n), "cudaMalloc");
        check(cudaMemcpy(dl, l.data(), n, cudaMemcpyHostToDevice), "copy");
        check(cudaMemcpy(dr, r.data(), n, cudaMemcpyHostToDevice), "copy");
        sgm::StereoSGM sgm(w, h, d, 8, 16, sgm::EXECUTE_INOUT_CUDA2CUDA, params(paths));
        for (int i = 0; i < 5; ++i) sgm.execute(dl, dr, dd);
        check(cudaDeviceSynchronize(), "warm-up");
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        std::vector<float> ms;
        for (int i = 0; i < 50; ++i) {
            cudaEventRecord(e0);
            sgm.execute(dl, dr, dd);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float t = 0;
            cudaEventElapsedTime(&t, e0, e1);
            ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        std::printf("libsgm_time paths=%d w=%d h=%d d=%d ms=%.4f\n", paths, w, h, d,
                    ms[ms.size() / 2]);
        return 0;
    }
    if (argc >= 9 && std::string(argv[1]) == "run") {
        const int w = std::atoi(argv[4]), h = std::atoi(argv[5]), d = std::atoi(argv[6]),
                  paths = std::atoi(argv[7]);
        const std::size_t n = static_cast<std::size_t>(w) * h;
        const std::vector<std::uint8_t> l = read_raw(argv[2], n), r = read_raw(argv[3], n);
        std::vector<std::uint16_t> out(n);
        sgm::StereoSGM sgm(w, h, d, 8, 16, sgm::EXECUTE_INOUT_HOST2HOST, params(paths));
        sgm.execute(l.data(), r.data(), out.data());
        std::ofstream f(argv[8], std::ios::binary);
        f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(2 * n));
        std::printf("libsgm_run invalid=%d\n", sgm.get_invalid_disparity());
        return f ? 0 : 1;
    }
    std::fprintf(stderr, "usage: libsgm_driver time W H D PATHS | run L R W H D PATHS OUT\n");
    return 2;
}
