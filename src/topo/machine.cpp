#include "topo/machine.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <array>
#include <mutex>

namespace cachecomm::detail {

namespace {

// RAII owner of an hwloc topology.
class hwloc_topology {
 public:
  hwloc_topology() {
    if (hwloc_topology_init(&m_topology) != 0) return;
    if (hwloc_topology_load(m_topology) != 0) {
      hwloc_topology_destroy(m_topology);
      m_topology = nullptr;
    }
  }
  ~hwloc_topology() {
    if (m_topology != nullptr) hwloc_topology_destroy(m_topology);
  }
  hwloc_topology(const hwloc_topology&) = delete;
  hwloc_topology& operator=(const hwloc_topology&) = delete;
  [[nodiscard]] hwloc_topology_t get() const { return m_topology; }

 private:
  hwloc_topology_t m_topology = nullptr;
};

machine_description describe() {
  machine_description machine;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) machine.host = host.data();
  hwloc_topology topology;
  if (topology.get() == nullptr) {
    long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    machine.cores = machine.processing_units = online > 0 ? static_cast<int>(online) : 1;
    return machine;
  }
  // By default hwloc shows only what the job's cgroup allows, which is what ranks can run on.
  int cores = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_CORE);
  int units = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_PU);
  machine.processing_units = units > 0 ? units : 1;
  machine.cores = cores > 0 ? cores : machine.processing_units;
  hwloc_obj_t root = hwloc_get_root_obj(topology.get());
  const char* model = hwloc_obj_get_info_by_name(root, "CPUModel");
  if (model == nullptr) {
    hwloc_obj_t package = hwloc_get_obj_by_type(topology.get(), HWLOC_OBJ_PACKAGE, 0);
    if (package != nullptr) model = hwloc_obj_get_info_by_name(package, "CPUModel");
  }
  if (model != nullptr) machine.cpu_model = model;
  return machine;
}

}  // namespace

const machine_description& this_machine() {
  static const machine_description machine = describe();
  return machine;
}

int current_processing_unit() {
  int cpu = ::sched_getcpu();
  return cpu >= 0 ? cpu : -1;
}

}  // namespace cachecomm::detail
