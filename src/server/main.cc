// chronocached: wiring only. Settings -> server -> serve until a signal or SHUTDOWN.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "server/base/version.h"
#include "server/config/server_config.h"
#include "server/loop.h"
#include "server/server.h"

int main(int argc, char** argv) {
  using namespace chronocached;
  // No glibc fastbins: freed records (active expiry frees ~100 K a second) would pile up there and
  // a later larger malloc consolidates them all at once, a stall of milliseconds (perf:
  // malloc_consolidate during expiry). Without them each free coalesces as it goes.
  mallopt(M_MXFAST, 0);
  const std::vector<std::string> args(argv + 1, argv + argc);
  ConfigLoad load = load_config(args);
  if (load.show_help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (load.show_version) {
    std::printf("chronocached v=%s (Redis protocol %s compatible)\n", kVersion, kRedisVersion);
    return 0;
  }
  if (!load.error.empty()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return 1;
  }
  // Before the first log line: a supervisor (or a test) that sends SIGTERM as soon as it sees the
  // server start must get a clean shutdown, not the default action's kill. A signal that arrives
  // before the loops run is acted on at loop 0's first tick.
  Loop::install_stop_signals();
  Server server(std::move(load.config));
  server.state().process.executable = argv[0];
  std::string error;
  if (!server.listen(error)) {
    server.log("warning", error);
    return 1;
  }
  server.log("notice", std::string("chronocached ") + kVersion + " started, pid " +
                           std::to_string(::getpid()) + ", port " +
                           std::to_string(server.state().process.tcp_port));
  if (!server.start_cluster(error)) {
    server.log("warning", "Cluster mode: " + error);
    return 1;
  }
  if (!server.prepare_upstream(error)) {
    server.log("warning", "Upstream: " + error);
    return 1;
  }
  // Before "Ready": a client must never see a half-loaded data set (tools wait for that line).
  if (!server.load_snapshot()) return 1;
  if (!server.verify_cluster_data(error)) {
    server.log("warning", error);
    return 1;
  }
  server.log("notice", "Ready to accept connections tcp");
  server.run();
  return 0;
}
