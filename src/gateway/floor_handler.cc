#include "gateway/floor_handler.h"

#include "radius/packet.h"

namespace rw::gateway {

std::size_t FloorHandler::on_datagram(Instant /*now*/, const Arrival& /*arrival*/, const Endpoint& /*from*/,
                                      Bytes datagram, MutableBytes reply) {
  auto request = radius::Packet::parse(datagram);
  if (!request || request->code() != radius::Code::kAccessRequest) return 0;
  if (radius::check_request_message_authenticator(*request, secret_) !=
      radius::MessageAuthenticatorStatus::kValid) {
    return 0;
  }
  radius::PacketBuilder builder(reply);
  builder.begin(radius::Code::kAccessAccept, request->identifier(), request->authenticator());
  builder.reserve_message_authenticator();
  auto wire = builder.finish();
  if (!wire) return 0;
  radius::sign_response(*wire, request->authenticator(), secret_);
  return wire->size();
}

}  // namespace rw::gateway
