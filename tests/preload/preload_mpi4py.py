"""An unmodified mpi4py program at mpi4py's default thread level (MPI_THREAD_MULTIPLE): buffer and
pickle-based collectives, blocking and nonblocking, on COMM_WORLD and on a split. Rank 0 prints
every result, so the output is the same with and without the preload library."""
from mpi4py import MPI  # noqa: E402
import numpy as np  # noqa: E402


def exercise(comm, label, rounds=10):
    rank, size = comm.Get_rank(), comm.Get_size()
    lines = []
    for r in range(rounds):
        comm.Barrier()
        root = r % size
        data = np.arange(1000, dtype=np.float64) * (r + 1) if rank == root else np.zeros(1000)
        comm.Bcast(data, root=root)
        total = np.empty(16, dtype=np.int64)
        comm.Allreduce(np.full(16, rank + r, dtype=np.int64), total, op=MPI.SUM)
        biggest = np.empty(4, dtype=np.float64)
        comm.Allreduce(np.array([rank, -rank, r, 1.5 * rank]), biggest, op=MPI.MAX)
        gathered = np.empty(2 * size, dtype=np.int32)
        comm.Allgather(np.array([rank, r], dtype=np.int32), gathered)
        reduced = np.zeros(3, dtype=np.int32)
        comm.Reduce(np.array([rank, 1, r], dtype=np.int32), reduced, op=MPI.SUM, root=root)
        in_place = np.array([rank + 1.0, 2.0])
        comm.Allreduce(MPI.IN_PLACE, in_place, op=MPI.PROD)
        # Nonblocking, as asyncio and pipelined solvers use them: served at MPI_THREAD_MULTIPLE too.
        started = np.full(8, rank * 2 + r, dtype=np.int64)
        isum = np.empty(8, dtype=np.int64)
        ibcast = np.arange(64, dtype=np.float64) * r if rank == root else np.zeros(64)
        igathered = np.empty(size, dtype=np.int32)
        requests = [comm.Iallreduce(started, isum, op=MPI.SUM), comm.Ibcast(ibcast, root=root),
                    comm.Iallgather(np.array([rank * r], dtype=np.int32), igathered), comm.Ibarrier()]
        MPI.Request.Waitall(requests)
        obj = comm.bcast({"round": r, "from": root} if rank == root else None, root=root)
        everyone = comm.allgather((rank, r))
        lines.append(f"{label} round {r}: bcast {data.sum():.1f} allreduce {total.tolist()} max {biggest.tolist()} "
                     f"allgather {gathered.tolist()} reduce-at-root {reduced.tolist() if rank == root else None} "
                     f"prod {in_place.tolist()} obj {obj} objs {everyone} isum {isum.tolist()} "
                     f"ibcast {ibcast.sum():.1f} iallgather {igathered.tolist()}")
    return lines


def main():
    world = MPI.COMM_WORLD
    assert MPI.Query_thread() == MPI.THREAD_MULTIPLE, MPI.Query_thread()
    lines = exercise(world, "world")
    halves = world.Split(world.Get_rank() % 2, world.Get_rank())
    lines += exercise(halves, f"half{world.Get_rank() % 2}")
    halves.Free()
    everything = world.gather(lines, root=0)
    if world.Get_rank() == 0:
        for rank, rank_lines in enumerate(everything):
            for line in rank_lines:
                print(f"rank {rank}: {line}")


main()
