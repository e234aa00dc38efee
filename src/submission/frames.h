// The gateway-to-member submission protocol: versioned, length-prefixed
// binary frames over one persistent TCP connection, pipelined and matched by
// a 64-bit request id. Pure: bytes in, values out. The byte layouts are drawn
// in docs/wire_formats.md, "Gateway-to-member frames".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::submission {

// The version a gateway announces in Hello and a member echoes in HelloAck.
inline constexpr std::uint16_t kProtocolVersion = 1;

// Every frame starts with a 4-byte big-endian length of what follows it.
inline constexpr std::size_t kLengthPrefixBytes = 4;
// Largest value of the length prefix: a frame is at most 4 + 1 MiB bytes.
inline constexpr std::size_t kFrameBodyBytesMax = std::size_t{1} << 20;
// Records in one Submit frame.
inline constexpr std::size_t kSubmitRecordsMax = 4096;
// Bytes of one record (its encoding, without the key): an Accounting-Request
// is at most 4096 octets (RFC 2865 §3), and its record is smaller than twice that.
inline constexpr std::size_t kRecordBytesMax = 8192;
// A leader address is text, "host:port" or "[v6]:port".
inline constexpr std::size_t kAddressBytesMax = 255;
// A User-Name in a SessionCountQuery: a RADIUS attribute value, 1 to 253
// octets (RFC 2865 §5.1, §5).
inline constexpr std::size_t kUserNameBytesMax = 253;

// The 16-byte record key (docs/wire_formats.md): opaque here.
using RecordKey = std::array<std::uint8_t, 16>;

enum class FrameType : std::uint8_t {
  kHello = 1,
  kHelloAck = 2,
  kSubmit = 3,
  kCommitted = 4,
  kNotLeader = 5,
  kBusy = 6,
  kPing = 7,
  kPong = 8,
  kSessionCountQuery = 9,
  kSessionCountAnswer = 10,
};

// gateway -> member, first frame on a connection.
struct Hello {
  std::uint16_t version = kProtocolVersion;
  std::uint64_t gateway_id = 0;
  bool operator==(const Hello&) const = default;
};

// member -> gateway, answer to Hello. `leader` is where the leader takes
// submissions, when known; when is_leader it is the member's own address.
struct HelloAck {
  std::uint16_t version = kProtocolVersion;
  std::uint64_t member_id = 0;
  bool is_leader = false;
  std::optional<std::string_view> leader{};  // Borrowed from the decoded bytes.
  bool operator==(const HelloAck&) const = default;
};

// One record of a Submit: its key and its encoding, both borrowed.
struct SubmitRecord {
  RecordKey key{};
  Bytes record{};
};

// gateway -> member: store these records in one log entry. At least one
// record, at most kSubmitRecordsMax, within kFrameBodyBytesMax.
struct Submit {
  std::uint64_t request_id = 0;
  std::vector<SubmitRecord> records{};
};

// member -> gateway: every record of Submit `request_id` is stored on a
// majority and applied (records already held count: they are duplicates).
struct Committed {
  std::uint64_t request_id = 0;
  std::uint64_t log_index = 0;
  bool operator==(const Committed&) const = default;
};

// member -> gateway: this member is not the leader; nothing was stored by
// this request. `leader` is the leader's address when the member knows it.
struct NotLeader {
  std::uint64_t request_id = 0;
  std::optional<std::string_view> leader{};
  bool operator==(const NotLeader&) const = default;
};

// Why a member refused a Submit without storing anything.
enum class BusyReason : std::uint8_t {
  kQueueFull = 1,     // Its submission queue is at its bound.
  kNoQuorum = 2,      // It is leader but cannot reach a majority.
  kNotReady = 3,      // A new leader before its own-term barrier committed (docs/consensus.md).
  kShuttingDown = 4,  // Leadership transfer on SIGTERM is under way.
};

// member -> gateway: nothing of Submit `request_id` is stored; retry later.
struct Busy {
  std::uint64_t request_id = 0;
  BusyReason reason = BusyReason::kQueueFull;
  bool operator==(const Busy&) const = default;
};

// Keepalive in both directions' sense: a Ping is answered by a Pong with the same nonce.
struct Ping {
  std::uint64_t nonce = 0;
  bool operator==(const Ping&) const = default;
};
struct Pong {
  std::uint64_t nonce = 0;
  bool operator==(const Pong&) const = default;
};

// gateway -> member: how many sessions of the live session table have this
// User-Name (Simultaneous-Use, docs/authentication.md)? The leader answers
// SessionCountAnswer from its applied ledger; a follower answers NotLeader
// and a leader not ready yet Busy, both with this request id. Read-only:
// nothing is stored, so any answer may be re-asked.
struct SessionCountQuery {
  std::uint64_t request_id = 0;
  std::string_view user_name{};  // 1..kUserNameBytesMax bytes, borrowed.
  bool operator==(const SessionCountQuery&) const = default;
};

// member -> gateway: `open_sessions` sessions of that User-Name are open in
// the ledger as of the member's last applied entry.
struct SessionCountAnswer {
  std::uint64_t request_id = 0;
  std::uint32_t open_sessions = 0;
  bool operator==(const SessionCountAnswer&) const = default;
};

using Frame = std::variant<Hello, HelloAck, Submit, Committed, NotLeader, Busy, Ping, Pong, SessionCountQuery,
                           SessionCountAnswer>;

enum class FrameError {
  kTruncated,           // Fewer bytes than the fields need.
  kTrailingBytes,       // Bytes left after the last field.
  kLengthMismatch,      // The length prefix disagrees with the bytes given.
  kFrameTooLarge,       // Length prefix above kFrameBodyBytesMax.
  kEmptyFrame,          // Length prefix 0: not even a type.
  kUnknownType,         // Type byte outside FrameType.
  kBadBoolean,          // is_leader other than 0 or 1.
  kEmptySubmit,         // Submit with no record.
  kTooManyRecords,      // Submit with more than kSubmitRecordsMax records.
  kRecordTooLarge,      // A record above kRecordBytesMax.
  kEmptyRecord,         // A record of zero bytes.
  kUnknownBusyReason,   // Busy reason outside BusyReason.
  kUnsupportedVersion,  // Hello/HelloAck version other than kProtocolVersion.
  kBadUserName,         // SessionCountQuery User-Name of 0 or more than kUserNameBytesMax bytes.
};

[[nodiscard]] std::string_view to_string(FrameError error);
[[nodiscard]] std::string_view to_string(FrameType type);
[[nodiscard]] std::string_view to_string(BusyReason reason);

// Decodes one whole frame, length prefix included. Borrowed fields (record
// bytes, addresses) point into `frame`. Strict: any deviation is an error.
[[nodiscard]] Result<Frame, FrameError> decode_frame(Bytes frame);

// Appends the encoding of `frame` to `out`. Requires: the frame is within
// the bounds above (the encoder asserts; callers build frames from bounded
// state, never from peer input they did not decode).
void encode_frame(const Frame& frame, std::vector<std::uint8_t>& out);

// Bytes the encoding of a Submit takes, length prefix included.
[[nodiscard]] std::size_t submit_frame_bytes(std::size_t records, std::size_t record_bytes_total);

// Cuts a TCP byte stream into whole frames. Owns one buffer of
// kLengthPrefixBytes + kFrameBodyBytesMax bytes, allocated at construction
// and never grown, so a peer cannot make it allocate more. The buffer is
// left uninitialised, so only the pages that bytes were received into are
// resident, and release_idle() gives back those a burst touched beyond the
// first kReaderKeptBytes (docs/limits.md "Member memory budget"). Not
// thread-safe.
//
// Use: write received bytes with feed() (or into writable() then commit()),
// then call next() until it returns no frame; a frame it returns stays valid
// until the next call of feed(), writable() or next().
// What a FrameReader keeps resident when idle: a few Submits' worth.
constexpr std::size_t kReaderKeptBytes = 64 * 1024;

class FrameReader {
 public:
  FrameReader();

  // Copies as much of `chunk` as fits and returns how many bytes it took;
  // fewer than chunk.size() means: drain frames with next(), then feed the rest.
  [[nodiscard]] std::size_t feed(Bytes chunk);
  // Free space at the end of the buffer, for recv() straight into it.
  [[nodiscard]] MutableBytes writable();
  // Marks `count` bytes of writable() as received. Requires: count <= writable().size().
  void commit(std::size_t count);

  // The next whole frame (length prefix included, not yet decoded), or no
  // frame when more bytes are needed. An error (a length prefix above the
  // bound or zero) is final: the connection must be closed.
  [[nodiscard]] Result<std::optional<Bytes>, FrameError> next();

  // Bytes received but not yet returned as frames.
  [[nodiscard]] std::size_t buffered() const { return end_ - begin_; }

  // Call periodically (about once a second). When nothing is buffered and
  // no receive since the previous call reached past kReaderKeptBytes, the
  // pages received into past that offset go back to the kernel
  // (MADV_DONTNEED): after a burst, not during a sustained load, which
  // would fault them in again at once. Returns the bytes given back.
  std::size_t release_idle();
  // How far into the buffer bytes have been received since the latest
  // release: at most what the buffer holds resident.
  [[nodiscard]] std::size_t touched() const { return touched_; }

 private:
  void compact();

  std::unique_ptr<std::uint8_t[]> buffer_;
  std::size_t begin_ = 0;           // First byte not yet returned.
  std::size_t end_ = 0;             // One past the last received byte.
  std::size_t touched_ = 0;         // Highest end_ since the latest release.
  std::size_t touched_lately_ = 0;  // Highest end_ since the latest release_idle call.
  std::optional<FrameError> failed_{};
};

}  // namespace rw::submission
