// upres::Error: the one exception type thrown across the public API.
//
// Every failure reaches the caller as an upres::Error carrying an ErrorCode and a message that
// names what is wrong and what is allowed. The CLI maps codes to exit codes (exit_code()); the
// Python bindings will map them to ValueError / OSError / MemoryError / RuntimeError.
#pragma once

#include <stdexcept>
#include <string>

namespace upres {

enum class ErrorCode {
    InvalidArgument = 1,  // a value, size, type or option the operation does not accept
    UnsupportedFormat,    // a file format, pixel depth or channel layout not handled
    IoError,              // a file cannot be opened, read, written or renamed
    CorruptData,          // a file is truncated, malformed or inconsistent
    OutOfMemory,          // host or device allocation failed
    BackendUnavailable,   // the requested backend is not built in or has no device
    CudaError,            // a CUDA runtime call or kernel launch failed
    Internal,             // a broken invariant inside upres (a bug: please report it)
};

// Stable lower-case name of a code ("invalid_argument", ...).
const char* to_string(ErrorCode code) noexcept;

// Exit code used by the CLI for an error of this code: 2 + (code - 1). 0 is success and 1 is a
// command-line usage error.
int exit_code(ErrorCode code) noexcept;

class Error : public std::runtime_error {
  public:
    Error(ErrorCode code, const std::string& message);
    ErrorCode code() const noexcept { return code_; }

  private:
    ErrorCode code_;
};

}  // namespace upres
