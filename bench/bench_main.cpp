// main() of upres_bench: Google Benchmark's, plus the build and device in the report context
// (console header and the "context" object of --benchmark_format=json output).
#include <benchmark/benchmark.h>

#include <string>

#include <upres/context.hpp>

int main(int argc, char** argv) {
    const upres::BuildInfo info = upres::build_info();
    benchmark::AddCustomContext("upres_version", info.version);
    benchmark::AddCustomContext(
        "upres_cuda",
        info.cuda ? "on (sm_" + info.cuda_archs + ", runtime " + info.cuda_runtime + ")" : "off");
    benchmark::AddCustomContext("upres_openmp_threads", std::to_string(info.openmp_max_threads));
    benchmark::AddCustomContext("upres_compiler", info.compiler);
    std::string devices = upres::cuda_device_info();
    while (!devices.empty() && devices.back() == '\n') devices.pop_back();
    benchmark::AddCustomContext("cuda_devices", devices.empty() ? "none" : devices);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
