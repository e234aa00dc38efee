// Three consensus::Node instances in one process over loopback TCP and real
// disk: election, 1000 submissions, the leader killed (stopped without
// transfer), more submissions, identical survivors, and the killed member
// restarted from its folder catching up. Label: integration.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "consensus/dedup_log_for_test.h"
#include "consensus/node.h"
#include "consensus/node_test_support.h"

namespace rw::consensus {
namespace {

using std::chrono::milliseconds;

struct Cluster {
  explicit Cluster(const std::string& name) : root(fresh_data_root(name)) {
    for (std::uint64_t id = 1; id <= 3; ++id) {
      voters.push_back(Member{id, "127.0.0.1:" + std::to_string(free_loopback_port())});
    }
    for (int i = 0; i < 3; ++i) states.push_back(std::make_unique<DedupLog>());
    nodes.resize(3);
  }
  ~Cluster() {
    for (auto& node : nodes) node.reset();
    std::filesystem::remove_all(root);
  }

  NodeOptions options(int i) const {
    NodeOptions options;
    options.id = voters[i].id;
    options.address = voters[i].address;
    options.data_dir = (root / ("member" + std::to_string(i + 1))).string();
    options.voters = voters;
    options.trace_library = false;
    if (tweak) tweak(options);
    return options;
  }

  void start(int i, bool bootstrap = true) {
    NodeOptions node_options = options(i);
    node_options.bootstrap = bootstrap;
    auto node = Node::start(std::move(node_options), *states[i]);
    ASSERT_TRUE(node.has_value()) << node.error().message;
    nodes[i] = std::move(*node);
  }

  // Index of the ready leader among running nodes, or -1.
  int ready_leader() const {
    for (int i = 0; i < 3; ++i) {
      if (nodes[i] && nodes[i]->ready_for_work()) return i;
    }
    return -1;
  }

  // Starts all three and returns the ready leader's index, or -1.
  int start_all() {
    for (int i = 0; i < 3; ++i) start(i);
    return wait_for_leader();
  }

  // Waits until `holds` is true of every member's status.
  bool wait_for_every_member(const std::function<bool(const NodeStatus&)>& holds,
                             milliseconds timeout = milliseconds(10000)) const {
    return wait_until(
        [&] {
          for (const auto& node : nodes)
            if (!holds(node->status())) return false;
          return true;
        },
        timeout);
  }

  int wait_for_leader() const {
    int leader = -1;
    wait_until([&] { return (leader = ready_leader()) >= 0; }, milliseconds(10000));
    return leader;
  }

  // Submits `entries` to node `i`, waits for every outcome, and records the
  // committed ones. Returns how many were committed.
  std::size_t submit_all(int i, const std::vector<std::vector<std::uint8_t>>& entries) {
    std::atomic<std::size_t> done{0};
    std::size_t committed_now = 0;
    for (const auto& entry : entries) {
      auto status = nodes[i]->submit(entry, [&, entry](const Outcome& outcome) {
        if (outcome.kind == OutcomeKind::kCommitted) {
          committed[outcome.index] = entry;
          ++committed_now;
        }
        ++done;
      });
      EXPECT_EQ(status, Node::SubmitStatus::kQueued);
    }
    wait_until(
        [&] {
          nodes[i]->deliver_completions();
          return done.load() == entries.size();
        },
        milliseconds(20000));
    return committed_now;
  }

  std::filesystem::path root;
  std::function<void(NodeOptions&)> tweak;  // Applied to every member's options.
  std::vector<Member> voters;
  std::vector<std::unique_ptr<DedupLog>> states;
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<std::uint64_t, std::vector<std::uint8_t>> committed;  // Acknowledged index -> entry.
};

std::vector<std::vector<std::uint8_t>> make_entries(int first, int count) {
  std::vector<std::vector<std::uint8_t>> entries;
  for (int i = first; i < first + count; ++i) {
    std::string text = "record-" + std::to_string(i) + std::string(180, 'x');
    entries.emplace_back(text.begin(), text.end());
  }
  return entries;
}

// Every acknowledged entry is applied at its index on member `i`.
void expect_holds_all(const Cluster& cluster, int i) {
  for (const auto& [index, entry] : cluster.committed) {
    const auto* applied = cluster.states[i]->at_index(index);
    ASSERT_NE(applied, nullptr) << "member " << i + 1 << " lacks index " << index;
    EXPECT_EQ(*applied, entry);
  }
}

TEST(NodeCluster, SurvivesLeaderKillAndCatchesUpAfterRestart) {
  Cluster cluster("consensus_node_cluster");
  const int leader = cluster.start_all();
  ASSERT_GE(leader, 0);

  EXPECT_EQ(cluster.submit_all(leader, make_entries(0, 1000)), 1000U);

  // A follower refuses with the leader's whereabouts.
  const int follower = (leader + 1) % 3;
  Outcome refused;
  bool got = false;
  ASSERT_EQ(cluster.nodes[follower]->submit({1, 2, 3}, [&](const Outcome& o) { refused = o, got = true; }),
            Node::SubmitStatus::kQueued);
  ASSERT_TRUE(
      wait_until([&] { return cluster.nodes[follower]->deliver_completions(), got; }, milliseconds(5000)));
  EXPECT_EQ(refused.kind, OutcomeKind::kNotLeader);
  EXPECT_EQ(refused.leader_id, cluster.voters[leader].id);

  // Kill the leader: no transfer.
  cluster.nodes[leader]->stop(false);
  const auto killed_at = std::chrono::steady_clock::now();
  int next = -1;
  ASSERT_TRUE(wait_until([&] { return (next = cluster.ready_leader()) >= 0 && next != leader; },
                         milliseconds(10000)));
  const auto failover =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - killed_at).count();
  std::printf("failover: new ready leader %d after %lld ms\n", next + 1, static_cast<long long>(failover));
  cluster.nodes[leader].reset();

  EXPECT_EQ(cluster.submit_all(next, make_entries(1000, 500)), 500U);

  // Survivors hold every acknowledged entry, identically.
  const std::uint64_t last = cluster.committed.rbegin()->first;
  for (int i = 0; i < 3; ++i) {
    if (i == leader) continue;
    ASSERT_TRUE(
        wait_until([&] { return cluster.nodes[i]->status().last_applied >= last; }, milliseconds(10000)));
  }
  for (int i = 0; i < 3; ++i) {
    if (i != leader) expect_holds_all(cluster, i);
  }

  // Restart the killed member from its folder; it catches up.
  cluster.states[leader] = std::make_unique<DedupLog>();
  cluster.start(leader);
  ASSERT_TRUE(
      wait_until([&] { return cluster.nodes[leader]->status().last_applied >= last; }, milliseconds(10000)));
  expect_holds_all(cluster, leader);
  EXPECT_EQ(cluster.states[leader]->records(), cluster.states[next]->records());
}

TEST(NodeCluster, TransfersLeadershipOnStop) {
  Cluster cluster("consensus_node_transfer");
  const int leader = cluster.start_all();
  ASSERT_GE(leader, 0);
  EXPECT_EQ(cluster.submit_all(leader, make_entries(0, 100)), 100U);
  const auto stopping_at = std::chrono::steady_clock::now();
  cluster.nodes[leader]->stop(true);
  int next = -1;
  ASSERT_TRUE(
      wait_until([&] { return (next = cluster.ready_leader()) >= 0 && next != leader; }, milliseconds(5000)));
  const auto handover =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - stopping_at).count();
  std::printf("transfer: new ready leader %d %lld ms after stop began\n", next + 1,
              static_cast<long long>(handover));
  EXPECT_EQ(cluster.submit_all(next, make_entries(100, 100)), 100U);
}

// An idle cluster gives back the last burst's log (docs/limits.md "Member
// memory budget"): once quiet, every member compacts its log at the leader's
// barrier. 1000 entries of ~190 bytes stay in memory on every member without
// it (far under the entry-count threshold and the byte bound).
TEST(NodeCluster, AQuietLogIsCompactedOnEveryMember) {
  Cluster cluster("consensus_node_compact");
  cluster.tweak = [](NodeOptions& options) {
    options.quiet_after_ms = 300;
    options.compact_quiet_log_bytes = 64 * 1024;
    options.compact_barrier_delay_ms = 300;
    options.log_bytes_max = 64 << 20;
  };
  const int leader = cluster.start_all();
  ASSERT_GE(leader, 0);
  EXPECT_EQ(cluster.submit_all(leader, make_entries(0, 1000)), 1000U);
  const auto held = [&](int i) { return cluster.nodes[i]->status().log_bytes_held; };
  ASSERT_TRUE(cluster.wait_for_every_member([](const NodeStatus& status) {
    return status.log_bytes_held <= 1024 && status.snapshots.for_quiet_log == 1;
  })) << "after: "
      << held(0) << " " << held(1) << " " << held(2);
  // Still one cluster that takes work, and no second compaction of a log
  // that holds one barrier.
  EXPECT_EQ(cluster.submit_all(cluster.wait_for_leader(), make_entries(1000, 10)), 10U);
  std::this_thread::sleep_for(milliseconds(1500));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cluster.nodes[i]->status().snapshots.for_quiet_log, 1U) << i;
  for (int i = 0; i < 3; ++i) expect_holds_all(cluster, i);
}

// Snapshots are serialised in a forked child while the loop goes on
// (docs/consensus.md "Snapshots in a child process"), through the node's own
// async_work on raft_uv, and a member restarted from its folder restores the
// latest of them. With the work left on the loop `in_child` stays 0.
TEST(NodeCluster, SnapshotsAreWrittenByAChildAndRestoredOnRestart) {
  if (kDefaultSnapshotSerialization != SnapshotSerialization::kInChild)
    GTEST_SKIP()
        << "a ThreadSanitizer build serialises on the loop: its allocator can deadlock a forked child";
  Cluster cluster("consensus_node_child_snapshot");
  cluster.tweak = [](NodeOptions& options) {
    options.snapshot_threshold = 100;
    options.snapshot_trailing = 50;
  };
  const int leader = cluster.start_all();
  ASSERT_GE(leader, 0);
  EXPECT_EQ(cluster.submit_all(leader, make_entries(0, 600)), 600U);
  const auto figures = [&](int i) { return cluster.nodes[i]->status().snapshots; };
  ASSERT_TRUE(
      cluster.wait_for_every_member([](const NodeStatus& status) { return status.snapshots.in_child >= 2; }));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(figures(i).child_failures, 0U) << i;
    EXPECT_EQ(figures(i).in_child, figures(i).taken) << i;
    EXPECT_GT(figures(i).child_last_us, 0U) << i;
  }

  const int restarted = (leader + 1) % 3;
  cluster.nodes[restarted].reset();
  cluster.states[restarted] = std::make_unique<DedupLog>();
  cluster.start(restarted);
  ASSERT_NE(cluster.nodes[restarted], nullptr) << "the restarted member did not start";
  const std::uint64_t last = cluster.committed.rbegin()->first;
  ASSERT_TRUE(wait_until([&] { return cluster.nodes[restarted]->status().last_applied >= last; },
                         milliseconds(10000)));
  // Its own latest snapshot from its folder, and one installed from the
  // leader as well when the leader's log no longer reached back far enough.
  EXPECT_GE(figures(restarted).restored, 1U);
  expect_holds_all(cluster, restarted);
  EXPECT_EQ(cluster.states[restarted]->records(), cluster.states[leader]->records());
}

// libraft's plain TCP transport parses addresses with strtok (docs/consensus.md,
// trap 14): a second thread's tokenizing between two calls of this one must
// not move this one's position, as it does with the C library's single static.
TEST(NodeCluster, StrtokKeepsItsPositionPerThread) {
  char address[] = "127.0.0.1:9001";
  const char* host = strtok(address, ":");
  std::string other_port;
  std::thread([&other_port] {
    char other[] = "10.0.0.2:9002";
    strtok(other, ":");
    const char* port = strtok(nullptr, ":");
    other_port = port == nullptr ? "" : port;
  }).join();
  const char* port = strtok(nullptr, ":");
  ASSERT_NE(port, nullptr);
  EXPECT_STREQ(host, "127.0.0.1");
  EXPECT_STREQ(port, "9001");
  EXPECT_EQ(other_port, "9002");
  EXPECT_EQ(strtok(nullptr, ":"), nullptr);
}

TEST(NodeCluster, ReplacesAMemberThatLostItsDisk) {
  Cluster cluster("consensus_node_replace");
  const int leader = cluster.start_all();
  ASSERT_GE(leader, 0);
  EXPECT_EQ(cluster.submit_all(leader, make_entries(0, 200)), 200U);

  // A follower loses its disk: stopped, folder wiped, started empty without
  // bootstrapping; the leader replaces it (same id and address).
  const int lost = (leader + 1) % 3;
  cluster.nodes[lost].reset();
  std::filesystem::remove_all(cluster.options(lost).data_dir);
  cluster.states[lost] = std::make_unique<DedupLog>();
  cluster.start(lost, /*bootstrap=*/false);

  std::atomic<bool> done{false};
  int status = -1;
  std::string message;
  cluster.nodes[leader]->replace_member(cluster.voters[lost].id, cluster.voters[lost],
                                        [&](int result, std::string_view text) {
                                          status = result;
                                          message = std::string(text);
                                          done = true;
                                        });
  ASSERT_TRUE(wait_until([&] { return cluster.nodes[leader]->deliver_completions(), done.load(); },
                         milliseconds(30000)));
  EXPECT_EQ(status, 0) << message;

  EXPECT_EQ(cluster.submit_all(leader, make_entries(200, 50)), 50U);
  const std::uint64_t last = cluster.committed.rbegin()->first;
  ASSERT_TRUE(
      wait_until([&] { return cluster.nodes[lost]->status().last_applied >= last; }, milliseconds(20000)));
  expect_holds_all(cluster, lost);
}

}  // namespace
}  // namespace rw::consensus
