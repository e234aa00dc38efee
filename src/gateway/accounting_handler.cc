// AccountingHandler and the Status-Server handler: the two request kinds
// whose replies carry nothing but Proxy-State and signatures.
#include "gateway/accounting_handler.h"

#include "accounting/entry.h"
#include "base/assert.h"
#include "gateway/replies.h"

namespace rw::gateway {

using radius::Code;

AccountingHandler::AccountingHandler(std::shared_ptr<const accounting::KeyRecipe> recipe)
    : recipe_(std::move(recipe)) {
  RW_ASSERT(recipe_ != nullptr);
  record_.client.reserve(accounting::kClientNameMax);
  record_.attributes.reserve(accounting::kRecordAttributesMax);
  record_bytes_.reserve(accounting::kRecordLengthMax);
}

Action AccountingHandler::submit(const RequestContext& request) {
  // Built into the worker's record and bytes, which keep their capacity:
  // no allocation per request (docs/accounting.md "Gateway accounting path").
  if (accounting::fill_record(record_, request.packet, request.client.shortname, request.arrival.unix_ms,
                              *recipe_)) {
    return Action::dropped(DropReason::kAccountingInvalid);
  }
  record_bytes_.clear();
  accounting::encode_record(record_, record_bytes_);
  return Action{.kind = Action::Kind::kSubmit, .record_key = &record_.key, .record = record_bytes_};
}

std::size_t AccountingHandler::respond(const PendingRequest& pending, MutableBytes reply) {
  const RequestKey& key = pending.key;
  radius::PacketBuilder builder(reply);
  builder.begin(Code::kAccountingResponse, key.identifier, key.authenticator);
  if (pending.message_authenticator) builder.reserve_message_authenticator();
  // RFC 2866 §4.2 and RFC 2865 §5.33: Proxy-State copied unmodified, in order.
  add_proxy_state_tlvs(builder, pending.proxy_states);
  // RFC 2866 §3: MD5(Code+Identifier+Length+Request Authenticator+Attributes+Secret).
  return finish_signed(builder, key.authenticator, *pending.secret);
}

Action answer_status_server(const RequestContext& request, MutableBytes reply) {
  radius::PacketBuilder builder(reply);
  // RFC 5997 §3: Access-Accept on the authentication port, Accounting-Response
  // on the accounting port; a RadSec connection serves authentication first
  // (RFC 6614 §2.3), so it gets Access-Accept, what radsecproxy expects.
  const Code code =
      request.arrival.listener == Listener::kAccounting ? Code::kAccountingResponse : Code::kAccessAccept;
  builder.begin(code, request.packet.identifier(), request.packet.authenticator());
  builder.reserve_message_authenticator();
  copy_proxy_states(builder, request.packet);
  const std::size_t length = finish_signed(builder, request.packet.authenticator(), request.secret);
  if (length == 0) return Action::dropped(DropReason::kReplyTooLarge);
  return Action::reply(length);
}

}  // namespace rw::gateway
