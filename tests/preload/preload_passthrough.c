/* Plain MPI program: cases the preload library must pass to MPI untouched - user-defined
 * commutative and non-commutative operations (on a derived type too), MPI_MAXLOC on a pair type,
 * an intercommunicator - next to derived datatypes it serves (a strided broadcast is packed).
 * Rank 0 prints every result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* 2x2 integer matrix product (mod 1009): associative, not commutative. */
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  int* a = (int*)in;
  int* b = (int*)inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    int c[4] = {(a[0] * b[0] + a[1] * b[2]) % 1009, (a[0] * b[1] + a[1] * b[3]) % 1009,
                (a[2] * b[0] + a[3] * b[2]) % 1009, (a[2] * b[1] + a[3] * b[3]) % 1009};
    for (int i = 0; i < 4; ++i) b[i] = c[i];
  }
}

static void sum_of_squares(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  long long* a = (long long*)in;
  long long* b = (long long*)inout;
  for (int i = 0; i < *len; ++i) b[i] = b[i] + a[i];
}

static void print_ints(const char* label, const int* values, int n) {
  printf("%s:", label);
  for (int i = 0; i < n; ++i) printf(" %d", values[i]);
  printf("\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  for (int round = 0; round < 6; ++round) { /* past the warm-up, so cachecomm state exists */
    /* Derived datatype: every other int of 8 (a vector), broadcast from the last rank. */
    MPI_Datatype strided;
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int buffer[8];
    for (int i = 0; i < 8; ++i) buffer[i] = rank == size - 1 ? 100 * round + i : -7;
    MPI_Bcast(buffer, 1, strided, size - 1, MPI_COMM_WORLD);
    if (rank == 0) print_ints("bcast-vector", buffer, 8);

    /* Contiguous derived type in an allreduce and an allgather. */
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    int mine[3] = {rank, round, rank * round};
    int* all = (int*)malloc(sizeof(int) * 3 * (size_t)size);
    MPI_Allgather(mine, 1, triple, all, 1, triple, MPI_COMM_WORLD);
    if (rank == 0) print_ints("allgather-contiguous", all, 3 * size);
    free(all);
    MPI_Type_free(&triple);
    MPI_Type_free(&strided);

    /* Non-commutative user operation: the result depends on rank order. */
    MPI_Op product_op;
    MPI_Op_create(matrix_product, 0, &product_op);
    int matrix[4] = {1 + rank, 1, round % 3, 1};
    int result[4] = {0, 0, 0, 0};
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Allreduce(matrix, result, 1, mat, product_op, MPI_COMM_WORLD);
    if (rank == 0) print_ints("allreduce-noncommutative", result, 4);
    MPI_Reduce(matrix, result, 1, mat, product_op, 0, MPI_COMM_WORLD);
    if (rank == 0) print_ints("reduce-noncommutative", result, 4);
    MPI_Type_free(&mat);
    MPI_Op_free(&product_op);

    /* Commutative user operation on a predefined type. */
    MPI_Op user_sum;
    MPI_Op_create(sum_of_squares, 1, &user_sum);
    long long square = (long long)(rank + round) * (rank + round), total = 0;
    MPI_Allreduce(&square, &total, 1, MPI_LONG_LONG, user_sum, MPI_COMM_WORLD);
    if (rank == 0) printf("allreduce-user-commutative: %lld\n", total);
    MPI_Op_free(&user_sum);

    /* Predefined operation cachecomm does not do, on a pair type. */
    struct {
      int value;
      int rank;
    } pair = {(rank * 7 + round) % 5, rank}, best;
    MPI_Allreduce(&pair, &best, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    if (rank == 0) printf("allreduce-maxloc: %d at %d\n", best.value, best.rank);

    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* Intercommunicator between even and odd ranks. */
  if (size >= 2) {
    MPI_Comm side, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &side);
    MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 42, &inter);
    for (int round = 0; round < 6; ++round) {
      MPI_Barrier(inter);
      int value = rank % 2 == 0 ? 1000 + round : -1;
      int side_rank;
      MPI_Comm_rank(side, &side_rank);
      /* Even group's rank 0 broadcasts to the odd group. */
      int root = rank % 2 == 0 ? (side_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
      MPI_Bcast(&value, 1, MPI_INT, root, inter);
      int contribution = rank + 1, remote_sum = 0;
      MPI_Allreduce(&contribution, &remote_sum, 1, MPI_INT, MPI_SUM, inter);
      int results[2] = {value, remote_sum};
      int* all = (int*)malloc(sizeof(int) * 2 * (size_t)size);
      MPI_Gather(results, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
      if (rank == 0) print_ints("intercomm bcast/allreduce", all, 2 * size);
      free(all);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&side);
  }
  MPI_Finalize();
  return 0;
}
