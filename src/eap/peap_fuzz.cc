// libFuzzer target for what a PEAP peer sends inside the tunnel
// (peap_packets.h, eap_mschapv2.h): the TLVs, the Extensions response and
// the EAP-MSCHAPv2 Response. Properties: parsing never crashes; a refusal
// has a name; every borrowed field lies inside the input; accepted TLVs,
// laid end to end, are the input again; an accepted Extensions response
// carries Result 1 or 2 and a 60-octet Crypto-Binding TLV whose Compound
// MAC can be computed. Corpus: tests/corpus/peap_fuzz/.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eap/eap_mschapv2.h"
#include "eap/peap_packets.h"

namespace {

bool inside(rw::Bytes field, rw::Bytes input) {
  return field.empty() ||
         (field.data() >= input.data() && field.data() + field.size() <= input.data() + input.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rw;
  using namespace rw::eap;
  const Bytes input(data, size);

  if (auto tlvs = parse_tlvs(input, 16); tlvs) {
    std::vector<std::uint8_t> again;
    for (const PeapTlv& tlv : *tlvs) {
      if (!inside(tlv.value, input) || !inside(tlv.whole, input) ||
          tlv.whole.size() != tlv.value.size() + 4) {
        __builtin_trap();
      }
      again.insert(again.end(), tlv.whole.begin(), tlv.whole.end());
    }
    if (again != std::vector<std::uint8_t>(input.begin(), input.end())) __builtin_trap();
  } else if (to_string(tlvs.error()).empty()) {
    __builtin_trap();
  }

  const std::uint8_t identifier = size > 1 ? data[1] : 0;
  if (auto response = parse_extensions_response(input, identifier, 16); response) {
    if (response->result != kResultSuccess && response->result != kResultFailure) __builtin_trap();
    if (response->crypto_binding) {
      const CryptoBindingTlv& binding = *response->crypto_binding;
      if (binding.whole.size() != kCryptoBindingTlvOctets ||
          binding.nonce.size() != kCryptoBindingNonceOctets ||
          binding.compound_mac.size() != kCompoundMacOctets || !inside(binding.whole, input)) {
        __builtin_trap();
      }
      (void)compound_mac(Cmk{}, binding.whole);
    }
  } else if (to_string(response.error()).empty()) {
    __builtin_trap();
  }

  if (auto ms = parse_ms_chap_v2_response(input); ms) {
    if (ms->peer_challenge.size() != 16 || ms->nt_response.size() != 24 || !inside(ms->name, input) ||
        ms->name.size() > kMsChapV2NameOctetsMax) {
      __builtin_trap();
    }
  } else if (to_string(ms.error()).empty()) {
    __builtin_trap();
  }
  return 0;
}
