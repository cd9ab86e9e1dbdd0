#include "server/cluster/cluster_config_file.h"

#include <gtest/gtest.h>

#include "testing/scratch_dir.h"

namespace chronocached {
namespace {

ClusterMap read_back(const std::string& path) {
  std::mt19937_64 random(1);
  std::string error;
  std::optional<ClusterMap> map = load_cluster_config(path, random, error);
  EXPECT_TRUE(map.has_value()) << error;
  return map ? std::move(*map) : ClusterMap(ClusterNode{});
}

class ClusterConfigFileTest : public ::testing::Test {
 protected:
  ClusterConfigFileTest() {
    std::mt19937_64 random(7);
    ClusterNode myself;
    myself.id = ClusterMap::new_node_id(random);
    myself.ip = "127.0.0.1";
    myself.port = 7000;
    myself.cport = 17000;
    map_.emplace(std::move(myself));
  }

  chronocache::test_support::ScratchDir scratch_;
  ClusterConfigFile file_{scratch_.path("nodes.conf")};
  std::optional<ClusterMap> map_;
  std::string error_;
};

TEST_F(ClusterConfigFileTest, ANodeWithoutAFileStartsAlone) {
  std::mt19937_64 random(1);
  const std::optional<ClusterMap> map = load_cluster_config(file_.path(), random, error_);
  ASSERT_TRUE(map.has_value()) << error_;
  EXPECT_EQ(map->nodes().size(), 1u);
  EXPECT_EQ(map->assigned_slots(), 0u);
}

TEST_F(ClusterConfigFileTest, EverySaveReadsBackAndOnlyEpochChangesAreSynced) {
  ASSERT_TRUE(file_.save(*map_, error_)) << error_;
  EXPECT_EQ(file_.syncs(), 1u);  // the first save always syncs

  // Slot changes alone: on disk at once, without waiting for it.
  for (std::uint32_t slot = 0; slot < 100; ++slot) {
    map_->assign(slot, ClusterMap::kMyself);
    ASSERT_TRUE(file_.save(*map_, error_)) << error_;
    EXPECT_EQ(read_back(file_.path()).assigned_slots(), slot + 1);
  }
  EXPECT_EQ(file_.syncs(), 1u);

  map_->bump_my_epoch();
  ASSERT_TRUE(file_.save(*map_, error_)) << error_;
  EXPECT_EQ(file_.syncs(), 2u);
  ASSERT_TRUE(file_.save(*map_, error_, ClusterConfigFile::Sync::kAlways)) << error_;
  EXPECT_EQ(file_.syncs(), 3u);  // CLUSTER SAVECONFIG's save, epochs unchanged
  const ClusterMap again = read_back(file_.path());
  EXPECT_EQ(again.current_epoch(), 1u);
  EXPECT_EQ(again.myself().config_epoch, 1u);
  EXPECT_EQ(again.myself().id, map_->myself().id);
  EXPECT_EQ(again.config_text(), map_->config_text());
}

TEST_F(ClusterConfigFileTest, AFailedSaveIsReportedAndClaimsNothingSynced) {
  ASSERT_TRUE(file_.save(*map_, error_)) << error_;
  map_->bump_my_epoch();
  ClusterConfigFile nowhere(scratch_.path("missing/nodes.conf"));
  EXPECT_FALSE(nowhere.save(*map_, error_));
  EXPECT_NE(error_.find("missing"), std::string::npos) << error_;
  EXPECT_EQ(nowhere.syncs(), 0u);
  EXPECT_EQ(read_back(file_.path()).current_epoch(), 0u);
}

}  // namespace
}  // namespace chronocached
