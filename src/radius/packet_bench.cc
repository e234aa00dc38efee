// Benchmarks of the packet path, one thread, against the floor of one MD5
// over the packet (docs/protocol.md "Performance"). The receive path of an
// Access-Request is parse + Message-Authenticator check + User-Password.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <array>
#include <cstdint>

#include "base/random.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"
#include "radius/md5.h"
#include "radius/packet.h"

namespace rw::radius {
namespace {

const SharedSecret& bench_secret() {
  static const SharedSecret secret = *SharedSecret::create(as_bytes("a-typical-shared-secret"));
  return secret;
}

// A typical Wi-Fi PAP Access-Request of about 200 octets, signed.
struct AccessRequest {
  std::array<std::uint8_t, kMaxPacketLength> buffer{};
  Bytes wire;

  AccessRequest() {
    SeededRandom random(1);
    Authenticator authenticator = make_request_authenticator(random);
    std::array<std::uint8_t, kMaxUserPasswordLength> hidden_buffer;
    Bytes hidden =
        *hide_user_password(as_bytes("correct horse"), authenticator, bench_secret(), hidden_buffer);
    PacketBuilder builder(buffer);
    builder.begin(Code::kAccessRequest, 17, authenticator);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes("alice.example@campus.example.org"));
    builder.add(attr::kUserPassword, hidden);
    builder.add(attr::kNasIpAddress, std::array<std::uint8_t, 4>{10, 1, 2, 3});
    builder.add_u32(attr::kNasPort, 7);
    builder.add_u32(attr::kNasPortType, 19);
    builder.add_u32(attr::kServiceType, 2);
    builder.add_u32(attr::kFramedMtu, 1400);
    builder.add(attr::kCalledStationId, as_bytes("00-11-22-33-44-55:campus-wifi"));
    builder.add(attr::kCallingStationId, as_bytes("66-77-88-99-AA-BB"));
    builder.add(attr::kNasIdentifier, as_bytes("ap-building-7"));
    builder.add(attr::kAcctSessionId, as_bytes("5F3A9C1D00000042"));
    MutableBytes signed_wire = *builder.finish();
    sign_request(signed_wire, bench_secret());
    wire = signed_wire;
  }
};

const AccessRequest& access_request() {
  static const AccessRequest request;
  return request;
}

void BM_Md5OfPacket(benchmark::State& state) {
  Bytes wire = access_request().wire;
  for (auto _ : state) benchmark::DoNotOptimize(Md5::of(wire));
  state.SetLabel(std::to_string(wire.size()) + " octets");
}
BENCHMARK(BM_Md5OfPacket);

// The alternative measured for docs/protocol.md: EVP with a reused,
// pre-fetched context.
void BM_Md5OfPacketEvp(benchmark::State& state) {
  Bytes wire = access_request().wire;
  EVP_MD* md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  std::array<unsigned char, 16> out;
  for (auto _ : state) {
    unsigned int length = 0;
    EVP_DigestInit_ex(context, md5, nullptr);
    EVP_DigestUpdate(context, wire.data(), wire.size());
    EVP_DigestFinal_ex(context, out.data(), &length);
    benchmark::DoNotOptimize(out);
  }
  EVP_MD_CTX_free(context);
  EVP_MD_free(md5);
}
BENCHMARK(BM_Md5OfPacketEvp);

void BM_ParseAccessRequest(benchmark::State& state) {
  Bytes wire = access_request().wire;
  for (auto _ : state) {
    auto packet = Packet::parse(wire);
    benchmark::DoNotOptimize(packet);
    benchmark::DoNotOptimize(packet->find(attr::kUserName));
  }
}
BENCHMARK(BM_ParseAccessRequest);

void BM_VerifyMessageAuthenticator(benchmark::State& state) {
  auto packet = *Packet::parse(access_request().wire);
  for (auto _ : state) {
    benchmark::DoNotOptimize(check_request_message_authenticator(packet, bench_secret()));
  }
}
BENCHMARK(BM_VerifyMessageAuthenticator);

void BM_UnhideUserPassword(benchmark::State& state) {
  auto packet = *Packet::parse(access_request().wire);
  Bytes hidden = packet.find(attr::kUserPassword)->value;
  std::array<std::uint8_t, kMaxUserPasswordLength> out;
  for (auto _ : state) {
    benchmark::DoNotOptimize(unhide_user_password(hidden, packet.authenticator(), bench_secret(), out));
  }
}
BENCHMARK(BM_UnhideUserPassword);

// Everything the gateway does to an Access-Request before policy.
void BM_ReceiveAccessRequest(benchmark::State& state) {
  Bytes wire = access_request().wire;
  std::array<std::uint8_t, kMaxUserPasswordLength> out;
  for (auto _ : state) {
    auto packet = Packet::parse(wire);
    auto status = check_request_message_authenticator(*packet, bench_secret());
    auto password = unhide_user_password(packet->find(attr::kUserPassword)->value, packet->authenticator(),
                                         bench_secret(), out);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(password);
  }
}
BENCHMARK(BM_ReceiveAccessRequest);

void BM_BuildAndSignAccessAccept(benchmark::State& state) {
  auto request = *Packet::parse(access_request().wire);
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  for (auto _ : state) {
    PacketBuilder builder(buffer);
    builder.begin(Code::kAccessAccept, request.identifier(), request.authenticator());
    builder.reserve_message_authenticator();
    builder.add_u32(attr::kSessionTimeout, 3600);
    builder.add(attr::kClass, as_bytes("radiusward:7f3a9c1d"));
    builder.add(attr::kReplyMessage, as_bytes("Welcome"));
    auto wire = builder.finish();
    sign_response(*wire, request.authenticator(), bench_secret());
    benchmark::DoNotOptimize(wire->data());
  }
}
BENCHMARK(BM_BuildAndSignAccessAccept);

void BM_VerifyAccountingRequest(benchmark::State& state) {
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccountingRequest, 3);
  builder.add_u32(attr::kAcctStatusType, 3);
  builder.add(attr::kUserName, as_bytes("alice.example@campus.example.org"));
  builder.add(attr::kAcctSessionId, as_bytes("5F3A9C1D00000042"));
  builder.add(attr::kNasIpAddress, std::array<std::uint8_t, 4>{10, 1, 2, 3});
  builder.add(attr::kCalledStationId, as_bytes("00-11-22-33-44-55:campus-wifi"));
  builder.add(attr::kCallingStationId, as_bytes("66-77-88-99-AA-BB"));
  builder.add(attr::kFramedIpAddress, std::array<std::uint8_t, 4>{100, 64, 3, 9});
  for (std::uint8_t type : {attr::kAcctInputOctets, attr::kAcctOutputOctets, attr::kAcctSessionTime,
                            attr::kAcctInputPackets, attr::kAcctOutputPackets, attr::kAcctDelayTime,
                            attr::kNasPort, attr::kNasPortType, attr::kEventTimestamp}) {
    builder.add_u32(type, 123456);
  }
  MutableBytes wire = *builder.finish();
  sign_request(wire, bench_secret());
  auto packet = *Packet::parse(wire);
  for (auto _ : state) benchmark::DoNotOptimize(verify_request_authenticator(packet, bench_secret()));
  state.SetLabel(std::to_string(wire.size()) + " octets");
}
BENCHMARK(BM_VerifyAccountingRequest);

}  // namespace
}  // namespace rw::radius
