// Small tokenizer for the text headers of PFM and PNM files (not installed).
#pragma once

#include <cctype>
#include <cstdio>
#include <string>

#include "io/io_internal.hpp"

namespace upres::io_detail {

// Reads whitespace-separated tokens from a file header; '#' starts a comment to the end of
// the line when comments are allowed (PNM). Tokens longer than 64 characters are refused.
class HeaderReader {
  public:
    HeaderReader(const std::string& path, std::FILE* f, const char* format, bool comments)
        : path_(path), f_(f), format_(format), comments_(comments) {}

    std::string token(const char* what) {
        int c = std::fgetc(f_);
        for (;;) {
            if (c == EOF) truncated(what);
            if (comments_ && c == '#') {
                while (c != '\n' && c != '\r' && c != EOF) c = std::fgetc(f_);
                continue;
            }
            if (!std::isspace(c)) break;
            c = std::fgetc(f_);
        }
        std::string tok;
        while (c != EOF && !std::isspace(c) && !(comments_ && c == '#')) {
            tok.push_back(static_cast<char>(c));
            if (tok.size() > 64)
                fail(ErrorCode::CorruptData, path_,
                     std::string("malformed ") + format_ + " header: " + what + " is too long");
            c = std::fgetc(f_);
        }
        if (c == '#') std::ungetc(c, f_);
        last_separator_ = c;  // '#' (a comment right after the token) is not whitespace
        return tok;
    }

    // A non-negative decimal integer.
    long long integer(const char* what) {
        const std::string t = token(what);
        long long v = 0;
        if (t.empty() || t.size() > 12) bad(what, t);
        for (char ch : t) {
            if (ch < '0' || ch > '9') bad(what, t);
            v = v * 10 + (ch - '0');
        }
        return v;
    }

    // The single whitespace character that ends the header must have been consumed.
    void expect_data_start(const char* what) {
        if (last_separator_ == EOF || !std::isspace(last_separator_))
            fail(ErrorCode::CorruptData, path_,
                 std::string("malformed ") + format_ + " header: no whitespace after the " + what);
    }

    [[noreturn]] void bad(const char* what, const std::string& tok) {
        fail(ErrorCode::CorruptData, path_,
             std::string("malformed ") + format_ + " header: bad " + what + " '" + tok + "'");
    }
    [[noreturn]] void truncated(const char* what) {
        fail(ErrorCode::CorruptData, path_,
             std::string("truncated ") + format_ + " header (end of file before the " + what + ")");
    }

  private:
    const std::string& path_;
    std::FILE* f_;
    const char* format_;
    bool comments_;
    int last_separator_ = EOF;
};

}  // namespace upres::io_detail
