// The table and CSV formats that people and bench/hitratio/run_hitratio.py read.
#include "sim/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace chronocache::sim {
namespace {

const std::vector<RunResult> kResults = {
    {"lru", 61, {9047, 1751}},
    {"lru", 612, {9047, 7768}},
    {"s3fifo", 61, {9047, 5283}},
    {"s3fifo", 612, {9047, 7774}},
};
const TraceSummary kTrace{"lirs_cpp", "text", 9047, 1223};

TEST(Report, TableHasOneRowPerSizeAndOneColumnPerPolicy) {
  std::ostringstream out;
  print_table(out, kTrace, kResults);
  const std::string table = out.str();
  EXPECT_NE(table.find("# lirs_cpp: text, 9047 requests, 1223 unique keys (max hit 86.48 %)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("        size       lru    s3fifo\n"), std::string::npos) << table;
  EXPECT_NE(table.find("          61     19.35     58.40\n"), std::string::npos) << table;
  EXPECT_NE(table.find("         612     85.86     85.93\n"), std::string::npos) << table;
}

TEST(Report, CsvHasExactCountsAndRatios) {
  std::ostringstream out;
  write_csv(out, kTrace, kResults);
  EXPECT_EQ(out.str(),
            "trace,policy,cache_size,requests,hits,hit_ratio,miss_ratio\n"
            "lirs_cpp,lru,61,9047,1751,0.193545,0.806455\n"
            "lirs_cpp,lru,612,9047,7768,0.858627,0.141373\n"
            "lirs_cpp,s3fifo,61,9047,5283,0.583950,0.416050\n"
            "lirs_cpp,s3fifo,612,9047,7774,0.859290,0.140710\n");
}

}  // namespace
}  // namespace chronocache::sim
