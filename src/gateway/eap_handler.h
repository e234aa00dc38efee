// The gateway's side of EAP over RADIUS (RFC 3579): an Access-Request with
// EAP-Message is reassembled; without a State it begins a conversation
// (EAP-Start, or the peer's EAP-Response/Identity the NAS forwards), with one
// its conversation is taken from the gateway's shared table
// (eap_conversations.h) and stepped; when the method needs the user's
// password, or succeeded, the users policy is applied to the decided identity
// as PAP and CHAP apply it (which may wait for SQL: the request is parked
// and decided again from the same datagram, the conversation asking for
// the password again). The outcome says what the Access-Challenge,
// Access-Accept or Access-Reject carries; AccessHandler builds it. Pure
// (the shared table locks itself).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "eap/conversation.h"
#include "eap/eap_message.h"
#include "gateway/access.h"
#include "gateway/action.h"
#include "gateway/eap_conversations.h"
#include "gateway/eap_step.h"

namespace rw::gateway {

// NAS-Port-Type values (RFC 2865 §5.41 and IANA's registry) of wireless
// access, over which EAP-MD5 is never offered: it neither authenticates
// the network nor derives keys (RFC 3748 §7.2.1), so a Wi-Fi link would
// be unencrypted and open to an evil twin. Wireless-Other 18,
// Wireless-802.11 19, Wireless-CDMA2000 22, Wireless-UMTS 23,
// Wireless-1X-EV 24, Wireless-802.16 27, Wireless-802.20 28,
// Wireless-802.22 29, Wireless-XGP 36 and the WiMAX types 37 to 43.
[[nodiscard]] bool is_wireless_nas_port_type(std::uint32_t value);

class EapHandler {
 public:
  // Requires: `random` outlives the handler and may be called from any
  // worker's thread, since a conversation begun here may go on on another
  // worker (a thread-safe CSPRNG in production: EAP Identifiers and the
  // methods' challenges).
  explicit EapHandler(RandomSource& random);
  ~EapHandler();
  EapHandler(const EapHandler&) = delete;
  EapHandler& operator=(const EapHandler&) = delete;

  // Decides `request`, which carries EAP-Message, into `outcome` (cleared
  // first). Requires: the state's eap methods are not empty; the request's
  // Message-Authenticator was verified.
  void decide(const RequestContext& request, const AccessInputs& inputs, EapConversations& conversations,
              AccessOutcome& outcome);

  // What the last decide() did, in words, for the explain log.
  [[nodiscard]] std::string_view note() const { return note_; }

  // Makes the methods through `factory` (borrowed, outliving the handler)
  // instead of the state's (EAP-MD5 and its EapMethodSet); null: the
  // state's again.
  // For tests, and for methods built elsewhere.
  void set_methods(eap::MethodFactory* factory) { factory_ = factory; }

 private:
  // Hands the step of a TLS-based method to the EAP pool (need = kEapStep).
  void hand_off(const RequestContext& request, const eap::Packet& response, Bytes response_octets,
                EapConversations::Held held, const AccessInputs& inputs, AccessOutcome& outcome);
  // Keeps what policy reads of an EAP-TLS client certificate before the conversation ends.
  void keep_certificate(const eap::Conversation& conversation, AccessOutcome& outcome);
  void begin_with_start(const RequestContext& request, EapConversations& conversations,
                        AccessOutcome& outcome);
  void begin_with_identity(const RequestContext& request, const eap::Packet& response,
                           EapConversations& conversations, AccessOutcome& outcome);
  void continue_conversation(const RequestContext& request, const AccessInputs& inputs,
                             const eap::Packet& response, Bytes response_octets, Bytes state,
                             EapConversations& conversations, AccessOutcome& outcome);
  // Carries out a step of a held conversation: back into the table, or ended.
  void finish(const RequestContext& request, const AccessInputs& inputs, EapConversations& conversations,
              EapConversations::Held held, eap::Step step, std::uint8_t response_identifier,
              AccessOutcome& outcome);
  // The offer for this request: the configured methods, EAP-MD5 withheld over wireless.
  eap::Offer offer_for(const RequestContext& request);
  void challenge(const eap::Step& step, const eap::StateBytes& state, Duration session_timeout,
                 AccessOutcome& outcome);
  void refuse(AccessOutcome& outcome, RejectReason reason, std::optional<std::uint8_t> failure_identifier);
  void failed(const eap::Step& step, AccessOutcome& outcome);
  void decided_by(const eap::Conversation& conversation, AccessOutcome& outcome);

  RandomSource& random_;
  EapMethodFactory methods_;
  eap::MethodFactory* factory_ = nullptr;  // Null: methods_.
  std::vector<eap::Type> offer_;           // The offer of the request at hand.
  bool md5_withheld_ = false;              // EAP-MD5 is configured but the request is wireless.
  std::array<std::uint8_t, eap::kEapPacketBytesMax> in_{};   // The reassembled EAP-Response.
  std::array<std::uint8_t, eap::kEapPacketBytesMax> out_{};  // The EAP packet of the reply.
  std::string identity_;         // The decided identity of the last decision (outcome.user_name).
  std::string cert_subject_cn_;  // EAP-TLS: outcome.eap.cert_subject_cn.
  std::string cert_issuer_;
  std::string note_;
};

}  // namespace rw::gateway
