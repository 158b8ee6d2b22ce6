/* Plain MPI program: pipelined conjugate gradients (Ghysels and Vanroose) on the 1-D Laplacian,
 * the pattern that overlaps MPI_Iallreduce with computation: each iteration starts the reduction
 * of its two dot products, then applies the operator (with a halo exchange through MPI's own
 * point-to-point calls) while the reduction is in flight, then waits. Every reduction is checked
 * against a blocking MPI_Allreduce of the same values, and the solution against standard CG with
 * blocking reductions. Rank 0 prints only what does not depend on rounding, so the output is the
 * same with and without the preload library. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, local_n, first;
enum { global_n = 240, max_iterations = 2000 };

#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "rank %d: check failed: ", rank); \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n");                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                     \
    }                                                   \
  } while (0)

/* y = A x for A = tridiag(-1, 2, -1), the halo through MPI_Sendrecv. */
static void apply(const double* x, double* y, MPI_Comm comm) {
  double left = 0, right = 0;
  const int left_rank = first > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right_rank = first + local_n < global_n ? rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(&x[0], 1, MPI_DOUBLE, left_rank, 1, &right, 1, MPI_DOUBLE, right_rank, 1, comm,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(&x[local_n - 1], 1, MPI_DOUBLE, right_rank, 2, &left, 1, MPI_DOUBLE, left_rank, 2,
               comm, MPI_STATUS_IGNORE);
  for (int i = 0; i < local_n; ++i) {
    const double l = i > 0 ? x[i - 1] : left;
    const double r = i + 1 < local_n ? x[i + 1] : right;
    y[i] = 2 * x[i] - l - r;
  }
}

static double dot(const double* a, const double* b) {
  double sum = 0;
  for (int i = 0; i < local_n; ++i) sum += a[i] * b[i];
  return sum;
}

static double relative_difference(double a, double b) {
  const double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return scale == 0 ? 0 : fabs(a - b) / scale;
}

/* Standard CG, blocking reductions: the reference. Returns the iterations. */
static int standard_cg(const double* b, double* x, double tolerance, MPI_Comm comm) {
  double* r = calloc((size_t)local_n, sizeof(double));
  double* p = calloc((size_t)local_n, sizeof(double));
  double* ap = calloc((size_t)local_n, sizeof(double));
  for (int i = 0; i < local_n; ++i) r[i] = p[i] = b[i], x[i] = 0;
  double rr = dot(r, r), global_rr;
  MPI_Allreduce(&rr, &global_rr, 1, MPI_DOUBLE, MPI_SUM, comm);
  int iteration = 0;
  while (sqrt(global_rr) > tolerance && iteration < max_iterations) {
    apply(p, ap, comm);
    double pap = dot(p, ap), global_pap;
    MPI_Allreduce(&pap, &global_pap, 1, MPI_DOUBLE, MPI_SUM, comm);
    const double alpha = global_rr / global_pap;
    for (int i = 0; i < local_n; ++i) x[i] += alpha * p[i], r[i] -= alpha * ap[i];
    double next = dot(r, r), global_next;
    MPI_Allreduce(&next, &global_next, 1, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < local_n; ++i) p[i] = r[i] + global_next / global_rr * p[i];
    global_rr = global_next;
    ++iteration;
  }
  free(r);
  free(p);
  free(ap);
  return iteration;
}

/* Pipelined CG: one MPI_Iallreduce per iteration, overlapped with the operator. */
static int pipelined_cg(const double* b, double* x, double tolerance, MPI_Comm comm) {
  const size_t n = (size_t)local_n;
  double *r = calloc(n, 8), *u = calloc(n, 8), *w = calloc(n, 8), *m = calloc(n, 8);
  double *nn = calloc(n, 8), *z = calloc(n, 8), *q = calloc(n, 8), *s = calloc(n, 8);
  double* p = calloc(n, 8);
  for (size_t i = 0; i < n; ++i) r[i] = u[i] = b[i], x[i] = 0;
  apply(u, w, comm);
  double gamma_old = 0, alpha_old = 0;
  int iteration = 0;
  for (; iteration < max_iterations; ++iteration) {
    double local[2] = {dot(r, u), dot(w, u)}, global[2] = {0, 0};
    MPI_Request request;
    MPI_Iallreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm, &request);
    /* Overlapped with the reduction: the preconditioner (identity) and the operator. */
    for (size_t i = 0; i < n; ++i) m[i] = w[i];
    apply(m, nn, comm);
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) MPI_Wait(&request, MPI_STATUS_IGNORE);
    /* The same reduction, blocking. */
    double check[2];
    MPI_Allreduce(local, check, 2, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(relative_difference(global[0], check[0]) < 1e-12 &&
              relative_difference(global[1], check[1]) < 1e-12,
          "iteration %d: MPI_Iallreduce gave (%.17g, %.17g), MPI_Allreduce (%.17g, %.17g)",
          iteration, global[0], global[1], check[0], check[1]);
    const double gamma = global[0], delta = global[1];
    if (sqrt(gamma) <= tolerance) break;
    double alpha, beta;
    if (iteration == 0) {
      beta = 0;
      alpha = gamma / delta;
    } else {
      beta = gamma / gamma_old;
      alpha = gamma / (delta - beta * gamma / alpha_old);
    }
    for (size_t i = 0; i < n; ++i) {
      z[i] = nn[i] + beta * z[i];
      q[i] = m[i] + beta * q[i];
      s[i] = w[i] + beta * s[i];
      p[i] = u[i] + beta * p[i];
      x[i] += alpha * p[i];
      r[i] -= alpha * s[i];
      u[i] -= alpha * q[i];
      w[i] -= alpha * z[i];
    }
    gamma_old = gamma;
    alpha_old = alpha;
  }
  free(r), free(u), free(w), free(m), free(nn), free(z), free(q), free(s), free(p);
  return iteration;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= global_n, "too many ranks");
  local_n = global_n / size + (rank < global_n % size);
  first = rank * (global_n / size) + (rank < global_n % size ? rank : global_n % size);
  double* b = malloc(sizeof(double) * (size_t)local_n);
  double* reference = malloc(sizeof(double) * (size_t)local_n);
  double* x = malloc(sizeof(double) * (size_t)local_n);
  for (int i = 0; i < local_n; ++i) b[i] = 1.0 + 0.01 * ((first + i) % 7);
  const double tolerance = 1e-6; /* pipelined CG attains ~1e-9 here */
  const int reference_iterations = standard_cg(b, reference, tolerance, MPI_COMM_WORLD);
  /* Twice: the first run on a communicator the preload may still be warming up on. */
  int iterations = 0;
  for (int run = 0; run < 2; ++run) iterations = pipelined_cg(b, x, tolerance, MPI_COMM_WORLD);
  double worst = 0, largest = 0;
  for (int i = 0; i < local_n; ++i) {
    const double e = fabs(x[i] - reference[i]);
    if (e > worst) worst = e;
    if (fabs(reference[i]) > largest) largest = fabs(reference[i]);
  }
  double global_worst, global_largest;
  MPI_Allreduce(&worst, &global_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&largest, &global_largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(iterations < max_iterations, "pipelined CG did not converge");
  CHECK(global_worst <= 1e-5 * global_largest, "pipelined CG solution differs by %g (scale %g)",
        global_worst, global_largest);
  CHECK(abs(iterations - reference_iterations) <= reference_iterations / 5,
        "pipelined CG took %d iterations, standard CG %d", iterations, reference_iterations);
  if (rank == 0)
    printf("pipelined CG on %d unknowns: converged, agrees with standard CG\n", global_n);
  free(b);
  free(reference);
  free(x);
  MPI_Finalize();
  return 0;
}
