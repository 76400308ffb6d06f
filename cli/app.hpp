// The whole command line as a function: main() calls it, and so does the fuzz target of the
// arguments (fuzz/fuzz_cli.cpp). Each call builds a fresh CLI11 app and resets the CLI's global
// settings (--max-pixels), so calls are independent.
#pragma once

namespace upres::cli {

// Parses argv and runs the chosen command. Returns the process exit code: 0 success, 1 usage
// error (bad flags or arguments), 2 and up an upres::Error's code (upres::exit_code).
int run(int argc, char** argv);

}  // namespace upres::cli
