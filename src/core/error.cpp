#include <upres/error.hpp>

namespace upres {

const char* to_string(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::InvalidArgument:
            return "invalid_argument";
        case ErrorCode::UnsupportedFormat:
            return "unsupported_format";
        case ErrorCode::IoError:
            return "io_error";
        case ErrorCode::CorruptData:
            return "corrupt_data";
        case ErrorCode::OutOfMemory:
            return "out_of_memory";
        case ErrorCode::BackendUnavailable:
            return "backend_unavailable";
        case ErrorCode::CudaError:
            return "cuda_error";
        case ErrorCode::Internal:
            return "internal";
    }
    return "unknown";
}

int exit_code(ErrorCode code) noexcept { return 1 + static_cast<int>(code); }

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

}  // namespace upres
