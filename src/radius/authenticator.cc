// Request, Response and Message Authenticators (RFC 2865 §3, RFC 2866 §3,
// RFC 3579 §3.2, RFC 5176 §2.3 and §3.4). Every digest covers a copy of the
// packet on the stack with the authenticator field substituted and the
// Message-Authenticator value zeroed as the RFCs require, so the received
// bytes are never modified.
#include "radius/authenticator.h"

#include <cstring>

#include "base/assert.h"

namespace rw::radius {

std::string_view to_string(SecretError error) {
  switch (error) {
    case SecretError::kEmpty:
      return "empty";
    case SecretError::kTooLong:
      return "too_long";
  }
  return "unknown";
}

std::string_view to_string(MessageAuthenticatorStatus status) {
  switch (status) {
    case MessageAuthenticatorStatus::kAbsent:
      return "absent";
    case MessageAuthenticatorStatus::kValid:
      return "valid";
    case MessageAuthenticatorStatus::kInvalid:
      return "invalid";
  }
  return "unknown";
}

namespace {

constexpr std::uint8_t kZeroAuthenticator[kAuthenticatorLength] = {};
// The value of a Message-Authenticator starts two octets into the attribute.
constexpr std::size_t kValueOffset = 2;

// Accounting-, Disconnect- and CoA-Request carry a Request Authenticator
// computed over the packet (RFC 2866 §3, RFC 5176 §2.3) rather than random.
bool has_computed_request_authenticator(Code code) {
  return code == Code::kAccountingRequest || code == Code::kDisconnectRequest || code == Code::kCoaRequest;
}

// The octets a digest covers: the packet with `authenticator` in the
// authenticator field and, when `ma_offset` is non-zero, the
// Message-Authenticator value at that attribute offset zeroed (RFC 3579
// §3.2). Copied into one buffer because MD5 over one span beat the same
// octets fed in five pieces by more than the copy costs (docs/protocol.md).
class DigestInput {
 public:
  DigestInput(Bytes wire, Bytes authenticator, std::size_t ma_offset) : size_(wire.size()) {
    std::memcpy(buffer_.data(), wire.data(), wire.size());
    std::memcpy(buffer_.data() + 4, authenticator.data(), kAuthenticatorLength);
    if (ma_offset != 0) std::memset(buffer_.data() + ma_offset + kValueOffset, 0, kAuthenticatorLength);
  }
  // Appends the secret (the Request and Response Authenticators end with it).
  void append(Bytes bytes) {
    std::memcpy(buffer_.data() + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
  }
  [[nodiscard]] Bytes bytes() const { return Bytes(buffer_.data(), size_); }

 private:
  // Left uninitialised: only the first size_ octets are ever read.
  std::array<std::uint8_t, kMaxPacketLength + kMaxSecretLength> buffer_;
  std::size_t size_;
};

Md5Digest hmac_of(const SharedSecret& secret, Bytes wire, Bytes authenticator, std::size_t ma_offset) {
  DigestInput input(wire, authenticator, ma_offset);
  return secret.hmac().mac(input.bytes());
}

// MD5(Code + Identifier + Length + authenticator + Attributes + Secret).
Md5Digest packet_digest(const SharedSecret& secret, Bytes wire, Bytes authenticator) {
  DigestInput input(wire, authenticator, 0);
  input.append(secret.bytes());
  return Md5::of(input.bytes());
}

MessageAuthenticatorStatus check_message_authenticator(const Packet& packet, Bytes authenticator,
                                                       const SharedSecret& secret) {
  auto offset = packet.message_authenticator_offset();
  if (!offset) return MessageAuthenticatorStatus::kAbsent;
  Md5Digest expected = hmac_of(secret, packet.wire(), authenticator, *offset);
  Bytes received = packet.wire().subspan(*offset + kValueOffset, kAuthenticatorLength);
  return constant_time_equal(expected, received) ? MessageAuthenticatorStatus::kValid
                                                 : MessageAuthenticatorStatus::kInvalid;
}

// Finds the Message-Authenticator in a packet this process built. Returns
// 0 when absent. The walk stops at anything malformed rather than trusting it.
std::size_t find_message_authenticator(Bytes wire) {
  std::size_t offset = kHeaderLength;
  while (wire.size() - offset >= 2) {
    const std::size_t length = wire[offset + 1];
    if (length < 2 || length > wire.size() - offset) return 0;
    if (wire[offset] == attr::kMessageAuthenticator && length == kMessageAuthenticatorAttributeLength) {
      return offset;
    }
    offset += length;
  }
  return 0;
}

// Checks what sign_response() and sign_request() require of a packet.
void require_whole_packet(Bytes wire) {
  RW_ASSERT(wire.size() >= kHeaderLength && wire.size() <= kMaxPacketLength);
  RW_ASSERT((static_cast<std::size_t>(wire[2]) << 8 | wire[3]) == wire.size());
}

// Fills the Message-Authenticator, if any, computed with `authenticator`
// standing in the authenticator field.
void fill_message_authenticator(MutableBytes wire, Bytes authenticator, const SharedSecret& secret) {
  const std::size_t offset = find_message_authenticator(wire);
  if (offset == 0) return;
  Md5Digest mac = hmac_of(secret, wire, authenticator, offset);
  std::memcpy(wire.data() + offset + kValueOffset, mac.data(), mac.size());
}

}  // namespace

SharedSecret::SharedSecret(Bytes secret) : hmac_(secret) {
  std::memcpy(secret_.data(), secret.data(), secret.size());
  length_ = secret.size();
  after_secret_.update(secret);
}

Result<SharedSecret, SecretError> SharedSecret::create(Bytes secret) {
  if (secret.empty()) return fail(SecretError::kEmpty);
  if (secret.size() > kMaxSecretLength) return fail(SecretError::kTooLong);
  return SharedSecret(secret);
}

bool verify_request_authenticator(const Packet& request, const SharedSecret& secret) {
  Md5Digest expected = packet_digest(secret, request.wire(), kZeroAuthenticator);
  return constant_time_equal(expected, request.authenticator());
}

MessageAuthenticatorStatus check_request_message_authenticator(const Packet& request,
                                                               const SharedSecret& secret) {
  Bytes authenticator = has_computed_request_authenticator(request.code()) ? Bytes(kZeroAuthenticator)
                                                                           : request.authenticator();
  return check_message_authenticator(request, authenticator, secret);
}

void sign_response(MutableBytes response, Bytes request_authenticator, const SharedSecret& secret) {
  require_whole_packet(response);
  RW_ASSERT(request_authenticator.size() == kAuthenticatorLength);
  // RFC 3579 §3.2: the Message-Authenticator of a response is computed with
  // the Request Authenticator in the field, and before the Response
  // Authenticator, which then covers it. Both digests substitute the
  // Request Authenticator for whatever the field holds, so the caller's
  // buffer may hold anything there, even the request_authenticator itself.
  fill_message_authenticator(response, request_authenticator, secret);
  Md5Digest digest = packet_digest(secret, response, request_authenticator);
  std::memcpy(response.data() + 4, digest.data(), digest.size());
}

Authenticator make_request_authenticator(RandomSource& random) {
  Authenticator authenticator;
  random.fill(authenticator);
  return authenticator;
}

void sign_request(MutableBytes request, const SharedSecret& secret) {
  require_whole_packet(request);
  const Code code = static_cast<Code>(request[0]);
  if (!has_computed_request_authenticator(code)) {
    RW_ASSERT(code == Code::kAccessRequest || code == Code::kStatusServer);
    // The random Request Authenticator is in place; the digest reads the
    // field through this view, and only the Message-Authenticator is written.
    fill_message_authenticator(request, request.subspan(4, kAuthenticatorLength), secret);
    return;
  }
  // RFC 5176 §3.4: Message-Authenticator first, over a zero authenticator
  // field; then the Request Authenticator over the finished attributes.
  fill_message_authenticator(request, kZeroAuthenticator, secret);
  Md5Digest digest = packet_digest(secret, request, kZeroAuthenticator);
  std::memcpy(request.data() + 4, digest.data(), digest.size());
}

bool verify_response_authenticator(const Packet& response, Bytes request_authenticator,
                                   const SharedSecret& secret) {
  RW_ASSERT(request_authenticator.size() == kAuthenticatorLength);
  Md5Digest expected = packet_digest(secret, response.wire(), request_authenticator);
  return constant_time_equal(expected, response.authenticator());
}

MessageAuthenticatorStatus check_response_message_authenticator(const Packet& response,
                                                                Bytes request_authenticator,
                                                                const SharedSecret& secret) {
  RW_ASSERT(request_authenticator.size() == kAuthenticatorLength);
  return check_message_authenticator(response, request_authenticator, secret);
}

}  // namespace rw::radius
