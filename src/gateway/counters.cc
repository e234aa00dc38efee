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
      const ClientCounters& counters = *row->second;
      ClientCounts& counts = total->second;
      counts.access_accepts += counters.access_accepts.get();
      counts.access_rejects += counters.access_rejects.get();
      counts.access_challenges += counters.access_challenges.get();
      counts.accounting_responses += counters.accounting_responses.get();
      counts.status_server += counters.status_server.get();
      for (std::size_t i = 0; i < kDropReasonCount; ++i) counts.drops[i] += counters.drops[i].get();
      ++row;
      ++total;
    }
  }
}

std::size_t ClientCounterTable::size() const {
  const std::lock_guard lock(mutex_);
  return rows_.size();
}

}  // namespace rw::gateway
