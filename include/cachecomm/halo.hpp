// Halo exchange: the pattern is built once per grid and set of fields, then started every
// iteration; start() returns a handle, so the interior can be computed while halos travel.
#pragma once

#include <memory>
#include <vector>

#include "cachecomm/grid.hpp"

namespace cachecomm {

namespace detail {
class halo_engine;
struct halo_plan;
}  // namespace detail

/// Time one exchange spent, split the way the seed's breakdown does.
struct halo_timing {
  double communicate_seconds = 0;  ///< copying, packing, posting, unpacking, verifying
  double synchronize_seconds = 0;  ///< waiting for neighbours (flags, MPI completion)
  std::size_t bytes = 0;           ///< halo bytes this rank sent
};

class halo_exchange;

/// One exchange in flight. Move-only; waits on destruction if never completed.
class halo_handle {
 public:
  halo_handle() = default;
  halo_handle(const halo_handle&) = delete;
  halo_handle& operator=(const halo_handle&) = delete;
  halo_handle(halo_handle&& other) noexcept : m_exchange(other.m_exchange) {
    other.m_exchange = nullptr;
  }
  halo_handle& operator=(halo_handle&& other) noexcept;
  ~halo_handle();

  /// Blocks until every ghost cell of this exchange holds its neighbour's value.
  void wait();
  /// True (and complete) when the exchange has finished; never blocks.
  [[nodiscard]] bool test();
  [[nodiscard]] bool active() const { return m_exchange != nullptr; }

 private:
  friend class halo_exchange;
  explicit halo_handle(halo_exchange* exchange) : m_exchange(exchange) {}
  halo_exchange* m_exchange = nullptr;
};

class halo_exchange {
 public:
  /// Builds the pattern for `fields` of `g` (collective over the grid's transport).
  halo_exchange(grid_base& g, std::vector<int> fields);
  ~halo_exchange();
  halo_exchange(const halo_exchange&) = delete;
  halo_exchange& operator=(const halo_exchange&) = delete;

  /// Starts exchange number n+1. Calling it declares the ghost cells of the previous exchange
  /// consumed (neighbours may overwrite them from now on).
  [[nodiscard]] halo_handle start();
  /// start() then wait().
  void run() { start().wait(); }
  /// Declares the ghost cells of the current exchange read (e.g. after the boundary stencil), so
  /// node neighbours may write the next exchange before this rank calls start() again.
  void release_ghosts();

  [[nodiscard]] const halo_timing& last_timing() const;
  /// Halo bytes this rank sends per exchange.
  [[nodiscard]] std::size_t bytes_per_exchange() const;
  /// The pattern (tests corrupt it to check that checked mode catches misrouted halos).
  [[nodiscard]] detail::halo_plan& plan_for_testing();

 private:
  friend class halo_handle;
  void complete();
  [[nodiscard]] bool try_complete();
  std::unique_ptr<detail::halo_engine> m_engine;
};

}  // namespace cachecomm
