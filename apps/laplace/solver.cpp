#include "solver.hpp"

#include <chrono>
#include <cstring>
#include <sstream>

namespace cachecomm::laplace {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

jacobi::jacobi(grid<double>& g, halo_exchange& exchange, const run_options& options)
    : m_grid(&g),
      m_exchange(&exchange),
      m_options(options),
      m_everything(owned_box(g)),
      m_interior(interior_box(g)),
      m_shell(shell_boxes(g)) {
  restart();
}

void jacobi::restart() {
  initialize(*m_grid, 0, m_options.physics);
  m_grid->transport().barrier();
}

void jacobi::step(phase_samples& samples) {
  constexpr int x = 0, y = 1;
  grid<double>& g = *m_grid;
  const double begin = now();
  double compute = 0;
  if (m_options.overlap) {
    halo_handle halos = m_exchange->start();
    const double compute_begin = now();
    compute_laplacian(g, x, y, m_interior);
    compute += now() - compute_begin;
    halos.wait();
    const double shell_begin = now();
    for (const box3& part : m_shell) compute_laplacian(g, x, y, part);
    m_exchange->release_ghosts();  // neighbours may send the next halos while X is relaxed
    relax_all(g, x, y, m_options.physics.coefficient);
    compute += now() - shell_begin;
  } else {
    m_exchange->run();
    const double compute_begin = now();
    compute_laplacian(g, x, y, m_everything);
    m_exchange->release_ghosts();
    relax_all(g, x, y, m_options.physics.coefficient);
    compute += now() - compute_begin;
  }
  const double total = now() - begin;
  const halo_timing& halo = m_exchange->last_timing();
  samples.compute.push_back(compute);
  samples.communicate.push_back(halo.communicate_seconds);
  samples.synchronize.push_back(halo.synchronize_seconds);
  samples.total.push_back(total);
}

phase_samples solve(grid<double>& g, halo_exchange& exchange, const run_options& options) {
  jacobi solver(g, exchange, options);
  phase_samples samples;
  for (int iteration = 0; iteration < options.iterations; ++iteration) solver.step(samples);
  return samples;
}

comparison compare_with_reference(const grid<double>& g, int x,
                                  const std::vector<double>& reference) {
  comparison result;
  const index3& size = g.local_size();
  const index3& offset = g.global_offset();
  const index3& global = g.decomp().global_size();
  for (long i = 0; i < size[0]; ++i)
    for (long j = 0; j < size[1]; ++j)
      for (long k = 0; k < size[2]; ++k) {
        const double mine = g.at(x, i, j, k);
        const double expected = reference[static_cast<std::size_t>(
            ((offset[0] + i) * global[1] + offset[1] + j) * global[2] + offset[2] + k)];
        if (std::memcmp(&mine, &expected, sizeof mine) == 0) continue;
        if (result.mismatches++ == 0) {
          std::ostringstream text;
          text.precision(17);
          text << "rank " << g.rank() << " cell (" << offset[0] + i << "," << offset[1] + j << ","
               << offset[2] + k << ") is " << mine << ", serial run has " << expected;
          result.first = text.str();
        }
      }
  return result;
}

}  // namespace cachecomm::laplace
