// Fuzzes the whole request handling with arbitrary datagrams from a known
// client (docs/design.md invariant 5: bad input never crashes). The first input
// octet chooses the shape: raw bytes as they are, or the remaining bytes as
// the attributes of an Access-Request or Accounting-Request signed with the
// client's secret, so that inputs reach the users policy and every method
// behind the Message-Authenticator and authenticator checks. Accounting goes
// to a sink that takes or refuses records by the input's first octet, and
// pending requests are answered, refused or left to expire, so the deferred
// path and its stale tickets are fuzzed too. EAP-MD5 is served: the State of
// the last Access-Challenge is appended to a signed Access-Request when the
// first octet says so, so that conversations go on past their first round.
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "gateway/eap_conversations.h"
#include "gateway/request_handler.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace {

using namespace rw;

constexpr std::string_view kUsers =
    "alice Cleartext-Password := \"wonderland\"\n"
    "      Reply-Message = \"Hello\",\n"
    "      Tunnel-Type:1 = VLAN,\n"
    "      Tunnel-Medium-Type:1 = IEEE-802,\n"
    "      Tunnel-Private-Group-Id:1 = \"100\",\n"
    "      Tunnel-Password:1 = \"tunnel\"\n"
    "bob NT-Password := 0x44EBBA8D5312B8D611474411F56989AE\n"
    "00-11-22-33-44-55\n"
    "      Session-Timeout = 60\n"
    "DEFAULT Calling-Station-Id =~ \"^aa\", Auth-Type := Reject\n"
    "      Reply-Message = \"no\"\n";
constexpr std::string_view kClients = "client nas { ipaddr = 127.0.0.1\n secret = testing123 }\n";

// Takes a record unless told to refuse; remembers the tickets it took.
struct Sink final : gateway::AccountingSink {
  bool submit(const accounting::RecordKey&, Bytes record, gateway::Ticket ticket) override {
    if (refuse || record.empty() || tickets.size() >= 64) return false;
    tickets.push_back(ticket);
    return true;
  }
  bool refuse = false;
  std::vector<gateway::Ticket> tickets;
};

struct Fixture {
  Fixture()
      : random(1),
        secret(*radius::SharedSecret::create(as_bytes("testing123"))),
        eap(gateway::EapTableOptions{.conversations_max = 8, .idle_timeout = Duration::milliseconds(50)},
            random) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway::gateway_users_limits());
    auto clients = config::parse_clients(kClients, "clients.conf");
    gateway::GatewayOptions options;
    options.duplicates.answered_max = 256;
    options.duplicates.reply_bytes_max = 64 << 10;
    options.duplicates.in_progress_max = 16;
    options.access.eap.methods = {eap::Type::kMd5Challenge};
    state = *gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    handler = std::make_unique<gateway::RequestHandler>(
        state, random, counters, nullptr,
        gateway::AccountingSetup{.sink = &sink,
                                 .recipe = std::make_shared<const accounting::KeyRecipe>(
                                     accounting::KeyRecipe::freeradius_default()),
                                 .deferred_max = 8,
                                 .deferred_timeout = Duration::milliseconds(20)});
    handler->set_eap_conversations(&eap);
    from.address = {127, 0, 0, 1};
    from.port = 1812;
  }
  SeededRandom random;
  Sink sink;
  radius::SharedSecret secret;
  gateway::GatewayCounters counters;
  gateway::EapConversations eap;
  std::vector<std::uint8_t> last_state;  // Of the last Access-Challenge.
  std::shared_ptr<const gateway::GatewayState> state;
  std::unique_ptr<gateway::RequestHandler> handler;
  gateway::Endpoint from;
  Instant now{1'000'000'000};
};

// Header, a Message-Authenticator for Access-Requests, then `attributes`;
// signed as a NAS would sign it.
std::size_t make_signed(Fixture& fixture, radius::Code code, const std::uint8_t* attributes, std::size_t size,
                        std::array<std::uint8_t, radius::kMaxPacketLength>& out) {
  const bool access = code == radius::Code::kAccessRequest;
  const std::size_t header = radius::kHeaderLength + (access ? 18 : 0);
  const std::size_t length = std::min(out.size(), header + size);
  std::memset(out.data(), 0, header);
  out[0] = static_cast<std::uint8_t>(code);
  out[1] = static_cast<std::uint8_t>(size);
  out[2] = static_cast<std::uint8_t>(length >> 8);
  out[3] = static_cast<std::uint8_t>(length);
  if (access) {
    fixture.random.fill(rw::MutableBytes(out.data() + 4, 16));
    out[20] = radius::attr::kMessageAuthenticator;
    out[21] = 18;
  }
  if (length > header) std::memcpy(out.data() + header, attributes, length - header);
  if (radius::Packet::parse(rw::Bytes(out.data(), length))) {
    radius::sign_request(rw::MutableBytes(out.data(), length), fixture.secret);
  }
  return length;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture fixture;
  if (size == 0) return 0;
  std::array<std::uint8_t, radius::kMaxPacketLength> datagram{};
  std::array<std::uint8_t, radius::kMaxPacketLength> reply{};
  fixture.now = fixture.now + Duration::milliseconds(1);
  const std::uint8_t shape = data[0] % 3;
  const bool accounting = shape == 2 || (shape == 0 && (data[0] & 0x80) != 0);
  const gateway::Arrival arrival{.listener = accounting ? gateway::Listener::kAccounting
                                                        : gateway::Listener::kAuthentication};
  fixture.sink.refuse = (data[0] & 0x40) != 0;
  std::size_t n = 0;
  if (shape == 0) {
    n = fixture.handler->on_datagram(fixture.now, arrival, fixture.from, rw::Bytes(data + 1, size - 1),
                                     reply);
  } else {
    const radius::Code code = shape == 1 ? radius::Code::kAccessRequest : radius::Code::kAccountingRequest;
    std::vector<std::uint8_t> attributes(data + 1, data + size);
    if (shape == 1 && (data[0] & 0x08) != 0 && !fixture.last_state.empty()) {
      attributes.push_back(radius::attr::kState);
      attributes.push_back(static_cast<std::uint8_t>(fixture.last_state.size() + 2));
      attributes.insert(attributes.end(), fixture.last_state.begin(), fixture.last_state.end());
    }
    const std::size_t length = make_signed(fixture, code, attributes.data(), attributes.size(), datagram);
    n = fixture.handler->on_datagram(fixture.now, arrival, fixture.from, rw::Bytes(datagram.data(), length),
                                     reply);
  }
  // Whatever is answered must itself be a well-formed RADIUS packet.
  if (n != 0) {
    auto answered = radius::Packet::parse(rw::Bytes(reply.data(), n));
    if (!answered) __builtin_trap();
    const auto state = answered->find(radius::attr::kState);
    if (answered->code() == radius::Code::kAccessChallenge && state) {
      fixture.last_state.assign(state->value.begin(), state->value.end());
    }
  }
  // Settle one taken record: answered (twice: the second is stale) or refused.
  if (!fixture.sink.tickets.empty() && (data[0] & 0x20) != 0) {
    const gateway::Ticket ticket = fixture.sink.tickets.front();
    fixture.sink.tickets.erase(fixture.sink.tickets.begin());
    if ((data[0] & 0x10) != 0) {
      (void)fixture.handler->on_answer(fixture.now, gateway::Answer{.ticket = ticket}, reply);
    } else {
      for (int i = 0; i < 2; ++i) {
        auto answer = fixture.handler->on_answer(fixture.now,
                                                 gateway::Answer{.ticket = ticket, .committed = true}, reply);
        if (answer && !radius::Packet::parse(rw::Bytes(reply.data(), answer->length))) __builtin_trap();
      }
    }
  }
  if (fixture.sink.tickets.size() >= 64) fixture.sink.tickets.clear();
  fixture.handler->on_tick(fixture.now);
  return 0;
}
