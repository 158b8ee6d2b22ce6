#include "coll/node_barrier.hpp"

#include <atomic>
#include <bit>

#include "cachecomm/error.hpp"
#include "coll/algorithm_registry.hpp"

namespace cachecomm::detail {

namespace {

int ceil_log2(int value) {
  int rounds = 0;
  while ((1 << rounds) < value) ++rounds;
  return rounds;
}

std::size_t byte_flag_bytes(int node_size) {
  return round_up(static_cast<std::size_t>(node_size), sizeof(std::uint64_t));
}

// The 32-bit word containing byte flag `index`: what a sleeper on that byte waits on.
const std::uint32_t* word_of_byte(const std::uint8_t* bytes, int index) {
  return reinterpret_cast<const std::uint32_t*>(
      bytes + (static_cast<std::size_t>(index) & ~std::size_t{3}));
}

void add_kary_children(barrier_tree& tree, int size, int rank, int degree, bool for_gather) {
  for (int child = degree * rank + 1; child <= degree * rank + degree && child < size; ++child) {
    if (for_gather) tree.gather_children.push_back(child);
    tree.release_children.push_back(child);
  }
}

}  // namespace

barrier_tree make_barrier_tree(barrier_algorithm algorithm, int size, int rank, int degree) {
  barrier_tree tree;
  switch (algorithm) {
    case barrier_algorithm::central_line:
      tree.gather_parent = rank == 0 ? -1 : 0;
      if (rank == 0) {
        for (int child = 1; child < size; ++child) tree.gather_children.push_back(child);
        tree.release_children = tree.gather_children;
      }
      break;
    case barrier_algorithm::tree:
      tree.gather_parent = rank == 0 ? -1 : (rank - 1) / degree;
      add_kary_children(tree, size, rank, degree, true);
      break;
    case barrier_algorithm::tournament:
      // Round j pairs rank r (bit j clear, lower bits clear) with winner-waits-for r + 2^j; the
      // loser's parent is therefore r with its lowest set bit cleared. Release is a k-ary tree.
      tree.gather_parent = rank == 0 ? -1 : (rank & (rank - 1));
      for (int bit = 1; bit < size; bit <<= 1) {
        if ((rank & (bit - 1)) != 0 || (rank & bit) != 0) break;
        if (rank + bit < size) tree.gather_children.push_back(rank + bit);
      }
      add_kary_children(tree, size, rank, degree, false);
      break;
    case barrier_algorithm::binomial: {
      // BST: children are rank + 2^i for 2^i above the rank's highest bit; parent clears that bit.
      tree.gather_parent =
          rank == 0 ? -1 : rank - static_cast<int>(std::bit_floor(static_cast<unsigned>(rank)));
      int first =
          rank == 0 ? 1 : static_cast<int>(std::bit_floor(static_cast<unsigned>(rank))) << 1;
      for (int step = first; rank + step < size; step <<= 1)
        tree.gather_children.push_back(rank + step);
      tree.release_children = tree.gather_children;
      break;
    }
    default: break;  // the other algorithms use no tree
  }
  if (rank != 0) {
    tree.release_parent =
        (algorithm == barrier_algorithm::tree || algorithm == barrier_algorithm::tournament)
            ? (rank - 1) / degree
            : tree.gather_parent;
  }
  return tree;
}

std::size_t node_barrier::bytes_needed(int node_size) {
  segment_layout layout;
  layout.reserve(slot_array<padded_flag>::bytes_for(static_cast<std::size_t>(node_size)));
  layout.reserve(slot_array<padded_flag>::bytes_for(
      static_cast<std::size_t>(node_size) *
      static_cast<std::size_t>(std::max(1, ceil_log2(node_size)))));
  layout.reserve(byte_flag_bytes(node_size));
  layout.reserve(slot_array<padded_flag>::bytes_for(2));
  return layout.size();
}

node_barrier::node_barrier(std::byte* area, int node_size, int node_rank, int tree_degree,
                           bool flat_release, waiter* wait)
    : m_size(node_size),
      m_rank(node_rank),
      m_rounds(ceil_log2(node_size)),
      m_flat_release(flat_release),
      m_wait(wait) {
  if (tree_degree < 2) {
    throw invalid_argument("cachecomm: CACHECOMM_TREE_DEGREE must be at least 2, got " +
                           std::to_string(tree_degree));
  }
  segment_layout layout;
  const auto size = static_cast<std::size_t>(node_size);
  std::size_t flags = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  std::size_t rounds = layout.reserve(
      slot_array<padded_flag>::bytes_for(size * static_cast<std::size_t>(std::max(1, m_rounds))));
  std::size_t bytes = layout.reserve(byte_flag_bytes(node_size));
  std::size_t counter = layout.reserve(slot_array<padded_flag>::bytes_for(2));
  m_flags = slot_array<padded_flag>(area + flags, size);
  m_dissemination = slot_array<padded_flag>(area + rounds,
                                            size * static_cast<std::size_t>(std::max(1, m_rounds)));
  m_bytes = reinterpret_cast<std::uint8_t*>(area + bytes);
  m_counter = slot_array<padded_flag>(area + counter, 2);

  const auto& algorithms = all_barrier_algorithms();
  m_trees.resize(algorithms.size() + 1);
  for (barrier_algorithm algorithm : algorithms) {
    m_trees[static_cast<std::size_t>(algorithm)] =
        make_barrier_tree(algorithm, node_size, node_rank, tree_degree);
  }
}

const barrier_tree& node_barrier::tree_for(barrier_algorithm algorithm) const {
  return m_trees.at(static_cast<std::size_t>(algorithm));
}

void node_barrier::arrive(barrier_algorithm algorithm) {
  ++m_epoch;
  if (m_size == 1) return;
  entry_of(algorithm).run.arrive(*this);
}

void node_barrier::depart(barrier_algorithm algorithm) {
  if (m_size == 1) return;
  entry_of(algorithm).run.depart(*this);
}

void node_barrier::full(barrier_algorithm algorithm) {
  const barrier_function& phases = entry_of(algorithm).run;
  ++m_epoch;
  if (m_size == 1) return;
  phases.arrive(*this);
  if (!phases.gather_is_complete) phases.depart(*this);
}

void node_barrier::dissemination_release() {
  ++m_epoch;
  dissemination();
}

void node_barrier::counter() {
  // Its own epoch, not m_epoch: the count must come to exactly size x the counter barriers so
  // far, whatever other algorithms ran between them.
  const std::uint32_t epoch = ++m_counter_epoch;
  const std::uint32_t arrivals = m_counter[0].value.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (arrivals == epoch * static_cast<std::uint32_t>(m_size)) {  // both wrap alike
    m_wait->publish(m_counter[1].value, epoch);
    return;
  }
  m_wait->wait_reach(m_counter[1].value, epoch, -1, "barrier (counter release)");
}

void node_barrier::arrive_tree(barrier_algorithm algorithm) {
  const barrier_tree& tree = tree_for(algorithm);
  const std::uint32_t arrived = 2 * m_epoch - 1;
  for (int child : tree.gather_children) {
    m_wait->wait_reach(m_flags[static_cast<std::size_t>(child)].value, arrived, child,
                       "barrier (gather)");
  }
  if (tree.gather_parent >= 0)
    m_wait->publish(m_flags[static_cast<std::size_t>(m_rank)].value, arrived);
}

void node_barrier::depart_tree(barrier_algorithm algorithm) {
  const barrier_tree& tree = tree_for(algorithm);
  const std::uint32_t released = 2 * m_epoch;
  if (m_rank != 0) {
    m_wait->wait_reach(m_flags[static_cast<std::size_t>(m_rank)].value, released,
                       m_flat_release ? 0 : tree.release_parent, "barrier (release)");
  }
  if (m_flat_release) {
    if (m_rank == 0) {
      for (int rank = 1; rank < m_size; ++rank)
        m_wait->publish(m_flags[static_cast<std::size_t>(rank)].value, released);
    }
    return;
  }
  for (int child : tree.release_children) {
    m_wait->publish(m_flags[static_cast<std::size_t>(child)].value, released);
  }
}

void node_barrier::arrive_central_byte() {
  if (m_rank != 0) {
    std::atomic_ref<std::uint8_t>(m_bytes[m_rank]).store(1, std::memory_order_seq_cst);
    m_wait->wake(word_of_byte(m_bytes, m_rank));
    return;
  }
  for (int rank = 1; rank < m_size; ++rank) {
    std::atomic_ref<std::uint8_t> flag(m_bytes[rank]);
    m_wait->wait(
        word_of_byte(m_bytes, rank), [&] { return flag.load(std::memory_order_acquire) == 1; },
        rank, "barrier (central-byte gather)");
  }
}

void node_barrier::depart_central_byte() {
  if (m_rank != 0) {
    std::atomic_ref<std::uint8_t> flag(m_bytes[m_rank]);
    m_wait->wait(
        word_of_byte(m_bytes, m_rank), [&] { return flag.load(std::memory_order_acquire) == 0; }, 0,
        "barrier (central-byte release)");
    return;
  }
  // The root resets eight flags per store, the way the paper's compiler vectorized it.
  const std::size_t words = byte_flag_bytes(m_size) / sizeof(std::uint64_t);
  auto* wide = reinterpret_cast<std::uint64_t*>(m_bytes);
  for (std::size_t word = 0; word < words; ++word) {
    std::atomic_ref<std::uint64_t>(wide[word]).store(0, std::memory_order_seq_cst);
  }
  for (std::size_t word = 0; word < words * 2; ++word) {
    m_wait->wake(reinterpret_cast<const std::uint32_t*>(m_bytes) + word);
  }
}

void node_barrier::dissemination() {
  const auto rounds = static_cast<std::size_t>(m_rounds);
  for (int round = 0; round < m_rounds; ++round) {
    const int partner = (m_rank + (1 << round)) % m_size;
    const int source = (m_rank - (1 << round) % m_size + m_size) % m_size;
    m_wait->publish(m_dissemination[static_cast<std::size_t>(partner) * rounds +
                                    static_cast<std::size_t>(round)]
                        .value,
                    m_epoch);
    m_wait->wait_reach(
        m_dissemination[static_cast<std::size_t>(m_rank) * rounds + static_cast<std::size_t>(round)]
            .value,
        m_epoch, source, "barrier (dissemination)");
  }
}

}  // namespace cachecomm::detail
