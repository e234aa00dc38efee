// Test support for the radius tests and fuzz target: reads the protocol
// vectors of tests/vectors/radius/ (hex text with '#' comments) and holds the
// RFC 2865 §7 shared secret. Used only by *_test.cc; allocates freely.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/bytes.h"

namespace rw::radius::testing {

// The shared secret of every RFC 2865 §7 example.
inline constexpr std::string_view kRfc2865Secret = "xyzzy5461";

inline std::string vector_path(const std::string& name) {
  const char* root = std::getenv("RW_SOURCE_ROOT");
#ifdef RW_SOURCE_ROOT
  if (root == nullptr) root = RW_SOURCE_ROOT;
#endif
  if (root == nullptr) root = ".";
  return std::string(root) + "/tests/vectors/radius/" + name;
}

// A broken test setup: stop at once, saying why.
[[noreturn]] inline void missing(const std::string& what) {
  std::fprintf(stderr, "radius test vectors: %s\n", what.c_str());
  std::abort();
}

// Parses hex octets separated by white space or not; '#' starts a comment.
inline std::vector<std::uint8_t> parse_hex(const std::string& text) {
  std::vector<std::uint8_t> out;
  int high = -1;
  bool comment = false;
  for (char c : text) {
    if (c == '\n') comment = false;
    if (comment || c == '#') {
      comment = true;
      continue;
    }
    int nibble = -1;
    if (c >= '0' && c <= '9') nibble = c - '0';
    if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') nibble = c - 'A' + 10;
    if (nibble < 0) continue;
    if (high < 0) {
      high = nibble;
    } else {
      out.push_back(static_cast<std::uint8_t>(high << 4 | nibble));
      high = -1;
    }
  }
  if (high >= 0) missing("odd number of hex digits in a vector");
  return out;
}

inline std::string read_text(const std::string& name) {
  std::ifstream in(vector_path(name));
  if (!in) missing("cannot open " + vector_path(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The packet bytes of tests/vectors/radius/<name>.
inline std::vector<std::uint8_t> read_vector(const std::string& name) { return parse_hex(read_text(name)); }

}  // namespace rw::radius::testing
