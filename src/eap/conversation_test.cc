#include "eap/conversation.h"

#include <array>
#include <deque>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "auth/password.h"
#include "eap/md5_method.h"

namespace rw::eap {
namespace {

// A method that asks `rounds` Requests of one octet each, then succeeds
// with an MSK (or fails when the peer answered 0xFF).
class CountingMethod final : public Method {
 public:
  CountingMethod(Type type, int rounds, std::string identity)
      : type_(type), rounds_(rounds), identity_(std::move(identity)) {}
  [[nodiscard]] Type type() const override { return type_; }
  [[nodiscard]] MethodStep start() override { return next(); }
  [[nodiscard]] MethodStep on_response(Bytes type_data) override {
    if (!type_data.empty() && type_data[0] == 0xFF) {
      return failure_step("refused");
    }
    if (--rounds_ > 0) return next();
    Msk msk{};
    msk.fill(0x5A);
    return success_step(msk);
  }
  [[nodiscard]] std::string_view decided_identity() const override { return identity_; }
  void on_identifier(std::uint8_t identifier) override { identifiers.push_back(identifier); }

  std::vector<std::uint8_t> identifiers;

 private:
  MethodStep next() { return request_step({static_cast<std::uint8_t>(rounds_)}); }
  Type type_;
  int rounds_;
  std::string identity_;
};

class Factory final : public MethodFactory {
 public:
  explicit Factory(RandomSource& random) : random_(random) {}
  [[nodiscard]] std::unique_ptr<Method> make(Type type, std::string_view identity) override {
    made.push_back(type);
    if (type == Type::kMd5Challenge) return std::make_unique<Md5Method>(identity, random_);
    if (type == Type::kExpanded) return nullptr;  // Offered but not built.
    auto method = std::make_unique<CountingMethod>(type, rounds, "inner-" + std::string(identity));
    last = method.get();
    return method;
  }
  std::vector<Type> made;
  int rounds = 2;
  CountingMethod* last = nullptr;

 private:
  RandomSource& random_;
};

class ConversationTest : public ::testing::Test {
 protected:
  ConversationTest() : random_(7), factory_(random_) {}

  Offer offer(const std::vector<Type>& methods) {
    methods_ = methods;
    return Offer{.methods = methods_, .factory = &factory_};
  }

  // A Response of `type` with `data`, answering `identifier`.
  Packet response(std::uint8_t identifier, Type type, std::vector<std::uint8_t> data = {}) {
    data_.push_back(std::move(data));
    return Packet{.code = Code::kResponse,
                  .identifier = identifier,
                  .type = static_cast<std::uint8_t>(type),
                  .type_data = data_.back()};
  }
  Packet identity(std::uint8_t identifier, std::string_view name) {
    const Bytes bytes = as_bytes(name);
    return response(identifier, Type::kIdentity, {bytes.begin(), bytes.end()});
  }

  // The EAP packet a step carries.
  Packet sent(const Step& step) {
    auto packet = parse(step.packet);
    EXPECT_TRUE(packet.has_value());
    return packet.value_or(Packet{});
  }

  SeededRandom random_;
  Factory factory_;
  std::vector<Type> methods_;
  std::deque<std::vector<std::uint8_t>> data_;
  std::array<std::uint8_t, 4096> out_{};
};

TEST_F(ConversationTest, EapStartAsksForTheIdentity) {
  Conversation conversation({}, "nas");
  const Step step = conversation.start(42, out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  const Packet request = sent(step);
  EXPECT_EQ(request.code, Code::kRequest);
  EXPECT_EQ(request.identifier, 42);
  EXPECT_EQ(request.type, static_cast<std::uint8_t>(Type::kIdentity));
  EXPECT_EQ(conversation.rounds(), 1u);

  const Step next = conversation.on_response(identity(42, "alice"), offer({Type::kTls}), out_);
  ASSERT_EQ(next.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(next).identifier, 43);
  EXPECT_EQ(sent(next).type, static_cast<std::uint8_t>(Type::kTls));
  EXPECT_EQ(conversation.identity(), "alice");
}

TEST_F(ConversationTest, StartsFromTheNasesIdentityResponseAndCountsIdentifiersUp) {
  Conversation conversation({}, "nas");
  Step step = conversation.on_response(identity(255, "alice"), offer({Type::kTls}), out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(step).identifier, 0);  // 255 + 1 wraps.
  step = conversation.on_response(response(0, Type::kTls, {1}), offer({Type::kTls}), out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(step).identifier, 1);
  EXPECT_EQ(factory_.last->identifiers, (std::vector<std::uint8_t>{0, 1}));
  step = conversation.on_response(response(1, Type::kTls, {1}), offer({Type::kTls}), out_);
  ASSERT_EQ(step.kind, Step::Kind::kSuccess);
  const Packet success = sent(step);
  EXPECT_EQ(success.code, Code::kSuccess);
  EXPECT_EQ(success.identifier, 1);  // RFC 3748 §4.2: that of the Response answered.
  ASSERT_TRUE(step.msk.has_value());
  EXPECT_EQ((*step.msk)[0], 0x5A);
  EXPECT_EQ(conversation.decided_identity(), "inner-alice");
  EXPECT_EQ(conversation.identity(), "alice");
}

TEST_F(ConversationTest, DiscardsAResponseWithTheWrongIdentifier) {
  Conversation conversation({}, "nas");
  (void)conversation.on_response(identity(9, "alice"), offer({Type::kTls}), out_);
  const Step wrong = conversation.on_response(response(9, Type::kTls, {1}), offer({Type::kTls}), out_);
  EXPECT_EQ(wrong.kind, Step::Kind::kDiscard);
  EXPECT_TRUE(wrong.packet.empty());
  // The conversation goes on with the right one.
  const Step right = conversation.on_response(response(10, Type::kTls, {1}), offer({Type::kTls}), out_);
  EXPECT_EQ(right.kind, Step::Kind::kRequest);
}

TEST_F(ConversationTest, LegacyNakPicksTheFirstServerMethodThePeerLists) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kTls, Type::kPeap, Type::kTtls, Type::kMd5Challenge});
  Step step = conversation.on_response(identity(1, "alice"), server, out_);
  ASSERT_EQ(sent(step).type, static_cast<std::uint8_t>(Type::kTls));
  // The peer lists MD5 first, then TTLS: the server's order prefers TTLS.
  step = conversation.on_response(response(2, Type::kNak, {4, 21}), server, out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(step).type, static_cast<std::uint8_t>(Type::kTtls));
  EXPECT_EQ(sent(step).identifier, 3);
  EXPECT_EQ(conversation.method_type(), Type::kTtls);
  // A second Nak, to TTLS's first Request: MD5 is left.
  step = conversation.on_response(response(3, Type::kNak, {4, 13}), server, out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(step).type, static_cast<std::uint8_t>(Type::kMd5Challenge));
  EXPECT_EQ(factory_.made, (std::vector<Type>{Type::kTls, Type::kTtls, Type::kMd5Challenge}));
}

TEST_F(ConversationTest, FailsWhenTheNakListsNothingOffered) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kMd5Challenge});
  (void)conversation.on_response(identity(1, "alice"), server, out_);
  const Step step = conversation.on_response(response(2, Type::kNak, {13, 25}), server, out_);
  ASSERT_EQ(step.kind, Step::Kind::kFailure);
  EXPECT_EQ(step.failure, Failure::kNoCommonMethod);
  const Packet failure = sent(step);
  EXPECT_EQ(failure.code, Code::kFailure);
  EXPECT_EQ(failure.identifier, 2);
  EXPECT_TRUE(conversation.finished());
}

TEST_F(ConversationTest, ANakOfZeroMeansNone) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kTls, Type::kMd5Challenge});
  (void)conversation.on_response(identity(1, "alice"), server, out_);
  EXPECT_EQ(conversation.on_response(response(2, Type::kNak, {0}), server, out_).failure,
            Failure::kNoCommonMethod);
}

TEST_F(ConversationTest, FailsWhenNothingIsOffered) {
  Conversation conversation({}, "nas");
  const Step step = conversation.on_response(identity(1, "alice"), offer({}), out_);
  ASSERT_EQ(step.kind, Step::Kind::kFailure);
  EXPECT_EQ(step.failure, Failure::kNoCommonMethod);
  EXPECT_EQ(sent(step).identifier, 1);
}

TEST_F(ConversationTest, SkipsAnOfferedMethodTheFactoryCannotMake) {
  Conversation conversation({}, "nas");
  const Step step =
      conversation.on_response(identity(1, "alice"), offer({Type::kExpanded, Type::kPeap}), out_);
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  EXPECT_EQ(sent(step).type, static_cast<std::uint8_t>(Type::kPeap));
}

TEST_F(ConversationTest, RefusesANakOnceTheMethodRuns) {
  // RFC 3748 §5.3.1: a Nak answers only the first Request of a method.
  factory_.rounds = 3;
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kTls, Type::kMd5Challenge});
  (void)conversation.on_response(identity(1, "alice"), server, out_);
  ASSERT_EQ(conversation.on_response(response(2, Type::kTls, {1}), server, out_).kind, Step::Kind::kRequest);
  const Step step = conversation.on_response(response(3, Type::kNak, {4}), server, out_);
  EXPECT_EQ(step.failure, Failure::kUnexpectedResponse);
}

TEST_F(ConversationTest, RefusesAResponseOfAnotherType) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kTls});
  (void)conversation.on_response(identity(1, "alice"), server, out_);
  EXPECT_EQ(conversation.on_response(response(2, Type::kPeap, {1}), server, out_).failure,
            Failure::kUnexpectedResponse);
  Conversation fresh({}, "nas");
  EXPECT_EQ(fresh.on_response(response(1, Type::kNak, {4}), server, out_).failure,
            Failure::kUnexpectedResponse);
}

TEST_F(ConversationTest, RefusesAnIdentityTooLongForUserName) {
  Conversation conversation({}, "nas");
  const std::string name(254, 'a');
  EXPECT_EQ(conversation.on_response(identity(1, name), offer({Type::kTls}), out_).failure,
            Failure::kIdentityTooLong);
}

TEST_F(ConversationTest, BoundsTheRoundTrips) {
  factory_.rounds = 100;
  Conversation conversation(ConversationOptions{.rounds_max = 4}, "nas");
  const Offer server = offer({Type::kTls});
  (void)conversation.start(1, out_);                                         // Round 1.
  Step step = conversation.on_response(identity(1, "alice"), server, out_);  // Round 2.
  std::uint8_t id = 2;
  step = conversation.on_response(response(id++, Type::kTls, {1}), server, out_);  // Round 3.
  step = conversation.on_response(response(id++, Type::kTls, {1}), server, out_);  // Round 4.
  ASSERT_EQ(step.kind, Step::Kind::kRequest);
  step = conversation.on_response(response(id, Type::kTls, {1}), server, out_);
  ASSERT_EQ(step.kind, Step::Kind::kFailure);
  EXPECT_EQ(step.failure, Failure::kTooManyRounds);
  EXPECT_EQ(conversation.rounds(), 4u);
}

TEST_F(ConversationTest, AMethodFailureSendsEapFailureWithItsReason) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kTls});
  (void)conversation.on_response(identity(1, "alice"), server, out_);
  const Step step = conversation.on_response(response(2, Type::kTls, {0xFF}), server, out_);
  ASSERT_EQ(step.kind, Step::Kind::kFailure);
  EXPECT_EQ(step.failure, Failure::kMethodFailed);
  EXPECT_EQ(step.reason, "refused");
  EXPECT_EQ(sent(step).identifier, 2);
}

TEST_F(ConversationTest, Md5AsksForThePasswordOnceAndAgainOnARepeat) {
  Conversation conversation({}, "nas");
  const Offer server = offer({Type::kMd5Challenge});
  const Step challenge = conversation.on_response(identity(5, "alice"), server, out_);
  ASSERT_EQ(challenge.kind, Step::Kind::kRequest);
  const Packet request = sent(challenge);
  ASSERT_EQ(request.type_data.size(), 17u);
  const std::vector<std::uint8_t> nonce(request.type_data.begin() + 1, request.type_data.end());
  const auto value = md5_response_value(request.identifier, "wonderland", nonce);
  const auto answer = response(request.identifier, Type::kMd5Challenge, md5_type_data(value));

  EXPECT_EQ(conversation.on_response(answer, server, out_).kind, Step::Kind::kCredential);
  // The NAS retransmits while the password is looked up: asked again, the
  // method is not fed twice.
  EXPECT_EQ(conversation.on_response(answer, server, out_).kind, Step::Kind::kCredential);
  const auth::Credential password = auth::Credential::cleartext("wonderland");
  const Step done = conversation.on_credential(&password, out_);
  ASSERT_EQ(done.kind, Step::Kind::kSuccess);
  EXPECT_EQ(sent(done).identifier, request.identifier);
  EXPECT_FALSE(done.msk.has_value());
  EXPECT_EQ(conversation.decided_identity(), "alice");
  // A repeat of the last Response after the Success gets the Success again.
  EXPECT_EQ(conversation.on_response(answer, server, out_).kind, Step::Kind::kSuccess);
}

TEST_F(ConversationTest, NamesEveryFailure) {
  for (const Failure failure : {Failure::kNone, Failure::kUnexpectedResponse, Failure::kIdentityTooLong,
                                Failure::kNoCommonMethod, Failure::kTooManyRounds, Failure::kMethodFailed}) {
    EXPECT_NE(to_string(failure), "unknown");
  }
  EXPECT_EQ(to_string(Type::kMd5Challenge), "EAP-MD5");
  EXPECT_EQ(to_string(static_cast<Type>(99)), "EAP-99");
}

}  // namespace
}  // namespace rw::eap
