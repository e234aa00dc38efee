// The NAS of each session to disconnect or change (dynamic_targets.h).
#include "admin/dynamic_targets.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>

#include "admin/json_text.h"

namespace rw::admin {
namespace {

// An address as /sessions writes it, in ClientDef's layout.
std::optional<config::AddressPrefix> host_address(std::string_view text) {
  if (text.empty()) return std::nullopt;
  auto parsed = config::parse_address_prefix(text, config::AddressFamily::kAny);
  if (!parsed || parsed->prefix_length != (parsed->is_v6 ? 128 : 32)) return std::nullopt;
  return *parsed;
}

bool is_host(const config::ClientDef& client) { return client.prefix_length == (client.is_v6 ? 128 : 32); }

// Whether the client's prefix holds `address` (host bits of client.address are zero).
bool holds(const config::ClientDef& client, const config::AddressPrefix& address) {
  if (client.is_v6 != address.is_v6) return false;
  for (std::size_t bit = 0; bit < client.prefix_length; ++bit) {
    const std::uint8_t mask = static_cast<std::uint8_t>(0x80u >> (bit % 8));
    if ((client.address[bit / 8] & mask) != (address.address[bit / 8] & mask)) return false;
  }
  return true;
}

std::string address_text(const std::array<std::uint8_t, 16>& address, bool is_v6) {
  char text[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(is_v6 ? AF_INET6 : AF_INET, address.data(), text, sizeof text) == nullptr) return "?";
  return text;
}

std::vector<std::uint8_t> address_bytes(const config::AddressPrefix& address) {
  return {address.address.begin(), address.address.begin() + (address.is_v6 ? 16 : 4)};
}

// "2001:db8:0:1::/64" back into a Framed-IPv6-Prefix value (RFC 3162 §2.3):
// Reserved, Prefix-Length, the prefix's octets.
std::vector<std::uint8_t> ipv6_prefix_value(std::string_view text) {
  auto parsed = config::parse_address_prefix(text, config::AddressFamily::kV6);
  if (!parsed || !parsed->is_v6 || text.find('/') == std::string_view::npos) return {};
  std::vector<std::uint8_t> value = {0, parsed->prefix_length};
  value.insert(value.end(), parsed->address.begin(),
               parsed->address.begin() + (parsed->prefix_length + 7) / 8);
  return value;
}

// The client entry of a session, or why there is none.
const config::ClientDef* client_of(std::string_view shortname,
                                   const std::optional<config::AddressPrefix>& nas,
                                   std::span<const config::ClientDef> clients, std::string& problem) {
  std::vector<const config::ClientDef*> named;
  for (const config::ClientDef& client : clients) {
    if (client.shortname == shortname) named.push_back(&client);
  }
  if (named.empty()) {
    problem = "no client '" + std::string(shortname) + "' in the clients file";
    return nullptr;
  }
  if (named.size() == 1) return named.front();
  // Several entries share the shortname: the longest prefix holding the NAS.
  const config::ClientDef* best = nullptr;
  for (const config::ClientDef* client : named) {
    if (nas && holds(*client, *nas) && (best == nullptr || client->prefix_length > best->prefix_length)) {
      best = client;
    }
  }
  if (best == nullptr) {
    problem = "several clients are named '" + std::string(shortname) +
              "' and none holds the session's NAS-IP-Address";
  }
  return best;
}

DynamicTarget target_of(const Json& session, const SessionFields& fields,
                        std::span<const config::ClientDef> clients) {
  DynamicTarget target;
  target.acct_session_id = std::string(fields.acct_session_id);
  target.user_name = std::string(fields.user_name);
  const std::optional<config::AddressPrefix> nas = host_address(fields.nas_address);
  radius::SessionIdentity& identity = target.identity;
  if (nas) identity.nas_address = address_bytes(*nas);
  identity.nas_identifier = std::string(fields.nas_identifier);
  identity.user_name = target.user_name;
  identity.acct_session_id = target.acct_session_id;
  identity.calling_station_id = std::string(fields.calling_station_id);
  if (auto framed = host_address(text_field(session, "Framed-IP-Address")); framed && !framed->is_v6) {
    identity.framed_ip_address = address_bytes(*framed);
  }
  identity.framed_ipv6_prefix = ipv6_prefix_value(text_field(session, "Framed-IPv6-Prefix"));

  const config::ClientDef* client = client_of(fields.client, nas, clients, target.problem);
  if (client == nullptr) return target;
  if (client->coa_address) {
    target.address = *client->coa_address;
    target.is_v6 = client->coa_is_v6;
  } else if (is_host(*client)) {
    target.address = client->address;
    target.is_v6 = client->is_v6;
  } else if (nas && holds(*client, *nas)) {
    target.address = nas->address;
    target.is_v6 = nas->is_v6;
  } else {
    target.problem = "client '" + client->name +
                     "' is a network and the session has no NAS-IP-Address inside it: set its coa_server";
    return target;
  }
  target.port = client->coa_port;
  target.client = client;
  const std::string host = address_text(target.address, target.is_v6);
  target.to = (target.is_v6 ? "[" + host + "]" : host) + ":" + std::to_string(target.port);
  return target;
}

}  // namespace

Result<std::vector<DynamicTarget>, std::string> dynamic_targets(std::string_view sessions_body,
                                                                const SessionFilter& filter,
                                                                std::span<const config::ClientDef> clients) {
  const Json parsed = parse_json(sessions_body);
  const Json& sessions = member(parsed, "sessions");
  if (!sessions.is_array()) {
    return fail(std::string("the /sessions answer is not a JSON object with a \"sessions\" array"));
  }
  std::vector<DynamicTarget> targets;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const Json& session = sessions[i];
    if (!session.is_object()) {
      return fail("the /sessions answer's session " + std::to_string(i + 1) + " is not a JSON object");
    }
    const SessionFields fields = session_fields_of(session);
    if (matches(filter, fields)) targets.push_back(target_of(session, fields, clients));
  }
  return targets;
}

std::string outcome_prefix(const DynamicTarget& target) {
  const auto or_dash = [](const std::string& text) {
    return text.empty() ? std::string("-") : printable(text, 64);
  };
  return "session " + or_dash(target.acct_session_id) + " user " + or_dash(target.user_name) + " nas " +
         target.to;
}

}  // namespace rw::admin
