// The sample traces of ../shared/data/traces as the intelligence benchmarks replay them: which
// files are traces, and the short name each is reported under.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace chronocache::bench {

// Trace files under `dir`: every file the simulator's reader takes, but the CSV twin of the
// oracleGeneral trace and the reference results.
inline std::vector<std::filesystem::path> trace_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = std::filesystem::relative(entry.path(), dir).string();
    const std::string name = entry.path().filename().string();
    if (rel.starts_with("results/") || name.ends_with(".csv") || name.ends_with(".md") ||
        name.ends_with(".txt") || name == "SHA256SUMS") {
      continue;
    }
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// lirs/cpp.trace.gz -> lirs_cpp; libcachesim/cloudPhysicsIO... -> libcachesim_cloudPhysicsIO.
inline std::string trace_name(const std::filesystem::path& file) {
  std::string name = file.filename().string();
  name = name.substr(0, name.find('.'));
  return file.parent_path().filename().string() + "_" + name;
}

}  // namespace chronocache::bench
