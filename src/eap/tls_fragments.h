// The EAP-TLS framing (RFC 5216 §2.1.5, §3.1-3.2; unchanged for TLS 1.3 by
// RFC 9190): the Flags octet (L, M, S), the four-octet TLS Message Length,
// fragmentation of the server's TLS data and reassembly of the peer's, with
// hard bounds (docs/limits.md "EAP-TLS"). Pure: bytes in, bytes out; PEAP and
// EAP-TTLS use the same framing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::eap {

// The Flags octet of EAP-TLS Type-Data (RFC 5216 §3.1). The low five bits
// are reserved: sent as zero, ignored on receipt. PEAP and EAP-TTLS carry a
// version in the low three bits, which these constants leave alone.
inline constexpr std::uint8_t kTlsFlagLength = 0x80;  // L: the TLS Message Length follows.
inline constexpr std::uint8_t kTlsFlagMore = 0x40;    // M: more fragments follow.
inline constexpr std::uint8_t kTlsFlagStart = 0x20;   // S: EAP-TLS Start (server only).

// One EAP-TLS Type-Data, parsed. `fragment` borrows from the input.
struct TlsFrame {
  std::uint8_t flags = 0;
  std::optional<std::uint32_t> message_length;  // Present exactly when L is set.
  Bytes fragment;                               // TLS data of this fragment (may be empty).
};

// Everything wrong a peer's EAP-TLS Type-Data can be. Closed: each has a name.
enum class TlsFrameError : std::uint8_t {
  kNoFlags,                // Type-Data is empty: no Flags octet.
  kTruncatedLength,        // L is set but fewer than four octets follow the flags.
  kStartFromPeer,          // S is set in a response; only the server starts.
  kMessageTooLarge,        // The announced or received message exceeds message_octets_max.
  kTooManyFragments,       // The message took more than fragments_max fragments.
  kFirstFragmentNoLength,  // A first fragment with M set lacks L (RFC 5216 §3.1 "MUST").
  kLengthChanged,          // A later fragment announces another TLS Message Length.
  kLongerThanAnnounced,    // The fragments carry more octets than announced.
  kShorterThanAnnounced,   // The last fragment (M clear) ends before the announced length.
  kMoreAfterComplete,      // M is set but the announced length is already reached.
  kEmptyFragmentWithMore,  // M is set on a fragment carrying no TLS data.
};
[[nodiscard]] std::string_view to_string(TlsFrameError error);

// Reads the Flags octet and, when L is set, the TLS Message Length. Checks
// no more than the frame itself; sequences are the reassembler's.
[[nodiscard]] Result<TlsFrame, TlsFrameError> parse_tls_frame(Bytes type_data);

// Bounds on one reassembled message from the peer (docs/limits.md "EAP-TLS").
struct TlsReassemblyLimits {
  std::size_t message_octets_max = 65'536;  // One TLS flight; a client chain fits well within.
  std::size_t fragments_max = 128;          // Fragments of one message: 64 KiB in 512-octet ones.
};

// Collects the peer's fragments of one TLS message (RFC 5216 §2.1.5). The
// caller answers each accepted fragment with M set by an ACK (an EAP-TLS
// Request carrying only flags 0), and hands a complete message to TLS.
// After an error the reassembler is spent: the conversation fails.
class TlsReassembler {
 public:
  explicit TlsReassembler(TlsReassemblyLimits limits = {}) : limits_(limits) {}

  // One response's Type-Data. Returns the whole message once the fragment
  // with M clear arrived (an empty message is the peer's ACK), or nothing
  // while more fragments are due.
  [[nodiscard]] Result<std::optional<std::vector<std::uint8_t>>, TlsFrameError> on_fragment(Bytes type_data);
  // Whether a message is partly received.
  [[nodiscard]] bool in_progress() const { return fragments_ > 0; }

 private:
  Result<std::optional<std::vector<std::uint8_t>>, TlsFrameError> refuse(TlsFrameError error);

  TlsReassemblyLimits limits_;
  std::vector<std::uint8_t> message_{};
  std::optional<std::uint32_t> announced_{};
  std::size_t fragments_ = 0;
};

// Bounds on the fragment size the server sends (docs/limits.md "EAP-TLS"):
// TLS octets per EAP-Request, after the flags and the length. 4,096-octet
// RADIUS packets must also hold State, Message-Authenticator and the
// EAP-Message headers (RFC 3579 §3.1), so the largest is 3,000.
inline constexpr std::size_t kTlsFragmentOctetsMin = 64;
inline constexpr std::size_t kTlsFragmentOctetsMax = 3'000;
inline constexpr std::size_t kTlsFragmentOctetsDefault = 1'000;

// Splits one outgoing TLS message into EAP-TLS Type-Data of at most
// `fragment_octets` TLS octets each (RFC 5216 §2.1.5). The first fragment of a
// fragmented message carries L and the whole length; every fragment but the
// last carries M. A message that fits in one fragment goes without L.
class TlsFragmenter {
 public:
  // Requires: kTlsFragmentOctetsMin <= fragment_octets <= kTlsFragmentOctetsMax.
  explicit TlsFragmenter(std::size_t fragment_octets);

  // Replaces any message still queued. `flags_base` are ORed into every
  // fragment's flags (PEAP and EAP-TTLS put their version there).
  void load(std::vector<std::uint8_t> message, std::uint8_t flags_base = 0);
  // Whether fragments remain to be sent.
  [[nodiscard]] bool pending() const { return offset_ < message_.size(); }
  // The next fragment's Type-Data. Requires: pending().
  [[nodiscard]] std::vector<std::uint8_t> next();
  [[nodiscard]] std::size_t fragment_octets() const { return fragment_octets_; }

 private:
  std::size_t fragment_octets_;
  std::vector<std::uint8_t> message_{};
  std::size_t offset_ = 0;
  std::uint8_t flags_base_ = 0;
};

// The framing side of one EAP-TLS-family conversation (EAP-TLS, EAP-TTLS,
// PEAP): sends a TLS message in fragments, each after the peer's ACK, and
// gathers the peer's fragments, answering each with an ACK, until a whole
// message arrived (RFC 5216 §2.1.5). The method decides what a message means.
class TlsTransfer {
 public:
  // A request to send as it is: our next fragment, or our ACK.
  struct Request {
    std::vector<std::uint8_t> type_data;
  };
  // A whole message from the peer; empty when the peer sent its ACK.
  struct Message {
    std::vector<std::uint8_t> records;
  };
  using Step = std::variant<Request, Message>;
  enum class Error : std::uint8_t {
    kFraming,      // framing_error() says how.
    kExpectedAck,  // The peer sent data while our fragments were due.
  };

  // `flags_base` is ORed into every flags octet we send (PEAP's and
  // EAP-TTLS's version bits). Requires: fragment_octets within bounds.
  TlsTransfer(std::size_t fragment_octets, TlsReassemblyLimits limits, std::uint8_t flags_base = 0);

  // The Start request's Type-Data: S and the version bits.
  [[nodiscard]] std::vector<std::uint8_t> start() const;
  // The Type-Data of an ACK or of a request with no TLS data.
  [[nodiscard]] std::vector<std::uint8_t> ack() const;
  // The first fragment of `message`; the rest follow the peer's ACKs.
  [[nodiscard]] std::vector<std::uint8_t> send(std::vector<std::uint8_t> message);
  [[nodiscard]] Result<Step, Error> on_response(Bytes type_data);
  [[nodiscard]] std::optional<TlsFrameError> framing_error() const { return framing_error_; }

 private:
  TlsReassembler reassembler_;
  TlsFragmenter fragmenter_;
  std::uint8_t flags_base_;
  std::optional<TlsFrameError> framing_error_{};
};

}  // namespace rw::eap
