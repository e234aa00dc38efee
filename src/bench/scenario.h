// The requests of the load generator and the checks on their answers: PAP,
// CHAP and MS-CHAPv2 Access-Requests (RFC 2865 §5.2, §5.3; RFC 2548, RFC
// 2759) with a Message-Authenticator (RFC 3579 §3.2), and Accounting Start,
// Interim-Update and Stop of fresh sessions (RFC 2866). Every answer is
// verified: Response Authenticator, Message-Authenticator, the expected
// code, and MS-CHAP2-Success. Pure: randomness is passed in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/mschap.h"
#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace rw::bench {

enum class Scenario : std::uint8_t { kPap, kChap, kMsChapV2, kAccounting, kMixed };

[[nodiscard]] std::string_view to_string(Scenario scenario);
[[nodiscard]] std::optional<Scenario> parse_scenario(std::string_view text);

// What one generated request is, as far as checking its answer needs.
enum class RequestKind : std::uint8_t { kPap, kChap, kMsChapV2, kAcctStart, kAcctInterim, kAcctStop };

[[nodiscard]] bool is_accounting(RequestKind kind);

// A bench user; every user is expected to be accepted.
struct BenchUser {
  std::string name;
  std::string password;
};

// `count:N` gives N users bench-user-I / bench-password-I; otherwise the
// text is a users list, one `name password` pair per line ('#' comments).
// Returns nothing on an empty or malformed list.
[[nodiscard]] std::optional<std::vector<BenchUser>> parse_users(std::string_view spec_or_text);

// Longest request the generator writes; the slots that keep a request for
// retransmission are this big.
inline constexpr std::size_t kMaxRequestLength = 320;

// The state kept with an in-flight request to check its answer.
struct Outstanding {
  RequestKind kind = RequestKind::kPap;
  std::uint8_t identifier = 0;
  radius::Authenticator request_authenticator{};
  // MS-CHAPv2: the MS-CHAP2-Success value expected ("S=" + 40 hex digits).
  std::array<char, auth::kAuthenticatorResponseSize> authenticator_response{};
  std::uint64_t session = 0;  // Accounting: the session number in Acct-Session-Id.
};

// Accounting request number `index` (counting accounting requests only):
// which kind it is and which session it belongs to. Each session sends
// Start, Interim-Update and Stop in that order, but kSessionSpacing
// sessions apart rather than back to back, as a NAS does (RFC 2866 §5.6:
// interim updates come at an interval, not with the Start): a server that
// handles requests concurrently must not see a session's Stop overtake its
// Interim-Update (FreeRADIUS's rlm_sql then finds no open row and does not
// answer). Until the first sessions reach their Interim-Update and Stop,
// those slots send the Start of a lead-in session (numbered from
// kLeadInSessions) that is never continued.
struct AccountingSlot {
  RequestKind kind = RequestKind::kAcctStart;
  std::uint64_t session = 0;
};
inline constexpr std::uint64_t kSessionSpacing = 128;
inline constexpr std::uint64_t kLeadInSessions = std::uint64_t{1} << 40;
[[nodiscard]] AccountingSlot accounting_slot(std::uint64_t index);

// Accounting over a fixed set of live sessions (`bench run --live-sessions`,
// the session sweep of docs/benchmarking.md): sessions 0..count-1 and no
// Stop, so every one stays live in the members' session table. While
// `open`, accounting request k < count is the Start of session k and each
// later one an Interim-Update of session (k - count) mod count; without it
// (a second run over sessions an earlier one opened, same run tag) every
// request is an Interim-Update of session k mod count.
struct LiveSessions {
  std::uint64_t count = 0;  // 0: fresh sessions, each Start, Interim-Update, Stop (accounting_slot).
  bool open = true;
};
[[nodiscard]] AccountingSlot live_session_slot(std::uint64_t index, const LiveSessions& live);

// Builds the requests of one generator. `run_tag` makes Acct-Session-Ids
// unique across runs and generator processes.
class RequestFactory {
 public:
  // Requires: users is not empty; `secret` outlives the factory.
  RequestFactory(Scenario scenario, std::vector<BenchUser> users, const radius::SharedSecret& secret,
                 std::string run_tag, LiveSessions live = {});

  // Which kind request number `sequence` is (deterministic: mixed is 70 %
  // accounting, 30 % authentication in rotation).
  [[nodiscard]] RequestKind kind_of(std::uint64_t sequence) const;

  // Writes request number `sequence` with `identifier` into `out`, fills
  // `outstanding`, and returns the signed wire bytes (a prefix of out).
  [[nodiscard]] Result<Bytes, radius::BuildError> build(std::uint64_t sequence, std::uint8_t identifier,
                                                        RandomSource& random,
                                                        std::span<std::uint8_t, kMaxRequestLength> out,
                                                        Outstanding& outstanding) const;

  // The Acct-Session-Id of session number `session`.
  [[nodiscard]] std::string session_id(std::uint64_t session) const;

 private:
  // Which kind and session accounting request number `index` is.
  [[nodiscard]] AccountingSlot slot(std::uint64_t index) const;

  Result<Bytes, radius::BuildError> build_access(RequestKind kind, std::uint64_t sequence,
                                                 std::uint8_t identifier, RandomSource& random,
                                                 std::span<std::uint8_t, kMaxRequestLength> out,
                                                 Outstanding& outstanding) const;
  Result<Bytes, radius::BuildError> build_accounting(RequestKind kind, std::uint64_t sequence,
                                                     std::uint8_t identifier,
                                                     std::span<std::uint8_t, kMaxRequestLength> out,
                                                     Outstanding& outstanding) const;

  Scenario scenario_;
  std::vector<BenchUser> users_;
  std::vector<auth::NtHash> nt_hashes_;
  const radius::SharedSecret& secret_;
  std::string run_tag_;
  LiveSessions live_;
};

// Why an answer was not the expected one.
enum class VerifyError : std::uint8_t {
  kMalformed,                    // not a RADIUS packet
  kIdentifierMismatch,           // not the in-flight request's Identifier
  kBadResponseAuthenticator,     // RFC 2865 §3
  kMissingMessageAuthenticator,  // Access-Accept/Reject without one (RFC 3579 §3.2, RFC 5080)
  kBadMessageAuthenticator,
  kUnexpectedCode,     // e.g. Access-Reject where Access-Accept is expected
  kBadMsChap2Success,  // RFC 2759 §5: wrong or missing authenticator response
};

[[nodiscard]] std::string_view to_string(VerifyError error);
inline constexpr std::size_t kVerifyErrorCount = 7;

// Checks an answer to `outstanding`. A Message-Authenticator, when present,
// is always checked; `require_message_authenticator` refuses Access-Accepts
// without one (servers before the BlastRADIUS fixes omit it).
[[nodiscard]] Result<void, VerifyError> verify_answer(Bytes datagram, const Outstanding& outstanding,
                                                      const radius::SharedSecret& secret,
                                                      bool require_message_authenticator = true);

// "Start", "Interim-Update" or "Stop" (RFC 2866 §5.1), for the acked log.
[[nodiscard]] std::string_view status_name(RequestKind kind);

}  // namespace rw::bench
