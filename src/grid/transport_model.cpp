// The model message-passing system (seed 6.1): every rank is a thread of this process with its own
// private grids; messages go through one coordinator, like MPI_Send/MPI_Recv without MPI.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "cachecomm/error.hpp"
#include "cachecomm/grid_transport.hpp"
#include "grid/heap_memory.hpp"

namespace cachecomm {

namespace {

class model_aborted : public error {
 public:
  using error::error;
};

// Mailboxes keyed by (source, destination, tag), each first-in first-out as MPI's non-overtaking
// rule.
class coordinator {
 public:
  explicit coordinator(int ranks) : m_ranks(ranks), m_gather(static_cast<std::size_t>(ranks)) {}

  void post(int source, int destination, int tag, const void* data, std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    const auto* begin = static_cast<const std::byte*>(data);
    m_mailboxes[{source, destination, tag}].emplace_back(begin, begin + bytes);
    m_changed.notify_all();
  }
  // Moves a matching message into `data` if one is there; false otherwise.
  bool try_take(int source, int destination, int tag, void* data, std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    return take_locked(source, destination, tag, data, bytes);
  }
  void take(int source, int destination, int tag, void* data, std::size_t bytes) {
    std::unique_lock lock(m_mutex);
    bool taken = false;
    m_changed.wait(lock, [&] {
      taken = take_locked(source, destination, tag, data, bytes);
      return taken || m_failed;
    });
    if (!taken) throw model_aborted("cachecomm model: stopped because another rank failed");
  }
  // Barrier plus allgather of doubles in one generation-counted step.
  std::vector<double> gather(int rank, const std::vector<double>& mine) {
    std::unique_lock lock(m_mutex);
    const auto generation = m_generation;
    m_gather[static_cast<std::size_t>(rank)] = mine;
    if (++m_arrived == m_ranks) {
      m_result.clear();
      for (const auto& part : m_gather) m_result.insert(m_result.end(), part.begin(), part.end());
      m_arrived = 0;
      ++m_generation;
      m_changed.notify_all();
    } else {
      m_changed.wait(lock, [&] { return m_failed || m_generation != generation; });
      if (m_generation == generation)
        throw model_aborted("cachecomm model: stopped because another rank failed");
    }
    return m_result;
  }
  void fail() {
    std::lock_guard lock(m_mutex);
    m_failed = true;
    m_changed.notify_all();
  }

 private:
  bool take_locked(int source, int destination, int tag, void* data, std::size_t bytes) {
    auto found = m_mailboxes.find({source, destination, tag});
    if (found == m_mailboxes.end() || found->second.empty()) return false;
    auto& message = found->second.front();
    if (message.size() != bytes) {
      throw usage_error("cachecomm model: rank " + std::to_string(destination) + " expected " +
                        std::to_string(bytes) + " bytes from rank " + std::to_string(source) +
                        " (tag " + std::to_string(tag) + ") but got " +
                        std::to_string(message.size()));
    }
    std::memcpy(data, message.data(), bytes);
    found->second.pop_front();
    return true;
  }

  int m_ranks;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<std::byte>>> m_mailboxes;
  std::vector<std::vector<double>> m_gather;
  std::vector<double> m_result;
  int m_arrived = 0;
  unsigned long m_generation = 0;
  bool m_failed = false;
};

class completed_request final : public message_request {
 public:
  bool test() override { return true; }
  void wait() override {}
};

class model_receive final : public message_request {
 public:
  model_receive(coordinator& hub, int source, int destination, int tag, void* data,
                std::size_t bytes)
      : m_hub(&hub),
        m_source(source),
        m_destination(destination),
        m_tag(tag),
        m_data(data),
        m_bytes(bytes) {}
  bool test() override {
    if (!m_done) m_done = m_hub->try_take(m_source, m_destination, m_tag, m_data, m_bytes);
    return m_done;
  }
  void wait() override {
    if (!m_done) m_hub->take(m_source, m_destination, m_tag, m_data, m_bytes);
    m_done = true;
  }

 private:
  coordinator* m_hub;
  int m_source, m_destination, m_tag;
  void* m_data;
  std::size_t m_bytes;
  bool m_done = false;
};

class model_transport final : public grid_transport {
 public:
  model_transport(coordinator& hub, int rank, int size) : m_hub(&hub), m_rank(rank), m_size(size) {}
  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  std::string name() const override { return "model"; }
  std::unique_ptr<field_memory> allocate(std::size_t bytes) override {
    return std::make_unique<detail::heap_field_memory>(bytes);
  }
  std::unique_ptr<message_request> send(int peer, int tag, const void* data,
                                        std::size_t bytes) override {
    check_peer(peer);
    m_hub->post(m_rank, peer, tag, data, bytes);  // buffered: complete at once
    return std::make_unique<completed_request>();
  }
  std::unique_ptr<message_request> receive(int peer, int tag, void* data,
                                           std::size_t bytes) override {
    check_peer(peer);
    return std::make_unique<model_receive>(*m_hub, peer, m_rank, tag, data, bytes);
  }
  void barrier() override { (void)m_hub->gather(m_rank, {}); }
  std::vector<double> allgather(const std::vector<double>& mine) override {
    return m_hub->gather(m_rank, mine);
  }

 private:
  void check_peer(int peer) const {
    if (peer < 0 || peer >= m_size) {
      throw invalid_argument("cachecomm model: rank " + std::to_string(m_rank) +
                             " addressed rank " + std::to_string(peer) + " of " +
                             std::to_string(m_size));
    }
  }
  coordinator* m_hub;
  int m_rank, m_size;
};

}  // namespace

void run_model_ranks(int ranks, const std::function<void(grid_transport&)>& body) {
  if (ranks < 1) throw invalid_argument("cachecomm model: rank count must be at least 1");
  coordinator hub(ranks);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        model_transport transport(hub, rank, ranks);
        body(transport);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
        hub.fail();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  // The first rank that failed for its own reason, not because another one stopped it.
  std::exception_ptr aborted;
  for (auto& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const model_aborted&) {
      aborted = error;
    } catch (...) {
      throw;
    }
  }
  if (aborted) std::rethrow_exception(aborted);
}

}  // namespace cachecomm
