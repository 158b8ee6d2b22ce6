/* Plain MPI program: ranks describe the same data with different datatypes (legal MPI: only the
 * type signatures must match). Derived types on some ranks, the equivalent predefined count on
 * the others, dense, reordered and strided, in bcast, allgather, allgatherv, gatherv and alltoallv
 * (with and without MPI_IN_PLACE),
 * between reductions on the same communicator. Every rank's results are gathered to rank 0, which
 * prints them, so a preloaded run must print exactly what MPI prints (and must not hang: every rank
 * has to take the same path). */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 512
static char lines[64][LINE];
static int line_count;

static void note(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lines[line_count++], LINE, format, args);
  va_end(args);
}

static void note_ints(const char* label, const int* values, int n) {
  char text[LINE];
  int used = snprintf(text, sizeof text, "%s:", label);
  for (int i = 0; i < n && used < LINE - 12; ++i)
    used += snprintf(text + used, sizeof text - used, " %d", values[i]);
  note("%s", text);
}

static void note_doubles(const char* label, const double* values, int n) {
  char text[LINE];
  int used = snprintf(text, sizeof text, "%s:", label);
  for (int i = 0; i < n && used < LINE - 16; ++i)
    used += snprintf(text + used, sizeof text - used, " %g", values[i]);
  note("%s", text);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  MPI_Datatype four_ints, every_other, reversed_pair, triple_doubles, strided_doubles, pair_struct,
      column, column_resized, two_long_doubles, dup_int, two_strided;
  MPI_Type_contiguous(4, MPI_INT, &four_ints);
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other); /* 4 ints with gaps */
  int lengths[2] = {2, 2},
      displacements[2] = {2, 0}; /* ints 2,3 then 0,1: dense but out of order */
  MPI_Type_indexed(2, lengths, displacements, MPI_INT, &reversed_pair);
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple_doubles);
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided_doubles);
  int struct_lengths[2] = {1, 3};
  MPI_Aint struct_displacements[2] = {0, sizeof(int)};
  MPI_Datatype struct_types[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, struct_lengths, struct_displacements, struct_types,
                         &pair_struct);          /* dense */
  MPI_Type_vector(2, 1, size, MPI_INT, &column); /* one column of a 2 x size matrix */
  MPI_Type_create_resized(column, 0, sizeof(int), &column_resized);
  MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &two_long_doubles);
  MPI_Type_dup(MPI_INT, &dup_int);
  MPI_Type_vector(2, 1, 2, MPI_INT, &two_strided);
  MPI_Datatype all_types[] = {four_ints,       every_other, reversed_pair,  triple_doubles,
                              strided_doubles, pair_struct, column_resized, two_long_doubles,
                              dup_int,         two_strided};
  for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i)
    MPI_Type_commit(&all_types[i]);
  four_ints = all_types[0], every_other = all_types[1], reversed_pair = all_types[2];
  triple_doubles = all_types[3], strided_doubles = all_types[4], pair_struct = all_types[5];
  column_resized = all_types[6], two_long_doubles = all_types[7], dup_int = all_types[8];
  two_strided = all_types[9];

  /* MPI requires the same predefined datatype on every rank for a predefined reduction operation
   * (Open MPI and MPICH refuse derived ones with MPI_ERR_OP): the reductions use predefined types,
   * between the derived-type calls on the same communicator. */
  int failures = 0;
  for (int round = 0; round < 6; ++round) { /* past the warm-up: cachecomm state exists */
    line_count = 0;
    const int root = round % size;
    const int derived_here = (rank + round) % 2; /* which ranks use the derived type this round */

    /* bcast: 4 x MPI_INT on some ranks, 1 x contiguous(4, MPI_INT) (or a dense struct) on others.
     */
    int a[4];
    for (int i = 0; i < 4; ++i) a[i] = rank == root ? 10 * round + i : -1;
    if (derived_here)
      MPI_Bcast(a, 1, round % 2 ? four_ints : pair_struct, root, comm);
    else
      MPI_Bcast(a, 4, MPI_INT, root, comm);
    note_ints("bcast contiguous", a, 4);

    /* bcast: strided on some ranks (ints 0,2,4,6 of 8), contiguous on others. */
    int b[8];
    for (int i = 0; i < 8; ++i) b[i] = rank == root ? 100 * round + i : -1;
    if (derived_here)
      MPI_Bcast(b, 1, every_other, root, comm);
    else
      MPI_Bcast(b, 4, MPI_INT, root, comm);
    note_ints("bcast vector", b, 8);

    /* bcast: dense but reordered (indexed 2,3,0,1) against 4 x MPI_INT. */
    for (int i = 0; i < 4; ++i) a[i] = rank == root ? 1000 * round + i : -1;
    if (derived_here)
      MPI_Bcast(a, 1, reversed_pair, root, comm);
    else
      MPI_Bcast(a, 4, MPI_INT, root, comm);
    note_ints("bcast reordered", a, 4);

    /* Reductions between the derived-type calls, with predefined types (see above). */
    int in4[4], out4[4];
    for (int i = 0; i < 4; ++i) {
      in4[i] = (rank + 1) * (i + 1) + round;
      out4[i] = -5;
    }
    MPI_Reduce(in4, out4, 4, MPI_INT, MPI_SUM, root, comm);
    if (rank == root) note_ints("reduce", out4, 4);
    for (int i = 0; i < 4; ++i) a[i] = (rank + 2) * (i + 3) - round;
    MPI_Reduce(rank == root ? MPI_IN_PLACE : a, a, 4, MPI_INT, MPI_MAX, root, comm);
    if (rank == root) note_ints("reduce in place", a, 4);
    double d3[3], r3[3];
    for (int i = 0; i < 3; ++i) d3[i] = 0.5 * (rank + 1) + i + round;
    MPI_Allreduce(d3, r3, 3, MPI_DOUBLE, MPI_SUM, comm);
    note_doubles("allreduce doubles", r3, 3);
    /* long double: cachecomm does not reduce it, every rank passes it to MPI */
    long double ld[2] = {rank + 0.25L, round - 1.0L}, ldr[2] = {0, 0};
    MPI_Allreduce(ld, ldr, 2, MPI_LONG_DOUBLE, MPI_SUM, comm);
    note("allreduce long double: %.2Lf %.2Lf", ldr[0], ldr[1]);

    /* bcast of doubles: contiguous(3), every other of 6, or 3 x MPI_DOUBLE. */
    double d6[6];
    for (int i = 0; i < 6; ++i) d6[i] = rank == root ? 0.25 * i + round : -1.0;
    const int kind = (rank + round) % 3;
    if (kind == 0) MPI_Bcast(d6, 3, MPI_DOUBLE, root, comm);
    if (kind == 1) MPI_Bcast(d6, 1, triple_doubles, root, comm);
    if (kind == 2) MPI_Bcast(d6, 1, strided_doubles, root, comm);
    if (kind == 2) { /* the strided elements to the places of the others' */
      d6[1] = d6[2];
      d6[2] = d6[4];
    }
    note_doubles("bcast doubles", d6, 3);

    /* bcast of long doubles and of MPI_Type_dup(MPI_INT). */
    long double l2[2] = {rank == root ? 1.5L * round : 0, rank == root ? -2.25L : 0};
    if (derived_here)
      MPI_Bcast(l2, 1, two_long_doubles, root, comm);
    else
      MPI_Bcast(l2, 2, MPI_LONG_DOUBLE, root, comm);
    note("bcast long double: %.2Lf %.2Lf", l2[0], l2[1]);
    int x = rank == root ? 77 + round : 0;
    if (derived_here)
      MPI_Bcast(&x, 1, dup_int, root, comm);
    else
      MPI_Bcast(&x, 1, MPI_INT, root, comm);
    note("bcast dup: %d", x);

    /* allgather: send 1 x contiguous(4) or 4 x MPI_INT, receive the other way round. */
    int mine[4] = {rank, round, rank * round, -rank};
    int* all = malloc(sizeof(int) * 4 * (size_t)size);
    if (derived_here)
      MPI_Allgather(mine, 1, four_ints, all, 4, MPI_INT, comm);
    else
      MPI_Allgather(mine, 4, MPI_INT, all, 1, four_ints, comm);
    note_ints("allgather contiguous", all, 4 * size);

    /* allgather of strided sends into matrix columns (resized vector receive type). */
    int two[4] = {rank + 1, -9, 10 * (rank + 1) + round, -9};
    int* matrix = malloc(sizeof(int) * 2 * (size_t)size);
    if (derived_here) {
      MPI_Allgather(two, 1, two_strided, matrix, 1, column_resized, comm);
    } else {
      int dense_two[2] = {two[0], two[2]};
      MPI_Allgather(dense_two, 2, MPI_INT, matrix, 2, MPI_INT, comm); /* rows, then transpose */
      int* rows = malloc(sizeof(int) * 2 * (size_t)size);
      memcpy(rows, matrix, sizeof(int) * 2 * (size_t)size);
      for (int i = 0; i < size; ++i) {
        matrix[i] = rows[2 * i];
        matrix[size + i] = rows[2 * i + 1];
      }
      free(rows);
    }
    note_ints("allgather columns", matrix, 2 * size);

    /* allgather in place into columns. */
    for (int i = 0; i < 2 * size; ++i) matrix[i] = -1;
    matrix[rank] = rank + 7;
    matrix[size + rank] = rank * round;
    if (derived_here)
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, matrix, 1, column_resized, comm);
    else {
      int* rows = malloc(sizeof(int) * 2 * (size_t)size);
      for (int i = 0; i < size; ++i) rows[2 * i] = rows[2 * i + 1] = -1;
      rows[2 * rank] = matrix[rank];
      rows[2 * rank + 1] = matrix[size + rank];
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rows, 2, MPI_INT, comm);
      for (int i = 0; i < size; ++i) {
        matrix[i] = rows[2 * i];
        matrix[size + i] = rows[2 * i + 1];
      }
      free(rows);
    }
    note_ints("allgather in place columns", matrix, 2 * size);
    for (int i = 0; i < size; ++i)
      if (matrix[i] != i + 7 || matrix[size + i] != i * round) ++failures;
    free(matrix);
    free(all);

    /* allgatherv and gatherv: rank r sends r + 1 groups of 4 ints (rank 1: none), as contiguous(4)
     * or as ints; received as ints with a gap of 2 between blocks, or as every_other (strided,
     * packed by the preload), one block after the other. The root of gatherv receives in place in
     * odd rounds. */
    {
      const int groups = rank == 1 ? 0 : rank + 1;
      int* sent = malloc(sizeof(int) * 4 * (size_t)(groups + 1));
      for (int i = 0; i < 4 * groups; ++i) sent[i] = 100 * rank + i + round;
      int* counts = malloc(sizeof(int) * (size_t)size);
      int* displs = malloc(sizeof(int) * (size_t)size);
      int total = 0;
      for (int r = 0; r < size; ++r) {
        const int n = r == 1 ? 0 : r + 1;
        counts[r] = derived_here ? n : 4 * n;
        displs[r] = derived_here ? total : 4 * total + 2 * r;
        total += n;
      }
      const size_t room = (size_t)(8 * total + 2 * size + 8);
      int* got = malloc(sizeof(int) * room);
      for (int pass = 0; pass < 2; ++pass) {
        const int gathering = pass == 1;
        const int in_place = gathering && rank == root && round % 2 == 1;
        for (size_t i = 0; i < room; ++i) got[i] = -1;
        if (in_place) {
          /* this rank's own block, placed as the receive type lays it out */
          for (int i = 0; i < 4 * groups; ++i) {
            const int at =
                derived_here ? (displs[rank] + i / 4) * 7 + (i % 4) * 2 : displs[rank] + i;
            got[at] = sent[i];
          }
        }
        const void* from = in_place ? MPI_IN_PLACE : sent;
        const int send_count = derived_here ? groups : 4 * groups;
        const MPI_Datatype send_type = derived_here ? four_ints : MPI_INT;
        const MPI_Datatype receive_type = derived_here ? every_other : MPI_INT;
        if (gathering)
          MPI_Gatherv(from, send_count, send_type, got, counts, displs, receive_type, root, comm);
        else
          MPI_Allgatherv(sent, send_count, send_type, got, counts, displs, receive_type, comm);
        if (gathering && rank != root) continue;
        int* flat = malloc(sizeof(int) * (size_t)(4 * total + 1));
        int k = 0;
        for (int r = 0; r < size; ++r) {
          const int n = r == 1 ? 0 : r + 1;
          for (int i = 0; i < 4 * n; ++i) {
            const int at = derived_here ? (displs[r] + i / 4) * 7 + (i % 4) * 2 : displs[r] + i;
            flat[k++] = got[at];
            if (got[at] != 100 * r + i + round) ++failures;
          }
        }
        note_ints(gathering ? (in_place ? "gatherv in place" : "gatherv") : "allgatherv", flat, k);
        free(flat);
      }
      free(got);
      free(displs);
      free(counts);
      free(sent);
    }

    /* alltoallv: rank s sends rank d (s + d) % 3 groups of 4 ints (none for some pairs), from
     * blocks in reverse rank order, as contiguous(4) or as ints; received as ints with a gap of 2
     * after each block, or as every_other (strided: packed by the preload). In odd rounds every
     * rank passes MPI_IN_PLACE (the counts are symmetric, as MPI requires there). */
    {
      int* send_counts = malloc(sizeof(int) * (size_t)size);
      int* send_displs = malloc(sizeof(int) * (size_t)size);
      int* receive_counts = malloc(sizeof(int) * (size_t)size);
      int* receive_displs = malloc(sizeof(int) * (size_t)size);
      int send_total = 0, receive_total = 0;
      for (int r = size - 1; r >= 0; --r) {
        const int n = (rank + r) % 3;
        send_counts[r] = derived_here ? n : 4 * n;
        send_displs[r] = derived_here ? send_total : 4 * send_total;
        send_total += n;
      }
      for (int r = 0; r < size; ++r) {
        const int n = (rank + r) % 3;
        receive_counts[r] = derived_here ? n : 4 * n;
        receive_displs[r] = derived_here ? receive_total : 4 * receive_total + 2 * r;
        receive_total += n;
      }
      const int in_place = round % 2 == 1;
      int* sent = malloc(sizeof(int) * (size_t)(4 * send_total + 1));
      const size_t room = (size_t)(8 * receive_total + 2 * size + 8);
      int* got = malloc(sizeof(int) * room);
      for (size_t i = 0; i < room; ++i) got[i] = -1;
      for (int d = 0; d < size; ++d) {
        const int n = (rank + d) % 3;
        for (int i = 0; i < 4 * n; ++i) {
          const int value = 1000 * rank + 10 * d + i + round;
          const int at =
              derived_here ? (receive_displs[d] + i / 4) * 7 + (i % 4) * 2 : receive_displs[d] + i;
          if (in_place)
            got[at] = value;
          else
            sent[(derived_here ? 4 * send_displs[d] : send_displs[d]) + i] = value;
        }
      }
      const MPI_Datatype receive_type = derived_here ? every_other : MPI_INT;
      if (in_place)
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, got, receive_counts,
                      receive_displs, receive_type, comm);
      else
        MPI_Alltoallv(sent, send_counts, send_displs, derived_here ? four_ints : MPI_INT, got,
                      receive_counts, receive_displs, receive_type, comm);
      int* flat = malloc(sizeof(int) * (size_t)(4 * receive_total + 1));
      int k = 0;
      for (int r = 0; r < size; ++r) {
        const int n = (rank + r) % 3;
        for (int i = 0; i < 4 * n; ++i) {
          const int at =
              derived_here ? (receive_displs[r] + i / 4) * 7 + (i % 4) * 2 : receive_displs[r] + i;
          flat[k++] = got[at];
          if (got[at] != 1000 * r + 10 * rank + i + round) ++failures;
        }
      }
      note_ints(in_place ? "alltoallv in place" : "alltoallv", flat, k);
      free(flat);
      free(got);
      free(sent);
      free(receive_displs);
      free(receive_counts);
      free(send_displs);
      free(send_counts);
    }

    MPI_Barrier(comm);
    /* Rank 0 prints every rank's lines, in rank order. */
    for (int source = 0; source < size; ++source) {
      int n = line_count;
      if (source != 0) {
        if (rank == source) MPI_Send(&line_count, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(&n, 1, MPI_INT, source, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < n; ++i) {
        char text[LINE];
        if (source == 0) {
          if (rank == 0) memcpy(text, lines[i], LINE);
        } else {
          if (rank == source) MPI_Send(lines[i], LINE, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
          if (rank == 0)
            MPI_Recv(text, LINE, MPI_CHAR, source, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (rank == 0) printf("round %d rank %d %s\n", round, source, text);
      }
    }
  }
  int all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("self-check failures: %d\n", all_failures);
  for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i) MPI_Type_free(&all_types[i]);
  MPI_Type_free(&column);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
