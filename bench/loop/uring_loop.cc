#include "bench/loop/uring_loop.h"

#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace chronocache::loop_bench {
namespace {

// Submission queue entries: one loop iteration queues at most a re-arm and a send per client
// that completed something; a full queue is submitted early (next_sqe), never dropped.
constexpr unsigned kSubmissionEntries = 256;
// Completion queue entries: multishot receives post without a new submission, so the CQ is
// sized for bursts from every client at once (the kernel keeps overflow, but slowly).
constexpr unsigned kCompletionEntries = 4096;
// Provided receive buffers: 256 of 16 KiB (chronocached's read chunk), 4 MiB in all. Each is
// handed back as soon as the handler has read it, so at most one per ready client is out.
constexpr unsigned kBufferCount = 256;  // a power of two, as the buffer ring requires
constexpr unsigned kBufferBytes = 16 * 1024;
constexpr unsigned short kBufferGroup = 0;
// Registered file slots; a client whose fd is at or above this is served without one.
constexpr unsigned kFixedFileSlots = 4096;

static_assert((kBufferCount & (kBufferCount - 1)) == 0, "io_uring buffer rings are 2^n long");

enum class Op : std::uint32_t { kAccept = 1, kReceive = 2, kSend = 3 };

// user_data of a request: the operation in the high half, the client's fd in the low half.
std::uint64_t tag(Op op, int fd) {
  return (static_cast<std::uint64_t>(op) << 32) | static_cast<std::uint32_t>(fd);
}

struct Client {
  int fd = -1;
  bool is_fixed = false;      // fd is also its slot in the registered file table
  bool is_receiving = false;  // a multishot receive is armed
  bool is_sending = false;    // a send of `sending` is in flight
  bool is_queued = false;     // in UringLoop::send_queue_
  bool is_closing = false;
  std::string sending;  // the bytes of the send in flight: not touched until it completes
  std::size_t sent = 0;
  ClientBuffers buffers;
};

class UringLoop {
 public:
  UringLoop(int listen_fd, RequestHandler& handler, const UringOptions& options)
      : listen_fd_(listen_fd), handler_(handler), options_(options) {}

  ~UringLoop() {
    if (is_ring_ready_) io_uring_queue_exit(&ring_);
    if (buffer_ring_ != nullptr) munmap(buffer_ring_, kBufferCount * sizeof(io_uring_buf));
  }

  int run() {
    if (const int status = setup(); status != 0) return status;
    arm_accept();
    for (;;) {
      const int submitted = io_uring_submit_and_wait(&ring_, 1);
      if (submitted < 0 && submitted != -EINTR && submitted != -EAGAIN && submitted != -EBUSY) {
        std::fprintf(stderr, "loop_bench: io_uring_submit_and_wait: %s\n",
                     std::strerror(-submitted));
        return 1;
      }
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_cqe* cqe = nullptr;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        dispatch(*cqe);
        ++seen;
      }
      io_uring_cq_advance(&ring_, seen);
      queue_sends();
    }
  }

 private:
  // Creates the ring with the best setup flags the kernel takes, the buffer ring, and the
  // optional registrations; prints one line naming what it got.
  int setup() {
    const unsigned base_flags = IORING_SETUP_CQSIZE;
    std::vector<std::pair<unsigned, const char*>> attempts;
    if (options_.use_setup_flags) {
      attempts.emplace_back(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                            "SINGLE_ISSUER|DEFER_TASKRUN");
      attempts.emplace_back(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
                            "COOP_TASKRUN|TASKRUN_FLAG");
    }
    attempts.emplace_back(0u, "none");
    int error = 0;
    const char* setup_name = "";
    for (const auto& [flags, name] : attempts) {
      io_uring_params params;
      std::memset(&params, 0, sizeof(params));
      params.flags = base_flags | flags;
      params.cq_entries = kCompletionEntries;
      error = io_uring_queue_init_params(kSubmissionEntries, &ring_, &params);
      if (error == 0) {
        setup_name = name;
        break;
      }
      if (error != -EINVAL) break;  // EINVAL: an unknown flag; anything else: no io_uring at all
    }
    if (error != 0) {
      std::fprintf(stderr, "loop_bench: io_uring unavailable: %s\n", std::strerror(-error));
      return kExitUringUnavailable;
    }
    is_ring_ready_ = true;

    // The provided buffer ring, by hand: liburing 2.3 (Debian 12) has no io_uring_setup_buf_ring.
    void* memory = mmap(nullptr, kBufferCount * sizeof(io_uring_buf), PROT_READ | PROT_WRITE,
                        MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (memory == MAP_FAILED) {
      std::perror("loop_bench: mmap");
      return 1;
    }
    buffer_ring_ = static_cast<io_uring_buf_ring*>(memory);
    io_uring_buf_ring_init(buffer_ring_);
    io_uring_buf_reg registration;
    std::memset(&registration, 0, sizeof(registration));
    registration.ring_addr = reinterpret_cast<std::uintptr_t>(memory);
    registration.ring_entries = kBufferCount;
    registration.bgid = kBufferGroup;
    if (const int e = io_uring_register_buf_ring(&ring_, &registration, 0); e != 0) {
      std::fprintf(stderr, "loop_bench: io_uring_register_buf_ring: %s\n", std::strerror(-e));
      return kExitUringUnavailable;
    }
    buffer_mask_ = io_uring_buf_ring_mask(kBufferCount);
    buffers_ = std::make_unique<char[]>(std::size_t{kBufferCount} * kBufferBytes);
    for (unsigned id = 0; id < kBufferCount; ++id) {
      io_uring_buf_ring_add(buffer_ring_, buffer(id), kBufferBytes, static_cast<unsigned short>(id),
                            buffer_mask_, static_cast<int>(id));
    }
    io_uring_buf_ring_advance(buffer_ring_, kBufferCount);

    bool has_registered_ring = false;
    if (options_.use_registered_ring) has_registered_ring = io_uring_register_ring_fd(&ring_) == 1;
    if (options_.use_fixed_files) {
      has_fixed_files_ = io_uring_register_files_sparse(&ring_, kFixedFileSlots) == 0;
    }
    std::fprintf(stderr,
                 "loop_bench: io_uring setup=%s registered_ring=%s fixed_files=%s "
                 "recv=multishot+buffer_ring\n",
                 setup_name, has_registered_ring ? "yes" : "no", has_fixed_files_ ? "yes" : "no");
    return 0;
  }

  char* buffer(unsigned id) { return buffers_.get() + std::size_t{id} * kBufferBytes; }

  // A free submission entry; submits what is queued when the queue is full.
  io_uring_sqe* next_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void target(io_uring_sqe* sqe, const Client& client) {
    if (client.is_fixed) sqe->flags |= IOSQE_FIXED_FILE;
  }

  void arm_accept() {
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_multishot_accept(sqe, listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, tag(Op::kAccept, listen_fd_));
  }

  void arm_receive(Client& client) {
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_recv_multishot(sqe, client.fd, nullptr, 0, 0);
    target(sqe, client);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = kBufferGroup;
    io_uring_sqe_set_data64(sqe, tag(Op::kReceive, client.fd));
    client.is_receiving = true;
  }

  void send_rest(Client& client) {
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_send(sqe, client.fd, client.sending.data() + client.sent,
                       client.sending.size() - client.sent, MSG_NOSIGNAL);
    target(sqe, client);
    io_uring_sqe_set_data64(sqe, tag(Op::kSend, client.fd));
    client.is_sending = true;
  }

  // One send per client with new replies and none in flight: submitted with the next wait.
  void queue_sends() {
    for (const int fd : send_queue_) {
      Client& client = *clients_[static_cast<std::size_t>(fd)];
      client.is_queued = false;
      if (client.is_closing || client.is_sending || client.buffers.output.empty()) continue;
      client.sending.swap(client.buffers.output);
      client.buffers.output.clear();
      client.sent = 0;
      send_rest(client);
    }
    send_queue_.clear();
  }

  void queue(Client& client) {
    if (client.is_queued) return;
    client.is_queued = true;
    send_queue_.push_back(client.fd);
  }

  void dispatch(const io_uring_cqe& cqe) {
    const auto op = static_cast<Op>(cqe.user_data >> 32);
    const auto fd = static_cast<int>(cqe.user_data & 0xffffffffu);
    if (op == Op::kAccept) {
      on_accept(cqe);
      return;
    }
    Client& client = *clients_[static_cast<std::size_t>(fd)];
    if (op == Op::kReceive) {
      on_receive(client, cqe);
    } else {
      on_send(client, cqe);
    }
  }

  void on_accept(const io_uring_cqe& cqe) {
    if ((cqe.flags & IORING_CQE_F_MORE) == 0) arm_accept();
    if (cqe.res < 0) return;
    const int fd = cqe.res;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const auto slot = static_cast<std::size_t>(fd);
    if (clients_.size() <= slot) clients_.resize(slot + 1);
    clients_[slot] = std::make_unique<Client>();
    Client& client = *clients_[slot];
    client.fd = fd;
    if (has_fixed_files_ && slot < kFixedFileSlots) {
      client.is_fixed =
          io_uring_register_files_update(&ring_, static_cast<unsigned>(fd), &fd, 1) == 1;
    }
    arm_receive(client);
  }

  void on_receive(Client& client, const io_uring_cqe& cqe) {
    const bool is_armed = (cqe.flags & IORING_CQE_F_MORE) != 0;
    client.is_receiving = is_armed;
    if (cqe.res > 0) {
      const unsigned id = cqe.flags >> IORING_CQE_BUFFER_SHIFT;
      const FeedOutcome outcome = handler_.feed(
          client.buffers, std::string_view(buffer(id), static_cast<std::size_t>(cqe.res)));
      io_uring_buf_ring_add(buffer_ring_, buffer(id), kBufferBytes, static_cast<unsigned short>(id),
                            buffer_mask_, 0);
      io_uring_buf_ring_advance(buffer_ring_, 1);
      if (outcome != FeedOutcome::kOk) {
        start_close(client);
        return;
      }
      if (!client.buffers.output.empty()) queue(client);
      if (!is_armed && !client.is_closing) arm_receive(client);
    } else if (cqe.res == -ENOBUFS) {
      // Every buffer was out: the data waits in the socket; ask again.
      if (!is_armed && !client.is_closing) arm_receive(client);
    } else {
      start_close(client);  // 0: the peer closed; below 0: an error
    }
  }

  void on_send(Client& client, const io_uring_cqe& cqe) {
    client.is_sending = false;
    if (cqe.res < 0) {
      start_close(client);
      return;
    }
    client.sent += static_cast<std::size_t>(cqe.res);
    if (client.sent < client.sending.size() && !client.is_closing) {
      send_rest(client);
      return;
    }
    client.sending.clear();
    if (!client.buffers.output.empty()) queue(client);
    if (client.is_closing) release_if_idle(client);
  }

  // A closing client keeps its fd until its last request completes, so a completion never
  // meets a reused fd. shutdown() ends an armed multishot receive (it completes with 0).
  void start_close(Client& client) {
    if (!client.is_closing && client.is_receiving) shutdown(client.fd, SHUT_RDWR);
    client.is_closing = true;
    release_if_idle(client);
  }

  void release_if_idle(Client& client) {
    if (client.is_receiving || client.is_sending) return;
    const int fd = client.fd;
    if (client.is_fixed) {
      const int none = -1;
      io_uring_register_files_update(&ring_, static_cast<unsigned>(fd), &none, 1);
    }
    close(fd);
    if (client.is_queued) {
      // queue_sends() must not meet a dead client: drop it from the queue.
      std::erase(send_queue_, fd);
    }
    clients_[static_cast<std::size_t>(fd)].reset();  // destroys `client`
  }

  const int listen_fd_;
  RequestHandler& handler_;
  const UringOptions options_;
  io_uring ring_{};
  bool is_ring_ready_ = false;
  bool has_fixed_files_ = false;
  io_uring_buf_ring* buffer_ring_ = nullptr;
  int buffer_mask_ = 0;
  std::unique_ptr<char[]> buffers_;
  std::vector<std::unique_ptr<Client>> clients_;  // indexed by fd
  std::vector<int> send_queue_;                   // fds with replies to send this iteration
};

}  // namespace

int run_uring_loop(int listen_fd, RequestHandler& handler, const UringOptions& options) {
  auto loop = std::make_unique<UringLoop>(listen_fd, handler, options);
  return loop->run();
}

}  // namespace chronocache::loop_bench
