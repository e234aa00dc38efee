// OCSP for EAP-TLS client certificates (docs/security.md "OCSP"): the
// shell's eap::RevocationChecker. Asks the responder configured (or, when
// none is, the first http:// one the certificate names) with a fresh nonce,
// judges the answer with eap::judge_ocsp_response, and keeps answers in a
// bounded cache until their nextUpdate, so that a device reconnecting does
// not cost a query each time. Called on the TLS pool's threads, several at
// once; a query blocks its thread up to the timeout (docs/limits.md "OCSP").
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/random.h"
#include "base/time.h"
#include "eap/ocsp.h"
#include "eap/revocation.h"
#include "io/http_client.h"

namespace rw::gateway_shell {

struct OcspOptions {
  // The responder asked for every certificate; none: the certificate's own
  // (Authority Information Access), and a certificate naming none is unknown.
  std::optional<io::HttpUrl> responder{};
  Duration timeout = Duration::seconds(2);  // The whole query, connect to last octet.
  std::size_t cache_entries_max = 65'536;   // Answers kept.
  std::size_t answer_bytes_max = 65'536;    // A longer answer is refused.
  std::int64_t skew_s = 300;
  std::int64_t age_max_s = 3600;  // Reuse of an answer without nextUpdate.
};

struct OcspStats {
  std::uint64_t queries = 0;  // Sent to a responder.
  std::uint64_t cache_hits = 0;
  std::uint64_t good = 0;
  std::uint64_t revoked = 0;
  std::uint64_t unknown = 0;   // Answered "unknown", or no usable answer.
  std::uint64_t failures = 0;  // Of those: no answer, a bad one, or no responder.
};

class OcspChecker final : public eap::RevocationChecker {
 public:
  // Requires: `random` is thread-safe and outlives the checker (the nonces).
  OcspChecker(OcspOptions options, RandomSource& random);

  [[nodiscard]] eap::RevocationVerdict check(const eap::RevocationQuery& query) override;
  [[nodiscard]] OcspStats stats() const;
  // Why the last query failed, for the operator's log; empty when none did.
  [[nodiscard]] std::string last_failure() const;

 private:
  struct Cached {
    eap::CertificateStatus status;
    std::int64_t good_until_unix_s;
    std::list<std::string>::iterator order;
  };
  // No usable answer: counted as unknown and as a failure, `why` kept for last_failure().
  void no_answer(const std::string& why);

  const OcspOptions options_;
  RandomSource& random_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;                   // Guarded by mutex_. Oldest first.
  std::unordered_map<std::string, Cached> cache_;  // Guarded by mutex_.
  OcspStats stats_;                                // Guarded by mutex_.
  std::string last_failure_;                       // Guarded by mutex_.
};

}  // namespace rw::gateway_shell
