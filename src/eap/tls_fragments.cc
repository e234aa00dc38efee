// EAP-TLS framing and reassembly (tls_fragments.h; RFC 5216 §2.1.5, §3.1-3.2).
#include "eap/tls_fragments.h"

#include <algorithm>
#include <utility>

#include "base/assert.h"

namespace rw::eap {

std::string_view to_string(TlsFrameError error) {
  switch (error) {
    case TlsFrameError::kNoFlags:
      return "no flags octet";
    case TlsFrameError::kTruncatedLength:
      return "L flag without the four-octet TLS Message Length";
    case TlsFrameError::kStartFromPeer:
      return "S flag in a response";
    case TlsFrameError::kMessageTooLarge:
      return "TLS message larger than the bound";
    case TlsFrameError::kTooManyFragments:
      return "more fragments than the bound";
    case TlsFrameError::kFirstFragmentNoLength:
      return "first of several fragments without L";
    case TlsFrameError::kLengthChanged:
      return "TLS Message Length changed between fragments";
    case TlsFrameError::kLongerThanAnnounced:
      return "fragments longer than the TLS Message Length";
    case TlsFrameError::kShorterThanAnnounced:
      return "last fragment ends before the TLS Message Length";
    case TlsFrameError::kMoreAfterComplete:
      return "M flag after the TLS Message Length was reached";
    case TlsFrameError::kEmptyFragmentWithMore:
      return "M flag on an empty fragment";
  }
  return "unknown EAP-TLS framing error";
}

Result<TlsFrame, TlsFrameError> parse_tls_frame(Bytes type_data) {
  ByteReader reader(type_data);
  TlsFrame frame;
  if (!reader.read_u8(frame.flags)) return fail(TlsFrameError::kNoFlags);
  if ((frame.flags & kTlsFlagLength) != 0) {
    std::uint32_t length = 0;
    if (!reader.read_u32(length)) return fail(TlsFrameError::kTruncatedLength);
    frame.message_length = length;
  }
  frame.fragment = type_data.subspan(reader.offset());
  return frame;
}

Result<std::optional<std::vector<std::uint8_t>>, TlsFrameError> TlsReassembler::refuse(TlsFrameError error) {
  message_.clear();
  announced_.reset();
  fragments_ = limits_.fragments_max + 1;  // Spent: every later fragment is refused too.
  return fail(error);
}

Result<std::optional<std::vector<std::uint8_t>>, TlsFrameError> TlsReassembler::on_fragment(Bytes type_data) {
  if (fragments_ > limits_.fragments_max) return fail(TlsFrameError::kTooManyFragments);
  auto frame = parse_tls_frame(type_data);
  if (!frame) return refuse(frame.error());
  const bool more = (frame->flags & kTlsFlagMore) != 0;
  if ((frame->flags & kTlsFlagStart) != 0) return refuse(TlsFrameError::kStartFromPeer);
  if (++fragments_ > limits_.fragments_max) return refuse(TlsFrameError::kTooManyFragments);

  if (frame->message_length) {
    if (*frame->message_length > limits_.message_octets_max) return refuse(TlsFrameError::kMessageTooLarge);
    // RFC 5216 §2.1.5: L may be repeated on later fragments; it must then agree.
    if (announced_ && *announced_ != *frame->message_length) return refuse(TlsFrameError::kLengthChanged);
    announced_ = frame->message_length;
  } else if (fragments_ == 1 && more) {
    return refuse(TlsFrameError::kFirstFragmentNoLength);
  }
  if (more && frame->fragment.empty()) return refuse(TlsFrameError::kEmptyFragmentWithMore);

  const std::size_t total = message_.size() + frame->fragment.size();
  if (total > limits_.message_octets_max) return refuse(TlsFrameError::kMessageTooLarge);
  if (announced_ && total > *announced_) return refuse(TlsFrameError::kLongerThanAnnounced);
  if (more && announced_ && total == *announced_) return refuse(TlsFrameError::kMoreAfterComplete);
  if (!more && announced_ && total < *announced_) return refuse(TlsFrameError::kShorterThanAnnounced);

  message_.insert(message_.end(), frame->fragment.begin(), frame->fragment.end());
  if (more) return std::optional<std::vector<std::uint8_t>>{};
  std::vector<std::uint8_t> whole = std::exchange(message_, {});
  announced_.reset();
  fragments_ = 0;
  return std::optional<std::vector<std::uint8_t>>(std::move(whole));
}

TlsFragmenter::TlsFragmenter(std::size_t fragment_octets) : fragment_octets_(fragment_octets) {
  RW_ASSERT(fragment_octets >= kTlsFragmentOctetsMin && fragment_octets <= kTlsFragmentOctetsMax);
}

void TlsFragmenter::load(std::vector<std::uint8_t> message, std::uint8_t flags_base) {
  message_ = std::move(message);
  offset_ = 0;
  flags_base_ = flags_base;
}

std::vector<std::uint8_t> TlsFragmenter::next() {
  RW_ASSERT(pending());
  const bool first = offset_ == 0;
  const std::size_t size = std::min(fragment_octets_, message_.size() - offset_);
  const bool more = offset_ + size < message_.size();
  std::uint8_t flags = flags_base_;
  if (more) flags |= kTlsFlagMore;
  // RFC 5216 §3.1: L MUST be on the first fragment of a fragmented message.
  const bool with_length = first && more;
  if (with_length) flags |= kTlsFlagLength;
  std::vector<std::uint8_t> type_data;
  type_data.reserve(1 + (with_length ? 4 : 0) + size);
  type_data.push_back(flags);
  if (with_length) {
    const auto length = static_cast<std::uint32_t>(message_.size());
    for (int shift = 24; shift >= 0; shift -= 8)
      type_data.push_back(static_cast<std::uint8_t>(length >> shift));
  }
  const auto begin = message_.begin() + static_cast<std::ptrdiff_t>(offset_);
  type_data.insert(type_data.end(), begin, begin + static_cast<std::ptrdiff_t>(size));
  offset_ += size;
  if (!pending()) {
    message_.clear();
    offset_ = 0;
  }
  return type_data;
}

TlsTransfer::TlsTransfer(std::size_t fragment_octets, TlsReassemblyLimits limits, std::uint8_t flags_base)
    : reassembler_(limits), fragmenter_(fragment_octets), flags_base_(flags_base) {}

std::vector<std::uint8_t> TlsTransfer::start() const {
  return {static_cast<std::uint8_t>(kTlsFlagStart | flags_base_)};
}

std::vector<std::uint8_t> TlsTransfer::ack() const { return {flags_base_}; }

std::vector<std::uint8_t> TlsTransfer::send(std::vector<std::uint8_t> message) {
  fragmenter_.load(std::move(message), flags_base_);
  return fragmenter_.next();
}

Result<TlsTransfer::Step, TlsTransfer::Error> TlsTransfer::on_response(Bytes type_data) {
  auto fragment = reassembler_.on_fragment(type_data);
  if (!fragment) {
    framing_error_ = fragment.error();
    return fail(Error::kFraming);
  }
  if (fragmenter_.pending()) {
    // RFC 5216 §2.1.5: the peer answers each of our fragments with an ACK.
    if (!*fragment || !(*fragment)->empty()) return fail(Error::kExpectedAck);
    return Step(Request{fragmenter_.next()});
  }
  if (!*fragment) return Step(Request{ack()});  // Our ACK of the peer's fragment.
  return Step(Message{std::move(**fragment)});
}

}  // namespace rw::eap
