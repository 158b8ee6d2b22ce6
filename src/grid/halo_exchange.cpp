// Halo exchange: direct writes into a node neighbour's ghost cells, packed messages otherwise;
// checked mode sends the origin of every value along and verifies it on arrival.
#include "cachecomm/halo.hpp"

#include <chrono>
#include <cstring>
#include <sstream>

#include "grid/halo_plan.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm {

namespace detail {

namespace {

[[nodiscard]] double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Box along one dimension for a transfer towards `o` (-1, 0, +1): sender's cells and receiver's
// ghosts.
void send_range(int o, long size, int ghost, long& low, long& high) {
  if (o < 0) {
    low = 0;
    high = ghost;
  } else if (o > 0) {
    low = size - ghost;
    high = size;
  } else {
    low = 0;
    high = size;
  }
}
void ghost_range(int o, long size, int ghost, long& low, long& high) {
  if (o < 0) {
    low = -ghost;
    high = 0;
  } else if (o > 0) {
    low = size;
    high = size + ghost;
  } else {
    low = 0;
    high = size;
  }
}

// Calls visit(i, j, k) for every cell of `b` in row-major order.
template <typename Visit>
void for_each_cell(const box3& b, Visit&& visit) {
  for (long i = b.low[0]; i < b.high[0]; ++i)
    for (long j = b.low[1]; j < b.high[1]; ++j)
      for (long k = b.low[2]; k < b.high[2]; ++k) visit(i, j, k);
}

inline void copy_element(std::byte* to, const std::byte* from, std::size_t bytes) {
  switch (bytes) {
    case 8: copy_memory(to, from, 8); break;
    case 4: copy_memory(to, from, 4); break;
    default: copy_memory(to, from, bytes);
  }
}

// Copies box `from_box` of one field into box `to_box` (same shape) of another, row by row when
// both rows are contiguous (row-major), element by element otherwise.
void copy_box(const std::byte* from, const field_layout& from_layout, const box3& from_box,
              std::byte* to, const field_layout& to_layout, const box3& to_box,
              std::size_t element) {
  const long run = from_box.high[2] - from_box.low[2];
  const bool rows = from_layout.contiguous_rows() && to_layout.contiguous_rows();
  for (long i = 0; i < from_box.high[0] - from_box.low[0]; ++i) {
    for (long j = 0; j < from_box.high[1] - from_box.low[1]; ++j) {
      const std::size_t from_row =
          from_layout.part(0, from_box.low[0] + i) + from_layout.part(1, from_box.low[1] + j);
      const std::size_t to_row =
          to_layout.part(0, to_box.low[0] + i) + to_layout.part(1, to_box.low[1] + j);
      if (rows) {
        copy_memory(to + (to_row + to_layout.part(2, to_box.low[2])) * element,
                    from + (from_row + from_layout.part(2, from_box.low[2])) * element,
                    static_cast<std::size_t>(run) * element);
        continue;
      }
      for (long k = 0; k < run; ++k) {
        copy_element(to + (to_row + to_layout.part(2, to_box.low[2] + k)) * element,
                     from + (from_row + from_layout.part(2, from_box.low[2] + k)) * element,
                     element);
      }
    }
  }
}

}  // namespace

halo_plan build_halo_plan(const grid_base& g, std::vector<int> fields) {
  const auto& decomp = g.decomp();
  for (int field : fields) {
    if (field < 0 || field >= g.fields()) {
      throw invalid_argument("cachecomm::halo_exchange: field " + std::to_string(field) +
                             " does not exist (the grid has " + std::to_string(g.fields()) + ")");
    }
  }
  halo_plan plan;
  plan.fields = std::move(fields);
  const int me = g.rank();
  const index3 mine = g.local_size();
  for (int o0 = -1; o0 <= 1; ++o0) {
    for (int o1 = -1; o1 <= 1; ++o1) {
      for (int o2 = -1; o2 <= 1; ++o2) {
        std::array<int, grid_max_dims> offset{o0, o1, o2};
        int nonzero = 0;
        bool valid = true;
        for (int d = 0; d < grid_max_dims; ++d) {
          if (offset[d] != 0) ++nonzero;
          if (offset[d] != 0 && decomp.ghost(d) == 0) valid = false;
        }
        if (!valid || nonzero == 0) continue;
        if (decomp.spec().shape == halo_shape::faces && nonzero > 1) continue;
        const int peer = decomp.neighbour(me, offset);
        if (peer < 0) continue;
        const index3 theirs = decomp.local_size(peer);
        halo_transfer send;
        send.peer = peer;
        send.offset = offset;
        send.direction = direction_index(offset);
        halo_transfer receive;
        receive.peer = peer;
        receive.offset = offset;
        std::array<int, grid_max_dims> back{-o0, -o1, -o2};
        receive.direction = direction_index(back);  // the sender's view of where I lie
        for (int d = 0; d < grid_max_dims; ++d) {
          const int ghost = decomp.ghost(d);
          send_range(offset[d], mine[d], ghost, send.source.low[d], send.source.high[d]);
          ghost_range(back[d], theirs[d], ghost, send.destination.low[d], send.destination.high[d]);
          send_range(back[d], theirs[d], ghost, receive.source.low[d], receive.source.high[d]);
          ghost_range(offset[d], mine[d], ghost, receive.destination.low[d],
                      receive.destination.high[d]);
        }
        plan.sends.push_back(send);
        plan.receives.push_back(receive);
      }
    }
  }
  return plan;
}

// The shm transport keeps 16 flag lines per rank and grid: (consumed, sent) for 8 exchanges.
constexpr int max_exchanges_per_shared_grid = 8;

class halo_engine {
 public:
  halo_engine(grid_base& g, std::vector<int> fields)
      : m_grid(&g), m_plan(build_halo_plan(g, std::move(fields))) {
    auto& transport = g.transport();
    m_plan.exchange_id = transport.next_exchange_id();
    m_plan.slot = g.claim_exchange_slot();
    if (m_plan.exchange_id * 27 + 27 > 32767) {
      throw usage_error(
          "cachecomm::halo_exchange: too many exchanges built on one transport (tags run out)");
    }
    m_checked = g.decomp().spec().checked;
    m_shared = g.memory().peer(g.rank()) != nullptr;
    if (m_shared && m_plan.slot >= max_exchanges_per_shared_grid) {
      throw usage_error(
          "cachecomm::halo_exchange: at most " + std::to_string(max_exchanges_per_shared_grid) +
          " exchanges per grid on the shm transport (put the fields in one exchange)");
    }
    m_send_buffers.resize(m_plan.sends.size());
    m_receive_buffers.resize(m_plan.receives.size());
    for (std::size_t t = 0; t < m_plan.sends.size(); ++t) {
      if (direct(m_plan.sends[t].peer)) continue;
      m_send_buffers[t].resize(message_bytes(m_plan.sends[t].source));
    }
    for (std::size_t t = 0; t < m_plan.receives.size(); ++t) {
      if (direct(m_plan.receives[t].peer)) continue;
      m_receive_buffers[t].resize(message_bytes(m_plan.receives[t].destination));
    }
    for (const auto& send : m_plan.sends) {
      m_bytes_per_exchange +=
          static_cast<std::size_t>(send.source.count()) * g.element_bytes() * m_plan.fields.size();
    }
  }

  void start() {
    if (m_active)
      throw usage_error(
          "cachecomm::halo_exchange: start() while the previous exchange is still in flight");
    const double begin = now();
    double waited = 0;
    ++m_sequence;
    auto& memory = m_grid->memory();
    // My ghost cells of the previous exchange are consumed: node neighbours may overwrite them.
    if (m_shared && !m_released) memory.publish(flag(0), m_sequence - 1);
    m_released = false;
    m_receive_requests.clear();
    m_send_requests.clear();
    auto& transport = m_grid->transport();
    for (std::size_t t = 0; t < m_plan.receives.size(); ++t) {
      const auto& receive = m_plan.receives[t];
      if (direct(receive.peer)) continue;
      m_receive_requests.push_back(transport.receive(receive.peer, tag(receive.direction),
                                                     m_receive_buffers[t].data(),
                                                     m_receive_buffers[t].size()));
    }
    for (std::size_t t = 0; t < m_plan.sends.size(); ++t) {
      const auto& send = m_plan.sends[t];
      if (direct(send.peer)) {
        const double wait_begin = now();
        memory.wait_peer(send.peer, flag(0), m_sequence - 1,
                         "halo exchange: neighbour to consume its ghost cells");
        waited += now() - wait_begin;
        write_direct(send);
      } else {
        pack(send, m_send_buffers[t]);
        m_send_requests.push_back(transport.send(
            send.peer, tag(send.direction), m_send_buffers[t].data(), m_send_buffers[t].size()));
      }
    }
    if (m_shared) memory.publish(flag(1), m_sequence);
    m_timing = {};
    m_timing.bytes = m_bytes_per_exchange;
    m_timing.synchronize_seconds = waited;
    m_timing.communicate_seconds = now() - begin - waited;
    m_active = true;
  }

  void complete() {
    if (!m_active) return;
    m_active = false;  // even if a check below throws, the exchange is over
    const double begin = now();
    double waited = 0;
    auto& memory = m_grid->memory();
    std::size_t request = 0;
    for (std::size_t t = 0; t < m_plan.receives.size(); ++t) {
      const auto& receive = m_plan.receives[t];
      const double wait_begin = now();
      if (direct(receive.peer)) {
        memory.wait_peer(receive.peer, flag(1), m_sequence,
                         "halo exchange: neighbour to write my ghost cells");
        waited += now() - wait_begin;
        if (m_checked) verify_direct(receive);
      } else {
        m_receive_requests[request++]->wait();
        waited += now() - wait_begin;
        unpack(receive, m_receive_buffers[t]);
      }
    }
    const double wait_begin = now();
    for (auto& send : m_send_requests) send->wait();
    waited += now() - wait_begin;
    m_timing.synchronize_seconds += waited;
    m_timing.communicate_seconds += now() - begin - waited;
    // Reported only now, so that every message of this exchange has been received first.
    if (!m_mismatch.empty()) {
      std::string message = std::move(m_mismatch);
      m_mismatch.clear();
      throw usage_error(message);
    }
  }

  void release_ghosts() {
    if (m_active)
      throw usage_error("cachecomm::halo_exchange: release_ghosts() before the exchange completed");
    if (m_shared && !m_released) m_grid->memory().publish(flag(0), m_sequence);
    m_released = true;
  }

  bool try_complete() {
    if (!m_active) return true;
    auto& memory = m_grid->memory();
    for (const auto& receive : m_plan.receives) {
      if (direct(receive.peer) && !memory.peer_reached(receive.peer, flag(1), m_sequence))
        return false;
    }
    for (auto& request : m_receive_requests) {
      if (!request->test()) return false;
    }
    for (auto& request : m_send_requests) {
      if (!request->test()) return false;
    }
    complete();
    return true;
  }

  [[nodiscard]] bool active() const { return m_active; }
  [[nodiscard]] const halo_timing& timing() const { return m_timing; }
  [[nodiscard]] std::size_t bytes_per_exchange() const { return m_bytes_per_exchange; }
  [[nodiscard]] halo_plan& plan() { return m_plan; }

 private:
  [[nodiscard]] bool direct(int peer) const { return m_grid->memory().peer(peer) != nullptr; }
  [[nodiscard]] int flag(int kind) const { return m_plan.slot * 2 + kind; }
  [[nodiscard]] int tag(int direction) const { return m_plan.exchange_id * 27 + direction; }
  [[nodiscard]] std::size_t record_bytes() const {
    return m_grid->element_bytes() + (m_checked ? sizeof(halo_origin) : 0);
  }
  [[nodiscard]] std::size_t message_bytes(const box3& b) const {
    return static_cast<std::size_t>(b.count()) * record_bytes() * m_plan.fields.size();
  }

  [[nodiscard]] halo_origin origin_of(const halo_transfer& send, long i, long j, long k) const {
    const auto& decomp = m_grid->decomp();
    const index3 mine = m_grid->global_offset();
    const index3 theirs = decomp.global_offset(send.peer);
    halo_origin origin;
    origin.exchange = m_sequence;
    origin.sender = m_grid->rank();
    const index3 local{i, j, k};
    for (int d = 0; d < grid_max_dims; ++d) {
      origin.source[d] = static_cast<std::int32_t>(mine[d] + local[d]);
      origin.destination[d] = static_cast<std::int32_t>(theirs[d] + send.destination.low[d] +
                                                        (local[d] - send.source.low[d]));
    }
    return origin;
  }

  void write_direct(const halo_transfer& send) {
    const field_layout their_layout = m_grid->layout_of(send.peer);
    const std::size_t element = m_grid->element_bytes();
    for (int field : m_plan.fields) {
      copy_box(m_grid->field_bytes(field), m_grid->layout(), send.source,
               m_grid->peer_field_bytes(send.peer, field), their_layout, send.destination, element);
      if (!m_checked) continue;
      halo_origin* theirs = m_grid->peer_origins(send.peer, field);
      for_each_cell(send.source, [&](long i, long j, long k) {
        theirs[their_layout.offset(send.destination.low[0] + i - send.source.low[0],
                                   send.destination.low[1] + j - send.source.low[1],
                                   send.destination.low[2] + k - send.source.low[2])] =
            origin_of(send, i, j, k);
      });
    }
  }

  void pack(const halo_transfer& send, std::vector<std::byte>& buffer) {
    const std::size_t element = m_grid->element_bytes();
    const auto& layout = m_grid->layout();
    std::byte* out = buffer.data();
    for (int field : m_plan.fields) {
      const std::byte* data = m_grid->field_bytes(field);
      for_each_cell(send.source, [&](long i, long j, long k) {
        copy_element(out, data + layout.offset(i, j, k) * element, element);
        out += element;
        if (m_checked) {
          halo_origin origin = origin_of(send, i, j, k);
          copy_memory(out, &origin, sizeof origin);
          out += sizeof origin;
        }
      });
    }
  }

  void unpack(const halo_transfer& receive, const std::vector<std::byte>& buffer) {
    const std::size_t element = m_grid->element_bytes();
    const auto& layout = m_grid->layout();
    const std::byte* in = buffer.data();
    for (int field : m_plan.fields) {
      std::byte* data = m_grid->field_bytes(field);
      for_each_cell(receive.destination, [&](long i, long j, long k) {
        if (m_checked) {
          halo_origin origin;
          copy_memory(&origin, in + element, sizeof origin);
          verify(receive, field, origin, i, j, k);
        }
        copy_element(data + layout.offset(i, j, k) * element, in, element);
        in += record_bytes();
      });
    }
  }

  void verify_direct(const halo_transfer& receive) {
    const auto& layout = m_grid->layout();
    for (int field : m_plan.fields) {
      const halo_origin* origins = m_grid->origins(field);
      for_each_cell(receive.destination, [&](long i, long j, long k) {
        verify(receive, field, origins[layout.offset(i, j, k)], i, j, k);
      });
    }
  }

  // Seed 6.2: the value in ghost cell (i, j, k) must come from the expected neighbour, from the
  // cell that periodic wrapping maps it to, be meant for this very cell, and be from this exchange.
  void verify(const halo_transfer& receive, int field, const halo_origin& origin, long i, long j,
              long k) {
    const auto& decomp = m_grid->decomp();
    const index3 local{i, j, k};
    index3 cell{};
    for (int d = 0; d < grid_max_dims; ++d) cell[d] = m_grid->global_offset()[d] + local[d];
    const index3 source = decomp.wrap(cell);
    bool good = origin.exchange == m_sequence && origin.sender == receive.peer;
    for (int d = 0; d < grid_max_dims; ++d) {
      good = good && origin.source[d] == source[d] && origin.destination[d] == cell[d];
    }
    if (good || !m_mismatch.empty()) return;
    const int first = grid_max_dims - decomp.dims();
    auto coordinates = [&](auto&& values) {
      std::ostringstream text;
      text << '(';
      for (int d = first; d < grid_max_dims; ++d) text << (d > first ? "," : "") << values[d];
      text << ')';
      return text.str();
    };
    std::ostringstream message;
    message << "cachecomm checked halo: rank " << m_grid->rank() << ", field " << field
            << ", ghost cell " << coordinates(local) << " (global " << coordinates(cell)
            << ") in exchange " << m_sequence;
    if (origin.sender < 0 || origin.exchange == 0) {
      message << " was never written (expected a value from rank " << receive.peer << ")";
    } else {
      message << " holds a value sent by rank " << origin.sender << " from cell "
              << coordinates(origin.source) << ", intended for cell "
              << coordinates(origin.destination) << " in exchange " << origin.exchange
              << "; expected rank " << receive.peer << "'s cell " << coordinates(source)
              << " intended for " << coordinates(cell);
    }
    m_mismatch = message.str();
  }

  grid_base* m_grid;
  halo_plan m_plan;
  bool m_checked = false;
  bool m_shared = false;
  bool m_active = false;
  bool m_released = false;  // ghosts of exchange m_sequence already declared consumed
  std::uint32_t m_sequence = 0;
  std::size_t m_bytes_per_exchange = 0;
  halo_timing m_timing;
  std::string m_mismatch;  // first checked-halo failure of the exchange in progress
  std::vector<std::vector<std::byte>> m_send_buffers, m_receive_buffers;
  std::vector<std::unique_ptr<message_request>> m_send_requests, m_receive_requests;
};

}  // namespace detail

halo_exchange::halo_exchange(grid_base& g, std::vector<int> fields)
    : m_engine(std::make_unique<detail::halo_engine>(g, std::move(fields))) {}
halo_exchange::~halo_exchange() = default;

halo_handle halo_exchange::start() {
  m_engine->start();
  return halo_handle(this);
}
const halo_timing& halo_exchange::last_timing() const {
  return m_engine->timing();
}
std::size_t halo_exchange::bytes_per_exchange() const {
  return m_engine->bytes_per_exchange();
}
detail::halo_plan& halo_exchange::plan_for_testing() {
  return m_engine->plan();
}
void halo_exchange::release_ghosts() {
  m_engine->release_ghosts();
}
void halo_exchange::complete() {
  m_engine->complete();
}
bool halo_exchange::try_complete() {
  return m_engine->try_complete();
}

halo_handle& halo_handle::operator=(halo_handle&& other) noexcept {
  if (this != &other) {
    if (m_exchange != nullptr) {
      try {
        m_exchange->complete();
      } catch (...) {
      }
    }
    m_exchange = other.m_exchange;
    other.m_exchange = nullptr;
  }
  return *this;
}

halo_handle::~halo_handle() {
  if (m_exchange == nullptr) return;
  try {
    m_exchange->complete();
  } catch (...) {
    // A destructor cannot report it; wait() would have.
  }
}

void halo_handle::wait() {
  if (m_exchange == nullptr) return;
  halo_exchange* exchange = m_exchange;
  m_exchange = nullptr;
  exchange->complete();
}

bool halo_handle::test() {
  if (m_exchange == nullptr) return true;
  if (!m_exchange->try_complete()) return false;
  m_exchange = nullptr;
  return true;
}

}  // namespace cachecomm
