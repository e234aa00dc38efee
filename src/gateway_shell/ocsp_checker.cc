// The shell's OCSP checker (ocsp_checker.h).
#include "gateway_shell/ocsp_checker.h"

#include <array>
#include <utility>

#include "io/clock.h"

namespace rw::gateway_shell {
namespace {

eap::RevocationVerdict verdict_of(eap::CertificateStatus status) {
  switch (status) {
    case eap::CertificateStatus::kGood:
      return eap::RevocationVerdict::kGood;
    case eap::CertificateStatus::kRevoked:
      return eap::RevocationVerdict::kRevoked;
    case eap::CertificateStatus::kUnknown:
      return eap::RevocationVerdict::kUnknown;
  }
  return eap::RevocationVerdict::kUnknown;
}

std::int64_t unix_now_s() { return io::unix_now_ms() / 1000; }

}  // namespace

OcspChecker::OcspChecker(OcspOptions options, RandomSource& random)
    : options_(std::move(options)), random_(random) {}

eap::RevocationVerdict OcspChecker::check(const eap::RevocationQuery& query) {
  std::array<std::uint8_t, eap::kOcspNonceOctets> nonce{};
  random_.fill(nonce);
  auto request = eap::OcspRequest::create(query.leaf, query.issuer, nonce);
  if (!request) {
    no_answer(std::string(eap::to_string(request.error())));
    return eap::RevocationVerdict::kUnknown;
  }
  const std::int64_t now = unix_now_s();
  {
    const std::lock_guard lock(mutex_);
    if (auto found = cache_.find(request->cache_key()); found != cache_.end()) {
      if (found->second.good_until_unix_s > now) {
        stats_.cache_hits++;
        const eap::RevocationVerdict verdict = verdict_of(found->second.status);
        return verdict;
      }
      order_.erase(found->second.order);
      cache_.erase(found);
    }
  }
  std::optional<io::HttpUrl> responder = options_.responder;
  std::string why;
  if (!responder) {
    for (const std::string& url : eap::ocsp_urls_of(query.leaf)) {
      if (auto parsed = io::parse_http_url(url)) {
        responder = std::move(*parsed);
        break;
      }
    }
    if (!responder) why = "no OCSP responder configured, and the certificate names no http:// one";
  }
  if (responder) {
    {
      const std::lock_guard lock(mutex_);
      stats_.queries++;
    }
    auto reply = io::http_post(*responder, "application/ocsp-request", request->der(), options_.timeout,
                               options_.answer_bytes_max);
    if (!reply) {
      why = reply.error().to_string();
    } else if (reply->status != 200) {
      why = "the responder answered HTTP " + std::to_string(reply->status);
    } else {
      const Bytes body(reinterpret_cast<const std::uint8_t*>(reply->body.data()), reply->body.size());
      auto judged = eap::judge_ocsp_response(
          *request, body, query.store, query.chain,
          eap::OcspJudgeOptions{
              .now_unix_s = unix_now_s(), .skew_s = options_.skew_s, .age_max_s = options_.age_max_s});
      if (!judged) {
        why = "the responder's answer was refused: " + std::string(eap::to_string(judged.error()));
      } else {
        const eap::RevocationVerdict verdict = verdict_of(judged->status);
        const std::lock_guard lock(mutex_);
        if (options_.cache_entries_max > 0) {
          while (cache_.size() >= options_.cache_entries_max) {
            cache_.erase(order_.front());
            order_.pop_front();
          }
          order_.push_back(request->cache_key());
          cache_.emplace(request->cache_key(),
                         Cached{judged->status, judged->good_until_unix_s, std::prev(order_.end())});
        }
        switch (verdict) {
          case eap::RevocationVerdict::kGood:
            stats_.good++;
            break;
          case eap::RevocationVerdict::kRevoked:
            stats_.revoked++;
            break;
          case eap::RevocationVerdict::kUnknown:
            stats_.unknown++;
            break;
        }
        return verdict;
      }
    }
  }
  no_answer(why);
  return eap::RevocationVerdict::kUnknown;
}

void OcspChecker::no_answer(const std::string& why) {
  const std::lock_guard lock(mutex_);
  stats_.unknown++;
  stats_.failures++;
  last_failure_ = why;
}

OcspStats OcspChecker::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

std::string OcspChecker::last_failure() const {
  const std::lock_guard lock(mutex_);
  return last_failure_;
}

}  // namespace rw::gateway_shell
