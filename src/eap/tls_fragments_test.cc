// tls_fragments.h at the bytes level: the Flags octet and TLS Message Length
// (RFC 5216 §3.1), fragmentation and reassembly (§2.1.5), and every malformed
// sequence refused with its own error.
#include "eap/tls_fragments.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rw::eap {
namespace {

using Octets = std::vector<std::uint8_t>;

Octets pattern(std::size_t size) {
  Octets out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return out;
}

Octets frame(std::uint8_t flags, std::optional<std::uint32_t> length, const Octets& fragment) {
  Octets out{flags};
  if (length) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(*length >> shift));
  }
  out.insert(out.end(), fragment.begin(), fragment.end());
  return out;
}

TEST(ParseTlsFrame, ReadsFlagsAndLength) {
  const Octets bytes{0xC0, 0x00, 0x00, 0x07, 0xD0, 0xAA, 0xBB};
  auto parsed = parse_tls_frame(bytes);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->flags, 0xC0);
  EXPECT_EQ(parsed->message_length, std::optional<std::uint32_t>(2000));
  ASSERT_EQ(parsed->fragment.size(), 2u);
  EXPECT_EQ(parsed->fragment[0], 0xAA);
}

TEST(ParseTlsFrame, AFlagsOctetAloneIsAnEmptyFragment) {
  auto parsed = parse_tls_frame(Octets{0x00});
  ASSERT_TRUE(parsed.has_value());
  EXPECT_FALSE(parsed->message_length.has_value());
  EXPECT_TRUE(parsed->fragment.empty());
}

TEST(ParseTlsFrame, RefusesEmptyTypeDataAndTruncatedLength) {
  EXPECT_EQ(parse_tls_frame(Octets{}).error(), TlsFrameError::kNoFlags);
  EXPECT_EQ(parse_tls_frame(Octets{0x80}).error(), TlsFrameError::kTruncatedLength);
  EXPECT_EQ(parse_tls_frame(Octets{0x80, 0, 0, 1}).error(), TlsFrameError::kTruncatedLength);
}

TEST(TlsFragmenter, SplitsAtExactlyOneThousandOctets) {
  TlsFragmenter fragmenter(1000);
  const Octets message = pattern(2500);
  fragmenter.load(message);
  std::vector<Octets> fragments;
  while (fragmenter.pending()) fragments.push_back(fragmenter.next());
  ASSERT_EQ(fragments.size(), 3u);
  // First: L and M, the whole length, 1,000 octets.
  EXPECT_EQ(fragments[0], frame(0xC0, 2500, Octets(message.begin(), message.begin() + 1000)));
  EXPECT_EQ(fragments[1], frame(0x40, std::nullopt, Octets(message.begin() + 1000, message.begin() + 2000)));
  EXPECT_EQ(fragments[2], frame(0x00, std::nullopt, Octets(message.begin() + 2000, message.end())));
}

TEST(TlsFragmenter, AMessageOfOneFragmentGoesWithoutLength) {
  TlsFragmenter fragmenter(1000);
  fragmenter.load(pattern(1000));
  const Octets only = fragmenter.next();
  EXPECT_FALSE(fragmenter.pending());
  EXPECT_EQ(only, frame(0x00, std::nullopt, pattern(1000)));
}

TEST(TlsFragmenter, KeepsTheVersionBitsOfPeapAndTtls) {
  TlsFragmenter fragmenter(kTlsFragmentOctetsMin);
  fragmenter.load(pattern(100), 0x01);
  EXPECT_EQ(fragmenter.next()[0], 0xC1);
  EXPECT_EQ(fragmenter.next()[0], 0x01);
}

TEST(TlsReassembler, RebuildsWhatTheFragmenterSplit) {
  for (std::size_t size : {1u, 999u, 1000u, 1001u, 5000u, 65'536u}) {
    TlsFragmenter fragmenter(1000);
    fragmenter.load(pattern(size));
    TlsReassembler reassembler;
    std::optional<Octets> whole;
    while (fragmenter.pending()) {
      const Octets fragment = fragmenter.next();
      auto step = reassembler.on_fragment(fragment);
      ASSERT_TRUE(step.has_value()) << size << ": " << to_string(step.error());
      EXPECT_EQ(step->has_value(), !fragmenter.pending());
      if (*step) whole = **step;
    }
    EXPECT_EQ(whole, pattern(size)) << size;
    EXPECT_FALSE(reassembler.in_progress());
  }
}

TEST(TlsReassembler, AnAckIsAnEmptyMessage) {
  TlsReassembler reassembler;
  auto step = reassembler.on_fragment(Octets{0x00});
  ASSERT_TRUE(step.has_value() && step->has_value());
  EXPECT_TRUE((*step)->empty());
}

TEST(TlsReassembler, AcceptsLengthRepeatedAndOnAnUnfragmentedMessage) {
  TlsReassembler reassembler;
  ASSERT_TRUE(reassembler.on_fragment(frame(0xC0, 4, {1, 2})).has_value());
  auto step = reassembler.on_fragment(frame(0x80, 4, {3, 4}));
  ASSERT_TRUE(step.has_value() && step->has_value());
  EXPECT_EQ(**step, (Octets{1, 2, 3, 4}));
  auto single = reassembler.on_fragment(frame(0x80, 2, {5, 6}));
  ASSERT_TRUE(single.has_value() && single->has_value());
  EXPECT_EQ(**single, (Octets{5, 6}));
}

// One hostile sequence: every fragment but the last is accepted, the last
// is refused with `expected`.
void expect_refused(const std::vector<Octets>& fragments, TlsFrameError expected,
                    TlsReassemblyLimits limits = {}) {
  TlsReassembler reassembler(limits);
  for (std::size_t i = 0; i + 1 < fragments.size(); ++i) {
    auto step = reassembler.on_fragment(fragments[i]);
    ASSERT_TRUE(step.has_value()) << i << ": " << to_string(step.error());
  }
  auto last = reassembler.on_fragment(fragments.back());
  ASSERT_FALSE(last.has_value());
  EXPECT_EQ(last.error(), expected) << to_string(last.error());
  // Spent: even a good fragment is refused afterwards.
  EXPECT_FALSE(reassembler.on_fragment(Octets{0x00}).has_value());
}

TEST(TlsReassembler, RefusesLWithoutLength) {
  expect_refused({Octets{0x80, 0x00, 0x10}}, TlsFrameError::kTruncatedLength);
}

TEST(TlsReassembler, RefusesFirstFragmentWithoutL) {
  expect_refused({frame(0x40, std::nullopt, {1, 2})}, TlsFrameError::kFirstFragmentNoLength);
}

TEST(TlsReassembler, RefusesLengthMismatches) {
  expect_refused({frame(0xC0, 3, {1, 2}), frame(0x00, std::nullopt, {3, 4})},
                 TlsFrameError::kLongerThanAnnounced);
  expect_refused({frame(0xC0, 10, {1, 2}), frame(0x00, std::nullopt, {3, 4})},
                 TlsFrameError::kShorterThanAnnounced);
  expect_refused({frame(0x80, 5, {1, 2})}, TlsFrameError::kShorterThanAnnounced);
  expect_refused({frame(0xC0, 10, {1, 2}), frame(0xC0, 11, {3, 4})}, TlsFrameError::kLengthChanged);
}

TEST(TlsReassembler, RefusesMOnWhatIsTheLastFragment) {
  expect_refused({frame(0xC0, 4, {1, 2}), frame(0x40, std::nullopt, {3, 4})},
                 TlsFrameError::kMoreAfterComplete);
}

TEST(TlsReassembler, RefusesMoreFragmentsThanTheBound) {
  std::vector<Octets> fragments{frame(0xC0, 1000, {1})};
  for (int i = 0; i < 9; ++i) fragments.push_back(frame(0x40, std::nullopt, {1}));
  expect_refused(fragments, TlsFrameError::kTooManyFragments, TlsReassemblyLimits{.fragments_max = 9});
}

TEST(TlsReassembler, RefusesAMessageOverTheBound) {
  expect_refused({frame(0xC0, 65'537, {1})}, TlsFrameError::kMessageTooLarge);
  // Without L on the only fragment, the received size is bounded too.
  expect_refused({frame(0x00, std::nullopt, pattern(101))}, TlsFrameError::kMessageTooLarge,
                 TlsReassemblyLimits{.message_octets_max = 100});
}

TEST(TlsReassembler, RefusesStartAndEmptyFragmentsWithM) {
  expect_refused({Octets{0x20}}, TlsFrameError::kStartFromPeer);
  expect_refused({frame(0xC0, 10, {})}, TlsFrameError::kEmptyFragmentWithMore);
}

TEST(TlsTransfer, SendsFragmentsOnAcksAndAcksFragments) {
  TlsTransfer transfer(kTlsFragmentOctetsMin, TlsReassemblyLimits{}, 0x01);
  EXPECT_EQ(transfer.start(), Octets{0x21});
  EXPECT_EQ(transfer.ack(), Octets{0x01});
  const Octets message = pattern(100);
  EXPECT_EQ(transfer.send(message)[0], 0xC1);
  // Data where an ACK is due is refused.
  TlsTransfer copy = transfer;
  EXPECT_EQ(copy.on_response(Octets{0x00, 0x16}).error(), TlsTransfer::Error::kExpectedAck);
  auto second = transfer.on_response(Octets{0x00});
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(std::get<TlsTransfer::Request>(*second).type_data,
            frame(0x01, std::nullopt, Octets(message.begin() + 64, message.end())));
  // The peer's fragments: an ACK for the first, the message after the last.
  auto first = transfer.on_response(frame(0xC0, 3, {1, 2}));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(std::get<TlsTransfer::Request>(*first).type_data, Octets{0x01});
  auto whole = transfer.on_response(frame(0x00, std::nullopt, {3}));
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(std::get<TlsTransfer::Message>(*whole).records, (Octets{1, 2, 3}));
  EXPECT_EQ(transfer.on_response(Octets{}).error(), TlsTransfer::Error::kFraming);
  EXPECT_EQ(transfer.framing_error(), std::optional<TlsFrameError>(TlsFrameError::kNoFlags));
}

TEST(TlsFrameError, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(TlsFrameError::kEmptyFragmentWithMore); ++e) {
    EXPECT_NE(to_string(static_cast<TlsFrameError>(e)), "unknown EAP-TLS framing error") << e;
  }
}

}  // namespace
}  // namespace rw::eap
