// Reads the test vector files of tests/vectors/auth/ (format in that folder's
// README.md). For *_test.cc only: the library never includes it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "auth/encoding.h"
#include "base/bytes.h"

namespace rw::auth::testing {

// One record: name to value octets (text values are their UTF-8 octets).
class VectorRecord {
 public:
  void set(const std::string& name, std::string value) { values_[name] = std::move(value); }
  [[nodiscard]] bool has(const std::string& name) const { return values_.contains(name); }
  // The value as text; fails the test when the name is missing.
  [[nodiscard]] std::string text(const std::string& name) const {
    auto found = values_.find(name);
    EXPECT_NE(found, values_.end()) << "vector has no " << name;
    return found == values_.end() ? std::string() : found->second;
  }
  [[nodiscard]] std::vector<std::uint8_t> bytes(const std::string& name) const {
    const std::string value = text(name);
    return {value.begin(), value.end()};
  }
  [[nodiscard]] std::uint8_t octet(const std::string& name) const {
    const auto value = bytes(name);
    EXPECT_EQ(value.size(), 1u) << name;
    return value.empty() ? 0 : value[0];
  }

 private:
  std::map<std::string, std::string> values_;
};

inline std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Decodes `"text"` literally, or hexadecimal octets with optional spaces.
inline std::string decode_value(const std::string& raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  std::string digits;
  for (char c : raw) {
    if (c != ' ') digits.push_back(c);
  }
  std::string octets(digits.size() / 2, '\0');
  const bool decoded =
      hex_decode(digits, MutableBytes(reinterpret_cast<std::uint8_t*>(octets.data()), octets.size()));
  EXPECT_TRUE(decoded && digits.size() % 2 == 0) << "not hex: " << raw;
  return octets;
}

// Loads tests/vectors/auth/<file_name>; fails the test when it cannot.
inline std::vector<VectorRecord> load_vectors(const std::string& file_name) {
  const std::string path = std::string(RW_SOURCE_ROOT) + "/tests/vectors/auth/" + file_name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<VectorRecord> records;
  bool in_record = false;
  std::string line;
  while (std::getline(in, line)) {
    const std::string content = trim(line);
    if (content.starts_with('#')) continue;
    if (content.empty()) {
      in_record = false;
      continue;
    }
    const auto equals = content.find('=');
    EXPECT_NE(equals, std::string::npos) << path << ": " << line;
    if (equals == std::string::npos) continue;
    if (!in_record) records.emplace_back();
    in_record = true;
    records.back().set(trim(content.substr(0, equals)), decode_value(trim(content.substr(equals + 1))));
  }
  EXPECT_FALSE(records.empty()) << path << " holds no vectors";
  return records;
}

// The one record of a file that holds a single example.
inline VectorRecord load_vector(const std::string& file_name) {
  auto records = load_vectors(file_name);
  EXPECT_EQ(records.size(), 1u) << file_name;
  return records.empty() ? VectorRecord{} : records.front();
}

// Copies a vector value into a fixed-size array (a hash or key); fails the
// test when the sizes differ.
template <std::size_t N>
std::array<std::uint8_t, N> to_array(const std::vector<std::uint8_t>& bytes) {
  std::array<std::uint8_t, N> array{};
  EXPECT_EQ(bytes.size(), N);
  std::copy_n(bytes.begin(), std::min(bytes.size(), N), array.begin());
  return array;
}

template <std::size_t N>
std::vector<std::uint8_t> to_vector(const std::array<std::uint8_t, N>& array) {
  return {array.begin(), array.end()};
}

}  // namespace rw::auth::testing
