/* Plain MPI program: the nonblocking collectives with ranks that describe the same data with
 * different datatypes of one type signature, as MPI allows: the root alone strided, the non-roots
 * alone a strided vector (one element per block), alternate ranks strided, a struct with gaps on
 * even ranks against contiguous MPI_INT on odd ones, and send and receive sides of different
 * layouts. Covers MPI_Ibcast, MPI_Iallgather, MPI_Igather, MPI_Iscatter and MPI_Ialltoall (in place
 * too) for every root, on world and on a split in reversed rank order, with blocks below and above
 * the preload's limits, several requests outstanding at once (more than the preload's ring) under
 * Waitall, Testall and Waitany, and the program freeing its datatypes right after the start.
 * The reductions (MPI_Ireduce, MPI_Iallreduce, MPI_Iscan, MPI_Iexscan, MPI_Ireduce_scatter_block)
 * take one datatype on every rank (a predefined operation on a derived datatype is an error:
 * MPI_ERR_OP in Open MPI and MPICH), so their per-rank difference is MPI_IN_PLACE at MPI_Ireduce's
 * root alone, checked here beside the others; MPI_Ibarrier has no data.
 *
 * Every result is compared with the system MPI's blocking answer on contiguous MPI_INT buffers,
 * computed in the same run through the PMPI_ names, and the gaps of every layout must stay
 * untouched. With the preload, a rank whose path depends on its own layout leaves the others
 * waiting forever: the test's time limit turns that into a failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonblocking_check.h"

enum layout_kind { dense, strided, vector, gapped_struct, layout_kinds };
static const char* layout_names[layout_kinds] = {"int", "strided", "vector", "struct"};
static const int poison = -7777;

/* Where int j of the data lies in a buffer of this layout (in ints). */
static size_t position(int kind, size_t j) {
  switch (kind) {
    case dense: return j;
    case strided:
    case vector: return 2 * j;
    default: return j / 2 * 5 + j % 2 * 3;
  }
}
static size_t span(size_t ints) {
  return ints * 3 + 8;
}

/* The datatype and count describing one block of n ints (n even) in this layout. */
typedef struct {
  MPI_Datatype type;
  int count;
} block_type;
static block_type block_of(int kind, int n) {
  block_type b = {MPI_INT, n};
  MPI_Datatype inner;
  switch (kind) {
    case strided: MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &b.type); break;
    case vector:
      /* One element per block: n ints, every other one. */
      MPI_Type_vector(n, 1, 2, MPI_INT, &inner);
      MPI_Type_create_resized(inner, 0, 2 * (MPI_Aint)n * (MPI_Aint)sizeof(int), &b.type);
      MPI_Type_free(&inner);
      b.count = 1;
      break;
    case gapped_struct: {
      const int lengths[2] = {1, 1};
      const MPI_Aint displacements[2] = {0, 3 * (MPI_Aint)sizeof(int)};
      const MPI_Datatype members[2] = {MPI_INT, MPI_INT};
      MPI_Type_create_struct(2, lengths, displacements, members, &inner);
      MPI_Type_create_resized(inner, 0, 5 * (MPI_Aint)sizeof(int), &b.type);
      MPI_Type_free(&inner);
      b.count = n / 2;
      break;
    }
    default: return b;
  }
  MPI_Type_commit(&b.type);
  return b;
}
static void free_type(block_type* b) {
  if (b->type != MPI_INT) MPI_Type_free(&b->type);
}

/* A buffer holding `ints` ints of data in a layout, everything else poisoned. */
typedef struct {
  int kind;
  size_t ints;
  int* memory;
} laid_out;
static laid_out lay_out(int kind, size_t ints, const int* values) {
  laid_out l = {kind, ints, malloc(span(ints) * sizeof(int))};
  for (size_t i = 0; i < span(ints); ++i) l.memory[i] = poison;
  if (values != NULL)
    for (size_t j = 0; j < ints; ++j) l.memory[position(kind, j)] = values[j];
  return l;
}
/* Whether the data equals `want` and every gap is untouched. */
static int holds(const laid_out* l, const int* want) {
  size_t next = 0;
  for (size_t i = 0; i < span(l->ints); ++i) {
    if (next < l->ints && i == position(l->kind, next)) {
      if (l->memory[i] != want[next]) return 0;
      ++next;
    } else if (l->memory[i] != poison) {
      return 0;
    }
  }
  return 1;
}

static int value(int rank, size_t j) {
  return rank * 100003 + (int)j * 7 + 1;
}

enum { modes = 5 };
static const char* mode_names[modes] = {"root alone strided", "non-roots alone vector",
                                        "alternate ranks strided", "struct vs int", "mixed sides"};
/* The layout of one side (0: send, 1: receive) of a rank in a mode. */
static int layout_for(int mode, int rank, int root, int side) {
  switch (mode) {
    case 0: return rank == root ? strided : dense;
    case 1: return rank != root ? vector : dense;
    case 2: return rank % 2 ? strided : dense;
    case 3: return rank % 2 ? dense : gapped_struct;
    default: return (rank + 2 * side) % layout_kinds;
  }
}

/* Ints per block; 70000: beyond the preload's 256 KiB slot (ibcast and igather go in chunks). */
static const int sizes[] = {2, 1000, 5000, 70000};
enum { size_cases = sizeof sizes / sizeof sizes[0], calls = 5 };
static const char* call_names[calls] = {"ibcast", "iallgather", "igather", "iscatter", "ialltoall"};
static long checked[calls];

/* One case: the five calls started together (more than the preload's smallest ring, 4 slots, with
 * the reduce), the datatypes freed at once, completed by `completion` (0 Waitall, 1 Testall, 2
 * Waitany). */
static void run_case(MPI_Comm comm, int mode, int n, int root, int in_place, int completion) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t block = (size_t)n, all = block * (size_t)size;
  const int send_kind = layout_for(mode, rank, root, 0),
            recv_kind = layout_for(mode, rank, root, 1);
  int* mine = malloc(all * sizeof(int));
  int* root_data = malloc(all * sizeof(int));
  int* want[calls];
  for (size_t j = 0; j < all; ++j) {
    mine[j] = value(rank, j);
    root_data[j] = value(root, j);
  }
  for (int c = 0; c < calls; ++c) want[c] = malloc(all * sizeof(int));
  memcpy(want[0], root_data, block * sizeof(int));
  PMPI_Allgather(mine, n, MPI_INT, want[1], n, MPI_INT, comm);
  memcpy(want[2], want[1], all * sizeof(int));
  memcpy(want[3], root_data + (size_t)rank * block, block * sizeof(int));
  PMPI_Alltoall(mine, n, MPI_INT, want[4], n, MPI_INT, comm);

  /* Buffers: results in recv_kind, inputs in send_kind. */
  laid_out bcast = lay_out(recv_kind, block, rank == root ? root_data : NULL);
  laid_out gather_in = lay_out(send_kind, block, mine);
  laid_out allgather_out = lay_out(recv_kind, all, NULL);
  laid_out gather_out = lay_out(recv_kind, all, NULL);
  laid_out scatter_in = lay_out(send_kind, all, root_data);
  laid_out scatter_out = lay_out(recv_kind, block, NULL);
  laid_out alltoall_in = lay_out(send_kind, all, mine);
  laid_out alltoall_out = lay_out(recv_kind, all, in_place ? mine : NULL);
  if (in_place) {
    /* Each rank's own block sits at its place in the result (for gather, the root's). */
    for (size_t j = 0; j < block; ++j) {
      allgather_out.memory[position(recv_kind, (size_t)rank * block + j)] = mine[j];
      if (rank == root) gather_out.memory[position(recv_kind, (size_t)root * block + j)] = mine[j];
    }
  }
  block_type send_type = block_of(send_kind, n), recv_type = block_of(recv_kind, n);
  const int is_root = rank == root;
  MPI_Request requests[calls + 1];
  MPI_Ibcast(bcast.memory, recv_type.count, recv_type.type, root, comm, &requests[0]);
  MPI_Iallgather(in_place ? MPI_IN_PLACE : gather_in.memory, send_type.count, send_type.type,
                 allgather_out.memory, recv_type.count, recv_type.type, comm, &requests[1]);
  MPI_Igather(in_place && is_root ? MPI_IN_PLACE : gather_in.memory, send_type.count,
              send_type.type, gather_out.memory, recv_type.count, recv_type.type, root, comm,
              &requests[2]);
  MPI_Iscatter(scatter_in.memory, send_type.count, send_type.type,
               in_place && is_root ? MPI_IN_PLACE : scatter_out.memory, recv_type.count,
               recv_type.type, root, comm, &requests[3]);
  MPI_Ialltoall(in_place ? MPI_IN_PLACE : alltoall_in.memory, send_type.count, send_type.type,
                alltoall_out.memory, recv_type.count, recv_type.type, comm, &requests[4]);
  /* A reduction with MPI_IN_PLACE at the root only. */
  long long sum_in = value(rank, 0), sum_out = is_root ? sum_in : -1, sum_want = 0;
  PMPI_Reduce(&sum_in, &sum_want, 1, MPI_LONG_LONG, MPI_SUM, root, comm);
  MPI_Ireduce(is_root ? MPI_IN_PLACE : &sum_in, &sum_out, 1, MPI_LONG_LONG, MPI_SUM, root, comm,
              &requests[5]);
  free_type(&send_type);
  free_type(&recv_type);

  MPI_Status statuses[calls + 1]; /* not MPI_STATUSES_IGNORE: GCC misreads MPICH's constant */
  if (completion == 0) {
    MPI_Waitall(calls + 1, requests, statuses);
  } else if (completion == 1) {
    int done = 0;
    while (!done) MPI_Testall(calls + 1, requests, &done, statuses);
  } else {
    for (int left = calls + 1; left > 0; --left) {
      int index;
      MPI_Waitany(calls + 1, requests, &index, MPI_STATUS_IGNORE);
      CHECK(index != MPI_UNDEFINED, "waitany found no request");
    }
  }

  const char* m = mode_names[mode];
  CHECK(holds(&bcast, want[0]), "ibcast %s n %d root %d (%s)", m, n, root, layout_names[recv_kind]);
  CHECK(holds(&allgather_out, want[1]), "iallgather %s n %d in_place %d (%s <- %s)", m, n, in_place,
        layout_names[recv_kind], layout_names[send_kind]);
  if (is_root) {
    CHECK(holds(&gather_out, want[2]), "igather %s n %d root %d in_place %d (%s)", m, n, root,
          in_place, layout_names[recv_kind]);
  } else {
    laid_out untouched = lay_out(recv_kind, all, NULL);
    CHECK(memcmp(gather_out.memory, untouched.memory, span(all) * sizeof(int)) == 0,
          "igather %s: a non-root's receive buffer was written", m);
    free(untouched.memory);
  }
  if (!(in_place && is_root))
    CHECK(holds(&scatter_out, want[3]), "iscatter %s n %d root %d (%s)", m, n, root,
          layout_names[recv_kind]);
  CHECK(holds(&scatter_in, root_data), "iscatter %s: the send buffer changed", m);
  CHECK(holds(&alltoall_out, want[4]), "ialltoall %s n %d in_place %d (%s <- %s)", m, n, in_place,
        layout_names[recv_kind], layout_names[send_kind]);
  if (is_root)
    CHECK(sum_out == sum_want, "ireduce in place at root %d: %lld, want %lld", root, sum_out,
          sum_want);
  for (int c = 0; c < calls; ++c) ++checked[c];

  laid_out* buffers[] = {&bcast,      &gather_in,   &allgather_out, &gather_out,
                         &scatter_in, &scatter_out, &alltoall_in,   &alltoall_out};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; ++i) free(buffers[i]->memory);
  for (int c = 0; c < calls; ++c) free(want[c]);
  free(mine);
  free(root_data);
}

static void run_all(MPI_Comm comm, const char* label) {
  int size;
  MPI_Comm_size(comm, &size);
  memset(checked, 0, sizeof checked);
  int completion = 0;
  for (int mode = 0; mode < modes; ++mode)
    for (int s = 0; s < size_cases; ++s)
      for (int root = 0; root < size; ++root)
        for (int in_place = 0; in_place < 2; ++in_place)
          run_case(comm, mode, sizes[s], root, in_place, completion++ % 3);
  if (world_rank == 0) {
    for (int c = 0; c < calls; ++c)
      printf("%s: %s checked %ld cases with mixed layouts\n", label, call_names[c], checked[c]);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Warm up the communicators: the preload builds its state after a few blocking collectives, and
   * the channel a nonblocking call asked for at the next one. */
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &split);
  for (int i = 0; i < 6; ++i) {
    int x = i, y;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, split);
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ibarrier(split, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  run_all(MPI_COMM_WORLD, "world");
  run_all(split, "split reversed");
  MPI_Comm_free(&split);
  MPI_Finalize();
  return 0;
}
