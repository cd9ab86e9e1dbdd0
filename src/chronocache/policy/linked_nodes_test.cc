// LinkedNodes: an empty pool is small, and its first chunk's doublings keep every handle's node.
#include "chronocache/policy/linked_nodes.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace chronocache::detail {
namespace {

TEST(LinkedNodes, AnEmptyPoolHoldsItsSentinelsAndAFewNodesNotAWholeChunk) {
  const LinkedNodes one_list(1);
  EXPECT_LE(one_list.memory_bytes(), 1024u);  // a whole chunk is 64 KiB
  const LinkedNodes many_lists(256);          // Lfu's count lists
  EXPECT_LE(many_lists.memory_bytes(), 512 * sizeof(LinkedNodes::Node) + 64);
}

TEST(LinkedNodes, NodesKeepTheirListsAndWordsAcrossGrowth) {
  LinkedNodes nodes(2);
  std::vector<LinkedNodes::Handle> handles;
  for (std::uint32_t i = 0; i < 10000; ++i) {  // the first chunk doubles to 4096, then two more
    const std::size_t before = nodes.memory_bytes();
    const std::size_t expected_growth = nodes.growth_bytes_if_allocated();
    const LinkedNodes::Handle h = nodes.allocate(SlotId{i}, i * 3);
    nodes.push_front(i % 2, h);
    handles.push_back(h);
    EXPECT_EQ(nodes.memory_bytes() - before, expected_growth) << i;
  }
  for (std::uint32_t i = 0; i < handles.size(); ++i) {
    EXPECT_EQ(nodes[handles[i]].slot, SlotId{i});
    EXPECT_EQ(nodes[handles[i]].aux, i * 3);
  }
  // Each list holds its nodes newest first.
  for (std::uint32_t list = 0; list < 2; ++list) {
    std::uint32_t expected = 9998 + list;
    for (LinkedNodes::Handle h = nodes.front(list); !nodes.is_sentinel(h); h = nodes[h].next) {
      EXPECT_EQ(nodes[h].slot, SlotId{expected});
      expected -= 2;
    }
    // The walk reached the list's first node, slot `list` (unsigned: list 0's last step wraps).
    EXPECT_EQ(expected + 2, list);
  }
}

}  // namespace
}  // namespace chronocache::detail
