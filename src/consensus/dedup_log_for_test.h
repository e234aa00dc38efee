// A deterministic test state machine: an append-only list of (index, entry)
// that ignores an entry whose bytes it already holds (de-duplication by
// content, as the ledger does by record key). Test-only.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/assert.h"
#include "consensus/replicated_state.h"

namespace rw::consensus {

class DedupLog : public ReplicatedState {
 public:
  using Record = std::pair<std::uint64_t, std::vector<std::uint8_t>>;

  void apply(std::uint64_t index, Bytes entry) override {
    RW_ASSERT(index > last_index_);  // libraft applies in order.
    last_index_ = index;
    std::vector<std::uint8_t> bytes(entry.begin(), entry.end());
    if (!seen_.insert(bytes).second) return;
    records_.emplace_back(index, std::move(bytes));
    while (keep_latest != 0 && records_.size() > keep_latest) {
      seen_.erase(records_.front().second);
      records_.erase(records_.begin());
    }
  }

  // When not 0, only the latest this many records are kept (and
  // de-duplicated against), so that the snapshot stays small whatever was
  // applied: for tests of the log's byte bound with a state below it.
  std::size_t keep_latest = 0;

  // Layout: u64 last index, u32 count, then per record u64 index, u32 length, bytes.
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override {
    std::vector<std::uint8_t> out;
    put(out, last_index_, 8);
    put(out, records_.size(), 4);
    for (const auto& [index, bytes] : records_) {
      put(out, index, 8);
      put(out, bytes.size(), 4);
      out.insert(out.end(), bytes.begin(), bytes.end());
    }
    return out;
  }

  [[nodiscard]] bool restore(Bytes snapshot) override {
    std::size_t at = 0;
    std::uint64_t last = 0;
    std::uint64_t count = 0;
    if (!get(snapshot, at, last, 8) || !get(snapshot, at, count, 4)) return false;
    std::vector<Record> records;
    std::set<std::vector<std::uint8_t>> seen;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t index = 0;
      std::uint64_t length = 0;
      if (!get(snapshot, at, index, 8) || !get(snapshot, at, length, 4)) return false;
      if (snapshot.size() - at < length) return false;
      std::vector<std::uint8_t> bytes(snapshot.begin() + static_cast<std::ptrdiff_t>(at),
                                      snapshot.begin() + static_cast<std::ptrdiff_t>(at + length));
      at += length;
      seen.insert(bytes);
      records.emplace_back(index, std::move(bytes));
    }
    if (at != snapshot.size()) return false;
    last_index_ = last;
    records_ = std::move(records);
    seen_ = std::move(seen);
    ++restores_;
    return true;
  }

  [[nodiscard]] const std::vector<Record>& records() const { return records_; }
  [[nodiscard]] std::uint64_t last_index() const { return last_index_; }
  [[nodiscard]] unsigned restores() const { return restores_; }

  // The record applied at `index`, or nullptr.
  [[nodiscard]] const std::vector<std::uint8_t>* at_index(std::uint64_t index) const {
    for (const auto& record : records_) {
      if (record.first == index) return &record.second;
    }
    return nullptr;
  }
  [[nodiscard]] bool holds(const std::vector<std::uint8_t>& bytes) const { return seen_.count(bytes) != 0; }
  // How many times `bytes` is held: 1 once applied, as duplicates are ignored.
  [[nodiscard]] unsigned copies(const std::vector<std::uint8_t>& bytes) const {
    unsigned count = 0;
    for (const auto& record : records_) count += record.second == bytes;
    return count;
  }

  // The entry named `name`: its bytes.
  [[nodiscard]] static std::vector<std::uint8_t> entry(const std::string& name) {
    return {name.begin(), name.end()};
  }

 private:
  static void put(std::vector<std::uint8_t>& out, std::uint64_t value, int width) {
    for (int i = width - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
  static bool get(Bytes in, std::size_t& at, std::uint64_t& value, std::size_t width) {
    if (in.size() - at < width) return false;
    value = 0;
    for (std::size_t i = 0; i < width; ++i) value = value << 8 | in[at + i];
    at += width;
    return true;
  }

  std::uint64_t last_index_ = 0;
  std::vector<Record> records_;
  std::set<std::vector<std::uint8_t>> seen_;
  unsigned restores_ = 0;
};

}  // namespace rw::consensus
