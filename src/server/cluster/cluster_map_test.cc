#include "server/cluster/cluster_map.h"

#include <gtest/gtest.h>

namespace chronocached {
namespace {

const std::string kIdA(40, 'a');
const std::string kIdB(40, 'b');

ClusterNode node(std::string id, std::string ip, long long port, long long cport,
                 unsigned long long epoch = 0) {
  ClusterNode n;
  n.id = std::move(id);
  n.ip = std::move(ip);
  n.port = port;
  n.cport = cport;
  n.config_epoch = epoch;
  return n;
}

TEST(ClusterMap, ANewMapIsThisNodeAloneWithNoSlots) {
  std::mt19937_64 random(1);
  ClusterMap map(ClusterNode{
      .id = ClusterMap::new_node_id(random), .ip = "127.0.0.1", .port = 7000, .cport = 17000});
  EXPECT_TRUE(ClusterMap::is_node_id(map.myself().id));
  EXPECT_EQ(map.assigned_slots(), 0u);
  EXPECT_FALSE(map.covers_all_slots());
  EXPECT_EQ(map.nodes_text(), map.myself().id +
                                  " 127.0.0.1:7000@17000 myself,master - 0 0 0 "
                                  "connected\n");
}

TEST(ClusterMap, SlotsPrintAsRangesAndTheTextReadsBack) {
  ClusterMap map(node(kIdA, "127.0.0.1", 7000, 17000));
  const int b = map.add(node(kIdB, "127.0.0.1", 7001, 17001, 3));
  for (std::uint32_t slot = 0; slot <= 5; ++slot) map.assign(slot, ClusterMap::kMyself);
  map.assign(7, ClusterMap::kMyself);
  for (std::uint32_t slot = 8; slot < kClusterSlots; ++slot) map.assign(slot, b);
  EXPECT_EQ(map.assigned_slots(), kClusterSlots - 1);
  EXPECT_EQ(map.serving_nodes(), 2u);
  const std::string text = map.config_text();
  EXPECT_EQ(text, kIdA + " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 0-5 7\n" + kIdB +
                      " 127.0.0.1:7001@17001 master - 0 0 3 connected 8-16383\n"
                      "vars currentEpoch 0 lastVoteEpoch 0\n");
  std::string error;
  const std::optional<ClusterMap> back = ClusterMap::parse(text, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->config_text(), text);
  EXPECT_EQ(back->owner(6), ClusterMap::kUnassigned);
  EXPECT_EQ(back->owner(16383), 1);
}

TEST(ClusterMap, MyselfComesFirstWhereverTheFileListsIt) {
  std::string error;
  const std::optional<ClusterMap> map = ClusterMap::parse(
      kIdB + " 10.0.0.2:7001@17001 master - 0 0 1 connected 100\n" + kIdA +
          " :7000@17000 myself,master - 0 0 0 connected\nvars currentEpoch 5 lastVoteEpoch 0\n",
      error);
  ASSERT_TRUE(map) << error;
  EXPECT_EQ(map->myself().id, kIdA);
  EXPECT_EQ(map->myself().ip, "");
  EXPECT_EQ(map->owner(100), 1);
  EXPECT_EQ(map->nodes()[1].ip, "10.0.0.2");
  EXPECT_EQ(map->current_epoch(), 5u);
}

// Slots in migration are printed on this node's line, as Redis prints them, and read back.
TEST(ClusterMap, SlotsInMigrationPrintOnMyLineAndReadBack) {
  ClusterMap map(node(kIdA, "127.0.0.1", 7000, 17000));
  const int b = map.add(node(kIdB, "127.0.0.1", 7001, 17001));
  map.assign(5, ClusterMap::kMyself);
  map.assign(9, b);
  EXPECT_FALSE(map.has_open_slots());
  map.set_migrating(5, b);
  map.set_importing(9, b);
  EXPECT_TRUE(map.has_open_slots() && map.is_open(5) && map.is_open(9) && !map.is_open(6));
  const std::string text = map.config_text();
  EXPECT_NE(text.find("connected 5 [5->-" + kIdB + "] [9-<-" + kIdB + "]\n"), std::string::npos)
      << text;
  std::string error;
  const std::optional<ClusterMap> back = ClusterMap::parse(text, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->migrating_to(5), 1);
  EXPECT_EQ(back->importing_from(9), 1);
  EXPECT_EQ(back->config_text(), text);
  map.set_migrating(5, ClusterMap::kUnassigned);
  map.set_importing(9, ClusterMap::kUnassigned);
  EXPECT_FALSE(map.has_open_slots());
}

// A MEET's merge: the peer's own slots are final; the nodes it knows are learned with the slots
// it sees them serve, unless known here already; a slot served here too refuses the whole view.
TEST(ClusterMap, AMeetLearnsThePeerAndTheNodesItKnows) {
  const std::string kIdC(40, 'c');
  const std::string kIdD(40, 'd');
  ClusterMap here(node(kIdA, "10.0.0.1", 7000, 17000));
  here.assign(0, ClusterMap::kMyself);
  const int d = here.add(node(kIdD, "10.0.0.4", 7003, 17003));
  here.assign(3, d);
  ClusterMap peer_view(node(kIdB, "", 7001, 17001, 5));  // its own ip, unknown to itself
  peer_view.assign(1, ClusterMap::kMyself);
  const int c = peer_view.add(node(kIdC, "10.0.0.3", 7002, 17002));
  peer_view.assign(2, c);
  const int d_there = peer_view.add(node(kIdD, "10.0.0.4", 7003, 17003));
  peer_view.assign(4, d_there);  // not D's own word: ignored
  std::string error;
  const auto added = here.learn_from(node("", "10.0.0.2", 7001, 17001), peer_view, 0, error);
  ASSERT_TRUE(added) << error;
  ASSERT_EQ(added->size(), 2u);
  const ClusterNode& b = here.nodes()[static_cast<std::size_t>((*added)[0])];
  EXPECT_EQ(b.id, kIdB);
  EXPECT_EQ(b.ip, "10.0.0.2");  // where this node reached it
  EXPECT_EQ(b.config_epoch, 5u);
  EXPECT_EQ(here.nodes()[static_cast<std::size_t>((*added)[1])].id, kIdC);
  EXPECT_EQ(here.owner(1), (*added)[0]);
  EXPECT_EQ(here.owner(2), (*added)[1]);
  EXPECT_EQ(here.owner(3), d);
  EXPECT_EQ(here.owner(4), ClusterMap::kUnassigned);
  // Meeting again learns nothing new; the peer's slots follow what it says now.
  peer_view.assign(1, ClusterMap::kUnassigned);
  peer_view.assign(9, ClusterMap::kMyself);
  const auto again = here.learn_from(node("", "10.0.0.2", 7001, 17001), peer_view, 0, error);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(here.owner(1), ClusterMap::kUnassigned);
  EXPECT_EQ(here.owner(9), (*added)[0]);
  // A peer claiming this node's slot is refused, and nothing changes.
  peer_view.assign(0, ClusterMap::kMyself);
  EXPECT_FALSE(here.learn_from(node("", "10.0.0.2", 7001, 17001), peer_view, 0, error));
  EXPECT_EQ(error, "slot 0 is served both here and by 10.0.0.2:7001");
  EXPECT_EQ(here.owner(0), ClusterMap::kMyself);
}

// Forgetting a node drops its slots and its migrations, and the nodes after it keep their slots
// under their new (lower) index.
TEST(ClusterMap, ForgettingANodeLeavesTheOthersIntact) {
  const std::string id_c(40, 'c');
  ClusterMap map(node(kIdA, "127.0.0.1", 7000, 17000));
  const int b = map.add(node(kIdB, "127.0.0.1", 7001, 17001));
  const int c = map.add(node(id_c, "127.0.0.1", 7002, 17002));
  map.assign(0, ClusterMap::kMyself);
  map.assign(1, b);
  map.assign(2, c);
  map.set_migrating(0, b);
  map.set_importing(3, c);
  map.forget(b, 0);
  EXPECT_EQ(map.nodes().size(), 2u);
  EXPECT_EQ(map.owner(0), ClusterMap::kMyself);
  EXPECT_EQ(map.owner(1), ClusterMap::kUnassigned);
  EXPECT_EQ(map.nodes()[static_cast<std::size_t>(map.owner(2))].id, id_c);
  EXPECT_EQ(map.importing_from(3), map.find(id_c));
  EXPECT_FALSE(map.is_open(0));
  EXPECT_EQ(map.assigned_slots(), 2u);
  EXPECT_TRUE(map.has_open_slots());
  map.forget(map.find(id_c), 0);
  EXPECT_FALSE(map.has_open_slots());
  EXPECT_EQ(map.assigned_slots(), 1u);
}

// For a minute after FORGET, neither the forgotten node itself nor a peer that still knows it
// brings it back; after that a MEET learns it again.
TEST(ClusterMap, AForgottenNodeIsNotLearnedAgainForAMinute) {
  const std::string kIdC(40, 'c');
  ClusterMap here(node(kIdA, "10.0.0.1", 7000, 17000));
  here.forget(here.add(node(kIdB, "10.0.0.2", 7001, 17001)), 1'000);
  ClusterMap b_view(node(kIdB, "", 7001, 17001));
  ClusterMap c_view(node(kIdC, "", 7002, 17002));
  c_view.add(node(kIdB, "10.0.0.2", 7001, 17001));
  std::string error;
  EXPECT_TRUE(here.learn_from(node("", "10.0.0.2", 7001, 17001), b_view, 2'000, error)->empty());
  EXPECT_EQ(here.learn_from(node("", "10.0.0.3", 7002, 17002), c_view, 60'999, error)->size(),
            1u);  // C, without B
  EXPECT_EQ(here.find(kIdB), ClusterMap::kUnassigned);
  EXPECT_EQ(here.learn_from(node("", "10.0.0.2", 7001, 17001), b_view, 61'000, error)->size(), 1u);
  EXPECT_NE(here.find(kIdB), ClusterMap::kUnassigned);
}

TEST(ClusterMap, ResetLeavesThisNodeAloneAndHardResetAlsoItsIdAndEpochs) {
  ClusterMap map(node(kIdA, "127.0.0.1", 7000, 17000, 4));
  const int b = map.add(node(kIdB, "127.0.0.1", 7001, 17001, 9));
  map.assign(0, ClusterMap::kMyself);
  map.assign(1, b);
  map.set_migrating(0, b);
  map.reset(false, "");
  EXPECT_EQ(map.nodes().size(), 1u);
  EXPECT_EQ(map.assigned_slots(), 0u);
  EXPECT_FALSE(map.has_open_slots());
  EXPECT_EQ(map.myself().id, kIdA);
  EXPECT_EQ(map.myself().config_epoch, 4u);
  map.reset(true, kIdB);
  EXPECT_EQ(map.myself().id, kIdB);
  EXPECT_EQ(map.myself().config_epoch, 0u);
  EXPECT_EQ(map.current_epoch(), 0u);
}

// BUMPEPOCH takes a new epoch unless this node's is already the highest known (and not 0).
TEST(ClusterMap, AnEpochIsBumpedOnlyWhenAnotherNodeHasOneAsHigh) {
  ClusterMap map(node(kIdA, "127.0.0.1", 7000, 17000));
  EXPECT_TRUE(map.bump_epoch_unless_highest());  // 0 is never kept
  EXPECT_EQ(map.myself().config_epoch, 1u);
  EXPECT_FALSE(map.bump_epoch_unless_highest());
  map.add(node(kIdB, "127.0.0.1", 7001, 17001, 5));
  EXPECT_TRUE(map.bump_epoch_unless_highest());
  EXPECT_EQ(map.myself().config_epoch, map.current_epoch());
  EXPECT_GT(map.myself().config_epoch, 5u);
}

TEST(ClusterMap, MalformedFilesAreRefusedWithTheLine) {
  const std::string me = kIdA + " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected";
  const std::pair<std::string, std::string> cases[] = {
      {"", "no node flagged myself"},
      {"garbage\n", "line 1: expected"},
      {me + " 5-3\n", "line 1: bad slot range 5-3"},
      {me + " 16384\n", "line 1: bad slot range 16384"},
      {me + " [5->-" + kIdB + "]\n", "slot 5 migrates to or from unknown node " + kIdB},
      {me + " [5-x-" + kIdB + "]\n", "line 1: bad slot migration [5-x-"},
      {me + " [16384-<-" + kIdB + "]\n", "line 1: bad slot migration"},
      {me + "\n" + kIdB + " 1.2.3.4:1@2 master - 0 0 0 connected [5->-" + kIdA + "]\n",
       "line 2: bad slot migration [5->-" + kIdA + "] (only this node's line may have them)"},
      {me + "\n" + me + "\n", "line 2: node " + kIdA + " listed twice"},
      {me + " 1-3\n" + kIdB + " 1.2.3.4:1@2 master - 0 0 0 connected 3\n", "slot 3 is served"},
      {me + "\n" + kIdB + " 1.2.3.4:1@2 slave " + kIdA + " 0 0 0 connected\n", "replicas"},
      {kIdA + " 127.0.0.1:99999@1 myself,master - 0 0 0 connected\n", "line 1: expected"},
  };
  for (const auto& [text, expected] : cases) {
    std::string error;
    EXPECT_FALSE(ClusterMap::parse(text, error)) << text;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace chronocached
