// Forwarding an EAP follow-up to the gateway that holds its conversation
// (docs/design.md "EAP across several gateways"): the message one gateway
// sends another over UDP, authenticated with HMAC-SHA256 under the
// deployment's forwarding key (docs/wire_formats.md "EAP forwarding"), the
// checks its receiver makes before it reads anything else (configured peer,
// its address, addressed to this gateway, fresh, not replayed), and the seam
// through which a request handler hands a request to the shell's forwarder.
// Pure; nothing allocates.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <nettle/hmac.h>

#include "base/bytes.h"
#include "base/result.h"
#include "gateway/datagram.h"

namespace rw::gateway {

inline constexpr std::uint8_t kForwardVersion = 1;
// Version, kind, payload length, sender, receiver, request id, sent at,
// listener, family, NAS port, NAS address.
inline constexpr std::size_t kForwardHeaderLength = 1 + 1 + 2 + 4 + 4 + 8 + 8 + 1 + 1 + 2 + 16;
inline constexpr std::size_t kForwardTagLength = 32;  // The whole HMAC-SHA256.
// RFC 2865 §3: the largest RADIUS packet; a forward carries one.
inline constexpr std::size_t kForwardPayloadMax = 4096;
inline constexpr std::size_t kForwardMessageMax =
    kForwardHeaderLength + kForwardPayloadMax + kForwardTagLength;
// The forwarding key file's octets at the least (eap.forward.key_file).
inline constexpr std::size_t kForwardKeyLengthMin = 32;
// Request ids a receiver remembers below the highest one seen from a peer:
// older ones, or any seen, are replays.
inline constexpr std::size_t kForwardReplayWindow = 1024;

enum class ForwardKind : std::uint8_t {
  kRequest = 1,  // An Access-Request the sender received, for the receiver to decide.
  kReply = 2,    // The receiver's reply to it, for the sender to relay to the NAS.
};

// One forwarding message. `payload` views the octets it was read from.
struct ForwardMessage {
  ForwardKind kind = ForwardKind::kRequest;
  std::uint32_t sender = 0;    // The gateway id of who sent it.
  std::uint32_t receiver = 0;  // The gateway id it is for.
  // Names the forward; the reply carries the request's. Rises with every
  // request a sender process sends (the receiver's replay window).
  std::uint64_t request_id = 0;
  std::int64_t sent_unix_ms = 0;  // The sender's wall clock.
  // Where the NAS sent the request: the receiver decides it as if it had
  // come in on the same listener from the same address and port.
  Listener listener = Listener::kAuthentication;
  Endpoint nas{};
  Bytes payload{};  // The RADIUS packet: the Access-Request, or its reply.
};

// Why a message does not read.
enum class ForwardError : std::uint8_t {
  kTooShort,        // Shorter than a header and a tag.
  kTooLong,         // Longer than kForwardMessageMax.
  kUnknownVersion,  // Not kForwardVersion.
  kBadTag,          // The HMAC does not verify: another key, or altered.
  kBadLength,       // The payload length disagrees with the message's.
  kBadField,        // An unknown kind, listener or address family.
  kCount,
};
[[nodiscard]] std::string_view to_string(ForwardError error);

// Writes and reads forwarding messages under one key. Immutable after
// construction: any number of threads may use one.
class ForwardCodec {
 public:
  // Requires: key.size() >= kForwardKeyLengthMin.
  explicit ForwardCodec(Bytes key);

  // Writes `message` into `out`; the number of octets written, 0 when its
  // payload is over kForwardPayloadMax or `out` is too small.
  [[nodiscard]] std::size_t write(const ForwardMessage& message, MutableBytes out) const;

  // Checks the length, the version and the tag (in constant time) before any
  // other field is read.
  [[nodiscard]] Result<ForwardMessage, ForwardError> read(Bytes message) const;

 private:
  void tag(Bytes signed_part, std::span<std::uint8_t, kForwardTagLength> out) const;

  hmac_sha256_ctx keyed_{};  // Copied for each tag; never updated in place.
};

// A gateway this one forwards to and takes forwards from (eap.forward.peers).
struct ForwardPeer {
  std::uint32_t gateway_id = 0;
  Endpoint address{};  // Its forwarding listener; forwards from it come from there.
};

// Why a message that reads is refused.
enum class ForwardRefusal : std::uint8_t {
  kMalformed,    // It does not read (ForwardError), the tag included.
  kUnknownPeer,  // Its sender is not a configured peer.
  kWrongSource,  // It came from another address or port than its sender's.
  kNotForUs,     // Its receiver is another gateway.
  kStale,        // Its clock is more than the window away from ours.
  kReplayed,     // A request id seen already, or below the replay window.
  kUnsolicited,  // A reply to no forward in flight (late, or replayed).
  kCount,
};
[[nodiscard]] std::string_view to_string(ForwardRefusal refusal);

// What a receiving gateway checks of a message once it reads: whose, from
// where, for whom, when, and (for a request) whether it was seen. One per
// forwarding thread; not thread-safe.
class ForwardGate {
 public:
  // Requires: `peers` lists distinct ids, none `self`.
  ForwardGate(std::uint32_t self, std::vector<ForwardPeer> peers, std::int64_t clock_window_ms);

  [[nodiscard]] std::uint32_t self() const { return self_; }
  [[nodiscard]] const std::vector<ForwardPeer>& peers() const { return peers_; }
  // The index of `gateway_id` in peers(), or none.
  [[nodiscard]] std::optional<std::size_t> find(std::uint32_t gateway_id) const;

  // Admits `message`, received from `source` at `now_unix_ms`: the index of
  // its sender in peers(). A request's id is remembered only when admitted.
  [[nodiscard]] Result<std::size_t, ForwardRefusal> admit(const ForwardMessage& message,
                                                          const Endpoint& source, std::int64_t now_unix_ms);

 private:
  // The request ids seen from one peer: the highest, and which of the
  // kForwardReplayWindow below it.
  struct Window {
    std::uint64_t highest = 0;
    bool any = false;
    std::bitset<kForwardReplayWindow> seen{};  // Bit i: highest - i.
  };
  [[nodiscard]] static bool fresh(Window& window, std::uint64_t id);

  std::uint32_t self_;
  std::vector<ForwardPeer> peers_;
  std::vector<Window> windows_;  // By peer.
  std::int64_t clock_window_ms_;
};

// Where a request handler hands an Access-Request whose State names another
// gateway (the shell's forwarder). Called on worker threads.
class EapForwardSink {
 public:
  virtual ~EapForwardSink() = default;
  // Whether `gateway_id` is a configured peer.
  [[nodiscard]] virtual bool knows(std::uint32_t gateway_id) const = 0;
  // Queues `datagram`, received from `from` on `listener`, for the peer
  // `gateway_id`; its reply comes back as an Answer (AnswerKind::kForwarded)
  // for `ticket`. Never blocks: false when the queue is full.
  [[nodiscard]] virtual bool forward(std::uint32_t gateway_id, Ticket ticket, Listener listener,
                                     const Endpoint& from, Bytes datagram) = 0;
};

}  // namespace rw::gateway
