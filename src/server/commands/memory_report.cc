#include "server/commands/memory_report.h"

#include <unistd.h>

#include <cstdio>

namespace chronocached {

std::size_t resident_bytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size_pages = 0;
  unsigned long long resident_pages = 0;
  const int read = std::fscanf(statm, "%llu %llu", &size_pages, &resident_pages);
  std::fclose(statm);
  if (read != 2) return 0;
  return static_cast<std::size_t>(resident_pages) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

MemoryReport memory_report(ServerState& server) {
  MemoryReport report;
  MemoryBudget& memory = server.memory;
  report.total = memory.read_used();
  report.peak = memory.peak();
  report.startup = memory.baseline();
  report.clients = memory.client_bytes();
  report.overhead = report.startup + report.clients;
  for (std::size_t i = 0; i < server.keyspace.count(); ++i) {
    const Db& db = server.keyspace.db(i);
    const std::size_t table = db.table_bytes();
    report.overhead += table;
    const std::size_t keys = db.stored_size();
    if (keys == 0) continue;
    report.keys += keys;
    report.tables.push_back({i, table});
  }
  report.dataset = report.total > report.overhead ? report.total - report.overhead : 0;
  report.rss = resident_bytes();
  return report;
}

namespace {
std::size_t above_startup(const MemoryReport& report) {
  return report.total > report.startup ? report.total - report.startup : 1;
}
float quotient(std::size_t numerator, std::size_t denominator) {
  return denominator == 0 ? 0.0f : static_cast<float>(numerator) / static_cast<float>(denominator);
}
float percent(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0f : static_cast<float>(part) * 100 / static_cast<float>(whole);
}
long long difference(std::size_t a, std::size_t b) {
  return static_cast<long long>(a) - static_cast<long long>(b);
}
}  // namespace

float MemoryReport::peak_percent() const { return percent(total, peak); }
float MemoryReport::dataset_percent() const { return percent(dataset, above_startup(*this)); }
std::size_t MemoryReport::bytes_per_key() const {
  return keys == 0 ? 0 : above_startup(*this) / keys;
}
float MemoryReport::fragmentation() const { return quotient(rss, total); }
long long MemoryReport::fragmentation_bytes() const { return difference(rss, total); }
float MemoryReport::allocator_fragmentation() const {
  return quotient(allocator_active(), allocator_allocated());
}
long long MemoryReport::allocator_fragmentation_bytes() const {
  return difference(allocator_active(), allocator_allocated());
}

}  // namespace chronocached
