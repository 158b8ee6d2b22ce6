#include <mpi.h>
#include <stdio.h>
static int q(void* e, MPI_Status* s) {
  MPI_Status_set_elements(s, MPI_BYTE, 0);
  MPI_Status_set_cancelled(s, 0);
  s->MPI_SOURCE = MPI_ANY_SOURCE;
  s->MPI_TAG = MPI_ANY_TAG;
  s->MPI_ERROR = 0;
  return 0;
}
static int f(void* e) {
  return 0;
}
static int c(void* e, int x) {
  return 0;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 1000000;
  for (int rep = 0; rep < 3; ++rep) {
    double t = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      MPI_Grequest_start(q, f, c, 0, &r);
      MPI_Grequest_complete(r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      MPI_Irecv(0, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double t2 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      MPI_Ibcast(&r, 1, MPI_BYTE, 0, MPI_COMM_SELF, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double t3 = MPI_Wtime();
    printf("grequest %.3f us, irecv-procnull %.3f us, ibcast-self %.3f\n", (t1 - t) / n * 1e6,
           (t2 - t1) / n * 1e6, (t3 - t2) / n * 1e6);
  }
  MPI_Finalize();
}
