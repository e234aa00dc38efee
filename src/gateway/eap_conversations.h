// The EAP conversations of one gateway process, shared by all its UDP
// workers: a NAS may send the follow-ups of one conversation from different
// source ports, which the kernel's SO_REUSEPORT hash then gives to
// different workers (docs/design.md "EAP across several gateways"). The
// pure eap::ConversationTable is split into shards, each under its own
// mutex held only to take a conversation out, put it back or end it; the EAP
// work itself runs outside any lock, on the conversation the request took.
// The State of each conversation names its shard and slot (docs/wire_formats.md
// "EAP State"). Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "base/result.h"
#include "base/time.h"
#include "eap/conversation.h"
#include "eap/conversation_table.h"
#include "eap/state.h"

namespace rw::gateway {

struct EapTableOptions {
  // Conversations held at once, across all shards (docs/limits.md "EAP").
  // Requires: 1..16,777,215.
  std::size_t conversations_max = 16'384;
  // A conversation no request continued for this long ends (RFC 3579
  // §2.6.1 recommends a State lifetime; NASes give up on a silent
  // supplicant well before). Requires: > 0.
  Duration idle_timeout = Duration::seconds(30);
  // The gateway id every State names (eap.gateway_id).
  std::uint32_t gateway_id = 0;
};

// Why a request's State names no conversation it may continue.
enum class EapRefusal : std::uint8_t {
  kInvalid,       // Not a State this process minted: wrong length or version, forged or altered tag.
  kOtherGateway,  // Another gateway's conversation (forwarding it is not built yet).
  kUnknown,       // Its conversation ended, or the slot holds another one now.
  kExpired,       // Its conversation was idle past idle_timeout.
  kBusy,          // Another worker works on the conversation right now.
  kFull,          // No room for a new conversation.
};

// The gateway's figures for /metrics (docs/admin_api.md "/metrics").
struct EapFigures {
  std::size_t active = 0;     // Conversations held now.
  std::uint64_t started = 0;  // Conversations taken into the table.
  std::uint64_t expired = 0;  // Conversations ended by idle expiry.
  std::uint64_t refused = 0;  // Requests whose State was refused (invalid, other gateway, unknown, expired).
  std::uint64_t full = 0;     // New conversations refused at conversations_max.
};

class EapConversations {
 public:
  // The State key is drawn from `random` (a CSPRNG in production).
  EapConversations(EapTableOptions options, RandomSource& random);
  // A given State key, for tests. Requires: key.size() == eap::StateCodec::kKeyLength.
  EapConversations(EapTableOptions options, Bytes key);
  EapConversations(const EapConversations&) = delete;
  EapConversations& operator=(const EapConversations&) = delete;

  // A conversation a request works on, taken out of its shard. It must go
  // back through put_back() or end() before the request's call returns.
  struct Held {
    std::unique_ptr<eap::Conversation> conversation;
    eap::StateBytes state{};
    std::uint32_t shard = 0;
    eap::SlotRef ref{};
  };

  // Keeps a new conversation from `now` on and returns the State that names
  // it; kFull when every shard is full (existing conversations are never
  // evicted for a new one).
  [[nodiscard]] Result<eap::StateBytes, EapRefusal> insert(Instant now,
                                                           std::unique_ptr<eap::Conversation> conversation);

  // Takes the conversation `state` names out of its shard.
  [[nodiscard]] Result<Held, EapRefusal> take(Instant now, Bytes state);

  // Returns a taken conversation; the same State goes on naming it.
  void put_back(Instant now, Held held);

  // Ends a taken conversation: its State names nothing from now on.
  void end(Held held);

  // Ends conversations idle past idle_timeout; every worker calls it from
  // on_tick. Bounded by the conversations that expire.
  void expire(Instant now);

  [[nodiscard]] EapFigures figures() const;
  [[nodiscard]] std::uint32_t gateway_id() const { return codec_.gateway_id(); }
  [[nodiscard]] Duration idle_timeout() const { return idle_timeout_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }

 private:
  // One lock and the conversations it guards, on its own cache lines.
  struct alignas(64) Shard {
    Shard(std::size_t capacity, Duration idle) : table(capacity, idle) {}
    mutable std::mutex mutex;
    eap::ConversationTable table;  // Guarded by mutex.
  };
  // A State's slot: the shard in the top 8 bits, the shard's slot below.
  static constexpr std::uint32_t kShardShift = 24;
  static constexpr std::size_t kShardsMax = 16;

  void build_shards(const EapTableOptions& options);

  eap::StateCodec codec_;
  Duration idle_timeout_;
  std::size_t capacity_ = 0;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<std::uint32_t> next_shard_{0};
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> full_{0};
};

}  // namespace rw::gateway
