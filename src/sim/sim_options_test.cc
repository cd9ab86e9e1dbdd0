// chronocache-sim's flags and the rules that turn them into a run.
#include "sim/sim_options.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace chronocache::sim {
namespace {

SimOptions parse(std::initializer_list<std::string_view> args) {
  const std::vector<std::string_view> list(args);
  return parse_sim_options(list);
}

TEST(SimOptions, ParsesEveryFlag) {
  const SimOptions options = parse({"t.csv", "--format", "csv", "--policies", "lru,s3fifo",
                                    "--sizes", "10,20", "--size-fractions", "0.5", "--csv", "o.csv",
                                    "--name", "n", "--threads", "3", "--progress", "no"});
  EXPECT_EQ(options.trace_path, "t.csv");
  EXPECT_EQ(options.format, TraceFormat::kCsv);
  EXPECT_EQ(options.policies, (std::vector<std::string>{"lru", "s3fifo"}));
  EXPECT_EQ(options.sizes, (std::vector<std::size_t>{10, 20}));
  EXPECT_EQ(options.size_fractions, (std::vector<double>{0.5}));
  EXPECT_EQ(options.csv_path, "o.csv");
  EXPECT_EQ(trace_display_name(options), "n");
  EXPECT_EQ(options.threads, 3u);
  EXPECT_EQ(options.progress, ProgressMode::kNever);
}

TEST(SimOptions, RejectsBadInput) {
  EXPECT_THROW(parse({}), std::invalid_argument);
  EXPECT_THROW(parse({"t", "--bogus"}), std::invalid_argument);
  EXPECT_THROW(parse({"t", "--sizes"}), std::invalid_argument);
  EXPECT_THROW(parse({"t", "--sizes", "1x"}), std::invalid_argument);
  EXPECT_THROW(parse({"t", "--size-fractions", "1.5"}), std::invalid_argument);
  EXPECT_THROW(parse({"t", "--format", "parquet"}), std::invalid_argument);
  EXPECT_THROW(parse({"a", "b"}), std::invalid_argument);
  EXPECT_THROW(resolve_policies(parse({"t", "--policies", "lru,nope"})), std::invalid_argument);
  EXPECT_TRUE(parse({"--list-policies"}).list_policies);
}

TEST(SimOptions, FractionsRoundHalfToEvenLikeTheReferenceTables) {
  // README sizes: cs 50 % of 1,409 = 704; OLTP 1 % of 186,880 = 1,869; 2_pools 50 % of 9,939 =
  // 4,970; web07 5 % of 20,484 = 1,024.
  EXPECT_EQ(resolve_sizes(parse({"t", "--size-fractions", "0.5"}), 1409),
            (std::vector<std::size_t>{704}));
  EXPECT_EQ(resolve_sizes(parse({"t", "--size-fractions", "0.01"}), 186880),
            (std::vector<std::size_t>{1869}));
  EXPECT_EQ(resolve_sizes(parse({"t", "--size-fractions", "0.5"}), 9939),
            (std::vector<std::size_t>{4970}));
  EXPECT_EQ(resolve_sizes(parse({"t", "--size-fractions", "0.05"}), 20484),
            (std::vector<std::size_t>{1024}));
}

TEST(SimOptions, SizesAreSortedAndDistinctWithDefaultsWhenNoneGiven) {
  EXPECT_EQ(resolve_sizes(parse({"t", "--sizes", "300,100,300", "--size-fractions", "0.1"}), 1000),
            (std::vector<std::size_t>{100, 300}));
  EXPECT_EQ(resolve_sizes(parse({"t"}), 1000), (std::vector<std::size_t>{10, 50, 100, 250}));
}

TEST(SimOptions, PoliciesComeInRegistryOrder) {
  const auto chosen = resolve_policies(parse({"t", "--policies", "lfu,lru"}));
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0]->name, "lru");
  EXPECT_EQ(chosen[1]->name, "lfu");
  EXPECT_EQ(resolve_policies(parse({"t"})).size(), all_policies().size());
}

}  // namespace
}  // namespace chronocache::sim
