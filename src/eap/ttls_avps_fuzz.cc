// libFuzzer target for the EAP-TTLS inner AVPs (ttls_avps.h). Properties:
// parse never crashes; a refusal has a name; every AVP's data lies inside
// the input; an accepted list of AVPs without Vendor-IDs, encoded again,
// parses to the same codes and data. Corpus: tests/corpus/ttls_avps_fuzz/.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eap/ttls_avps.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rw;
  using namespace rw::eap;
  const Bytes input(data, size);
  auto avps = parse_avps(input);
  if (!avps) {
    if (to_string(avps.error()).empty()) __builtin_trap();
    return 0;
  }
  std::vector<std::uint8_t> again;
  for (const Avp& avp : *avps) {
    if (avp.data.data() < input.data() || avp.data.data() + avp.data.size() > input.data() + input.size()) {
      __builtin_trap();
    }
    if (avp.vendor_id) return 0;
    const std::vector<std::uint8_t> one =
        encode_avp(avp.code, avp.data, (avp.flags & kAvpFlagMandatory) != 0);
    again.insert(again.end(), one.begin(), one.end());
  }
  auto reparsed = parse_avps(again);
  if (!reparsed || reparsed->size() != avps->size()) __builtin_trap();
  for (std::size_t i = 0; i < avps->size(); ++i) {
    const Avp& a = (*avps)[i];
    const Avp& b = (*reparsed)[i];
    if (a.code != b.code || as_chars(a.data) != as_chars(b.data)) __builtin_trap();
  }
  return 0;
}
