// The preload library's settings. Compiled into libcachecomm (not libcachecomm_mpi) so that the
// one settings table, and `cachecomm-info`, know them even in programs that do not preload.
#include "preload/settings.hpp"

#include "coll/coll_settings.hpp"

namespace cachecomm::detail::preload {

namespace {

const setting<bool> preload_setting{
    "CACHECOMM_PRELOAD", true,
    "Preload library: 0 passes every MPI call straight to the system MPI."};
const setting<bool> barrier_setting{
    "CACHECOMM_PRELOAD_BARRIER", true,
    "Preload library: serve MPI_Barrier with cachecomm (0: pass it through)."};
const setting<bool> bcast_setting{
    "CACHECOMM_PRELOAD_BCAST", true,
    "Preload library: serve MPI_Bcast with cachecomm (0: pass it through)."};
const setting<bool> reduce_setting{
    "CACHECOMM_PRELOAD_REDUCE", true,
    "Preload library: serve MPI_Reduce with cachecomm (0: pass it through)."};
const setting<bool> allreduce_setting{
    "CACHECOMM_PRELOAD_ALLREDUCE", true,
    "Preload library: serve MPI_Allreduce with cachecomm (0: pass it through)."};
const setting<bool> allgather_setting{
    "CACHECOMM_PRELOAD_ALLGATHER", true,
    "Preload library: serve MPI_Allgather with cachecomm (0: pass it through)."};
const setting<bool> gather_setting{
    "CACHECOMM_PRELOAD_GATHER", true,
    "Preload library: serve MPI_Gather with cachecomm (0: pass it through)."};
const setting<bool> scatter_setting{
    "CACHECOMM_PRELOAD_SCATTER", true,
    "Preload library: serve MPI_Scatter with cachecomm (0: pass it through)."};
const setting<bool> alltoall_setting{
    "CACHECOMM_PRELOAD_ALLTOALL", true,
    "Preload library: serve MPI_Alltoall with cachecomm (0: pass it through)."};
const setting<bool> scan_setting{
    "CACHECOMM_PRELOAD_SCAN", true,
    "Preload library: serve MPI_Scan and MPI_Exscan with cachecomm (0: pass them through)."};
const setting<bool> nonblocking_setting{
    "CACHECOMM_PRELOAD_NONBLOCKING", true,
    "Preload library: serve MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, "
    "MPI_Iallgather, MPI_Ialltoall, MPI_Igather, MPI_Iscatter, MPI_Ireduce_scatter_block, "
    "MPI_Iscan, MPI_Iexscan, MPI_Iallgatherv and MPI_Ireduce_scatter with cachecomm (0: pass "
    "them through)."};
const setting<long long> nonblocking_bytes_setting{
    "CACHECOMM_PRELOAD_NONBLOCKING_BYTES", 0,
    "Preload library: the slot of the nonblocking collectives' channel (bytes one rank puts in: "
    "a block for MPI_Iallgather, MPI_Igather and MPI_Iscatter, a block per rank for "
    "MPI_Ialltoall and MPI_Ireduce_scatter_block; 0: 256 KiB up to 8 ranks on the node, halved "
    "as ranks double, at least 64 KiB). Larger messages are served in chunks of a slot, up to a "
    "whole ring of them (CACHECOMM_PRELOAD_NONBLOCKING_SLOTS); larger still pass through.",
    nonblocking_slot_bytes_limits};
const setting<long long> nonblocking_slots_setting{
    "CACHECOMM_PRELOAD_NONBLOCKING_SLOTS", 0,
    "Preload library: slots per rank each communicator's nonblocking collectives cycle through, "
    "a power of two (0: spanning twice a core's L2 per rank, within 8 MiB per communicator, or 4 "
    "when oversubscribed). More slots let more operations be in flight and rewrite each line "
    "later.",
    nonblocking_ring_limits};
const setting<bool> reduce_scatter_setting{
    "CACHECOMM_PRELOAD_REDUCE_SCATTER", true,
    "Preload library: serve MPI_Reduce_scatter_block with cachecomm (0: pass it through)."};
// Not CACHECOMM_PRELOAD_REDUCE_SCATTER: that name switched MPI_Reduce_scatter_block before
// MPI_Reduce_scatter was served, and keeps doing so. The V names the per-rank counts, as in
// CACHECOMM_PRELOAD_ALLGATHERV.
const setting<bool> reduce_scatterv_setting{
    "CACHECOMM_PRELOAD_REDUCE_SCATTERV", true,
    "Preload library: serve MPI_Reduce_scatter (per-rank recvcounts) with cachecomm (0: pass it "
    "through)."};
const setting<bool> allgatherv_setting{
    "CACHECOMM_PRELOAD_ALLGATHERV", true,
    "Preload library: serve MPI_Allgatherv with cachecomm (0: pass it through)."};
const setting<bool> gatherv_setting{
    "CACHECOMM_PRELOAD_GATHERV", true,
    "Preload library: serve MPI_Gatherv with cachecomm (0: pass it through)."};
const setting<bool> scatterv_setting{
    "CACHECOMM_PRELOAD_SCATTERV", true,
    "Preload library: serve MPI_Scatterv with cachecomm (0: pass it through)."};
const setting<bool> alltoallv_setting{
    "CACHECOMM_PRELOAD_ALLTOALLV", true,
    "Preload library: serve MPI_Alltoallv with cachecomm (0: pass it through)."};
const setting<bool> windows_setting{
    "CACHECOMM_PRELOAD_WINDOWS", true,
    "Preload library: serve windows from MPI_Win_allocate (fence, PSCW, put/get/accumulate) with "
    "cachecomm "
    "(0: pass them through)."};
const setting<long long> warmup_setting{
    "CACHECOMM_PRELOAD_WARMUP",
    3,
    "Preload library: collective calls a communicator makes through MPI before cachecomm state is "
    "built "
    "for it (short-lived communicators never pay for the shared memory).",
    {.min = 0}};
// The world's state is built at MPI_Init (a program may make only nonblocking collectives); a
// communicator made from another by a blocking creation call gets its state in that call too,
// for the first few of each parent: every member is in the call, and a start must stay local.
const setting<long long> eager_children_setting{
    "CACHECOMM_PRELOAD_EAGER_CHILDREN",
    8,
    "Preload library: communicators made from one parent by MPI_Comm_dup, MPI_Comm_dup_with_info, "
    "MPI_Comm_split, MPI_Comm_split_type or MPI_Comm_create whose cachecomm state is built in that "
    "call, where nonblocking collectives may be served and the job is on one node, so that a "
    "communicator that sees only nonblocking collectives is served from its first (later ones: "
    "after the warm-up of blocking calls; 0: none).",
    {.min = 0}};
// Intel MPI 2021 sets up its shared-memory collectives over its first ~550 calls of an operation
// (one call in four 10-20 us slower, whatever the size). Served by cachecomm, those calls come
// later, when online selection times the MPI's call at 16 KiB and more, and a cold MPI loses
// buckets it wins warm (allgather 16-64 KiB). Passing 600 by default under Intel MPI was measured
// and dropped (session 25): OSU's rows then lost cachecomm's 1.3-30x at the first sizes and met
// Intel's slow calls at another row than plain does (osu_reduce of 8 B 0.13x plain), for 0.1-0.3
// gained at allgather 16-32 KiB. For a long-running program that relies on the MPI's own calls.
const setting<long long> mpi_warmup_setting{
    "CACHECOMM_PRELOAD_MPI_WARMUP",
    0,
    "Preload library: calls of each data collective on a communicator passed to MPI before "
    "cachecomm serves that collective there, so that an MPI which sets up its own shared memory "
    "over its first calls (Intel MPI: ~550) has done so when online selection times it.",
    {.min = 0, .max = 65535}};
const setting<bool> summary_setting{
    "CACHECOMM_PRELOAD_SUMMARY", false,
    "Preload library: 1 prints at MPI_Finalize (rank 0, stderr) how many calls of each kind "
    "cachecomm served "
    "and how many passed through, and why."};

// Which setting switches each collective off; communicator management has none.
const setting<bool>* switch_of(call_kind kind) {
  switch (kind) {
    case call_kind::barrier: return &barrier_setting;
    case call_kind::bcast: return &bcast_setting;
    case call_kind::reduce: return &reduce_setting;
    case call_kind::allreduce: return &allreduce_setting;
    case call_kind::allgather: return &allgather_setting;
    case call_kind::gather: return &gather_setting;
    case call_kind::scatter: return &scatter_setting;
    case call_kind::alltoall: return &alltoall_setting;
    case call_kind::scan:
    case call_kind::exscan: return &scan_setting;
    case call_kind::reduce_scatter_block: return &reduce_scatter_setting;
    case call_kind::reduce_scatter: return &reduce_scatterv_setting;
    case call_kind::allgatherv: return &allgatherv_setting;
    case call_kind::gatherv: return &gatherv_setting;
    case call_kind::scatterv: return &scatterv_setting;
    case call_kind::alltoallv: return &alltoallv_setting;
    case call_kind::win_allocate: return &windows_setting;
    case call_kind::ibarrier:
    case call_kind::ibcast:
    case call_kind::ireduce:
    case call_kind::iallreduce:
    case call_kind::iallgather:
    case call_kind::ialltoall:
    case call_kind::igather:
    case call_kind::iscatter:
    case call_kind::ireduce_scatter_block:
    case call_kind::iscan:
    case call_kind::iexscan:
    case call_kind::iallgatherv:
    case call_kind::ireduce_scatter: return &nonblocking_setting;
    default: return nullptr;
  }
}

}  // namespace

preload_settings read_preload_settings(const config& settings) {
  preload_settings result;
  result.enabled = preload_setting.read(settings);
  result.summary = summary_setting.read(settings);
  result.warmup = warmup_setting.read(settings);
  result.eager_children = eager_children_setting.read(settings);
  result.mpi_warmup = mpi_warmup_setting.read(settings);
  result.nonblocking_bytes = static_cast<std::size_t>(nonblocking_bytes_setting.read(settings));
  result.nonblocking_slots = static_cast<std::uint32_t>(nonblocking_slots_setting.read(settings));
  for (std::size_t kind = 0; kind < result.serve.size(); ++kind) {
    const setting<bool>* serve = switch_of(static_cast<call_kind>(kind));
    result.serve[kind] = serve != nullptr && serve->read(settings);
  }
  return result;
}

}  // namespace cachecomm::detail::preload
