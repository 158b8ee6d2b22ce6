#include "topo/machine.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <array>
#include <mutex>
#include <string>
#include <utility>

namespace cachecomm::detail {

namespace {

// RAII owner of an hwloc topology.
class hwloc_topology {
 public:
  // Without hwloc's x86 backend where Linux tells enough: that backend binds the process to
  // every processing unit in turn to read each one's CPUID, which on a 2-core EPYC VM made the
  // load 5.8-7.8 ms instead of 2.1-4.0 (the first collective call of a program pays it), and on a
  // many-core node moves every rank across all cores while its neighbours start. The Linux
  // backend gives the same cores, caches and CPU model from /sys and /proc; where it finds no L2
  // cache (no cache directories in /sys), the x86 backend runs after all.
  hwloc_topology() {
    m_topology = load(false);
    if (m_topology != nullptr &&
        hwloc_get_obj_by_type(m_topology, HWLOC_OBJ_L2CACHE, 0) == nullptr) {
      hwloc_topology_destroy(m_topology);
      m_topology = load(true);
    }
  }
  ~hwloc_topology() {
    if (m_topology != nullptr) hwloc_topology_destroy(m_topology);
  }
  hwloc_topology(const hwloc_topology&) = delete;
  hwloc_topology& operator=(const hwloc_topology&) = delete;
  [[nodiscard]] hwloc_topology_t get() const { return m_topology; }

 private:
  static hwloc_topology_t load(bool with_x86) {
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0) return nullptr;
#if HWLOC_API_VERSION >= 0x00020100
    if (!with_x86)
      hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#else
    (void)with_x86;
#endif
    if (hwloc_topology_load(topology) != 0) {
      hwloc_topology_destroy(topology);
      return nullptr;
    }
    return topology;
  }

  hwloc_topology_t m_topology = nullptr;
};

// The topology is loaded once and kept: later questions (where am I running?) reuse it.
const hwloc_topology& shared_topology() {
  static const hwloc_topology topology;
  return topology;
}

// The size of the first cache of each data level ("L1d 32K, L2 512K, L3 32M").
std::string describe_caches(hwloc_topology_t topology) {
  constexpr std::array<std::pair<hwloc_obj_type_t, const char*>, 3> levels = {
      {{HWLOC_OBJ_L1CACHE, "L1d"}, {HWLOC_OBJ_L2CACHE, "L2"}, {HWLOC_OBJ_L3CACHE, "L3"}}};
  std::string text;
  for (const auto& [type, name] : levels) {
    hwloc_obj_t cache = hwloc_get_obj_by_type(topology, type, 0);
    if (cache == nullptr || cache->attr == nullptr) continue;
    const unsigned long long kib = cache->attr->cache.size >> 10U;
    const std::string size = kib >= 1024 && kib % 1024 == 0 ? std::to_string(kib >> 10U) + "M"
                                                            : std::to_string(kib) + "K";
    text += (text.empty() ? "" : ", ") + std::string(name) + " " + size;
  }
  return text;
}

machine_description describe() {
  machine_description machine;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) machine.host = host.data();
  const hwloc_topology& topology = shared_topology();
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
  machine.caches = describe_caches(topology.get());
  hwloc_obj_t l2 = hwloc_get_obj_by_type(topology.get(), HWLOC_OBJ_L2CACHE, 0);
  if (l2 != nullptr && l2->attr != nullptr) machine.l2_cache_bytes = l2->attr->cache.size;
  return machine;
}

}  // namespace

const machine_description& this_machine() {
  static const machine_description machine = describe();
  return machine;
}

int current_core() {
  hwloc_topology_t topology = shared_topology().get();
  if (topology == nullptr) return -1;
  hwloc_bitmap_t where = hwloc_bitmap_alloc();
  int core = -1;
  if (where != nullptr && hwloc_get_last_cpu_location(topology, where, HWLOC_CPUBIND_THREAD) == 0) {
    hwloc_obj_t unit =
        hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(hwloc_bitmap_first(where)));
    hwloc_obj_t core_object =
        unit == nullptr ? nullptr : hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, unit);
    if (core_object != nullptr) core = static_cast<int>(core_object->logical_index);
  }
  hwloc_bitmap_free(where);
  return core;
}

}  // namespace cachecomm::detail
