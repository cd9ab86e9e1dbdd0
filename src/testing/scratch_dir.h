// A directory of its own for one test, removed with everything in it when the test ends.
// Test-only: linked by the persistence tests, never by the engine or the server.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "testing/numbered.h"

namespace chronocache::test_support {

class ScratchDir {
 public:
  // <tmp>/<suite>.<pid>.<test>: tests running side by side under ctest -j never share files.
  ScratchDir() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        numbered(std::string(test->test_suite_name()) + ".", static_cast<std::size_t>(::getpid()));
    name += '.';
    name += test->name();
    root_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~ScratchDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover is harmless
    std::filesystem::remove_all(root_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::string path(std::string_view file) const { return (root_ / file).string(); }

 private:
  std::filesystem::path root_;
};

}  // namespace chronocache::test_support
