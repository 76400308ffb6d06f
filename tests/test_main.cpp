#include <gtest/gtest.h>

#include <cstdio>

#include <upres/context.hpp>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (!upres::cuda_available())
        std::printf("[ upres    ] no CUDA device: GPU tests are SKIPPED, not passed\n");
    return RUN_ALL_TESTS();
}
