// The clients.conf reader; see clients_file.h and docs/users_and_clients.md.
#include "config/clients_file.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace rw::config {

std::string_view to_string(ClientCheck check) {
  switch (check) {
    case ClientCheck::kNo:
      return "no";
    case ClientCheck::kYes:
      return "yes";
    case ClientCheck::kAuto:
      return "auto";
  }
  return "?";
}

std::string_view to_string(ClientProtocol protocol) {
  switch (protocol) {
    case ClientProtocol::kUdp:
      return "udp";
    case ClientProtocol::kTcp:
      return "tcp";
    case ClientProtocol::kTls:
      return "tls";
    case ClientProtocol::kAny:
      return "*";
  }
  return "?";
}

namespace {

// Sets the prefix length and clears the host bits past it.
void set_prefix_length(AddressPrefix& prefix, std::uint8_t length) {
  unsigned bits = prefix.is_v6 ? 128 : 32;
  prefix.prefix_length = length;
  for (unsigned bit = length; bit < bits; ++bit) {
    auto mask = static_cast<std::uint8_t>(0x80u >> (bit % 8));
    if (prefix.address[bit / 8] & mask) prefix.had_host_bits = true;
    prefix.address[bit / 8] &= static_cast<std::uint8_t>(~mask);
  }
}

}  // namespace

Result<AddressPrefix, std::string> parse_address_prefix(std::string_view text, AddressFamily family) {
  AddressPrefix out;
  if (text == "*") {
    // Any address of the family: a /0 prefix.
    out.is_v6 = family == AddressFamily::kV6;
    return out;
  }
  std::string_view address_text = text;
  std::optional<unsigned> prefix;
  if (auto slash = text.find('/'); slash != std::string_view::npos) {
    address_text = text.substr(0, slash);
    std::string_view length_text = text.substr(slash + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(length_text.data(), length_text.data() + length_text.size(), value);
    if (ec != std::errc() || end != length_text.data() + length_text.size() || length_text.empty()) {
      return fail(fmt::format("bad prefix length in '{}'", text));
    }
    prefix = value;
  }
  std::string address_z(address_text);
  out.is_v6 = address_text.find(':') != std::string_view::npos;
  if (family == AddressFamily::kV4 && out.is_v6)
    return fail(fmt::format("'{}' is not an IPv4 address", text));
  if (family == AddressFamily::kV6 && !out.is_v6)
    return fail(fmt::format("'{}' is not an IPv6 address", text));
  // inet_pton is a pure conversion (no name lookup): host names are refused.
  int ok = inet_pton(out.is_v6 ? AF_INET6 : AF_INET, address_z.c_str(), out.address.data());
  if (ok != 1) {
    return fail(fmt::format("'{}' is not an IP address (host names are not resolved)", address_text));
  }
  unsigned bits = out.is_v6 ? 128 : 32;
  if (prefix && *prefix > bits) return fail(fmt::format("prefix length {} is longer than {}", *prefix, bits));
  set_prefix_length(out, static_cast<std::uint8_t>(prefix.value_or(bits)));
  return out;
}

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::optional<bool> parse_bool(std::string_view text) {
  for (std::string_view yes : {"yes", "true", "on", "1"}) {
    if (equals_ignoring_case(text, yes)) return true;
  }
  for (std::string_view no : {"no", "false", "off", "0"}) {
    if (equals_ignoring_case(text, no)) return false;
  }
  return std::nullopt;
}

std::optional<ClientCheck> parse_check(std::string_view text) {
  if (equals_ignoring_case(text, "auto")) return ClientCheck::kAuto;
  if (auto value = parse_bool(text)) return *value ? ClientCheck::kYes : ClientCheck::kNo;
  return std::nullopt;
}

// "0.5" or "2" seconds to milliseconds; FreeRADIUS bounds response_window
// to at most 60 seconds.
std::optional<std::uint32_t> parse_seconds_ms(std::string_view text) {
  std::uint32_t whole = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
  if (ec != std::errc() || end == text.data() || whole > 60) return std::nullopt;
  std::uint32_t ms = whole * 1000;
  std::string_view rest(end, text.data() + text.size() - end);
  if (rest.empty()) return ms;
  if (rest.front() != '.' || rest.size() < 2 || rest.size() > 4) return std::nullopt;
  std::uint32_t scale = 100;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    ms += static_cast<std::uint32_t>(c - '0') * scale;
    scale /= 10;
  }
  if (ms > 60000) return std::nullopt;
  return ms;
}

struct PendingClient {
  ClientDef def;
  SourcePosition where;
  std::optional<AddressPrefix> address;
  std::optional<SourcePosition> address_where;
  std::optional<unsigned> netmask;
  bool has_secret = false;
  std::optional<SourcePosition> secret_where;
  std::vector<std::string> keys_seen;
};

class ClientsParser {
 public:
  ClientsParser(SourceFiles& files, const ClientsLimits& limits) : files_(files), limits_(limits) {}

  [[nodiscard]] Result<void, SourceError> parse_file(const std::string& path,
                                                     const std::optional<SourcePosition>& where);
  [[nodiscard]] Result<void, SourceError> parse_text(std::string_view text, std::string_view file_name);
  [[nodiscard]] Result<ClientsFile, SourceError> finish();

 private:
  SourceFiles::TextParser text_parser() {
    return [this](std::string_view text, std::string_view file_name) { return parse_text(text, file_name); };
  }
  [[nodiscard]] Result<void, SourceError> parse_client(Lexer& lexer, const Token& keyword);
  [[nodiscard]] Result<void, SourceError> parse_client_list(Lexer& lexer, const Token& keyword);
  [[nodiscard]] Result<void, SourceError> complete_radsec(PendingClient& client, bool& keep);
  [[nodiscard]] Result<void, SourceError> parse_limit(Lexer& lexer);
  [[nodiscard]] Result<void, SourceError> parse_pair(Lexer& lexer, const Token& key, PendingClient& client);
  [[nodiscard]] Result<void, SourceError> apply_pair(const Token& key, const Token& value,
                                                     const SourcePosition& where, PendingClient& client);
  [[nodiscard]] Result<void, SourceError> complete(PendingClient& client);
  void warn(const SourcePosition& where, std::string message) {
    warnings_.push_back(where.error(std::move(message)));
  }

  SourceFiles& files_;
  const ClientsLimits& limits_;
  std::vector<ClientDef> clients_;
  std::vector<SourcePosition> client_positions_;
  std::vector<SourceError> warnings_;
};

// Reads the rest of a `key = value` line (or `}` closing the section).
Result<Token, SourceError> expect_end_of_pair(Lexer& lexer) {
  auto after = lexer.peek();
  if (!after) return fail(after.error());
  if (after->kind == TokenKind::kEndOfLine || after->kind == TokenKind::kCloseBrace) return *after;
  return fail(lexer.position(*after).error(fmt::format("expected end of line after the value, found {} '{}'",
                                                       to_string(after->kind), after->text)));
}

Result<void, SourceError> ClientsParser::parse_file(const std::string& path,
                                                    const std::optional<SourcePosition>& where) {
  return files_.parse_file(path, where, text_parser());
}

Result<void, SourceError> ClientsParser::parse_text(std::string_view text, std::string_view file_name) {
  Lexer lexer(text, file_name);
  for (;;) {
    auto token = lexer.next();
    if (!token) return fail(token.error());
    if (token->kind == TokenKind::kEndOfText) return {};
    if (token->kind == TokenKind::kEndOfLine) continue;
    Result<void, SourceError> done;
    if (include_kind(*token) != IncludeKind::kNone) {
      done = files_.include(lexer, *token, text_parser());
    } else if (token->kind == TokenKind::kWord && token->text == "client") {
      done = parse_client(lexer, *token);
    } else if (token->kind == TokenKind::kWord && token->text == "clients" && limits_.radsec) {
      done = parse_client_list(lexer, *token);
    } else if (token->kind == TokenKind::kWord && token->text == "clients") {
      return fail(
          lexer.position(*token).error("per-socket client lists ('clients NAME { ... }') are not supported; "
                                       "define each client at top level"));
    } else {
      return fail(lexer.position(*token).error(fmt::format("expected 'client' or '$INCLUDE', found {} '{}'",
                                                           to_string(token->kind), token->text)));
    }
    if (!done) return done;
  }
}

// `clients NAME { client ... }`: FreeRADIUS's per-listener client list. The
// RadSec clients file is itself the list of one listener, so its sections
// only group clients; the name is not kept.
Result<void, SourceError> ClientsParser::parse_client_list(Lexer& lexer, const Token& keyword) {
  const SourcePosition where = lexer.position(keyword);
  auto name = lexer.next_value();
  if (!name) return fail(name.error());
  if (name->kind != TokenKind::kWord && name->kind != TokenKind::kString) {
    return fail(where.error("expected a name after 'clients'"));
  }
  auto brace = lexer.next();
  if (!brace) return fail(brace.error());
  if (brace->kind != TokenKind::kOpenBrace) {
    return fail(lexer.position(*brace).error(fmt::format("expected '{{' after 'clients {}'", name->text)));
  }
  for (;;) {
    auto token = lexer.next();
    if (!token) return fail(token.error());
    if (token->kind == TokenKind::kEndOfLine) continue;
    if (token->kind == TokenKind::kCloseBrace) return {};
    if (token->kind == TokenKind::kEndOfText) {
      return fail(where.error(fmt::format("clients {} is not closed with '}}'", name->text)));
    }
    if (token->kind != TokenKind::kWord || token->text != "client") {
      return fail(
          lexer.position(*token).error(fmt::format("expected 'client' or '}}' in clients {}, found {} '{}'",
                                                   name->text, to_string(token->kind), token->text)));
    }
    if (auto done = parse_client(lexer, *token); !done) return done;
  }
}

Result<void, SourceError> ClientsParser::parse_client(Lexer& lexer, const Token& keyword) {
  PendingClient client;
  client.def.require_message_authenticator = limits_.require_message_authenticator_default;
  if (limits_.radsec) {
    client.def.require_message_authenticator = ClientCheck::kNo;
    client.def.limit_proxy_state = ClientCheck::kNo;
  }
  client.where = lexer.position(keyword);
  auto name = lexer.next_value();
  if (!name) return fail(name.error());
  if (name->kind != TokenKind::kWord && name->kind != TokenKind::kString) {
    return fail(client.where.error("expected a client name after 'client'"));
  }
  client.def.name = name->text;
  auto brace = lexer.next();
  if (!brace) return fail(brace.error());
  if (brace->kind != TokenKind::kOpenBrace) {
    return fail(
        lexer.position(*brace).error(fmt::format("expected '{{' after 'client {}'", client.def.name)));
  }
  for (;;) {
    auto token = lexer.next();
    if (!token) return fail(token.error());
    switch (token->kind) {
      case TokenKind::kEndOfLine:
        continue;
      case TokenKind::kCloseBrace:
        return complete(client);
      case TokenKind::kEndOfText:
        return fail(client.where.error(fmt::format("client {} is not closed with '}}'", client.def.name)));
      case TokenKind::kWord: {
        if (include_kind(*token) != IncludeKind::kNone) {
          return fail(lexer.position(*token).error("$INCLUDE inside a client section is not supported"));
        }
        auto done = token->text == "limit" ? parse_limit(lexer) : parse_pair(lexer, *token, client);
        if (!done) return done;
        continue;
      }
      default:
        return fail(lexer.position(*token).error(
            fmt::format("expected a setting or '}}', found {} '{}'", to_string(token->kind), token->text)));
    }
  }
}

// `limit { ... }` configures TCP connections in FreeRADIUS; radiusward
// accepts the known keys (so existing files load) and ignores them.
Result<void, SourceError> ClientsParser::parse_limit(Lexer& lexer) {
  auto brace = lexer.next();
  if (!brace) return fail(brace.error());
  if (brace->kind != TokenKind::kOpenBrace)
    return fail(lexer.position(*brace).error("expected '{' after 'limit'"));
  for (;;) {
    auto key = lexer.next();
    if (!key) return fail(key.error());
    if (key->kind == TokenKind::kEndOfLine) continue;
    if (key->kind == TokenKind::kCloseBrace) return {};
    SourcePosition where = lexer.position(*key);
    if (key->kind != TokenKind::kWord) return fail(where.error("expected a limit setting or '}'"));
    if (key->text != "max_connections" && key->text != "lifetime" && key->text != "idle_timeout") {
      return fail(where.error(fmt::format(
          "unknown setting '{}' in limit (known: max_connections, lifetime, idle_timeout)", key->text)));
    }
    auto op = lexer.next();
    if (!op) return fail(op.error());
    if (op->kind != TokenKind::kOperator || op->text != "=")
      return fail(where.error("expected '=' after the key"));
    auto value = lexer.next_value();
    if (!value) return fail(value.error());
    unsigned number = 0;
    auto [end, ec] = std::from_chars(value->text.data(), value->text.data() + value->text.size(), number);
    if (value->kind != TokenKind::kWord || ec != std::errc() ||
        end != value->text.data() + value->text.size()) {
      return fail(lexer.position(*value).error(fmt::format("{} must be a whole number", key->text)));
    }
    auto after = expect_end_of_pair(lexer);
    if (!after) return fail(after.error());
  }
}

Result<void, SourceError> ClientsParser::parse_pair(Lexer& lexer, const Token& key, PendingClient& client) {
  SourcePosition where = lexer.position(key);
  if (std::find(client.keys_seen.begin(), client.keys_seen.end(), key.text) != client.keys_seen.end()) {
    return fail(where.error(fmt::format("{} is set twice in client {}", key.text, client.def.name)));
  }
  client.keys_seen.push_back(key.text);
  auto op = lexer.next();
  if (!op) return fail(op.error());
  if (op->kind != TokenKind::kOperator || op->text != "=") {
    return fail(lexer.position(*op).error(fmt::format("expected '=' after {}", key.text)));
  }
  auto value = lexer.next_value();
  if (!value) return fail(value.error());
  if (value->kind != TokenKind::kWord && value->kind != TokenKind::kString) {
    return fail(lexer.position(*value).error(fmt::format("expected a value for {}", key.text)));
  }
  auto applied = apply_pair(key, *value, lexer.position(*value), client);
  if (!applied) return applied;
  auto after = expect_end_of_pair(lexer);
  if (!after) return fail(after.error());
  return {};
}

Result<void, SourceError> ClientsParser::apply_pair(const Token& key, const Token& value,
                                                    const SourcePosition& where, PendingClient& client) {
  const std::string& k = key.text;
  const std::string& v = value.text;
  ClientDef& def = client.def;
  if (k == "ipaddr" || k == "ipv4addr" || k == "ipv6addr") {
    if (client.address) return fail(where.error("only one of ipaddr, ipv4addr and ipv6addr may be set"));
    AddressFamily family = k == "ipaddr"     ? AddressFamily::kAny
                           : k == "ipv4addr" ? AddressFamily::kV4
                                             : AddressFamily::kV6;
    auto address = parse_address_prefix(v, family);
    if (!address) return fail(where.error(address.error()));
    client.address = *address;
    client.address_where = where;
  } else if (k == "netmask") {
    unsigned bits = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), bits);
    if (ec != std::errc() || end != v.data() + v.size() || bits > 128) {
      return fail(where.error("netmask must be a prefix length from 0 to 128"));
    }
    client.netmask = bits;
  } else if (k == "secret") {
    if (v.empty()) return fail(where.error("secret must not be empty"));
    def.secret = v;
    client.has_secret = true;
    client.secret_where = where;
  } else if (k == "shortname") {
    def.shortname = v;
  } else if (k == "nas_type") {
    def.nas_type = v;
  } else if (k == "require_message_authenticator" || k == "limit_proxy_state") {
    auto check = parse_check(v);
    if (!check) return fail(where.error(fmt::format("{} must be yes, no or auto", k)));
    (k == "limit_proxy_state" ? def.limit_proxy_state : def.require_message_authenticator) = *check;
  } else if (k == "proto") {
    if (v == "udp")
      def.proto = ClientProtocol::kUdp;
    else if (v == "tcp")
      def.proto = ClientProtocol::kTcp;
    else if (v == "tls")
      def.proto = ClientProtocol::kTls;
    else if (v == "*")
      def.proto = ClientProtocol::kAny;
    else
      return fail(where.error("proto must be udp, tcp, tls or *"));
  } else if (k == "response_window") {
    auto ms = parse_seconds_ms(v);
    if (!ms) return fail(where.error("response_window must be seconds from 0 to 60 (up to 3 decimals)"));
    def.response_window_ms = *ms;
  } else if (k == "virtual_server") {
    def.virtual_server = v;
    warn(where,
         fmt::format("virtual_server '{}' is ignored: radiusward applies one policy to every client", v));
  } else if (k == "coa_server") {
    auto address = parse_address_prefix(v, AddressFamily::kAny);
    if (!address || address->prefix_length != (address->is_v6 ? 128 : 32)) {
      warn(where, fmt::format("coa_server '{}' is not an address (a FreeRADIUS home_server name?): ignored; "
                              "Disconnect and CoA go to the client's address",
                              v));
    } else {
      def.coa_address = address->address;
      def.coa_is_v6 = address->is_v6;
    }
  } else if (k == "coa_port") {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
    if (ec != std::errc() || end != v.data() + v.size() || port == 0 || port > 65535) {
      return fail(where.error("coa_port must be a port from 1 to 65535"));
    }
    def.coa_port = static_cast<std::uint16_t>(port);
  } else if (k == "certificate_name" && limits_.radsec) {
    if (v.empty()) return fail(where.error("certificate_name must not be empty"));
    if (v.size() > kCertificateNameMax) {
      return fail(where.error(fmt::format("certificate_name is longer than {} octets", kCertificateNameMax)));
    }
    // No certificate name holds control characters; one here is a typo.
    if (std::any_of(v.begin(), v.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      return fail(where.error("certificate_name must not contain control characters"));
    def.certificate_name = v;
  } else if (k == "certificate_name") {
    return fail(where.error("certificate_name is only for RadSec clients (the RadSec clients file)"));
  } else if (k == "login" || k == "password") {
    warn(where, fmt::format("{} is accepted for compatibility and ignored", k));
  } else {
    return fail(SourcePosition{where.file, key.line, key.column}.error(fmt::format(
        "unknown setting '{}' in client {} (known: ipaddr, ipv4addr, ipv6addr, netmask, secret, shortname, "
        "nas_type, require_message_authenticator, limit_proxy_state, proto, response_window, virtual_server, "
        "coa_server, coa_port, limit{})",
        k, def.name, limits_.radsec ? ", certificate_name" : "")));
  }
  return {};
}

// The RadSec rules of ClientsLimits::radsec; `keep` turns false for a client
// that is not a RadSec client.
Result<void, SourceError> ClientsParser::complete_radsec(PendingClient& client, bool& keep) {
  ClientDef& def = client.def;
  keep = def.proto == ClientProtocol::kTls || def.proto == ClientProtocol::kTcp ||
         def.proto == ClientProtocol::kAny;
  if (!keep) {
    warn(client.where, fmt::format("client {} has proto = {}: not a RadSec client (proto = tls), ignored",
                                   def.name, to_string(def.proto)));
    return {};
  }
  if (!client.has_secret) {
    def.secret = std::string(kRadSecSecret);
    client.has_secret = true;
  } else if (def.secret != kRadSecSecret) {
    return fail(client.secret_where->error(fmt::format(
        "client {}: the secret of a RadSec client is '{}' (RFC 6614 §2.3)", def.name, kRadSecSecret)));
  }
  if (limits_.require_certificate_name && def.certificate_name.empty()) {
    return fail(client.where.error(fmt::format(
        "client {} has no certificate_name (radsec.require_certificate_name is true)", def.name)));
  }
  return {};
}

Result<void, SourceError> ClientsParser::complete(PendingClient& client) {
  ClientDef& def = client.def;
  if (limits_.radsec) {
    bool keep = true;
    if (auto checked = complete_radsec(client, keep); !checked) return checked;
    if (!keep) return {};
  }
  if (!client.address) {
    // FreeRADIUS 1.x form, still accepted: `client 192.0.2.0/24 { ... }`.
    auto address = parse_address_prefix(def.name, AddressFamily::kAny);
    if (!address) {
      return fail(client.where.error(fmt::format(
          "client {} has no ipaddr, ipv4addr or ipv6addr (and its name is not an address)", def.name)));
    }
    client.address = *address;
    client.address_where = client.where;
  }
  if (!client.has_secret) return fail(client.where.error(fmt::format("client {} has no secret", def.name)));
  AddressPrefix& address = *client.address;
  if (client.netmask) {
    if (*client.netmask > (address.is_v6 ? 128u : 32u)) {
      return fail(client.where.error("netmask is longer than the address"));
    }
    set_prefix_length(address, static_cast<std::uint8_t>(*client.netmask));
  }
  if (address.had_host_bits) {
    warn(*client.address_where,
         fmt::format("client {}: address has bits set past the /{} prefix; they are ignored", def.name,
                     address.prefix_length));
  }
  def.address = address.address;
  def.is_v6 = address.is_v6;
  def.prefix_length = address.prefix_length;
  if (def.shortname.empty()) def.shortname = def.name;
  if (def.nas_type.empty()) def.nas_type = "other";
  def.file = std::string(client.where.file);
  def.line = client.where.line;
  if (clients_.size() >= limits_.clients_max) {
    return fail(client.where.error(fmt::format("more than {} clients", limits_.clients_max)));
  }
  clients_.push_back(std::move(def));
  client_positions_.push_back(client.where);
  return {};
}

Result<ClientsFile, SourceError> ClientsParser::finish() {
  // Two clients with one address and prefix would make the secret depend on
  // file order; FreeRADIUS refuses them too.
  std::map<std::tuple<bool, std::array<std::uint8_t, 16>, std::uint8_t>, std::size_t> seen;
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    const ClientDef& c = clients_[i];
    auto [it, inserted] = seen.emplace(std::make_tuple(c.is_v6, c.address, c.prefix_length), i);
    if (!inserted) {
      const ClientDef& first = clients_[it->second];
      return fail(
          client_positions_[i].error(fmt::format("client {} has the same address as client {} ({}:{})",
                                                 c.name, first.name, first.file, first.line)));
    }
  }
  return ClientsFile{std::move(clients_), std::move(warnings_)};
}

}  // namespace

Result<ClientsFile, SourceError> load_clients_file(const std::string& path, const ClientsLimits& limits) {
  SourceFiles files(/*allow_files=*/true, limits.include);
  ClientsParser parser(files, limits);
  auto parsed = parser.parse_file(path, std::nullopt);
  if (!parsed) return fail(parsed.error());
  return parser.finish();
}

Result<ClientsFile, SourceError> parse_clients(std::string_view text, std::string_view file_name,
                                               const ClientsLimits& limits) {
  SourceFiles files(/*allow_files=*/false, limits.include);
  ClientsParser parser(files, limits);
  auto parsed = parser.parse_text(text, files.remember(std::string(file_name)));
  if (!parsed) return fail(parsed.error());
  return parser.finish();
}

}  // namespace rw::config
