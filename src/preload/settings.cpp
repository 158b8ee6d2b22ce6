// The preload library's settings. Compiled into libcachecomm (not libcachecomm_mpi) so that the
// one settings table, and `cachecomm-info`, know them even in programs that do not preload.
#include "cachecomm/config.hpp"

namespace cachecomm {

namespace {

const detail::setting_declaration preload_setting{
    "CACHECOMM_PRELOAD", "1",
    "Preload library: 0 passes every MPI call straight to the system MPI."};
const detail::setting_declaration barrier_setting{
    "CACHECOMM_PRELOAD_BARRIER", "1",
    "Preload library: serve MPI_Barrier with cachecomm (0: pass it through)."};
const detail::setting_declaration bcast_setting{
    "CACHECOMM_PRELOAD_BCAST", "1",
    "Preload library: serve MPI_Bcast with cachecomm (0: pass it through)."};
const detail::setting_declaration reduce_setting{
    "CACHECOMM_PRELOAD_REDUCE", "1",
    "Preload library: serve MPI_Reduce with cachecomm (0: pass it through)."};
const detail::setting_declaration allreduce_setting{
    "CACHECOMM_PRELOAD_ALLREDUCE", "1",
    "Preload library: serve MPI_Allreduce with cachecomm (0: pass it through)."};
const detail::setting_declaration allgather_setting{
    "CACHECOMM_PRELOAD_ALLGATHER", "1",
    "Preload library: serve MPI_Allgather with cachecomm (0: pass it through)."};
const detail::setting_declaration gather_setting{
    "CACHECOMM_PRELOAD_GATHER", "1",
    "Preload library: serve MPI_Gather with cachecomm (0: pass it through)."};
const detail::setting_declaration scatter_setting{
    "CACHECOMM_PRELOAD_SCATTER", "1",
    "Preload library: serve MPI_Scatter with cachecomm (0: pass it through)."};
const detail::setting_declaration alltoall_setting{
    "CACHECOMM_PRELOAD_ALLTOALL", "1",
    "Preload library: serve MPI_Alltoall with cachecomm (0: pass it through)."};
const detail::setting_declaration scan_setting{
    "CACHECOMM_PRELOAD_SCAN", "1",
    "Preload library: serve MPI_Scan and MPI_Exscan with cachecomm (0: pass them through)."};
const detail::setting_declaration windows_setting{
    "CACHECOMM_PRELOAD_WINDOWS", "1",
    "Preload library: serve windows from MPI_Win_allocate (fence, PSCW, put/get/accumulate) with "
    "cachecomm "
    "(0: pass them through)."};
const detail::setting_declaration warmup_setting{
    "CACHECOMM_PRELOAD_WARMUP", "3",
    "Preload library: collective calls a communicator makes through MPI before cachecomm state is "
    "built "
    "for it (short-lived communicators never pay for the shared memory)."};
const detail::setting_declaration summary_setting{
    "CACHECOMM_PRELOAD_SUMMARY", "0",
    "Preload library: 1 prints at MPI_Finalize (rank 0, stderr) how many calls of each kind "
    "cachecomm served "
    "and how many passed through, and why."};

}  // namespace

}  // namespace cachecomm
