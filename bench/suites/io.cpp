// `cachecomm-bench io`: what a rank would get by passing data through tmpfs or a TCP loopback
// socket, beside the shared-memory channel and MPI, all as fractions of the memcpy limit (the
// comparison of the seed's blog post: file system and TCP against the native channel and the peak).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "cachecomm/channel.hpp"
#include "cachecomm/error.hpp"
#include "common/interleaved.hpp"
#include "common/node_limits.hpp"
#include "common/node_suite.hpp"

namespace cachecomm::bench {
namespace {

/// Owns a file descriptor.
class descriptor {
 public:
  explicit descriptor(int fd = -1) : m_fd(fd) {}
  ~descriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;
  descriptor(descriptor&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  descriptor& operator=(descriptor&& other) noexcept {
    std::swap(m_fd, other.m_fd);
    return *this;
  }
  [[nodiscard]] int get() const { return m_fd; }

 private:
  int m_fd;
};

int checked(int result, const char* what) {
  if (result < 0) throw cachecomm::system_error(what, errno);
  return result;
}

constexpr std::size_t block = 1U << 20;

// Opens a new, nameless tmpfs file (O_TMPFILE): a run that is killed cannot leave it in /dev/shm.
descriptor open_tmpfs_file() {
  int fd = ::open("/dev/shm", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
    return descriptor(checked(fd, "open a tmpfs file"));
  // A tmpfs without O_TMPFILE: a name that lives only until the open returns.
  std::string path = "/dev/shm/cachecomm-bench-io-" + std::to_string(::getpid());
  descriptor file(checked(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600),
                          "open a tmpfs file"));
  ::unlink(path.c_str());
  return file;
}

// Seconds to write `total` bytes in 1 MiB blocks into a new tmpfs file (as `dd bs=1M`). The clock
// stops before the close, which frees the file's pages (they were freed by a separate unlink
// outside the timing when the file had a name).
double tmpfs_write_seconds(std::size_t total, const std::vector<std::byte>& data) {
  double start = now_seconds();
  descriptor file = open_tmpfs_file();
  for (std::size_t written = 0; written < total; written += block) {
    std::size_t done = 0;
    while (done < block)
      done += static_cast<std::size_t>(
          checked(static_cast<int>(::write(file.get(), data.data() + done, block - done)),
                  "write to tmpfs"));
  }
  return now_seconds() - start;
}

// Rank 0 streams `total` bytes to rank 1 over a loopback TCP connection; returns rank 0's time
// until rank 1 acknowledges the last byte.
double tcp_seconds(MPI_Comm mpi, int rank, std::size_t total, std::vector<std::byte>& data) {
  int port = 0;
  descriptor listener;
  if (rank == 1) {
    listener = descriptor(checked(::socket(AF_INET, SOCK_STREAM, 0), "socket"));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    checked(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address),
            "bind 127.0.0.1");
    checked(::listen(listener.get(), 1), "listen");
    socklen_t length = sizeof address;
    checked(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length),
            "getsockname");
    port = ntohs(address.sin_port);
  }
  MPI_Bcast(&port, 1, MPI_INT, 1, mpi);
  double elapsed = 0;
  if (rank == 0) {
    descriptor connection(checked(::socket(AF_INET, SOCK_STREAM, 0), "socket"));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    checked(::connect(connection.get(), reinterpret_cast<sockaddr*>(&address), sizeof address),
            "connect to 127.0.0.1");
    MPI_Barrier(mpi);
    double start = now_seconds();
    for (std::size_t sent = 0; sent < total;) {
      sent += static_cast<std::size_t>(checked(
          static_cast<int>(::send(connection.get(), data.data(), std::min(block, total - sent), 0)),
          "send"));
    }
    char ack = 0;
    checked(static_cast<int>(::recv(connection.get(), &ack, 1, MSG_WAITALL)), "recv");
    elapsed = now_seconds() - start;
  } else if (rank == 1) {
    descriptor connection(checked(::accept(listener.get(), nullptr, nullptr), "accept"));
    MPI_Barrier(mpi);
    for (std::size_t received = 0; received < total;) {
      ssize_t got = ::recv(connection.get(), data.data(), std::min(block, total - received), 0);
      if (got <= 0)
        throw cachecomm::system_error("recv on the loopback connection",
                                      got == 0 ? ECONNRESET : errno);
      received += static_cast<std::size_t>(got);
    }
    char ack = 1;
    checked(static_cast<int>(::send(connection.get(), &ack, 1, 0)), "send");
  } else {
    MPI_Barrier(mpi);
  }
  return elapsed;
}

void run_io(node_run& run) {
  MPI_Comm mpi = run.comm.mpi_comm();
  const int rank = run.comm.rank();
  const std::size_t total = run.pick<std::size_t>(4U << 20, 128U << 20, 512U << 20);
  const int samples = run.pick(2, 5, 9);
  std::vector<std::byte> data(block, std::byte{0x42});
  double limit = memcpy_limit_gbps(block, 5);
  MPI_Bcast(&limit, 1, MPI_DOUBLE, 0, mpi);
  auto add = [&](const char* op, const char* impl, const char* algorithm,
                 std::vector<double> seconds) {
    std::vector<double> micros;
    for (double value : seconds) micros.push_back(value * 1e6);
    summary times = summarize(micros);
    double gbps = static_cast<double>(total) / (times.median * 1e3);
    run.results.add({{"op", op},
                     {"impl", impl},
                     {"algorithm", algorithm},
                     {"bytes", total},
                     {"block_bytes", block},
                     {"gbps", gbps},
                     {"limit_gbps", limit},
                     {"fraction_of_limit", gbps / limit}},
                    times);
  };
  std::vector<double> tmpfs;
  on_rank_zero_alone(mpi, [&] {
    for (int sample = 0; sample < samples; ++sample)
      tmpfs.push_back(tmpfs_write_seconds(total, data));
  });
  if (rank == 0) add("tmpfs_write", "os", "write(2) 1 MiB blocks", tmpfs);
  run.progress(0.25);
  if (run.comm.size() < 2) {
    run.results.note("TCP and channel streaming need 2 ranks");
    return;
  }
  std::vector<double> tcp;
  for (int sample = 0; sample < samples; ++sample)
    tcp.push_back(tcp_seconds(mpi, rank, total, data));
  if (rank == 0) add("tcp_loopback", "os", "TCP 127.0.0.1", tcp);
  run.progress(0.5);
  // The same stream of 1 MiB messages through the channel and through MPI, interleaved.
  cachecomm::channel channel(run.comm);
  std::vector<std::byte> incoming(block);
  const int messages = static_cast<int>(total / block);
  std::vector<cachecomm::request> requests;
  auto channel_stream = [&] {
    if (rank == 0) {
      for (int message = 0; message < messages; ++message) channel.send(data.data(), block, 1, 4);
      channel.recv(nullptr, 0, 1, 5);
    } else if (rank == 1) {
      for (int message = 0; message < messages; ++message)
        channel.recv(incoming.data(), block, 0, 4);
      channel.send(nullptr, 0, 0, 5);
    }
  };
  auto mpi_stream = [&] {
    if (rank == 0) {
      for (int message = 0; message < messages; ++message)
        MPI_Send(data.data(), static_cast<int>(block), MPI_BYTE, 1, 4, mpi);
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 5, mpi, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int message = 0; message < messages; ++message)
        MPI_Recv(incoming.data(), static_cast<int>(block), MPI_BYTE, 0, 4, mpi, MPI_STATUS_IGNORE);
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 5, mpi);
    }
  };
  auto times = measure_interleaved(
      mpi, {{"cachecomm", "channel", channel_stream}, {"mpi", "default", mpi_stream}},
      timing_plan{1, samples, 1});
  if (rank == 0) {
    for (std::size_t which = 0; which < 2; ++which) {
      double gbps = static_cast<double>(total) / (times[which].median * 1e3);
      run.results.add({{"op", "stream_to_rank"},
                       {"impl", which == 0 ? "cachecomm" : "mpi"},
                       {"algorithm", which == 0 ? "shared-memory channel" : "MPI_Send"},
                       {"bytes", total},
                       {"block_bytes", block},
                       {"gbps", gbps},
                       {"limit_gbps", limit},
                       {"fraction_of_limit", gbps / limit}},
                      times[which]);
    }
  }
  run.progress(1.0);
}

const node_step_registration registration{
    node_step{"io",
              "tmpfs write and TCP loopback bandwidth against the shared-memory channel and MPI",
              40,
              run_io,
              {"op", "impl", "bytes", "median_us", "gbps", "fraction_of_limit"}}};

}  // namespace
}  // namespace cachecomm::bench
