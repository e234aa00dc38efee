// The bench supplicant (eap_supplicant.h).
#include "loadgen_shell/eap_supplicant.h"

#include <openssl/err.h>

#include <algorithm>

#include <fmt/format.h>

#include "auth/mppe.h"
#include "auth/password.h"
#include "base/bytes.h"
#include "eap/packet.h"
#include "eap/peap_packets.h"

namespace rw::loadgen_shell {

namespace {

constexpr std::uint8_t kTypeIdentity = 1;
constexpr std::uint8_t kTypeNotification = 2;
constexpr std::uint8_t kTypeNak = 3;
constexpr std::uint8_t kTypeTls = 13;
constexpr std::uint8_t kTypePeap = 25;
constexpr std::uint8_t kTypeMsChapV2 = 26;
// EAP-MSCHAPv2 OpCodes (draft-kamath-pppext-eap-mschapv2-02 §2).
constexpr std::uint8_t kOpChallenge = 1;
constexpr std::uint8_t kOpResponse = 2;
constexpr std::uint8_t kOpSuccess = 3;
constexpr std::uint8_t kOpFailure = 4;
// A full EAP-TLS conversation at 64-octet fragments of a large chain stays
// far below this; a server that keeps asking is broken or hostile.
constexpr int kRoundsMax = 256;
constexpr std::size_t kTlvsMax = 8;

std::string openssl_error(std::string_view what) {
  char text[256] = "unknown";
  if (const unsigned long code = ERR_get_error()) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return fmt::format("{}: {}", what, text);
}

}  // namespace

std::string_view to_string(EapBenchMethod method) { return method == EapBenchMethod::kTls ? "tls" : "peap"; }

std::optional<EapBenchMethod> parse_eap_bench_method(std::string_view text) {
  if (text == "tls") return EapBenchMethod::kTls;
  if (text == "peap") return EapBenchMethod::kPeap;
  return std::nullopt;
}

std::string_view to_string(SupplicantError error) {
  switch (error) {
    case SupplicantError::kMalformedRequest:
      return "malformed_request";
    case SupplicantError::kUnexpectedType:
      return "unexpected_type";
    case SupplicantError::kFraming:
      return "framing";
    case SupplicantError::kTlsFailed:
      return "tls_failed";
    case SupplicantError::kInnerMalformed:
      return "inner_malformed";
    case SupplicantError::kInnerFailure:
      return "inner_failure";
    case SupplicantError::kBadAuthenticatorResponse:
      return "bad_authenticator_response";
    case SupplicantError::kResultFailure:
      return "result_failure";
    case SupplicantError::kBadCryptoBinding:
      return "bad_crypto_binding";
    case SupplicantError::kEapFailure:
      return "eap_failure";
    case SupplicantError::kEarlySuccess:
      return "early_success";
    case SupplicantError::kMissingKeys:
      return "missing_keys";
    case SupplicantError::kKeyMismatch:
      return "key_mismatch";
    case SupplicantError::kTooManyRounds:
      return "too_many_rounds";
    case SupplicantError::kCount:
      break;
  }
  return "unknown";
}

Result<SupplicantTls, std::string> SupplicantTls::create(const SupplicantConfig& config) {
  SupplicantTls tls;
  tls.context_ = std::shared_ptr<SSL_CTX>(SSL_CTX_new(TLS_client_method()), Free{});
  SSL_CTX* context = tls.context_.get();
  if (context == nullptr) return fail(openssl_error("SSL_CTX_new"));
  const int version = config.tls_version == eap::TlsVersion::k1_2 ? TLS1_2_VERSION : TLS1_3_VERSION;
  SSL_CTX_set_min_proto_version(context, version);
  SSL_CTX_set_max_proto_version(context, version);
  // Every conversation is a full handshake: what a boot storm of devices
  // that never met the server costs, and what a ceiling must not hide.
  SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(context, SSL_OP_NO_TICKET);
  if (SSL_CTX_load_verify_locations(context, config.ca_file.c_str(), nullptr) != 1) {
    return fail(openssl_error(fmt::format("{}: CA", config.ca_file)));
  }
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  if (!config.certificate_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(context, config.certificate_file.c_str()) != 1) {
      return fail(openssl_error(fmt::format("{}: certificate", config.certificate_file)));
    }
    if (SSL_CTX_use_PrivateKey_file(context, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(context) != 1) {
      return fail(openssl_error(fmt::format("{}: key", config.key_file)));
    }
  }
  return tls;
}

EapSupplicant::EapSupplicant(const SupplicantConfig& config, const SupplicantTls& tls, std::string identity,
                             std::string password, RandomSource& random)
    : config_(config),
      identity_(std::move(identity)),
      password_(std::move(password)),
      random_(random),
      ssl_(SSL_new(tls.get())),
      fragmenter_(config.fragment_octets) {
  if (ssl_) {
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in, -1);
    BIO_set_mem_eof_return(out, -1);
    SSL_set_bio(ssl_.get(), in, out);
    SSL_set_connect_state(ssl_.get());
  }
  if (config_.method == EapBenchMethod::kPeap) {
    // A password with no NT hash (over 256 characters, not UTF-8) leaves the
    // zero hash: the server refuses it like any wrong password.
    if (auto hash = auth::nt_hash_of(auth::Credential::cleartext(password_))) nt_hash_ = *hash;
  }
}

EapSupplicant::~EapSupplicant() = default;

std::uint8_t EapSupplicant::eap_type() const {
  return config_.method == EapBenchMethod::kTls ? kTypeTls : kTypePeap;
}

std::vector<std::uint8_t> EapSupplicant::response(std::uint8_t identifier, std::uint8_t type,
                                                  Bytes type_data) const {
  std::vector<std::uint8_t> out(eap::kHeaderLength + 1 + type_data.size());
  const Bytes written = eap::write(
      eap::Packet{
          .code = eap::Code::kResponse, .identifier = identifier, .type = type, .type_data = type_data},
      out);
  out.resize(written.size());
  return out;
}

std::vector<std::uint8_t> EapSupplicant::identity_response() const {
  return response(0, kTypeIdentity, as_bytes(identity_));
}

Result<std::vector<std::uint8_t>, SupplicantError> EapSupplicant::on_request(Bytes eap_packet) {
  auto parsed = eap::parse(eap_packet);
  if (!parsed || parsed->code != eap::Code::kRequest) return fail(SupplicantError::kMalformedRequest);
  if (++rounds_ > kRoundsMax) return fail(SupplicantError::kTooManyRounds);
  const eap::Packet& request = *parsed;
  if (request.type == kTypeIdentity) return response(request.identifier, kTypeIdentity, as_bytes(identity_));
  if (request.type == kTypeNotification) return response(request.identifier, kTypeNotification, {});
  if (request.type == eap_type()) return on_tls(request.identifier, request.type_data);
  // RFC 3748 §5.3.1: a legacy Nak names the method wanted, until one began.
  if (started_) return fail(SupplicantError::kUnexpectedType);
  const std::uint8_t wanted = eap_type();
  return response(request.identifier, kTypeNak, Bytes(&wanted, 1));
}

std::vector<std::uint8_t> EapSupplicant::next_output(std::uint8_t identifier) {
  BIO* out = SSL_get_wbio(ssl_.get());
  const std::size_t pending = BIO_ctrl_pending(out);
  if (pending == 0) return response(identifier, eap_type(), Bytes(&flags_base_, 1));  // An ACK.
  std::vector<std::uint8_t> records(pending);
  BIO_read(out, records.data(), static_cast<int>(records.size()));
  fragmenter_.load(std::move(records), flags_base_);
  const std::vector<std::uint8_t> fragment = fragmenter_.next();
  return response(identifier, eap_type(), fragment);
}

Result<std::vector<std::uint8_t>, SupplicantError> EapSupplicant::on_tls(std::uint8_t identifier,
                                                                         Bytes type_data) {
  if (!ssl_) return fail(SupplicantError::kTlsFailed);
  auto frame = eap::parse_tls_frame(type_data);
  if (!frame) return fail(SupplicantError::kFraming);
  if ((frame->flags & eap::kTlsFlagStart) != 0) {
    if (started_) return fail(SupplicantError::kFraming);
    started_ = true;
    // PEAP: the server offers its highest version in the low bits; this
    // supplicant speaks PEAPv0 only, which every server accepts.
    flags_base_ = 0;
    ERR_clear_error();
    const int result = SSL_do_handshake(ssl_.get());
    if (result != 1 && SSL_get_error(ssl_.get(), result) != SSL_ERROR_WANT_READ) {
      return fail(SupplicantError::kTlsFailed);
    }
    return next_output(identifier);
  }
  if (!started_) return fail(SupplicantError::kFraming);
  if (fragmenter_.pending()) {
    // RFC 5216 §2.1.5: the server acknowledges each of our fragments.
    if (!frame->fragment.empty()) return fail(SupplicantError::kFraming);
    return response(identifier, eap_type(), fragmenter_.next());
  }
  auto whole = reassembler_.on_fragment(type_data);
  if (!whole) return fail(SupplicantError::kFraming);
  if (!*whole) return response(identifier, eap_type(), Bytes(&flags_base_, 1));  // More fragments due.
  auto fed = feed_tls(**whole);
  if (!fed) return fail(fed.error());
  return next_output(identifier);
}

Result<void, SupplicantError> EapSupplicant::feed_tls(const std::vector<std::uint8_t>& records) {
  if (!records.empty()) BIO_write(SSL_get_rbio(ssl_.get()), records.data(), static_cast<int>(records.size()));
  ERR_clear_error();
  if (!handshake_done_) {
    const int result = SSL_do_handshake(ssl_.get());
    if (result == 1) {
      handshake_done_ = true;
      if (config_.method == EapBenchMethod::kTls) method_done_ = true;
    } else if (SSL_get_error(ssl_.get(), result) != SSL_ERROR_WANT_READ) {
      return fail(SupplicantError::kTlsFailed);
    }
  }
  if (!handshake_done_) return {};
  // Application data: PEAP's inner packets, one per record; EAP-TLS over
  // TLS 1.3 gets the server's one-octet commitment (RFC 9190 §2.5), read
  // and dropped.
  std::array<std::uint8_t, 4096> buffer{};
  for (;;) {
    const int read = SSL_read(ssl_.get(), buffer.data(), static_cast<int>(buffer.size()));
    if (read <= 0) {
      const int error = SSL_get_error(ssl_.get(), read);
      if (error == SSL_ERROR_WANT_READ) break;
      return fail(SupplicantError::kTlsFailed);
    }
    if (config_.method == EapBenchMethod::kPeap) {
      auto inner = on_inner(Bytes(buffer.data(), static_cast<std::size_t>(read)));
      if (!inner) return inner;
    }
  }
  return {};
}

Result<void, SupplicantError> EapSupplicant::on_inner(Bytes plaintext) {
  auto answer = inner_answer(plaintext);
  if (!answer) return fail(answer.error());
  if (!answer->empty() && SSL_write(ssl_.get(), answer->data(), static_cast<int>(answer->size())) <= 0) {
    return fail(SupplicantError::kTlsFailed);
  }
  return {};
}

Result<std::vector<std::uint8_t>, SupplicantError> EapSupplicant::inner_answer(Bytes plaintext) {
  if (plaintext.empty()) return fail(SupplicantError::kInnerMalformed);
  // PEAPv0 compresses inner requests to Type and Type-Data, except the
  // Extensions packet, which keeps its EAP header ([MS-PEAP] §3.1.5.6).
  if (plaintext.size() >= eap::kHeaderLength + 1 &&
      plaintext[0] == static_cast<std::uint8_t>(eap::Code::kRequest) &&
      plaintext[4] == eap::kExtensionsType &&
      static_cast<std::size_t>(plaintext[2] << 8 | plaintext[3]) == plaintext.size()) {
    return on_extensions(plaintext);
  }
  if (plaintext[0] == kTypeIdentity) {
    std::vector<std::uint8_t> out{kTypeIdentity};
    out.insert(out.end(), identity_.begin(), identity_.end());
    return out;
  }
  if (plaintext[0] == kTypeMsChapV2) return on_ms_chap_v2(plaintext.subspan(1));
  return fail(SupplicantError::kInnerMalformed);
}

Result<std::vector<std::uint8_t>, SupplicantError> EapSupplicant::on_ms_chap_v2(Bytes data) {
  // OpCode(1) MS-CHAPv2-ID(1) MS-Length(2), then the OpCode's fields.
  if (data.size() < 4) return fail(SupplicantError::kInnerMalformed);
  const std::uint8_t op_code = data[0];
  const std::uint8_t id = data[1];
  const std::string_view name = auth::ms_chap_user_name(identity_);
  if (op_code == kOpChallenge) {
    // Value-Size(1) = 16, Challenge(16), Name.
    if (data.size() < 5 + authenticator_challenge_.size() || data[4] != authenticator_challenge_.size()) {
      return fail(SupplicantError::kInnerMalformed);
    }
    std::copy_n(data.begin() + 5, authenticator_challenge_.size(), authenticator_challenge_.begin());
    random_.fill(peer_challenge_);
    nt_response_ = auth::challenge_response(
        auth::challenge_hash(peer_challenge_, authenticator_challenge_, name), nt_hash_);
    // Type, OpCode, ID, MS-Length(2), Value-Size 49, Peer-Challenge(16),
    // Reserved(8), NT-Response(24), Flags(1), Name.
    std::vector<std::uint8_t> out{kTypeMsChapV2, kOpResponse, id, 0, 0, 49};
    out.insert(out.end(), peer_challenge_.begin(), peer_challenge_.end());
    out.insert(out.end(), 8, 0);
    out.insert(out.end(), nt_response_.begin(), nt_response_.end());
    out.push_back(0);
    out.insert(out.end(), identity_.begin(), identity_.end());
    const std::size_t ms_length = out.size() - 1;
    out[3] = static_cast<std::uint8_t>(ms_length >> 8);
    out[4] = static_cast<std::uint8_t>(ms_length);
    return out;
  }
  if (op_code == kOpSuccess) {
    // RFC 2759 §5: the message starts "S=" and 40 hex digits that only a
    // server knowing the password computes.
    const auto expected =
        auth::authenticator_response(nt_hash_, nt_response_, peer_challenge_, authenticator_challenge_, name);
    const Bytes message = data.subspan(4);
    if (message.size() < expected.size() ||
        !constant_time_equal(message.first(expected.size()),
                             as_bytes(std::string_view(expected.data(), expected.size())))) {
      return fail(SupplicantError::kBadAuthenticatorResponse);
    }
    inner_verified_ = true;
    return std::vector<std::uint8_t>{kTypeMsChapV2, kOpSuccess};
  }
  if (op_code == kOpFailure) {
    // The server then ends the conversation with EAP-Failure.
    inner_failed_ = true;
    return std::vector<std::uint8_t>{kTypeMsChapV2, kOpFailure};
  }
  return fail(SupplicantError::kInnerMalformed);
}

Result<std::vector<std::uint8_t>, SupplicantError> EapSupplicant::on_extensions(Bytes packet) {
  auto tlvs = eap::parse_tlvs(packet.subspan(eap::kHeaderLength + 1), kTlvsMax);
  if (!tlvs) return fail(SupplicantError::kInnerMalformed);
  std::optional<std::uint16_t> result;
  std::optional<Bytes> binding;
  for (const eap::PeapTlv& tlv : *tlvs) {
    if (tlv.type == eap::kTlvResult && tlv.value.size() == 2)
      result = static_cast<std::uint16_t>(tlv.value[0] << 8 | tlv.value[1]);
    if (tlv.type == eap::kTlvCryptoBinding && tlv.whole.size() == eap::kCryptoBindingTlvOctets)
      binding = tlv.whole;
  }
  if (!result) return fail(SupplicantError::kInnerMalformed);
  std::uint16_t answer = *result;
  if (answer == eap::kResultSuccess && !inner_verified_) answer = eap::kResultFailure;
  if (answer != eap::kResultSuccess) result_failed_ = true;
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(eap::Code::kResponse),
                                packet[1],
                                0,
                                0,
                                eap::kExtensionsType,
                                0x80,
                                static_cast<std::uint8_t>(eap::kTlvResult),
                                0,
                                2,
                                static_cast<std::uint8_t>(answer >> 8),
                                static_cast<std::uint8_t>(answer)};
  if (binding && answer == eap::kResultSuccess) {
    // [MS-PEAP] §3.1.5.5: the server's Compound MAC under keys from the
    // tunnel and the inner MS-CHAPv2 proves it ran both; the answer is the
    // same TLV as SubType 1 (Binding Response), MACed by the peer.
    std::array<std::uint8_t, 60> tunnel_key{};
    constexpr std::string_view kLabel = "client EAP encryption";
    if (SSL_export_keying_material(ssl_.get(), tunnel_key.data(), tunnel_key.size(), kLabel.data(),
                                   kLabel.size(), nullptr, 0, 0) != 1) {
      return fail(SupplicantError::kTlsFailed);
    }
    const auth::MppeKeys keys = auth::ms_chap2_mppe_keys(nt_hash_, nt_response_);
    // The peer's Inner Session Key: its send key (the server's receive
    // key), then its receive key.
    std::array<std::uint8_t, 2 * auth::kMppeKeySize> isk{};
    std::copy(keys.recv_key.begin(), keys.recv_key.end(), isk.begin());
    std::copy(keys.send_key.begin(), keys.send_key.end(), isk.begin() + auth::kMppeKeySize);
    const eap::CompoundKeys compound = eap::compound_keys(Bytes(tunnel_key).first(40), isk);
    const Bytes request = *binding;
    const eap::CompoundMac server_mac = eap::compound_mac(compound.cmk, request);
    if (!constant_time_equal(server_mac, request.subspan(8 + eap::kCryptoBindingNonceOctets))) {
      return fail(SupplicantError::kBadCryptoBinding);
    }
    std::array<std::uint8_t, eap::kCryptoBindingTlvOctets> reply{};
    std::copy(request.begin(), request.end(), reply.begin());
    reply[7] = 1;  // SubType: Binding Response.
    const eap::CompoundMac mac = eap::compound_mac(compound.cmk, reply);
    std::copy(mac.begin(), mac.end(), reply.begin() + 8 + eap::kCryptoBindingNonceOctets);
    out.insert(out.end(), reply.begin(), reply.end());
    crypto_binding_msk_ = eap::cryptobinding_msk(compound.ipmk);
  }
  out[2] = static_cast<std::uint8_t>(out.size() >> 8);
  out[3] = static_cast<std::uint8_t>(out.size());
  method_done_ = answer == eap::kResultSuccess;
  return out;
}

eap::Msk EapSupplicant::tls_msk() const {
  std::array<std::uint8_t, 128> material{};
  const bool v13 = SSL_version(ssl_.get()) == TLS1_3_VERSION;
  // RFC 5216 §2.3 (TLS 1.2, EAP-TLS and PEAPv0 alike); RFC 9190 §2.3 and
  // RFC 9427 §2.1 (TLS 1.3: the method's Type as the context).
  const std::string_view label = v13 ? "EXPORTER_EAP_TLS_Key_Material" : "client EAP encryption";
  const std::uint8_t context = eap_type();
  eap::Msk msk{};
  if (SSL_export_keying_material(ssl_.get(), material.data(), material.size(), label.data(), label.size(),
                                 v13 ? &context : nullptr, v13 ? 1 : 0, v13 ? 1 : 0) == 1) {
    std::copy_n(material.begin(), msk.size(), msk.begin());
  }
  return msk;
}

SupplicantError EapSupplicant::failure_reason() const {
  if (inner_failed_) return SupplicantError::kInnerFailure;
  if (result_failed_) return SupplicantError::kResultFailure;
  return SupplicantError::kEapFailure;
}

Result<void, SupplicantError> EapSupplicant::on_success(Bytes recv_key, Bytes send_key) const {
  if (!method_done_) return fail(SupplicantError::kEarlySuccess);
  const eap::Msk msk = crypto_binding_msk_.value_or(tls_msk());
  constexpr std::size_t kHalf = 32;
  if (recv_key.size() < kHalf || send_key.size() < kHalf) return fail(SupplicantError::kMissingKeys);
  if (!constant_time_equal(recv_key.first(kHalf), Bytes(msk).first(kHalf)) ||
      !constant_time_equal(send_key.first(kHalf), Bytes(msk).subspan(kHalf))) {
    return fail(SupplicantError::kKeyMismatch);
  }
  return {};
}

}  // namespace rw::loadgen_shell
