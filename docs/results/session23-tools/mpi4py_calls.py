"""mpi4py's buffer collectives back to back on the same buffers (as an iterative code makes them):
median µs per call of Bcast, Allreduce and Allgather at 8 B and 64 KiB. Under MPICH and Intel MPI
mpi4py calls their large-count forms (MPI_Bcast_c...)."""
import sys
import time
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
for nbytes in (8, 65536):
    n = nbytes // 8
    send = np.full(n, comm.rank + 1.0)
    recv = np.empty(n)
    gathered = np.empty(n * comm.size)
    ops = {
        "Bcast": lambda: comm.Bcast(recv, root=0),
        "Allreduce": lambda: comm.Allreduce(send, recv, op=MPI.SUM),
        "Allgather": lambda: comm.Allgather(send, gathered),
    }
    for name, op in ops.items():
        samples = []
        for _ in range(7):
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(calls):
                op()
            samples.append((time.perf_counter() - start) / calls * 1e6)
        worst = comm.allreduce(sorted(samples)[3], op=MPI.MAX)
        if comm.rank == 0:
            print(f"{name} {nbytes} {worst:.2f}")
