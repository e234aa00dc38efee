// Tests of the clients.conf reader.
#include "config/clients_file.h"

#include <gtest/gtest.h>

#include "config/temp_dir_for_test.h"

namespace rw::config {
namespace {

constexpr std::string_view kRealistic = R"(# -*- text -*-
##
## clients.conf -- client configuration directives
##
client localhost {
	ipaddr = 127.0.0.1
	proto = *
	secret		= testing123
	require_message_authenticator = no
	nas_type	 = other	# localhost isn't usually a NAS...
	limit {
		max_connections = 16
		lifetime = 0
		idle_timeout = 30
	}
}

client localhost_ipv6 {
	ipv6addr	= ::1
	secret		= testing123
}

# Campus wireless controllers.
client wlc-campus {
	ipaddr = 10.20.0.0/16
	secret = "S3cr\"et with spaces"
	shortname = wlc
	nas_type = cisco
	require_message_authenticator = auto
	limit_proxy_state = yes
	response_window = 2.5
}

client 192.0.2.0/24 {
	secret = c2VjcmV0==
	netmask = 24
}

client v6-site {
	ipv6addr = 2001:db8::/32
	secret = 'single quoted'
	virtual_server = inner
}
)";

ClientsFile parse_ok(std::string_view text) {
  auto parsed = parse_clients(text, "clients.conf");
  EXPECT_TRUE(parsed.has_value()) << parsed.error().to_string();
  return parsed ? *parsed : ClientsFile{};
}

std::string error_of(std::string_view text) {
  auto parsed = parse_clients(text, "clients.conf");
  EXPECT_FALSE(parsed.has_value());
  return parsed ? std::string() : parsed.error().to_string();
}

TEST(ClientsFile, ParsesARealisticFile) {
  ClientsFile file = parse_ok(kRealistic);
  ASSERT_EQ(file.clients.size(), 5u);

  const ClientDef& localhost = file.clients[0];
  EXPECT_EQ(localhost.name, "localhost");
  EXPECT_FALSE(localhost.is_v6);
  EXPECT_EQ(localhost.address[0], 127);
  EXPECT_EQ(localhost.address[3], 1);
  EXPECT_EQ(localhost.prefix_length, 32);
  EXPECT_EQ(localhost.secret, "testing123");
  EXPECT_EQ(localhost.shortname, "localhost");
  EXPECT_EQ(localhost.proto, ClientProtocol::kAny);
  EXPECT_EQ(localhost.require_message_authenticator, ClientCheck::kNo);
  EXPECT_EQ(localhost.line, 5);

  const ClientDef& v6 = file.clients[1];
  EXPECT_TRUE(v6.is_v6);
  EXPECT_EQ(v6.prefix_length, 128);
  EXPECT_EQ(v6.address[15], 1);
  EXPECT_EQ(v6.require_message_authenticator, ClientCheck::kYes);  // radiusward's default.
  EXPECT_EQ(v6.nas_type, "other");

  const ClientDef& wlc = file.clients[2];
  EXPECT_EQ(wlc.secret, "S3cr\"et with spaces");
  EXPECT_EQ(wlc.shortname, "wlc");
  EXPECT_EQ(wlc.nas_type, "cisco");
  EXPECT_EQ(wlc.prefix_length, 16);
  EXPECT_EQ(wlc.require_message_authenticator, ClientCheck::kAuto);
  EXPECT_EQ(wlc.limit_proxy_state, ClientCheck::kYes);
  EXPECT_EQ(wlc.response_window_ms, 2500u);

  const ClientDef& by_name = file.clients[3];
  EXPECT_EQ(by_name.address[0], 192);
  EXPECT_EQ(by_name.address[2], 2);
  EXPECT_EQ(by_name.prefix_length, 24);
  EXPECT_EQ(by_name.secret, "c2VjcmV0==");

  const ClientDef& site = file.clients[4];
  EXPECT_EQ(site.prefix_length, 32);
  EXPECT_EQ(site.secret, "single quoted");
  EXPECT_EQ(site.virtual_server, "inner");
  ASSERT_EQ(file.warnings.size(), 1u);
  EXPECT_EQ(file.warnings[0].line, 42);
}

TEST(ClientsFile, DefaultsRequireMessageAuthenticator) {
  ClientsFile file = parse_ok("client a {\n ipaddr = 10.0.0.1\n secret = s\n}\n");
  ASSERT_EQ(file.clients.size(), 1u);
  EXPECT_EQ(file.clients[0].require_message_authenticator, ClientCheck::kYes);
  EXPECT_EQ(file.clients[0].limit_proxy_state, ClientCheck::kYes);
  EXPECT_EQ(file.clients[0].proto, ClientProtocol::kUdp);
}

// Where Disconnect- and CoA-Requests go: coa_server when an address (a
// FreeRADIUS home_server name is ignored with a warning), coa_port, 3799.
TEST(ClientsFile, ReadsTheDynamicAuthorizationAddressAndPort) {
  ClientsFile file = parse_ok(
      "client a {\n ipaddr = 10.0.0.1\n secret = s\n}\n"
      "client b {\n ipaddr = 10.1.0.0/16\n secret = s\n coa_server = 10.1.0.9\n coa_port = 1700\n}\n"
      "client c {\n ipaddr = 10.2.0.1\n secret = s\n coa_server = coa-pool\n}\n"
      "client d {\n ipv6addr = 2001:db8::1\n secret = s\n coa_server = 2001:db8::99\n}\n");
  ASSERT_EQ(file.clients.size(), 4u);
  EXPECT_FALSE(file.clients[0].coa_address.has_value());
  EXPECT_EQ(file.clients[0].coa_port, 3799);
  ASSERT_TRUE(file.clients[1].coa_address.has_value());
  EXPECT_EQ((*file.clients[1].coa_address)[3], 9);
  EXPECT_FALSE(file.clients[1].coa_is_v6);
  EXPECT_EQ(file.clients[1].coa_port, 1700);
  EXPECT_FALSE(file.clients[2].coa_address.has_value());
  ASSERT_EQ(file.warnings.size(), 1u);
  EXPECT_NE(file.warnings[0].to_string().find("coa_server 'coa-pool' is not an address"), std::string::npos);
  ASSERT_TRUE(file.clients[3].coa_address.has_value());
  EXPECT_TRUE(file.clients[3].coa_is_v6);
  EXPECT_EQ((*file.clients[3].coa_address)[15], 0x99);
  EXPECT_NE(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n coa_port = 0\n}\n")
                .find("coa_port must be a port from 1 to 65535"),
            std::string::npos);
  EXPECT_NE(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n coa_port = 70000\n}\n")
                .find("coa_port must be a port from 1 to 65535"),
            std::string::npos);
}

TEST(ClientsFile, AcceptsAnyAddress) {
  ClientsFile file =
      parse_ok("client all {\n ipaddr = *\n secret = s\n}\nclient all6 {\n ipv6addr = *\n secret = s\n}\n");
  ASSERT_EQ(file.clients.size(), 2u);
  EXPECT_EQ(file.clients[0].prefix_length, 0);
  EXPECT_FALSE(file.clients[0].is_v6);
  EXPECT_EQ(file.clients[1].prefix_length, 0);
  EXPECT_TRUE(file.clients[1].is_v6);
}

TEST(ClientsFile, ClearsHostBitsWithAWarning) {
  ClientsFile file = parse_ok("client a {\n ipaddr = 10.1.2.3/8\n secret = s\n}\n");
  ASSERT_EQ(file.clients.size(), 1u);
  EXPECT_EQ(file.clients[0].address[1], 0);
  ASSERT_EQ(file.warnings.size(), 1u);
  EXPECT_EQ(file.warnings[0].to_string(),
            "clients.conf:2:11: client a: address has bits set past the /8 prefix; they are ignored");
}

TEST(ClientsFile, AcceptsOneLineSections) {
  ClientsFile file =
      parse_ok("client a { ipaddr = 10.0.0.1\n secret = s }\nclient 192.0.2.7 { secret = s3cret }\n");
  ASSERT_EQ(file.clients.size(), 2u);
  EXPECT_EQ(file.clients[0].secret, "s");
  EXPECT_EQ(file.clients[1].secret, "s3cret");
  EXPECT_EQ(file.clients[1].address[3], 7);
}

TEST(ClientsFile, ReportsEveryErrorWithItsPosition) {
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n}\n"), "clients.conf:1:1: client a has no secret");
  EXPECT_EQ(
      error_of("client a {\n secret = s\n}\n"),
      "clients.conf:1:1: client a has no ipaddr, ipv4addr or ipv6addr (and its name is not an address)");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n colour = blue\n}\n").substr(0, 51),
            "clients.conf:4:2: unknown setting 'colour' in clien");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.300\n secret = s\n}\n"),
            "clients.conf:2:11: '10.0.0.300' is not an IP address (host names are not resolved)");
  EXPECT_EQ(error_of("client a {\n ipaddr = radius.example.com\n secret = s\n}\n"),
            "clients.conf:2:11: 'radius.example.com' is not an IP address (host names are not resolved)");
  EXPECT_EQ(error_of("client a {\n ipv4addr = ::1\n secret = s\n}\n"),
            "clients.conf:2:13: '::1' is not an IPv4 address");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.0/33\n secret = s\n}\n"),
            "clients.conf:2:11: prefix length 33 is longer than 32");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n ipv6addr = ::1\n secret = s\n}\n"),
            "clients.conf:3:13: only one of ipaddr, ipv4addr and ipv6addr may be set");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n secret = t\n}\n"),
            "clients.conf:4:2: secret is set twice in client a");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = \"\"\n}\n"),
            "clients.conf:3:11: secret must not be empty");
  EXPECT_EQ(
      error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n require_message_authenticator = maybe\n}\n"),
      "clients.conf:4:34: require_message_authenticator must be yes, no or auto");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n proto = sctp\n}\n"),
            "clients.conf:4:10: proto must be udp, tcp, tls or *");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n response_window = 61\n}\n"),
            "clients.conf:4:20: response_window must be seconds from 0 to 60 (up to 3 decimals)");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n limit {\n  max_requests = 3\n }\n}\n"),
            "clients.conf:5:3: unknown setting 'max_requests' in limit (known: max_connections, lifetime, "
            "idle_timeout)");
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.1\n secret = s\n"),
            "clients.conf:1:1: client a is not closed with '}'");
  EXPECT_EQ(error_of("client a\n{\n}\n"), "clients.conf:1:9: expected '{' after 'client a'");
  EXPECT_EQ(error_of("client a {\n ipaddr 10.0.0.1\n}\n"), "clients.conf:2:9: expected '=' after ipaddr");
  EXPECT_EQ(error_of("client a {\n secret = s t\n}\n"),
            "clients.conf:2:13: expected end of line after the value, found word 't'");
  EXPECT_EQ(error_of("server default {\n}\n"),
            "clients.conf:1:1: expected 'client' or '$INCLUDE', found word 'server'");
  EXPECT_EQ(error_of("clients per_socket {\n}\n").substr(0, 36), "clients.conf:1:1: per-socket client ");
  EXPECT_EQ(error_of("client a {\n secret = \"abc\n}\n"), "clients.conf:2:11: unterminated quoted string");
  EXPECT_EQ(error_of("$INCLUDE clients.d/\n"),
            "clients.conf:1:1: $INCLUDE is not allowed in text parsed from memory");
}

TEST(ClientsFile, RefusesDuplicateAddresses) {
  EXPECT_EQ(error_of("client a {\n ipaddr = 10.0.0.0/8\n secret = s\n}\nclient b {\n ipaddr = 10.9.0.0/8\n "
                     "secret = t\n}\n"),
            "clients.conf:5:1: client b has the same address as client a (clients.conf:1)");
}

TEST(ParseAddressPrefix, ParsesFamiliesAndPrefixes) {
  auto v4 = parse_address_prefix("192.0.2.0/24", AddressFamily::kAny);
  ASSERT_TRUE(v4);
  EXPECT_FALSE(v4->is_v6);
  EXPECT_EQ(v4->prefix_length, 24);
  auto v6 = parse_address_prefix("2001:db8::1", AddressFamily::kAny);
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->is_v6);
  EXPECT_EQ(v6->prefix_length, 128);
  EXPECT_FALSE(parse_address_prefix("10.0.0.1/", AddressFamily::kAny));
  EXPECT_FALSE(parse_address_prefix("10.0.0.1/x", AddressFamily::kAny));
  EXPECT_FALSE(parse_address_prefix("", AddressFamily::kAny));
}

class ClientsFileIncludes : public TempDirTest {};

TEST_F(ClientsFileIncludes, IncludesFilesAndFoldersInNameOrder) {
  std::string main = write("clients.conf",
                           "client a {\n ipaddr = 10.0.0.1\n secret = s\n}\n"
                           "$INCLUDE clients.d/\n$INCLUDE extra.conf\n$-INCLUDE missing.conf\n");
  write("clients.d/20-b.conf", "client b {\n ipaddr = 10.0.0.2\n secret = s\n}\n");
  write("clients.d/10-c.conf", "client c {\n ipaddr = 10.0.0.3\n secret = s\n}\n");
  write("clients.d/10-c.conf~", "client backup {\n ipaddr = 10.0.0.9\n secret = s\n}\n");
  write("clients.d/.hidden", "garbage");
  write("extra.conf", "client d {\n ipv6addr = ::1\n secret = s\n}\n");
  auto loaded = load_clients_file(main);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_EQ(loaded->clients.size(), 4u);
  EXPECT_EQ(loaded->clients[0].name, "a");
  EXPECT_EQ(loaded->clients[1].name, "c");
  EXPECT_EQ(loaded->clients[2].name, "b");
  EXPECT_EQ(loaded->clients[3].name, "d");
  EXPECT_EQ(loaded->clients[1].file, (dir_ / "clients.d/10-c.conf").string());
}

TEST_F(ClientsFileIncludes, ReportsErrorsInIncludedFilesWithTheirName) {
  std::string main = write("clients.conf", "$INCLUDE bad.conf\n");
  std::string bad = write("bad.conf", "client a {\n ipaddr = 10.0.0.1\n}\n");
  auto loaded = load_clients_file(main);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(), bad + ":1:1: client a has no secret");
}

TEST_F(ClientsFileIncludes, ReportsAMissingInclude) {
  std::string main = write("clients.conf", "\n  $INCLUDE nowhere.conf\n");
  auto loaded = load_clients_file(main);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(),
            main + ":2:3: cannot include " + (dir_ / "nowhere.conf").string() + ": no such file or folder");
}

TEST_F(ClientsFileIncludes, RefusesAnIncludeCycle) {
  std::string main = write("clients.conf", "$INCLUDE other.conf\n");
  std::string other = write("other.conf", "$INCLUDE clients.conf\n");
  auto loaded = load_clients_file(main);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(), other + ":1:1: $INCLUDE of " + main + " includes itself");
}

TEST_F(ClientsFileIncludes, ReportsAMissingTopLevelFile) {
  auto loaded = load_clients_file((dir_ / "absent.conf").string());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().to_string().find("cannot open"), std::string::npos);
}

TEST(ClientsFile, LoadsTheDemoFile) {
  auto loaded = load_clients_file(std::string(RW_SOURCE_ROOT) + "/etc/demo/clients.conf");
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_EQ(loaded->clients.size(), 2u);
  EXPECT_EQ(loaded->clients[0].secret, "testing123");
  EXPECT_FALSE(loaded->clients[0].is_v6);
  EXPECT_TRUE(loaded->clients[1].is_v6);
  EXPECT_TRUE(loaded->warnings.empty());
}

}  // namespace
}  // namespace rw::config

namespace rw::config {
namespace {

TEST(ParseClients, RequireMessageAuthenticatorDefaultComesFromTheLimits) {
  ClientsLimits limits;
  limits.require_message_authenticator_default = ClientCheck::kNo;
  auto parsed = parse_clients(
      "client a { ipaddr = 10.0.0.1\n secret = s }\n"
      "client b { ipaddr = 10.0.0.2\n secret = s\n require_message_authenticator = yes }\n",
      "clients.conf", limits);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  EXPECT_EQ(parsed->clients[0].require_message_authenticator, ClientCheck::kNo);
  EXPECT_EQ(parsed->clients[1].require_message_authenticator, ClientCheck::kYes);
  auto defaulted = parse_clients("client a { ipaddr = 10.0.0.1\n secret = s }\n", "clients.conf");
  ASSERT_TRUE(defaulted.has_value());
  EXPECT_EQ(defaulted->clients[0].require_message_authenticator, ClientCheck::kYes);
}

}  // namespace
}  // namespace rw::config

namespace rw::config {
namespace {

Result<ClientsFile, SourceError> parse_radsec(std::string_view text) {
  ClientsLimits limits;
  limits.radsec = true;
  return parse_clients(text, "radsec.conf", limits);
}

std::string radsec_error_of(std::string_view text) {
  auto parsed = parse_radsec(text);
  return parsed ? std::string("no error") : parsed.error().to_string();
}

TEST(RadSecClients, ReadsClientsInsideAClientsSectionAndAtTopLevel) {
  auto parsed = parse_radsec(
      "clients radsec {\n"
      "  client proxy {\n    ipaddr = 192.0.2.10\n    proto = tls\n    secret = radsec\n  }\n"
      "  client wlc {\n    ipaddr = 198.51.100.0/24\n    proto = tls\n  }\n"
      "}\n"
      "client edge {\n  ipaddr = 203.0.113.7\n  proto = *\n}\n");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->clients.size(), 3u);
  EXPECT_EQ(parsed->clients[0].name, "proxy");
  EXPECT_EQ(parsed->clients[1].name, "wlc");
  EXPECT_EQ(parsed->clients[1].prefix_length, 24);
  EXPECT_EQ(parsed->clients[2].name, "edge");
  for (const ClientDef& client : parsed->clients) {
    // RFC 6614 §2.3: written or not, the secret is "radsec".
    EXPECT_EQ(client.secret, "radsec");
    // TLS protects the packets: no BlastRADIUS defaults.
    EXPECT_EQ(client.require_message_authenticator, ClientCheck::kNo);
    EXPECT_EQ(client.limit_proxy_state, ClientCheck::kNo);
  }
  EXPECT_TRUE(parsed->warnings.empty());
}

TEST(RadSecClients, SkipsClientsThatAreNotRadSecClientsWithAWarning) {
  auto parsed = parse_radsec(
      "client udp_only {\n  ipaddr = 192.0.2.1\n  secret = testing123\n}\n"
      "client tcp {\n  ipaddr = 192.0.2.2\n  proto = tcp\n}\n");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->clients.size(), 1u);
  EXPECT_EQ(parsed->clients[0].name, "tcp");
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_EQ(parsed->warnings[0].to_string(),
            "radsec.conf:1:1: client udp_only has proto = udp: not a RadSec client (proto = tls), ignored");
}

TEST(RadSecClients, RefusesAnotherSecretAtItsPosition) {
  EXPECT_EQ(radsec_error_of(
                "clients a {\n client b {\n  ipaddr = 192.0.2.1\n  proto = tls\n  secret = s3cret\n }\n}\n"),
            "radsec.conf:5:12: client b: the secret of a RadSec client is 'radsec' (RFC 6614 §2.3)");
}

TEST(RadSecClients, RefusesMalformedClientsSections) {
  EXPECT_EQ(radsec_error_of("clients a {\n server b {\n }\n}\n"),
            "radsec.conf:2:2: expected 'client' or '}' in clients a, found word 'server'");
  EXPECT_EQ(radsec_error_of("clients a {\n client b {\n  ipaddr = 192.0.2.1\n  proto = tls\n }\n"),
            "radsec.conf:1:1: clients a is not closed with '}'");
  EXPECT_EQ(radsec_error_of("clients {\n}\n"), "radsec.conf:1:1: expected a name after 'clients'");
  // The UDP clients file still refuses them.
  EXPECT_FALSE(parse_clients("clients a {\n}\n", "clients.conf"));
}

TEST(RadSecClients, KeepsAnExplicitMessageAuthenticatorRequirement) {
  auto parsed = parse_radsec(
      "client a {\n  ipaddr = 192.0.2.1\n  proto = tls\n  require_message_authenticator = yes\n}\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->clients[0].require_message_authenticator, ClientCheck::kYes);
}

TEST(RadSecClients, ReadsCertificateName) {
  auto parsed = parse_radsec(
      "client a {\n  ipaddr = 192.0.2.1\n  proto = tls\n  certificate_name = \"proxy.example.org\"\n}\n"
      "client b {\n  ipaddr = 192.0.2.2\n  proto = tls\n}\n");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->clients[0].certificate_name, "proxy.example.org");
  // Without it the address alone names the entry.
  EXPECT_EQ(parsed->clients[1].certificate_name, "");
}

TEST(RadSecClients, RefusesBadCertificateNamesAtTheirPosition) {
  EXPECT_EQ(radsec_error_of("client a {\n  ipaddr = 192.0.2.1\n  certificate_name = \"\"\n}\n"),
            "radsec.conf:3:22: certificate_name must not be empty");
  EXPECT_EQ(radsec_error_of(
                "client a {\n  ipaddr = 192.0.2.1\n  certificate_name = " + std::string(254, 'x') + "\n}\n"),
            "radsec.conf:3:22: certificate_name is longer than 253 octets");
  EXPECT_EQ(radsec_error_of(
                "client a {\n  ipaddr = 192.0.2.1\n  certificate_name = x\n  certificate_name = y\n}\n"),
            "radsec.conf:4:3: certificate_name is set twice in client a");
  EXPECT_EQ(radsec_error_of("client a {\n  ipaddr = 192.0.2.1\n  certificate_name = x\n}\n"
                            "client b {\n  ipaddr = 192.0.2.2\n  certificate_name = y\n}\n"),
            "no error");
  // Not a key of the UDP clients file.
  auto udp = parse_clients("client a {\n  ipaddr = 192.0.2.1\n  secret = s\n  certificate_name = x\n}\n",
                           "clients.conf");
  ASSERT_FALSE(udp);
  EXPECT_EQ(udp.error().to_string(),
            "clients.conf:4:22: certificate_name is only for RadSec clients (the RadSec clients file)");
}

TEST(RadSecClients, RequireCertificateNameRefusesAnEntryWithoutItAtItsPosition) {
  ClientsLimits limits;
  limits.radsec = true;
  limits.require_certificate_name = true;
  auto parsed = parse_clients(
      "client a {\n  ipaddr = 192.0.2.1\n  proto = tls\n  certificate_name = a.example\n}\n"
      "clients g {\n  client b {\n    ipaddr = 192.0.2.2\n    proto = tls\n  }\n}\n",
      "radsec.conf", limits);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().to_string(),
            "radsec.conf:7:3: client b has no certificate_name (radsec.require_certificate_name is true)");
  // Entries that are not RadSec clients are skipped, not refused.
  auto skipped = parse_clients("client u {\n  ipaddr = 192.0.2.3\n  proto = udp\n}\n", "radsec.conf", limits);
  ASSERT_TRUE(skipped) << skipped.error().to_string();
  EXPECT_TRUE(skipped->clients.empty());
}

}  // namespace
}  // namespace rw::config
