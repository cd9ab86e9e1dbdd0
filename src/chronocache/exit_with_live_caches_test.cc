// Runs exit_with_live_caches (a host that exits with caches alive and unflushed stdout) and
// checks that the library let it exit normally: status 0, every line of its output delivered.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

extern char** environ;

namespace {

struct Finished {
  int status = 0;
  std::string output;
};

// Runs `program` with stdout on a pipe (so its stdout is fully buffered, as for a host whose output
// is redirected) and collects everything it writes there.
Finished run(const char* program) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  char* argv[] = {const_cast<char*>(program), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, program, &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  Finished finished;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;)
    finished.output.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  EXPECT_EQ(waitpid(pid, &finished.status, 0), pid);
  return finished;
}

TEST(ExitWithLiveCaches, TheHostExitsWithStatusZeroAndItsBufferedOutputArrives) {
  const Finished finished = run(CC_EXIT_WITH_LIVE_CACHES);
  ASSERT_TRUE(WIFEXITED(finished.status)) << "killed by signal " << WTERMSIG(finished.status);
  EXPECT_EQ(WEXITSTATUS(finished.status), 0);
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    expected += "line " + std::to_string(i) + ": " + std::to_string(i) + " " +
                std::to_string(2 * i) + " " + std::to_string(3 * i) + " " + std::to_string(4 * i) +
                "\n";
  }
  expected += "done: returning 0 with four caches alive\n";
  EXPECT_EQ(finished.output, expected);
}

}  // namespace
