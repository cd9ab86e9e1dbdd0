// Server: the process. Binds the listening sockets, loads the snapshot, and runs `threads` event
// loops (loop.h), loop 0 on the calling thread; it accepts on loop 0 and hands each connection to
// a loop in turn. Stops cleanly, every loop, on SIGINT/SIGTERM or SHUTDOWN.
//
// The model and its measurements: docs/design/server.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/cluster/cluster_config_file.h"
#include "server/cluster_handshakes.h"
#include "server/loop.h"
#include "server/metrics_endpoint.h"
#include "server/server_state.h"
#include "server/upstream_fetcher.h"

namespace chronocached {

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the configured addresses; false (and a message in `error`) when it cannot.
  bool listen(std::string& error);
  // Loads the snapshot in dir/dbfilename, if there is one. False: the server must not start
  // (the reason is logged); with ignore-snapshot-errors it starts empty instead.
  bool load_snapshot();
  // Cluster mode: reads (or creates) the cluster config file, with this node at the address it
  // listens on. After listen(); false with `error` when the file cannot be read or written.
  bool start_cluster(std::string& error);
  // After the snapshot is loaded, as Redis's verifyClusterConfigWithData: keys outside database 0
  // stop the start; a slot this node holds keys of but neither serves nor imports is taken when
  // unassigned, and marked importing from its owner otherwise (logged, saved).
  bool verify_cluster_data(std::string& error);
  // --upstream: checks the address and readies the fetcher (its threads start with run()).
  // False with `error` when the address is not "ip:port" or cluster mode is on too.
  bool prepare_upstream(std::string& error);
  // Serves until a signal or SHUTDOWN.
  void run();

  // Before run() only: afterwards the state belongs to the loops, under its lock.
  ServerState& state() { return state_; }
  // Writes a line to the log (stdout or logfile), as Redis formats it. Before run(), or with the
  // state lock held (it reads the configuration): the loops log through ServerState::logger.
  void log(const char* level, const std::string& message);

 private:
  class Listener;
  bool fit_maxclients_to_fd_limit(std::string& error);
  void accept_from(int listen_fd);

  ServerState state_;
  std::optional<ClusterConfigLock> cluster_lock_;  // cluster mode: the config file is ours
  std::unique_ptr<ClusterHandshakes> handshakes_;  // cluster mode: MEETs carried out (after state_)
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<MetricsEndpoint> metrics_;   // with metrics-port, on loop 0
  std::unique_ptr<UpstreamFetcher> upstream_;  // --upstream: wakes loops_, so stopped first
  std::size_t next_loop_ = 0;                  // the loop that gets the next connection
  std::uint64_t next_client_id_ = 1;           // accept() runs on loop 0 only
};

}  // namespace chronocached
