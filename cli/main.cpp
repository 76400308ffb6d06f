// upres command-line tool. Exit codes: 0 success, 1 usage error (bad flags or arguments),
// 2 and up: upres::Error codes (see upres::exit_code and docs/cli.md).
#include "app.hpp"

int main(int argc, char** argv) { return upres::cli::run(argc, argv); }
