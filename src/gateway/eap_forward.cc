// The EAP forwarding message and its checks (docs/wire_formats.md "EAP
// forwarding").
#include "gateway/eap_forward.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"

namespace rw::gateway {

std::string_view to_string(ForwardError error) {
  switch (error) {
    case ForwardError::kTooShort:
      return "too_short";
    case ForwardError::kTooLong:
      return "too_long";
    case ForwardError::kUnknownVersion:
      return "unknown_version";
    case ForwardError::kBadTag:
      return "bad_tag";
    case ForwardError::kBadLength:
      return "bad_length";
    case ForwardError::kBadField:
      return "bad_field";
    case ForwardError::kCount:
      break;
  }
  return "unknown";
}

std::string_view to_string(ForwardRefusal refusal) {
  switch (refusal) {
    case ForwardRefusal::kMalformed:
      return "malformed";
    case ForwardRefusal::kUnknownPeer:
      return "unknown_peer";
    case ForwardRefusal::kWrongSource:
      return "wrong_source";
    case ForwardRefusal::kNotForUs:
      return "not_for_us";
    case ForwardRefusal::kStale:
      return "stale";
    case ForwardRefusal::kReplayed:
      return "replayed";
    case ForwardRefusal::kUnsolicited:
      return "unsolicited";
    case ForwardRefusal::kCount:
      break;
  }
  return "unknown";
}

ForwardCodec::ForwardCodec(Bytes key) {
  RW_ASSERT(key.size() >= kForwardKeyLengthMin);
  hmac_sha256_set_key(&keyed_, key.size(), key.data());
}

void ForwardCodec::tag(Bytes signed_part, std::span<std::uint8_t, kForwardTagLength> out) const {
  hmac_sha256_ctx context = keyed_;
  hmac_sha256_update(&context, signed_part.size(), signed_part.data());
  hmac_sha256_digest(&context, out.size(), out.data());
}

std::size_t ForwardCodec::write(const ForwardMessage& message, MutableBytes out) const {
  const std::size_t length = kForwardHeaderLength + message.payload.size() + kForwardTagLength;
  if (message.payload.size() > kForwardPayloadMax || out.size() < length) return 0;
  ByteWriter writer(out);
  writer.write_u8(kForwardVersion);
  writer.write_u8(static_cast<std::uint8_t>(message.kind));
  writer.write_u16(static_cast<std::uint16_t>(message.payload.size()));
  writer.write_u32(message.sender);
  writer.write_u32(message.receiver);
  writer.write_u64(message.request_id);
  writer.write_u64(static_cast<std::uint64_t>(message.sent_unix_ms));
  writer.write_u8(static_cast<std::uint8_t>(message.listener));
  writer.write_u8(message.nas.is_v6 ? 6 : 4);
  writer.write_u16(message.nas.port);
  if (message.nas.is_v6) {
    writer.write_bytes(message.nas.address);
  } else {
    // An IPv4 address's unused 12 octets go out as zeros whatever the Endpoint holds.
    writer.write_bytes(Bytes(message.nas.address.data(), 4));
    (void)writer.skip(12);
  }
  writer.write_bytes(message.payload);
  RW_ASSERT(!writer.overflowed() && writer.size() == length - kForwardTagLength);
  tag(writer.written(),
      std::span<std::uint8_t, kForwardTagLength>(out.data() + length - kForwardTagLength, kForwardTagLength));
  return length;
}

Result<ForwardMessage, ForwardError> ForwardCodec::read(Bytes message) const {
  if (message.size() < kForwardHeaderLength + kForwardTagLength) return fail(ForwardError::kTooShort);
  if (message.size() > kForwardMessageMax) return fail(ForwardError::kTooLong);
  if (message[0] != kForwardVersion) return fail(ForwardError::kUnknownVersion);
  // Nothing past the version is read before the tag verifies.
  const Bytes signed_part = message.first(message.size() - kForwardTagLength);
  std::array<std::uint8_t, kForwardTagLength> expected{};
  tag(signed_part, expected);
  if (!constant_time_equal(expected, message.last(kForwardTagLength))) return fail(ForwardError::kBadTag);

  ByteReader reader(signed_part);
  std::uint8_t version = 0;
  std::uint8_t kind = 0;
  std::uint16_t payload_length = 0;
  std::uint64_t sent = 0;
  std::uint8_t listener = 0;
  std::uint8_t family = 0;
  ForwardMessage out;
  if (!reader.read_u8(version) || !reader.read_u8(kind) || !reader.read_u16(payload_length) ||
      !reader.read_u32(out.sender) || !reader.read_u32(out.receiver) || !reader.read_u64(out.request_id) ||
      !reader.read_u64(sent) || !reader.read_u8(listener) || !reader.read_u8(family) ||
      !reader.read_u16(out.nas.port)) {
    return fail(ForwardError::kTooShort);
  }
  const Bytes address = reader.read_bytes(16);
  if (reader.failed()) return fail(ForwardError::kTooShort);
  if (payload_length != reader.remaining() || payload_length > kForwardPayloadMax)
    return fail(ForwardError::kBadLength);
  if (kind != static_cast<std::uint8_t>(ForwardKind::kRequest) &&
      kind != static_cast<std::uint8_t>(ForwardKind::kReply)) {
    return fail(ForwardError::kBadField);
  }
  // UDP's authentication port or RadSec: never accounting, which is not forwarded.
  if (listener != static_cast<std::uint8_t>(Listener::kAuthentication) &&
      listener != static_cast<std::uint8_t>(Listener::kRadSec)) {
    return fail(ForwardError::kBadField);
  }
  if (family != 4 && family != 6) return fail(ForwardError::kBadField);
  out.kind = static_cast<ForwardKind>(kind);
  out.sent_unix_ms = static_cast<std::int64_t>(sent);
  out.listener = static_cast<Listener>(listener);
  out.nas.is_v6 = family == 6;
  std::copy_n(address.begin(), out.nas.is_v6 ? 16 : 4, out.nas.address.begin());
  out.payload = reader.read_bytes(payload_length);
  return out;
}

ForwardGate::ForwardGate(std::uint32_t self, std::vector<ForwardPeer> peers, std::int64_t clock_window_ms)
    : self_(self), peers_(std::move(peers)), windows_(peers_.size()), clock_window_ms_(clock_window_ms) {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    RW_ASSERT(peers_[i].gateway_id != self_);
    for (std::size_t j = i + 1; j < peers_.size(); ++j)
      RW_ASSERT(peers_[i].gateway_id != peers_[j].gateway_id);
  }
}

std::optional<std::size_t> ForwardGate::find(std::uint32_t gateway_id) const {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (peers_[i].gateway_id == gateway_id) return i;
  }
  return std::nullopt;
}

bool ForwardGate::fresh(Window& window, std::uint64_t id) {
  if (!window.any) {
    window.any = true;
    window.highest = id;
    window.seen.reset();
    window.seen.set(0);
    return true;
  }
  if (id > window.highest) {
    const std::uint64_t shift = id - window.highest;
    if (shift >= kForwardReplayWindow) {
      window.seen.reset();
    } else {
      window.seen <<= static_cast<std::size_t>(shift);
    }
    window.seen.set(0);
    window.highest = id;
    return true;
  }
  const std::uint64_t behind = window.highest - id;
  if (behind >= kForwardReplayWindow || window.seen.test(static_cast<std::size_t>(behind))) return false;
  window.seen.set(static_cast<std::size_t>(behind));
  return true;
}

Result<std::size_t, ForwardRefusal> ForwardGate::admit(const ForwardMessage& message, const Endpoint& source,
                                                       std::int64_t now_unix_ms) {
  const std::optional<std::size_t> peer = find(message.sender);
  if (!peer) return fail(ForwardRefusal::kUnknownPeer);
  if (!(peers_[*peer].address == source)) return fail(ForwardRefusal::kWrongSource);
  if (message.receiver != self_) return fail(ForwardRefusal::kNotForUs);
  // Compared without a subtraction of the message's field, and with the
  // window's ends saturated: neither clock can make the arithmetic overflow.
  std::int64_t earliest = 0;
  std::int64_t latest = 0;
  if (__builtin_sub_overflow(now_unix_ms, clock_window_ms_, &earliest))
    earliest = std::numeric_limits<std::int64_t>::min();
  if (__builtin_add_overflow(now_unix_ms, clock_window_ms_, &latest))
    latest = std::numeric_limits<std::int64_t>::max();
  if (message.sent_unix_ms > latest || message.sent_unix_ms < earliest) return fail(ForwardRefusal::kStale);
  // A reply is matched against the forwards in flight by its caller, which
  // forgets each once answered: a replayed reply finds none.
  if (message.kind == ForwardKind::kRequest && !fresh(windows_[*peer], message.request_id))
    return fail(ForwardRefusal::kReplayed);
  return *peer;
}

}  // namespace rw::gateway
