// The submission server over real TCP against real consensus Nodes on
// loopback and real disk: Hello, pipelined Submits committed into the
// ledger, duplicates acknowledged, a follower's NotLeader naming the
// leader's submission address, Ping, and a malformed frame closing the
// connection. Label: integration.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "consensus/node.h"
#include "consensus/node_test_support.h"
#include "io/file_descriptor.h"
#include "member_shell/ledger_state.h"
#include "member_shell/submission_server.h"
#include "submission/frames.h"

namespace rw::member_shell {
namespace {

using consensus::free_loopback_port;
using consensus::fresh_data_root;
using consensus::wait_until;
using std::chrono::milliseconds;

// One member: ledger, node and submission server, wired as the process does.
struct Member {
  LedgerState ledger;
  std::unique_ptr<member_shell::SubmissionServer> server;
  std::unique_ptr<consensus::Node> node;

  ~Member() { stop(); }
  void stop() {
    if (node) node->stop(false);
    if (server) server->stop();
    server.reset();
    node.reset();
  }
};

struct Cluster {
  Cluster(const std::string& name, int size) : root(fresh_data_root(name)) {
    for (int i = 0; i < size; ++i) {
      const std::uint64_t id = static_cast<std::uint64_t>(i) + 1;
      voters.push_back(consensus::Member{id, "127.0.0.1:" + std::to_string(free_loopback_port())});
      members.push_back(std::make_unique<Member>());
    }
    for (int i = 0; i < size; ++i) {
      member_shell::SubmissionServerOptions options{.member_id = voters[i].id};
      auto server = member_shell::SubmissionServer::bind(options);
      EXPECT_TRUE(server.has_value());
      members[i]->server = std::move(*server);
      book[voters[i].id] = "127.0.0.1:" + std::to_string(members[i]->server->port());
    }
    for (int i = 0; i < size; ++i) start(i);
  }
  ~Cluster() {
    members.clear();
    std::filesystem::remove_all(root);
  }

  void start(int i) {
    Member& member = *members[i];
    // The address book is only known once every server is bound; rebind with it.
    member.server.reset();
    member_shell::SubmissionServerOptions options{
        .port = port_of(voters[i].id), .member_id = voters[i].id, .book = book};
    auto server = member_shell::SubmissionServer::bind(options);
    ASSERT_TRUE(server.has_value()) << server.error().to_string();
    member.server = std::move(*server);
    consensus::NodeOptions node_options;
    node_options.id = voters[i].id;
    node_options.address = voters[i].address;
    node_options.data_dir = (root / ("member-" + std::to_string(i + 1))).string();
    node_options.voters = voters;
    node_options.trace_library = false;
    member_shell::SubmissionServer* wake_target = member.server.get();
    node_options.on_completions_ready = [wake_target] { wake_target->wake(); };
    auto node = consensus::Node::start(std::move(node_options), member.ledger);
    ASSERT_TRUE(node.has_value()) << node.error().message;
    member.node = std::move(*node);
    member.server->start(*member.node, member.ledger);
  }

  std::uint16_t port_of(std::uint64_t id) const {
    const std::string& address = book.at(id);
    return static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  }

  int wait_for_leader() const {
    int leader = -1;
    wait_until(
        [&] {
          for (std::size_t i = 0; i < members.size(); ++i) {
            if (members[i]->node->ready_for_work()) leader = static_cast<int>(i);
          }
          return leader >= 0;
        },
        milliseconds(10000));
    return leader;
  }

  std::filesystem::path root;
  std::vector<consensus::Member> voters;
  SubmissionAddressBook book;
  std::vector<std::unique_ptr<Member>> members;
};

// A blocking TCP client speaking frames.
class Client {
 public:
  explicit Client(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
    timeval timeout{.tv_sec = 20, .tv_usec = 0};
    ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }

  [[nodiscard]] bool connected() const { return connected_; }

  void send_bytes(const std::vector<std::uint8_t>& bytes) {
    ASSERT_EQ(::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void send(const submission::Frame& frame) {
    std::vector<std::uint8_t> bytes;
    submission::encode_frame(frame, bytes);
    send_bytes(bytes);
  }

  // The next frame, or nothing when the server closed the connection.
  std::optional<submission::Frame> receive() {
    for (;;) {
      auto next = reader_.next();
      if (!next) return std::nullopt;
      if (*next) {
        last_ = std::vector<std::uint8_t>(next->value().begin(), next->value().end());
        auto frame = submission::decode_frame(last_);
        if (!frame) return std::nullopt;
        return *frame;
      }
      MutableBytes space = reader_.writable();
      const ssize_t got = ::recv(fd_.get(), space.data(), space.size(), 0);
      if (got <= 0) return std::nullopt;
      reader_.commit(static_cast<std::size_t>(got));
    }
  }

 private:
  io::FileDescriptor fd_;
  bool connected_ = false;
  submission::FrameReader reader_;
  std::vector<std::uint8_t> last_;
};

// Encoded records for one Submit, with their keys; the bodies are owned here.
struct Batch {
  std::vector<std::vector<std::uint8_t>> bodies;
  submission::Submit submit;
};

Batch batch_of(std::uint64_t request_id, const std::string& prefix, int count) {
  Batch batch;
  batch.submit.request_id = request_id;
  batch.bodies.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    accounting::testing::RequestSpec spec;
    spec.session_id = prefix + std::to_string(i);
    const accounting::Record record = accounting::testing::record_of(spec);
    batch.bodies.emplace_back();
    accounting::encode_record(record, batch.bodies.back());
    batch.submit.records.push_back({record.key.bytes, Bytes(batch.bodies.back())});
  }
  return batch;
}

TEST(SubmissionServer, OneMemberCommitsPipelinedSubmitsOverTcp) {
  Cluster cluster("rw_submission_one", 1);
  ASSERT_EQ(cluster.wait_for_leader(), 0);
  Member& member = *cluster.members[0];
  Client client(member.server->port());
  ASSERT_TRUE(client.connected());

  client.send(submission::Hello{.gateway_id = 9});
  auto ack = client.receive();
  ASSERT_TRUE(ack.has_value());
  const auto& hello_ack = std::get<submission::HelloAck>(*ack);
  EXPECT_TRUE(hello_ack.is_leader);
  EXPECT_EQ(hello_ack.leader, std::optional<std::string_view>(cluster.book.at(1)));

  // Ten Submits pipelined, then one repeating the first: a duplicate, still Committed.
  std::vector<Batch> batches;
  for (int i = 0; i < 10; ++i) batches.push_back(batch_of(100 + i, "s" + std::to_string(i) + "-", 50));
  batches.push_back(batch_of(200, "s0-", 50));
  for (const Batch& batch : batches) client.send(batch.submit);
  std::set<std::uint64_t> answered;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    auto frame = client.receive();
    ASSERT_TRUE(frame.has_value());
    const auto* committed = std::get_if<submission::Committed>(&*frame);
    ASSERT_NE(committed, nullptr) << "frame type " << frame->index();
    EXPECT_GT(committed->log_index, 0u);
    answered.insert(committed->request_id);
  }
  EXPECT_EQ(answered.size(), batches.size());
  // Applied locally before Committed was sent (outcome.h).
  const LedgerFigures figures = member.ledger.figures();
  EXPECT_EQ(figures.records_held, 500u);
  EXPECT_EQ(figures.counters.records_duplicate, 50u);
  EXPECT_EQ(member.server->pending_submissions(), 0u);

  client.send(submission::Ping{.nonce = 5});
  auto pong = client.receive();
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(std::get<submission::Pong>(*pong).nonce, 5u);

  // A record whose key is not its own closes the connection; nothing is stored.
  Batch bad = batch_of(300, "bad-", 1);
  bad.submit.records[0].key[0] ^= 1;
  client.send(bad.submit);
  EXPECT_FALSE(client.receive().has_value());
  EXPECT_EQ(member.ledger.figures().records_held, 500u);
}

TEST(SubmissionServer, ClosesOnAMalformedFrame) {
  Cluster cluster("rw_submission_malformed", 1);
  ASSERT_EQ(cluster.wait_for_leader(), 0);
  Client client(cluster.members[0]->server->port());
  ASSERT_TRUE(client.connected());
  client.send_bytes({0, 0, 0, 0});  // Length 0: not even a type.
  EXPECT_FALSE(client.receive().has_value());
  EXPECT_EQ(cluster.members[0]->server->counters().protocol_closes[0].load(), 1u);
}

TEST(SubmissionServer, AFollowerNamesTheLeadersSubmissionAddress) {
  Cluster cluster("rw_submission_three", 3);
  const int leader = cluster.wait_for_leader();
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % 3;
  // The follower learns the leader from heartbeats.
  ASSERT_TRUE(wait_until(
      [&] { return cluster.members[follower]->node->status().leader_id == cluster.voters[leader].id; },
      milliseconds(5000)));
  const std::string& leader_submission = cluster.book.at(cluster.voters[leader].id);

  Client client(cluster.members[follower]->server->port());
  ASSERT_TRUE(client.connected());
  client.send(submission::Hello{.gateway_id = 1});
  auto ack = client.receive();
  ASSERT_TRUE(ack.has_value());
  EXPECT_FALSE(std::get<submission::HelloAck>(*ack).is_leader);
  EXPECT_EQ(std::get<submission::HelloAck>(*ack).leader, std::optional<std::string_view>(leader_submission));

  Batch batch = batch_of(7, "f-", 3);
  client.send(batch.submit);
  auto answer = client.receive();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(std::get<submission::NotLeader>(*answer),
            (submission::NotLeader{7, std::string_view(leader_submission)}));

  // At the leader the same records commit and reach every member.
  Client at_leader(cluster.members[leader]->server->port());
  at_leader.send(submission::Hello{.gateway_id = 1});
  ASSERT_TRUE(at_leader.receive().has_value());
  at_leader.send(batch.submit);
  auto committed = at_leader.receive();
  ASSERT_TRUE(committed.has_value());
  ASSERT_TRUE(std::holds_alternative<submission::Committed>(*committed));
  for (const auto& member : cluster.members) {
    EXPECT_TRUE(wait_until([&] { return member->ledger.figures().records_held == 3u; }, milliseconds(5000)));
  }
}

}  // namespace
}  // namespace rw::member_shell
