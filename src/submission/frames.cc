// Encoding and strict decoding of the gateway-to-member frames, and the
// FrameReader that cuts a TCP stream into them (docs/wire_formats.md,
// "Gateway-to-member frames").
#include "submission/frames.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "base/assert.h"

namespace rw::submission {
namespace {

// Fixed bytes of a Submit body: type, request id, record count.
constexpr std::size_t kSubmitHeaderBytes = 1 + 8 + 2;
// Fixed bytes per record: key and record length.
constexpr std::size_t kRecordHeaderBytes = 16 + 2;

// Reads an optional address: a length byte, 0 meaning "none".
Result<std::optional<std::string_view>, FrameError> read_address(ByteReader& reader) {
  std::uint8_t length = 0;
  if (!reader.read_u8(length)) return fail(FrameError::kTruncated);
  if (length == 0) return std::optional<std::string_view>{};
  Bytes text = reader.read_bytes(length);
  if (reader.failed()) return fail(FrameError::kTruncated);
  return std::optional<std::string_view>{as_chars(text)};
}

Result<std::uint16_t, FrameError> read_version(ByteReader& reader) {
  std::uint16_t version = 0;
  if (!reader.read_u16(version)) return fail(FrameError::kTruncated);
  // A later version would be negotiated here; version 1 accepts only itself.
  if (version != kProtocolVersion) return fail(FrameError::kUnsupportedVersion);
  return version;
}

Result<Frame, FrameError> decode_hello(ByteReader& reader) {
  Hello hello;
  auto version = read_version(reader);
  if (!version) return fail(version.error());
  hello.version = *version;
  if (!reader.read_u64(hello.gateway_id)) return fail(FrameError::kTruncated);
  return hello;
}

Result<Frame, FrameError> decode_hello_ack(ByteReader& reader) {
  HelloAck ack;
  auto version = read_version(reader);
  if (!version) return fail(version.error());
  ack.version = *version;
  std::uint8_t is_leader = 0;
  if (!reader.read_u64(ack.member_id) || !reader.read_u8(is_leader)) return fail(FrameError::kTruncated);
  if (is_leader > 1) return fail(FrameError::kBadBoolean);
  ack.is_leader = is_leader == 1;
  auto leader = read_address(reader);
  if (!leader) return fail(leader.error());
  ack.leader = *leader;
  return ack;
}

Result<Frame, FrameError> decode_submit(ByteReader& reader) {
  Submit submit;
  std::uint16_t count = 0;
  if (!reader.read_u64(submit.request_id) || !reader.read_u16(count)) return fail(FrameError::kTruncated);
  if (count == 0) return fail(FrameError::kEmptySubmit);
  if (count > kSubmitRecordsMax) return fail(FrameError::kTooManyRecords);
  // Checked before reserving: `count` records need at least this many bytes,
  // so a lying count cannot make the decoder allocate for records that are not there.
  if (reader.remaining() < std::size_t{count} * kRecordHeaderBytes) return fail(FrameError::kTruncated);
  submit.records.reserve(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    SubmitRecord record;
    Bytes key = reader.read_bytes(record.key.size());
    std::uint16_t length = 0;
    if (reader.failed() || !reader.read_u16(length)) return fail(FrameError::kTruncated);
    if (length == 0) return fail(FrameError::kEmptyRecord);
    if (length > kRecordBytesMax) return fail(FrameError::kRecordTooLarge);
    std::memcpy(record.key.data(), key.data(), key.size());
    record.record = reader.read_bytes(length);
    if (reader.failed()) return fail(FrameError::kTruncated);
    submit.records.push_back(record);
  }
  return submit;
}

Result<Frame, FrameError> decode_not_leader(ByteReader& reader) {
  NotLeader not_leader;
  if (!reader.read_u64(not_leader.request_id)) return fail(FrameError::kTruncated);
  auto leader = read_address(reader);
  if (!leader) return fail(leader.error());
  not_leader.leader = *leader;
  return not_leader;
}

Result<Frame, FrameError> decode_busy(ByteReader& reader) {
  Busy busy;
  std::uint8_t reason = 0;
  if (!reader.read_u64(busy.request_id) || !reader.read_u8(reason)) return fail(FrameError::kTruncated);
  if (reason < static_cast<std::uint8_t>(BusyReason::kQueueFull) ||
      reason > static_cast<std::uint8_t>(BusyReason::kShuttingDown)) {
    return fail(FrameError::kUnknownBusyReason);
  }
  busy.reason = static_cast<BusyReason>(reason);
  return busy;
}

Result<Frame, FrameError> decode_session_count_query(ByteReader& reader) {
  SessionCountQuery query;
  std::uint8_t length = 0;
  if (!reader.read_u64(query.request_id) || !reader.read_u8(length)) return fail(FrameError::kTruncated);
  if (length == 0 || length > kUserNameBytesMax) return fail(FrameError::kBadUserName);
  Bytes name = reader.read_bytes(length);
  if (reader.failed()) return fail(FrameError::kTruncated);
  query.user_name = as_chars(name);
  return query;
}

Result<Frame, FrameError> decode_body(FrameType type, ByteReader& reader) {
  switch (type) {
    case FrameType::kHello:
      return decode_hello(reader);
    case FrameType::kHelloAck:
      return decode_hello_ack(reader);
    case FrameType::kSubmit:
      return decode_submit(reader);
    case FrameType::kCommitted: {
      Committed committed;
      if (!reader.read_u64(committed.request_id) || !reader.read_u64(committed.log_index)) {
        return fail(FrameError::kTruncated);
      }
      return committed;
    }
    case FrameType::kNotLeader:
      return decode_not_leader(reader);
    case FrameType::kBusy:
      return decode_busy(reader);
    case FrameType::kPing: {
      Ping ping;
      if (!reader.read_u64(ping.nonce)) return fail(FrameError::kTruncated);
      return ping;
    }
    case FrameType::kPong: {
      Pong pong;
      if (!reader.read_u64(pong.nonce)) return fail(FrameError::kTruncated);
      return pong;
    }
    case FrameType::kSessionCountQuery:
      return decode_session_count_query(reader);
    case FrameType::kSessionCountAnswer: {
      SessionCountAnswer answer;
      if (!reader.read_u64(answer.request_id) || !reader.read_u32(answer.open_sessions)) {
        return fail(FrameError::kTruncated);
      }
      return answer;
    }
  }
  return fail(FrameError::kUnknownType);
}

// Appends big-endian integers to a growing vector.
class Appender {
 public:
  explicit Appender(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t value) { out_.push_back(value); }
  void u16(std::uint16_t value) {
    u8(static_cast<std::uint8_t>(value >> 8));
    u8(static_cast<std::uint8_t>(value));
  }
  void u32(std::uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) u8(static_cast<std::uint8_t>(value >> shift));
  }
  void u64(std::uint64_t value) {
    u32(static_cast<std::uint32_t>(value >> 32));
    u32(static_cast<std::uint32_t>(value));
  }
  void bytes(Bytes value) { out_.insert(out_.end(), value.begin(), value.end()); }
  void address(const std::optional<std::string_view>& address) {
    if (!address) return u8(0);
    RW_ASSERT(!address->empty() && address->size() <= kAddressBytesMax);
    u8(static_cast<std::uint8_t>(address->size()));
    bytes(as_bytes(*address));
  }

 private:
  std::vector<std::uint8_t>& out_;
};

void encode_body(const Frame& frame, Appender& out) {
  std::visit(
      [&out](const auto& f) {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, Hello>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kHello));
          out.u16(f.version);
          out.u64(f.gateway_id);
        } else if constexpr (std::is_same_v<T, HelloAck>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kHelloAck));
          out.u16(f.version);
          out.u64(f.member_id);
          out.u8(f.is_leader ? 1 : 0);
          out.address(f.leader);
        } else if constexpr (std::is_same_v<T, Submit>) {
          RW_ASSERT(!f.records.empty() && f.records.size() <= kSubmitRecordsMax);
          out.u8(static_cast<std::uint8_t>(FrameType::kSubmit));
          out.u64(f.request_id);
          out.u16(static_cast<std::uint16_t>(f.records.size()));
          for (const SubmitRecord& record : f.records) {
            RW_ASSERT(!record.record.empty() && record.record.size() <= kRecordBytesMax);
            out.bytes(record.key);
            out.u16(static_cast<std::uint16_t>(record.record.size()));
            out.bytes(record.record);
          }
        } else if constexpr (std::is_same_v<T, Committed>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kCommitted));
          out.u64(f.request_id);
          out.u64(f.log_index);
        } else if constexpr (std::is_same_v<T, NotLeader>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kNotLeader));
          out.u64(f.request_id);
          out.address(f.leader);
        } else if constexpr (std::is_same_v<T, Busy>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kBusy));
          out.u64(f.request_id);
          out.u8(static_cast<std::uint8_t>(f.reason));
        } else if constexpr (std::is_same_v<T, Ping>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kPing));
          out.u64(f.nonce);
        } else if constexpr (std::is_same_v<T, Pong>) {
          out.u8(static_cast<std::uint8_t>(FrameType::kPong));
          out.u64(f.nonce);
        } else if constexpr (std::is_same_v<T, SessionCountQuery>) {
          RW_ASSERT(!f.user_name.empty() && f.user_name.size() <= kUserNameBytesMax);
          out.u8(static_cast<std::uint8_t>(FrameType::kSessionCountQuery));
          out.u64(f.request_id);
          out.u8(static_cast<std::uint8_t>(f.user_name.size()));
          out.bytes(as_bytes(f.user_name));
        } else {
          static_assert(std::is_same_v<T, SessionCountAnswer>);
          out.u8(static_cast<std::uint8_t>(FrameType::kSessionCountAnswer));
          out.u64(f.request_id);
          out.u32(f.open_sessions);
        }
      },
      frame);
}

std::uint32_t read_length_prefix(const std::uint8_t* at) {
  return static_cast<std::uint32_t>(at[0]) << 24 | static_cast<std::uint32_t>(at[1]) << 16 |
         static_cast<std::uint32_t>(at[2]) << 8 | at[3];
}

}  // namespace

std::string_view to_string(FrameError error) {
  switch (error) {
    case FrameError::kTruncated:
      return "truncated";
    case FrameError::kTrailingBytes:
      return "trailing_bytes";
    case FrameError::kLengthMismatch:
      return "length_mismatch";
    case FrameError::kFrameTooLarge:
      return "frame_too_large";
    case FrameError::kEmptyFrame:
      return "empty_frame";
    case FrameError::kUnknownType:
      return "unknown_type";
    case FrameError::kBadBoolean:
      return "bad_boolean";
    case FrameError::kEmptySubmit:
      return "empty_submit";
    case FrameError::kTooManyRecords:
      return "too_many_records";
    case FrameError::kRecordTooLarge:
      return "record_too_large";
    case FrameError::kEmptyRecord:
      return "empty_record";
    case FrameError::kUnknownBusyReason:
      return "unknown_busy_reason";
    case FrameError::kUnsupportedVersion:
      return "unsupported_version";
    case FrameError::kBadUserName:
      return "bad_user_name";
  }
  return "unknown";
}

std::string_view to_string(FrameType type) {
  switch (type) {
    case FrameType::kHello:
      return "Hello";
    case FrameType::kHelloAck:
      return "HelloAck";
    case FrameType::kSubmit:
      return "Submit";
    case FrameType::kCommitted:
      return "Committed";
    case FrameType::kNotLeader:
      return "NotLeader";
    case FrameType::kBusy:
      return "Busy";
    case FrameType::kPing:
      return "Ping";
    case FrameType::kPong:
      return "Pong";
    case FrameType::kSessionCountQuery:
      return "SessionCountQuery";
    case FrameType::kSessionCountAnswer:
      return "SessionCountAnswer";
  }
  return "unknown";
}

std::string_view to_string(BusyReason reason) {
  switch (reason) {
    case BusyReason::kQueueFull:
      return "queue_full";
    case BusyReason::kNoQuorum:
      return "no_quorum";
    case BusyReason::kNotReady:
      return "not_ready";
    case BusyReason::kShuttingDown:
      return "shutting_down";
  }
  return "unknown";
}

Result<Frame, FrameError> decode_frame(Bytes frame) {
  ByteReader reader(frame);
  std::uint32_t length = 0;
  if (!reader.read_u32(length)) return fail(FrameError::kTruncated);
  if (length == 0) return fail(FrameError::kEmptyFrame);
  if (length > kFrameBodyBytesMax) return fail(FrameError::kFrameTooLarge);
  if (length != reader.remaining()) return fail(FrameError::kLengthMismatch);
  std::uint8_t type = 0;
  if (!reader.read_u8(type)) return fail(FrameError::kTruncated);
  if (type < static_cast<std::uint8_t>(FrameType::kHello) ||
      type > static_cast<std::uint8_t>(FrameType::kSessionCountAnswer)) {
    return fail(FrameError::kUnknownType);
  }
  auto decoded = decode_body(static_cast<FrameType>(type), reader);
  if (!decoded) return decoded;
  if (reader.remaining() != 0) return fail(FrameError::kTrailingBytes);
  return decoded;
}

void encode_frame(const Frame& frame, std::vector<std::uint8_t>& out) {
  const std::size_t start = out.size();
  Appender appender(out);
  appender.u32(0);  // The length prefix, filled in below.
  encode_body(frame, appender);
  const std::size_t length = out.size() - start - kLengthPrefixBytes;
  RW_ASSERT(length <= kFrameBodyBytesMax);
  for (std::size_t i = 0; i < kLengthPrefixBytes; ++i) {
    out[start + i] = static_cast<std::uint8_t>(length >> (8 * (kLengthPrefixBytes - 1 - i)));
  }
}

std::size_t submit_frame_bytes(std::size_t records, std::size_t record_bytes_total) {
  return kLengthPrefixBytes + kSubmitHeaderBytes + records * kRecordHeaderBytes + record_bytes_total;
}

namespace {
constexpr std::size_t kReaderBytes = kLengthPrefixBytes + kFrameBodyBytesMax;
}  // namespace

// new[] without (): left uninitialised, so untouched pages stay unmapped.
FrameReader::FrameReader() : buffer_(new std::uint8_t[kReaderBytes]) {}

void FrameReader::compact() {
  if (begin_ == 0) return;
  const std::size_t kept = end_ - begin_;
  if (kept > 0) std::memmove(buffer_.get(), buffer_.get() + begin_, kept);
  begin_ = 0;
  end_ = kept;
}

std::size_t FrameReader::feed(Bytes chunk) {
  MutableBytes space = writable();
  const std::size_t taken = std::min(space.size(), chunk.size());
  if (taken > 0) std::memcpy(space.data(), chunk.data(), taken);
  commit(taken);
  return taken;
}

MutableBytes FrameReader::writable() {
  compact();
  return MutableBytes(buffer_.get() + end_, kReaderBytes - end_);
}

void FrameReader::commit(std::size_t count) {
  RW_ASSERT(count <= kReaderBytes - end_);
  end_ += count;
  touched_ = std::max(touched_, end_);
  touched_lately_ = std::max(touched_lately_, end_);
}

std::size_t FrameReader::release_idle() {
  compact();
  const bool burst_over = touched_lately_ <= kReaderKeptBytes;
  touched_lately_ = end_;
  if (!burst_over || end_ != 0 || touched_ <= kReaderKeptBytes) return 0;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(buffer_.get());
  // Whole pages only, inside the buffer: the first past the kept bytes up
  // to the last one touched.
  const std::uintptr_t first = (base + kReaderKeptBytes + page - 1) & ~(page - 1);
  const std::uintptr_t last = (base + touched_) & ~(page - 1);
  touched_ = kReaderKeptBytes;
  if (last <= first) return 0;
  // Private anonymous memory: the pages read back as zeros when next touched.
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

Result<std::optional<Bytes>, FrameError> FrameReader::next() {
  if (failed_) return fail(*failed_);
  if (end_ - begin_ < kLengthPrefixBytes) return std::optional<Bytes>{};
  const std::uint32_t length = read_length_prefix(buffer_.get() + begin_);
  // Checked before waiting for the body, so an oversized prefix is refused
  // at once rather than after the buffer fills.
  if (length == 0) failed_ = FrameError::kEmptyFrame;
  if (length > kFrameBodyBytesMax) failed_ = FrameError::kFrameTooLarge;
  if (failed_) return fail(*failed_);
  const std::size_t total = kLengthPrefixBytes + length;
  if (end_ - begin_ < total) return std::optional<Bytes>{};
  Bytes frame(buffer_.get() + begin_, total);
  begin_ += total;
  return std::optional<Bytes>{frame};
}

}  // namespace rw::submission
