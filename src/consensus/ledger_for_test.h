// The real accounting ledger (src/accounting/ledger.h) behind the
// ReplicatedState port, for the raft_fixture cluster tests, plus the records
// those tests submit. Test-only: the member's production adapter lives in
// src/member.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "accounting/entry.h"
#include "accounting/ledger.h"
#include "consensus/replicated_state.h"

namespace rw::consensus {

class TestLedger : public ReplicatedState {
 public:
  void apply(std::uint64_t index, Bytes entry) override {
    (void)ledger_.apply(index, entry);
    snapshot_.reset();
  }

  // Cached until the next apply or restore: the randomised run compares
  // members' snapshots after every fixture step.
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override { return snapshot_bytes(); }
  [[nodiscard]] const std::vector<std::uint8_t>& snapshot_bytes() const {
    if (!snapshot_) snapshot_ = ledger_.snapshot();
    return *snapshot_;
  }

  [[nodiscard]] bool restore(Bytes snapshot) override {
    auto restored = accounting::Ledger::restore(snapshot);
    if (!restored) return false;
    ledger_ = std::move(*restored);
    snapshot_.reset();
    ++restores_;
    return true;
  }

  [[nodiscard]] const accounting::Ledger& ledger() const { return ledger_; }
  [[nodiscard]] unsigned restores() const { return restores_; }
  [[nodiscard]] std::size_t records_held() const { return ledger_.records().size(); }

  // True if every record of a records entry is in the de-duplication
  // window (held, as nothing is exported here). False for other entries.
  [[nodiscard]] bool holds(const std::vector<std::uint8_t>& entry) const {
    const std::vector<accounting::RecordKey>* keys = keys_of(entry);
    return keys != nullptr && holds(*keys);
  }
  // True if every key is in the de-duplication window.
  [[nodiscard]] bool holds(const std::vector<accounting::RecordKey>& keys) const {
    for (const auto& key : keys) {
      if (!ledger_.knows(key)) return false;
    }
    return true;
  }

  // How many times the most repeated record of `entry` is held (1 when
  // de-duplication works and it was applied; 0 when not applied).
  [[nodiscard]] unsigned copies(const std::vector<std::uint8_t>& entry) const {
    const std::vector<accounting::RecordKey>* keys = keys_of(entry);
    unsigned most = 0;
    for (std::size_t k = 0; keys != nullptr && k < keys->size(); ++k) {
      unsigned count = 0;
      for (const auto& held : ledger_.records()) count += held.record.key == (*keys)[k];
      most = std::max(most, count);
    }
    return most;
  }

  // The Start record of session `name` (its Acct-Session-Id): distinct
  // names give distinct record keys, equal names the same key.
  [[nodiscard]] static accounting::Record record(const std::string& name) {
    accounting::testing::RequestSpec spec;
    spec.session_id = name;
    return accounting::testing::record_of(spec);
  }
  // An entry of one record, record(name).
  [[nodiscard]] static std::vector<std::uint8_t> entry(const std::string& name) {
    return accounting::encode_records_entry(std::vector{record(name)});
  }
  // An entry of record(name) for each name, in order.
  [[nodiscard]] static std::vector<std::uint8_t> entry(const std::vector<std::string>& names) {
    std::vector<accounting::Record> records;
    for (const auto& name : names) records.push_back(record(name));
    return accounting::encode_records_entry(records);
  }

 private:
  // The record keys of a records entry, decoded once per distinct entry
  // (the invariants ask about the same entries after every step).
  [[nodiscard]] const std::vector<accounting::RecordKey>* keys_of(
      const std::vector<std::uint8_t>& entry) const {
    auto found = keys_.find(entry);
    if (found == keys_.end()) {
      std::optional<std::vector<accounting::RecordKey>> keys;
      if (auto decoded = accounting::decode_entry(entry);
          decoded && decoded->type == accounting::EntryType::kRecords) {
        keys.emplace();
        for (const auto& record : decoded->records) keys->push_back(record.key);
      }
      found = keys_.emplace(entry, std::move(keys)).first;
    }
    return found->second ? &*found->second : nullptr;
  }

  accounting::Ledger ledger_;
  mutable std::optional<std::vector<std::uint8_t>> snapshot_;
  mutable std::map<std::vector<std::uint8_t>, std::optional<std::vector<accounting::RecordKey>>> keys_;
  unsigned restores_ = 0;
};

}  // namespace rw::consensus
