// The member's admin API bodies (admin_views.h), built with nlohmann-json;
// its exceptions stay inside this file (docs/style.md §5).
#include "member_shell/admin_views.h"

#include <arpa/inet.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "config/member_config.h"

namespace rw::member_shell {
namespace {

using nlohmann::json;

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string address_text(const std::vector<std::uint8_t>& bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  const int family = bytes.size() == 4 ? AF_INET : AF_INET6;
  if (::inet_ntop(family, bytes.data(), text, sizeof(text)) == nullptr) return {};
  return text;
}

// A Framed-IPv6-Prefix value (RFC 3162 §2.3, checked by the ledger) as
// "2001:db8:0:1::/64".
std::string prefix_text(const std::vector<std::uint8_t>& value) {
  std::vector<std::uint8_t> address(16, 0);
  std::copy(value.begin() + 2, value.end(), address.begin());
  return address_text(address) + "/" + std::to_string(value[1]);
}

// An integer attribute's value as a JSON number; anything else as text.
json value_of(const std::string& name, const std::string& text, const radius::Dictionary& dictionary) {
  const radius::AttributeDef* def = dictionary.find(name);
  const bool digits = !text.empty() && text.size() <= 19 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (def != nullptr && radius::is_integer(def->data_type) && digits) return std::stoull(text);
  return text;
}

}  // namespace

std::string status_json(std::uint64_t member_id, const consensus::NodeStatus& status,
                        const LedgerFigures& figures, std::uint64_t pending_submissions,
                        const SubmissionAddressBook& book, const ExportStatus* exporter) {
  json leader = nullptr;
  if (status.leader_id != 0) {
    leader = json{{"id", status.leader_id}, {"address", status.leader_address}};
    auto found = book.find(status.leader_id);
    leader["submission"] = found != book.end() ? json(found->second) : json(nullptr);
  }
  json body{{"role", "member"},
            {"id", member_id},
            {"raft_role", std::string(consensus::to_string(status.role))},
            {"ready_for_work", status.ready_for_work},
            {"leader", leader},
            {"term", status.term},
            {"commit_index", status.commit_index},
            {"last_log_index", status.last_log_index},
            {"applied_index", status.last_applied},
            {"pending_submissions", pending_submissions},
            {"sessions", figures.sessions},
            {"records_held", figures.records_held},
            {"held_bytes", figures.held_bytes},
            {"accepting", figures.accepting},
            {"log_clock_unix_ms", figures.log_clock_unix_ms}};
  if (!status.storage_error.empty()) body["storage_error"] = status.storage_error;
  // The database's error text may hold any bytes: dump() replaces what is
  // not UTF-8 rather than throwing.
  if (exporter != nullptr) body["export"] = to_json(*exporter);
  return dump(body) + "\n";
}

std::string session_json(const accounting::Session& session) {
  json object{{"Acct-Unique-Session-Id", session.key.hex()},
              {"client", session.client},
              {"User-Name", session.user_name},
              {"Acct-Session-Id", session.acct_session_id}};
  if (session.nas_address.size() == 4) object["NAS-IP-Address"] = address_text(session.nas_address);
  if (session.nas_address.size() == 16) object["NAS-IPv6-Address"] = address_text(session.nas_address);
  if (!session.nas_identifier.empty()) object["NAS-Identifier"] = session.nas_identifier;
  if (!session.calling_station_id.empty()) object["Calling-Station-Id"] = session.calling_station_id;
  if (!session.framed_ip_address.empty())
    object["Framed-IP-Address"] = address_text(session.framed_ip_address);
  if (!session.framed_ipv6_prefix.empty())
    object["Framed-IPv6-Prefix"] = prefix_text(session.framed_ipv6_prefix);
  object["Acct-Status-Type"] =
      session.last_status_type == accounting::status::kStart ? "Start" : "Interim-Update";
  object["started_index"] = session.opened_index;
  object["updated_index"] = session.updated_index;
  object["started_unix_ms"] = session.started_unix_ms;
  object["updated_unix_ms"] = session.updated_unix_ms;
  object["Acct-Session-Time"] = session.session_time_s;
  object["Acct-Input-Octets"] = session.input_octets;
  object["Acct-Output-Octets"] = session.output_octets;
  return dump(object);
}

bool session_matches(const admin::SessionFilter& filter, const accounting::Session& session) {
  if (filter.empty()) return true;
  const std::string nas_address =
      session.nas_address.empty() ? std::string() : address_text(session.nas_address);
  const std::string framed_address =
      session.framed_ip_address.empty() ? std::string() : address_text(session.framed_ip_address);
  const std::string unique_id = session.key.hex();
  return admin::matches(filter, admin::SessionFields{.user_name = session.user_name,
                                                     .nas_address = nas_address,
                                                     .nas_identifier = session.nas_identifier,
                                                     .client = session.client,
                                                     .calling_station_id = session.calling_station_id,
                                                     .framed_address = framed_address,
                                                     .acct_session_id = session.acct_session_id,
                                                     .unique_session_id = unique_id});
}

std::string record_line(const accounting::HeldRecord& held, const radius::Dictionary& dictionary) {
  json attributes = json::object();
  for (const auto& [name, text] : accounting::describe(held.record, dictionary)) {
    json value = value_of(name, text, dictionary);
    auto existing = attributes.find(name);
    if (existing == attributes.end()) {
      attributes[name] = std::move(value);
    } else {
      // An attribute present several times is an array (docs/admin_api.md).
      if (!existing->is_array()) *existing = json::array({*existing});
      existing->push_back(std::move(value));
    }
  }
  json line{{"index", held.index},
            {"key", held.record.key.hex()},
            {"client", held.record.client},
            {"received_unix_ms", held.record.received_unix_ms},
            {"attributes", std::move(attributes)}};
  return dump(line) + "\n";
}

Result<MemberChange, std::string> parse_member_change(std::string_view body, bool needs_raft) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return fail(std::string("the body must be a JSON object"));
  MemberChange change;
  auto id = parsed.find("id");
  if (id == parsed.end() || !id->is_number_unsigned() || id->get<std::uint64_t>() < 1 ||
      id->get<std::uint64_t>() > config::kMemberIdMax) {
    return fail(std::string("\"id\" must be a member id from 1 to 255"));
  }
  change.id = id->get<std::uint64_t>();
  auto raft = parsed.find("raft");
  if (needs_raft) {
    std::optional<config::HostPort> address;
    if (raft != parsed.end() && raft->is_string()) {
      address = config::parse_host_port(raft->get<std::string>());
    }
    if (!address || !config::is_raft_address(*address)) {
      return fail(std::string("\"raft\" must be the new member's raft address, IPv4:port"));
    }
    change.raft = raft->get<std::string>();
  }
  for (const auto& [key, value] : parsed.items()) {
    if (key != "id" && !(needs_raft && key == "raft")) return fail("unknown key \"" + key + "\"");
  }
  return change;
}

}  // namespace rw::member_shell
