// Selecting followed requests and describing an Access-Request's decision
// for the explain log (docs/operations.md "Explain log"). Runs only for
// followed requests, so it may allocate.
#include "gateway/explain.h"

#include <algorithm>
#include <cstdio>

#include "auth/mab.h"
#include "gateway/access.h"
#include "gateway/gateway_state.h"
#include "radius/dictionary.h"
#include "radius/packet.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;

bool same_address(const Endpoint& a, const Endpoint& b) {
  return a.is_v6 == b.is_v6 && a.address == b.address;
}

bool selector_matches(const ExplainSelector& selector, const Endpoint& from, std::string_view client,
                      const radius::Packet* packet) {
  if (!selector.nas.empty()) {
    const bool by_name = !client.empty() && client == selector.nas;
    const bool by_address = selector.nas_address && same_address(*selector.nas_address, from);
    if (!by_name && !by_address) return false;
  }
  if (!selector.user.empty()) {
    if (packet == nullptr) return false;
    const auto name = packet->find(attr::kUserName);
    if (!name || as_chars(name->value) != selector.user) return false;
  }
  if (!selector.mac.empty()) {
    if (packet == nullptr) return false;
    const auto station = packet->find(attr::kCallingStationId);
    if (!station) return false;
    const auto mac = auth::parse_mac(as_chars(station->value));
    if (!mac || auth::view(auth::canonical_mac(*mac)) != selector.mac) return false;
  }
  return true;
}

// A uniform draw in [0, 1).
double draw(RandomSource& random) {
  std::uint64_t bits = 0;
  random.fill(MutableBytes(reinterpret_cast<std::uint8_t*>(&bits), sizeof bits));
  return static_cast<double>(bits >> 11) / static_cast<double>(std::uint64_t{1} << 53);
}

bool masked(const radius::AttributeDef& def) {
  return def.secret || def.encryption != radius::Encryption::kNone ||
         def.name.find("Password") != std::string::npos;
}

// "Name op value", the value masked when the attribute is a secret.
std::string item_text(const config::UsersItem& item) {
  std::string text = item.def->name;
  if (item.tag != 0) text += ":" + std::to_string(item.tag);
  text += " ";
  text += config::to_string(item.op);
  text += " ";
  text += masked(*item.def) ? std::string("<masked>") : radius::format_value(*item.def, item.bytes());
  return text;
}

std::string joined(std::span<const config::UsersItem* const> items) {
  std::string text;
  for (const config::UsersItem* item : items) {
    if (!text.empty()) text += ", ";
    text += item_text(*item);
  }
  return text;
}

}  // namespace

std::optional<std::uint64_t> explain_match(const ExplainFilter& filter, Instant now, const Endpoint& from,
                                           std::string_view client, const radius::Packet* packet,
                                           RandomSource& random) {
  for (const ExplainSelector& selector : filter.selectors) {
    if (now >= selector.until || !selector_matches(selector, from, client, packet)) continue;
    if (selector.fraction < 1.0 && draw(random) >= selector.fraction) continue;
    return selector.id;
  }
  return std::nullopt;
}

void ExplainSwitch::publish(std::shared_ptr<const ExplainFilter> filter) {
  std::lock_guard lock(mutex_);
  if (filter != nullptr && filter->selectors.empty()) filter.reset();
  filter_ = std::move(filter);
  generation_.fetch_add(1, std::memory_order_release);
}

void ExplainSwitch::refresh(std::shared_ptr<const ExplainFilter>& cached, std::uint64_t& seen) const {
  if (generation_.load(std::memory_order_acquire) == seen) return;
  std::lock_guard lock(mutex_);
  cached = filter_;
  seen = generation_.load(std::memory_order_relaxed);
}

void explain_access(const GatewayState& state, const AccessOutcome& outcome, ExplainTrace& trace) {
  if (outcome.method == AuthMethod::kMab) {
    trace.step(std::string("MAB: looked up as ") + std::string(auth::view(outcome.mac_text)));
  }
  // The users file the decision read: the SQL user's, or its tenant's.
  const config::UsersFile& users = outcome.users_file != nullptr ? *outcome.users_file
                                   : outcome.sql_user            ? outcome.sql_user->users
                                                                 : state.users();
  trace.step(outcome.sql_user ? "user store: sql (the user's rows)" : "user store: users file");
  if (outcome.users.matched()) {
    std::string entries = "entries applied:";
    for (const std::uint32_t index : outcome.users.applied_entries()) {
      const config::UserEntry& entry = users.entries()[index];
      entries += " " + users.file_names()[entry.file_index] + ":" + std::to_string(entry.line) + " (" +
                 (entry.is_default ? std::string("DEFAULT") : entry.name) + ")";
    }
    if (outcome.users.applied_count() > outcome.users.applied_entries().size()) {
      entries += " and " +
                 std::to_string(outcome.users.applied_count() - outcome.users.applied_entries().size()) +
                 " more";
    }
    trace.step(std::move(entries));
    if (!outcome.users.control().empty()) trace.step("control: " + joined(outcome.users.control()));
  } else {
    trace.step("no entry applied");
  }
  trace.step("method: " + std::string(method_name(outcome.method, outcome.eap.type)));
  if (outcome.need == AccessNeed::kCryptCheck) {
    trace.step("password: a crypt(3) string; waiting for the crypt(3) pool's verdict");
    return;
  }
  if (!outcome.rule.empty()) trace.step("policy: rule " + std::string(outcome.rule) + " decided");
  if (outcome.accepted) {
    trace.step(outcome.note == AcceptNote::kNone ? std::string("accepted")
                                                 : "accepted: " + std::string(to_string(outcome.note)));
    if (!outcome.users.reply().empty()) trace.step("reply items: " + joined(outcome.users.reply()));
    if (outcome.ms_chap2) trace.step("reply adds MS-CHAP2-Success and MS-MPPE keys (masked)");
    if (outcome.ms_chap1) trace.step("reply adds MS-CHAP-MPPE-Keys (masked)");
    if (outcome.eap.active) {
      trace.step(outcome.eap.msk ? "reply adds EAP-Success and MS-MPPE keys from the MSK (masked)"
                                 : "reply adds EAP-Success");
    }
  } else {
    trace.step("rejected: " + std::string(to_string(outcome.reject)));
    if (!outcome.users.reply().empty()) trace.step("reply items: " + joined(outcome.users.reply()));
    if (outcome.ms_chap_error) trace.step("reply adds MS-CHAP-Error");
    if (outcome.eap.active && !outcome.eap.packet.empty()) trace.step("reply adds EAP-Failure");
  }
}

std::string printable(Bytes value) {
  std::string text;
  for (const std::uint8_t byte : value) {
    if (text.size() >= 64) {
      text += "...";
      break;
    }
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      text += static_cast<char>(byte);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      text += escaped;
    }
  }
  return text;
}

}  // namespace rw::gateway
