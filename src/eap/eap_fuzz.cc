// libFuzzer target for the EAP codec and EAP over RADIUS. Properties: parse
// never crashes; an accepted packet written back is byte-identical to its
// octets up to Length; any octets split over EAP-Message attributes by
// add_eap_message reassemble to themselves; a RADIUS packet's EAP-Messages
// reassemble within the bound; a conversation fed the parsed Response
// (EAP-MD5 offered, the password check answered) never crashes and always
// sends a packet that parses. Corpus: tests/corpus/eap_fuzz/ (EAP-Start,
// Identity, MD5 and Nak exchanges, Success, Failure).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "auth/password.h"
#include "eap/conversation.h"
#include "eap/eap_message.h"
#include "eap/md5_method.h"
#include "eap/packet.h"
#include "radius/packet.h"

namespace {

using namespace rw;

void check_round_trip(Bytes input) {
  auto packet = eap::parse(input);
  if (!packet) return;
  if (packet->length() > input.size()) __builtin_trap();
  std::array<std::uint8_t, 65536> buffer;
  const Bytes written = eap::write(*packet, buffer);
  if (written.size() != packet->length() || std::memcmp(written.data(), input.data(), written.size()) != 0) {
    __builtin_trap();
  }
}

// Splits `input` over EAP-Messages of an Access-Request and reassembles it.
void check_split(Bytes input) {
  if (input.size() > 3500) input = input.first(3500);
  std::array<std::uint8_t, radius::kMaxPacketLength> wire;
  radius::PacketBuilder builder(wire);
  builder.begin(radius::Code::kAccessRequest, 1, std::array<std::uint8_t, 16>{});
  builder.add(radius::attr::kUserName, as_bytes("peer"));
  eap::add_eap_message(builder, input);
  auto finished = builder.finish();
  if (!finished) __builtin_trap();
  auto packet = radius::Packet::parse(*finished);
  if (!packet || packet->count(radius::attr::kEapMessage) != eap::eap_message_count(input.size())) {
    __builtin_trap();
  }
  std::array<std::uint8_t, eap::kEapPacketBytesMax> out;
  auto reassembled = eap::reassemble(*packet, out);
  if (!reassembled || reassembled->size() != input.size() ||
      !std::equal(reassembled->begin(), reassembled->end(), input.begin())) {
    __builtin_trap();
  }
}

// The input as a RADIUS packet: its EAP-Messages reassemble within the bound.
void check_reassembly(Bytes input) {
  auto packet = radius::Packet::parse(input);
  if (!packet) return;
  std::array<std::uint8_t, eap::kEapPacketBytesMax> out;
  auto reassembled = eap::reassemble(*packet, out);
  if (reassembled && reassembled->size() > out.size()) __builtin_trap();
  if (reassembled) (void)eap::parse(*reassembled);
}

class Md5Only final : public eap::MethodFactory {
 public:
  explicit Md5Only(RandomSource& random) : random_(random) {}
  std::unique_ptr<eap::Method> make(eap::Type type, std::string_view identity) override {
    if (type != eap::Type::kMd5Challenge) return nullptr;
    return std::make_unique<eap::Md5Method>(identity, random_);
  }

 private:
  RandomSource& random_;
};

void check_sent(const eap::Step& step) {
  if (step.kind == eap::Step::Kind::kDiscard || step.kind == eap::Step::Kind::kCredential) return;
  if (!eap::parse(step.packet)) __builtin_trap();
}

// Feeds the input's Response twice into a conversation started by EAP-Start.
void check_conversation(Bytes input) {
  auto packet = eap::parse(input);
  if (!packet || packet->code != eap::Code::kResponse) return;
  SeededRandom random(1);
  Md5Only factory(random);
  const std::array<eap::Type, 2> methods{eap::Type::kMd5Challenge, eap::Type::kTls};
  const eap::Offer offer{.methods = methods, .factory = &factory};
  std::array<std::uint8_t, 4096> out;
  eap::Conversation conversation(eap::ConversationOptions{.rounds_max = 3}, "nas");
  if (packet->identifier % 2 == 0) check_sent(conversation.start(packet->identifier, out));
  const auth::Credential password = auth::Credential::cleartext("password");
  for (int i = 0; i < 2 && !conversation.finished(); ++i) {
    eap::Step step = conversation.on_response(*packet, offer, out);
    check_sent(step);
    if (step.kind == eap::Step::Kind::kCredential) check_sent(conversation.on_credential(&password, out));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes input(data, size);
  check_round_trip(input);
  check_split(input);
  check_reassembly(input);
  check_conversation(input);
  return 0;
}
