// Pins LatencyMonitor (latency_monitor.h): the threshold, one sample a second per event, the
// 160 kept, the maximum ever, and RESET's count, as Redis's latency monitor keeps them.
#include "server/store/latency_monitor.h"

#include <memory>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

std::vector<std::pair<std::int64_t, std::uint64_t>> samples_of(const LatencyMonitor& m,
                                                               std::string_view event) {
  std::vector<std::pair<std::int64_t, std::uint64_t>> out;
  m.find(event)->for_each_sample(
      [&](const LatencyMonitor::Sample& s) { out.emplace_back(s.unix_seconds, s.ms); });
  return out;
}

TEST(LatencyMonitor, OffAtZeroAndOnlyEventsAtOrOverTheThreshold) {
  auto m = std::make_unique<LatencyMonitor>();
  m->add_if_needed("command", 1'000, 100);
  EXPECT_EQ(m->find("command"), nullptr);  // 0: off
  m->set_threshold_ms(5);
  m->add_if_needed("command", 4, 100);
  EXPECT_EQ(m->find("command"), nullptr);
  m->add_if_needed("command", 5, 100);
  ASSERT_NE(m->find("command"), nullptr);
  EXPECT_EQ(m->find("command")->latest().ms, 5u);
}

TEST(LatencyMonitor, OneSampleASecondTheLargerAndTheMaximumEver) {
  auto m = std::make_unique<LatencyMonitor>();
  m->set_threshold_ms(1);
  m->add_if_needed("command", 30, 100);
  m->add_if_needed("command", 20, 100);  // same second, smaller: kept out
  m->add_if_needed("command", 12, 101);
  m->add_if_needed("command", 40, 101);  // same second, larger: replaces
  EXPECT_EQ(samples_of(*m, "command"),
            (std::vector<std::pair<std::int64_t, std::uint64_t>>{{100, 30}, {101, 40}}));
  EXPECT_EQ(m->find("command")->max_ms, 40u);
  EXPECT_EQ(m->find("command")->latest().unix_seconds, 101);
}

TEST(LatencyMonitor, KeepsTheLatest160OldestFirst) {
  auto m = std::make_unique<LatencyMonitor>();
  m->set_threshold_ms(1);
  for (std::int64_t t = 1; t <= 200; ++t) m->add("expire-cycle", static_cast<std::uint64_t>(t), t);
  const auto kept = samples_of(*m, "expire-cycle");
  ASSERT_EQ(kept.size(), LatencyMonitor::kHistory);
  EXPECT_EQ(kept.front().first, 41);
  EXPECT_EQ(kept.back().first, 200);
  EXPECT_EQ(m->find("expire-cycle")->max_ms, 200u);
}

TEST(LatencyMonitor, ResetForgetsTheNamedOrAllAndCountsThem) {
  auto m = std::make_unique<LatencyMonitor>();
  m->set_threshold_ms(1);
  m->add("command", 5, 1);
  m->add("expire-cycle", 5, 1);
  m->add("snapshot-step", 5, 1);
  const std::string_view named[] = {"nosuch", "command"};
  EXPECT_EQ(m->reset(named), 1u);
  EXPECT_EQ(m->find("command"), nullptr);
  EXPECT_EQ(m->reset({}), 2u);
  EXPECT_EQ(m->find("expire-cycle"), nullptr);
}

}  // namespace
}  // namespace chronocached
