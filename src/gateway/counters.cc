// ClientCounterTable: the rows of one worker's counters by client label.
#include "gateway/counters.h"

namespace rw::gateway {

std::size_t eap_method_slot(std::uint8_t type) {
  switch (type) {
    case 0:
      return 0;
    case 4:  // EAP-MD5
      return 1;
    case 13:  // EAP-TLS
      return 2;
    case 21:  // EAP-TTLS
      return 3;
    case 25:  // PEAP
      return 4;
    default:
      return 5;
  }
}

std::string_view eap_method_label(std::size_t slot) {
  static constexpr std::array<std::string_view, kEapMethodSlots> kLabels = {"none",     "EAP-MD5", "EAP-TLS",
                                                                            "EAP-TTLS", "PEAP",    "other"};
  return slot < kLabels.size() ? kLabels[slot] : "other";
}

ClientCounters* ClientCounterTable::row_for(std::string_view label) {
  const std::lock_guard lock(mutex_);
  auto at = rows_.find(label);
  if (at == rows_.end()) at = rows_.emplace(std::string(label), std::make_unique<ClientCounters>()).first;
  return at->second.get();
}

std::vector<ClientCounters*> ClientCounterTable::rows_for(std::span<const std::string> labels) {
  std::vector<ClientCounters*> rows;
  rows.reserve(labels.size());
  const std::lock_guard lock(mutex_);
  for (const std::string& label : labels) {
    auto [at, added] = rows_.try_emplace(label);
    if (added) at->second = std::make_unique<ClientCounters>();
    rows.push_back(at->second.get());
  }
  return rows;
}

std::vector<ClientCounters*> ClientCounterTable::rows_held(std::span<const std::string> labels) const {
  std::vector<ClientCounters*> rows(labels.size(), nullptr);
  const std::lock_guard lock(mutex_);
  if (rows_.empty()) return rows;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (auto at = rows_.find(labels[i]); at != rows_.end()) rows[i] = at->second.get();
  }
  return rows;
}

void ClientCounterTable::add_row(const ClientCounters& row, ClientCounts& counts) {
  counts.access_accepts += row.access_accepts.get();
  counts.access_rejects += row.access_rejects.get();
  counts.access_challenges += row.access_challenges.get();
  counts.accounting_responses += row.accounting_responses.get();
  counts.status_server += row.status_server.get();
  for (std::size_t i = 0; i < kDropReasonCount; ++i) counts.drops[i] += row.drops[i].get();
}

void ClientCounterTable::add_counts_to(std::map<std::string, ClientCounts, std::less<>>& totals) const {
  const std::lock_guard lock(mutex_);
  // Both maps are sorted by label: one merge walk.
  auto row = rows_.begin();
  auto total = totals.begin();
  while (row != rows_.end() && total != totals.end()) {
    if (row->first < total->first) {
      ++row;
    } else if (total->first < row->first) {
      ++total;
    } else {
      add_row(*row->second, total->second);
      ++row;
      ++total;
    }
  }
}

void ClientCounterTable::add_counts_for(std::span<const std::string_view> labels,
                                        std::map<std::string, ClientCounts, std::less<>>& totals) const {
  const std::lock_guard lock(mutex_);
  // Both sides are sorted by label: one merge walk over the rows held (the
  // clients that sent) and the labels asked (the clients file).
  auto row = rows_.begin();
  auto label = labels.begin();
  while (row != rows_.end() && label != labels.end()) {
    const int order = std::string_view(row->first).compare(*label);
    if (order < 0) {
      ++row;
    } else if (order > 0) {
      ++label;
    } else {
      auto total = totals.find(*label);
      if (total == totals.end()) total = totals.emplace(std::string(*label), ClientCounts{}).first;
      add_row(*row->second, total->second);
      ++row;
      ++label;
    }
  }
}

std::size_t ClientCounterTable::size() const {
  const std::lock_guard lock(mutex_);
  return rows_.size();
}

}  // namespace rw::gateway
