/* Conformance of the collectives the preload library intercepts, in the spirit of MPICH's and
 * mpi4py's collective tests (ideas only): every predefined operation on every datatype it is
 * defined for (MPI_C_BOOL, MPI_LONG_DOUBLE, complex types, MPI_BYTE with the bitwise operations,
 * the pair types with MINLOC/MAXLOC), every root class (first, last, middle), in place and not,
 * two counts (a few elements, enough to leave the slots), on world and a split (every
 * type), a duplicate, a communicator from MPI_Comm_create_group, a cartesian one, and communicators
 * made after others were freed (one type of each class). The same for the prefix reductions
 * (MPI_Scan, MPI_Exscan, MPI_Reduce_scatter_block, MPI_Reduce_scatter: per-rank counts with
 * zeros), the block collectives (MPI_Gather, MPI_Scatter,
 * MPI_Alltoall) and the vector ones (MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv, MPI_Alltoallv:
 * per-rank counts with a zero, blocks in reverse rank order with gaps).
 * Every result is checked against the value computed here; rank 0 prints per communicator the
 * number of checks, of failures (with the first few described) and a hash of all results, so a
 * preloaded run must print exactly what MPI prints. */
#include <complex.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value independent of its C type: the value (or real part) and the index (or imaginary part). */
typedef struct {
  long double a, b;
} canon;

enum klass { K_SIGNED, K_UNSIGNED, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR };

typedef struct {
  const char* name;
  MPI_Datatype type;
  enum klass klass;
  size_t size;
  void (*set)(void* buffer, int i, canon v);
  canon (*get)(const void* buffer, int i);
} type_info;

#define SCALAR(T, NAME)                             \
  static void set_##NAME(void* b, int i, canon v) { \
    ((T*)b)[i] = (T)v.a;                            \
  }                                                 \
  static canon get_##NAME(const void* b, int i) {   \
    canon c = {(long double)((const T*)b)[i], 0};   \
    return c;                                       \
  }
SCALAR(signed char, schar)
SCALAR(unsigned char, uchar)
SCALAR(short, short)
SCALAR(unsigned short, ushort)
SCALAR(int, int)
SCALAR(unsigned, uint)
SCALAR(long, long)
SCALAR(unsigned long, ulong)
SCALAR(long long, llong)
SCALAR(unsigned long long, ullong)
SCALAR(int8_t, i8)
SCALAR(uint8_t, u8)
SCALAR(int16_t, i16)
SCALAR(uint16_t, u16)
SCALAR(int32_t, i32)
SCALAR(uint32_t, u32)
SCALAR(int64_t, i64)
SCALAR(uint64_t, u64)
SCALAR(float, float)
SCALAR(double, double)
SCALAR(long double, ldouble)
SCALAR(bool, bool)

static void set_cfloat(void* b, int i, canon v) {
  ((float complex*)b)[i] = (float)v.a + (float)v.b * I;
}
static canon get_cfloat(const void* b, int i) {
  canon c = {crealf(((const float complex*)b)[i]), cimagf(((const float complex*)b)[i])};
  return c;
}
static void set_cdouble(void* b, int i, canon v) {
  ((double complex*)b)[i] = (double)v.a + (double)v.b * I;
}
static canon get_cdouble(const void* b, int i) {
  canon c = {creal(((const double complex*)b)[i]), cimag(((const double complex*)b)[i])};
  return c;
}

#define PAIR(T, NAME)                                         \
  typedef struct {                                            \
    T value;                                                  \
    int index;                                                \
  } NAME##_pair;                                              \
  static void set_##NAME(void* b, int i, canon v) {           \
    ((NAME##_pair*)b)[i].value = (T)v.a;                      \
    ((NAME##_pair*)b)[i].index = (int)v.b;                    \
  }                                                           \
  static canon get_##NAME(const void* b, int i) {             \
    const NAME##_pair* p = &((const NAME##_pair*)b)[i];       \
    canon c = {(long double)p->value, (long double)p->index}; \
    return c;                                                 \
  }
PAIR(int, two_int)
PAIR(double, double_int)
PAIR(float, float_int)
PAIR(long, long_int)
PAIR(short, short_int)

static type_info types[40];
static int type_count;

static void add(const char* name, MPI_Datatype type, enum klass klass, size_t size,
                void (*set)(void*, int, canon), canon (*get)(const void*, int)) {
  type_info t = {name, type, klass, size, set, get};
  types[type_count++] = t;
}

static void make_types(void) {
  add("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, K_SIGNED, 1, set_schar, get_schar);
  add("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, K_UNSIGNED, 1, set_uchar, get_uchar);
  /* Not an arithmetic type in MPI, but both MPIs reduce it as C's char (OSU uses it). */
  if (CHAR_MIN < 0)
    add("MPI_CHAR", MPI_CHAR, K_SIGNED, 1, set_schar, get_schar);
  else
    add("MPI_CHAR", MPI_CHAR, K_UNSIGNED, 1, set_uchar, get_uchar);
  add("MPI_SHORT", MPI_SHORT, K_SIGNED, sizeof(short), set_short, get_short);
  add("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, K_UNSIGNED, sizeof(unsigned short), set_ushort,
      get_ushort);
  add("MPI_INT", MPI_INT, K_SIGNED, sizeof(int), set_int, get_int);
  add("MPI_UNSIGNED", MPI_UNSIGNED, K_UNSIGNED, sizeof(unsigned), set_uint, get_uint);
  add("MPI_LONG", MPI_LONG, K_SIGNED, sizeof(long), set_long, get_long);
  add("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, K_UNSIGNED, sizeof(unsigned long), set_ulong,
      get_ulong);
  add("MPI_LONG_LONG", MPI_LONG_LONG, K_SIGNED, sizeof(long long), set_llong, get_llong);
  add("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, K_UNSIGNED, sizeof(unsigned long long),
      set_ullong, get_ullong);
  add("MPI_INT8_T", MPI_INT8_T, K_SIGNED, 1, set_i8, get_i8);
  add("MPI_UINT8_T", MPI_UINT8_T, K_UNSIGNED, 1, set_u8, get_u8);
  add("MPI_INT16_T", MPI_INT16_T, K_SIGNED, 2, set_i16, get_i16);
  add("MPI_UINT16_T", MPI_UINT16_T, K_UNSIGNED, 2, set_u16, get_u16);
  add("MPI_INT32_T", MPI_INT32_T, K_SIGNED, 4, set_i32, get_i32);
  add("MPI_UINT32_T", MPI_UINT32_T, K_UNSIGNED, 4, set_u32, get_u32);
  add("MPI_INT64_T", MPI_INT64_T, K_SIGNED, 8, set_i64, get_i64);
  add("MPI_UINT64_T", MPI_UINT64_T, K_UNSIGNED, 8, set_u64, get_u64);
  add("MPI_FLOAT", MPI_FLOAT, K_FLOAT, sizeof(float), set_float, get_float);
  add("MPI_DOUBLE", MPI_DOUBLE, K_FLOAT, sizeof(double), set_double, get_double);
  add("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, K_FLOAT, sizeof(long double), set_ldouble, get_ldouble);
  add("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, K_COMPLEX, sizeof(float complex), set_cfloat,
      get_cfloat);
  add("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, K_COMPLEX, sizeof(double complex), set_cdouble,
      get_cdouble);
  add("MPI_C_BOOL", MPI_C_BOOL, K_BOOL, sizeof(bool), set_bool, get_bool);
  add("MPI_BYTE", MPI_BYTE, K_BYTE, 1, set_uchar, get_uchar);
  add("MPI_2INT", MPI_2INT, K_PAIR, sizeof(two_int_pair), set_two_int, get_two_int);
  add("MPI_DOUBLE_INT", MPI_DOUBLE_INT, K_PAIR, sizeof(double_int_pair), set_double_int,
      get_double_int);
  add("MPI_FLOAT_INT", MPI_FLOAT_INT, K_PAIR, sizeof(float_int_pair), set_float_int, get_float_int);
  add("MPI_LONG_INT", MPI_LONG_INT, K_PAIR, sizeof(long_int_pair), set_long_int, get_long_int);
  add("MPI_SHORT_INT", MPI_SHORT_INT, K_PAIR, sizeof(short_int_pair), set_short_int, get_short_int);
}

enum op_id { SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC, OPS };
static const char* op_names[OPS] = {"SUM",  "PROD", "MIN", "MAX",  "LAND",   "LOR",
                                    "LXOR", "BAND", "BOR", "BXOR", "MINLOC", "MAXLOC"};
static MPI_Op op_handle(int op) {
  MPI_Op handles[OPS] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                         MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
  return handles[op];
}

static int defined(enum klass k, int op) {
  switch (k) {
    case K_SIGNED:
    case K_UNSIGNED: return op <= BXOR;
    case K_FLOAT: return op <= MAX;
    case K_COMPLEX: return op == SUM || op == PROD;
    case K_BOOL: return op == LAND || op == LOR || op == LXOR;
    case K_BYTE: return op == BAND || op == BOR || op == BXOR;
    case K_PAIR: return op == MINLOC || op == MAXLOC;
  }
  return 0;
}

/* Rank r's element i: small exact values that no combination overflows (8 ranks, 8-bit types). */
static canon value_of(enum klass k, int op, int r, int i, int salt) {
  canon v = {0, 0};
  const int mix = r * 13 + i * 7 + salt;
  if (op == PROD) {
    v.a = 1 + ((r + i + salt) % 5 == 0);
    if (k == K_COMPLEX) v.b = (r + i + salt) % 2;
  } else if (op == LAND || op == LOR || op == LXOR) {
    v.a = (r * 7 + i * 3 + salt) % 4 != 0;
  } else if (op >= BAND && op <= BXOR) {
    v.a = (r * 37 + i * 11 + salt) % 100;
  } else if (op == MINLOC || op == MAXLOC) {
    v.a = (r * 5 + i * 3 + salt) % 4; /* ties on purpose: the lowest index wins */
    v.b = r;
  } else {
    v.a = k == K_UNSIGNED ? mix % 21 : mix % 21 - 10;
    if (k == K_FLOAT) v.a *= 0.25L;
    if (k == K_COMPLEX) v.b = (mix % 5) - 2;
  }
  return v;
}

static canon combine(int op, canon x, canon y) {
  canon z = x;
  long long p = (long long)x.a, q = (long long)y.a;
  switch (op) {
    case SUM:
      z.a = x.a + y.a;
      z.b = x.b + y.b;
      break;
    case PROD:
      z.a = x.a * y.a - x.b * y.b;
      z.b = x.a * y.b + x.b * y.a;
      break;
    case MIN: z.a = y.a < x.a ? y.a : x.a; break;
    case MAX: z.a = y.a > x.a ? y.a : x.a; break;
    case LAND: z.a = (x.a != 0) && (y.a != 0); break;
    case LOR: z.a = (x.a != 0) || (y.a != 0); break;
    case LXOR: z.a = (x.a != 0) != (y.a != 0); break;
    case BAND: z.a = (long double)(p & q); break;
    case BOR: z.a = (long double)(p | q); break;
    case BXOR: z.a = (long double)(p ^ q); break;
    case MINLOC:
    case MAXLOC:
      if ((op == MINLOC && y.a < x.a) || (op == MAXLOC && y.a > x.a)) z = y;
      if (y.a == x.a && y.b < x.b) z.b = y.b;
      break;
  }
  return z;
}

/* The expected result at element `at`: ranks 0 .. ranks-1's values folded in rank order. */
static canon rank_fold(enum klass k, int op, int ranks, int at, int salt) {
  canon folded = value_of(k, op, 0, at, salt);
  for (int r = 1; r < ranks; ++r) folded = combine(op, folded, value_of(k, op, r, at, salt));
  return folded;
}

static long long checks, failures;
static unsigned long long hash = 1469598103934665603ULL;
static const char* label;

static void mix_hash(canon c) {
  long long parts[2] = {(long long)(c.a * 4), (long long)(c.b * 4)};
  const unsigned char* bytes = (const unsigned char*)parts;
  for (size_t i = 0; i < sizeof parts; ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
}

static void expect(const type_info* t, const void* buffer, int i, canon want, const char* what,
                   int op, int root, int count) {
  canon got = t->get(buffer, i);
  ++checks;
  mix_hash(got);
  if (got.a != want.a || got.b != want.b) {
    if (failures < 5) {
      int rank;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      printf(
          "FAIL %s rank %d: %s %s %s root %d count %d element %d: got (%Lg, %Lg), want (%Lg, "
          "%Lg)\n",
          label, rank, what, t->name, op >= 0 ? op_names[op] : "-", root, count, i, got.a, got.b,
          want.a, want.b);
    }
    ++failures;
  }
}

static const int counts[] = {3, 700}; /* a few elements (small slots); past the 4 KiB slots */
#define COUNTS (int)(sizeof counts / sizeof counts[0])

/* MPI_Scan and MPI_Exscan: rank r gets the fold over ranks 0..r (0..r-1; rank 0's exscan result is
 * undefined and not looked at). */
static void prefixes(MPI_Comm comm, const type_info* t, int op, int salt, int count, int in_place,
                     char* send, char* receive) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  canon* want = calloc((size_t)count, sizeof(canon));
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    const int last = exclusive ? rank - 1 : rank;
    for (int i = 0; i < count && last >= 0; ++i) {
      want[i] = rank_fold(t->klass, op, last + 1, i, salt);
    }
    memset(receive, 0x5a, (size_t)count * t->size);
    for (int i = 0; i < count; ++i)
      t->set(in_place ? receive : send, i, value_of(t->klass, op, rank, i, salt));
    const void* from = in_place ? MPI_IN_PLACE : send;
    if (exclusive)
      MPI_Exscan(from, receive, count, t->type, op_handle(op), comm);
    else
      MPI_Scan(from, receive, count, t->type, op_handle(op), comm);
    const char* what = exclusive ? (in_place ? "exscan in place" : "exscan")
                                 : (in_place ? "scan in place" : "scan");
    for (int i = 0; i < count && last >= 0; ++i)
      expect(t, receive, i, want[i], what, op, -1, count);
  }
  free(want);
}

/* MPI_Reduce_scatter: per-rank counts, every third rank (from rank 1) receiving nothing and the
 * others more than the blocks before them (in place, rank 2's result overlaps its block's start).
 * Rank r gets its block of every rank's input folded in rank order. */
static void scattered_counts(MPI_Comm comm, const type_info* t, int op, int salt, int count,
                             char* send, char* receive, canon* want) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* per_rank = malloc(sizeof(int) * (size_t)size);
  int total = 0, offset = 0;
  for (int r = 0; r < size; ++r) {
    per_rank[r] = r % 3 == 1 ? 0 : count + r * count / 2 + r;
    if (r < rank) offset += per_rank[r];
    total += per_rank[r];
  }
  const int mine = per_rank[rank];
  for (int i = 0; i < mine; ++i) {
    const int at = offset + i;
    want[i] = rank_fold(t->klass, op, size, at, salt);
  }
  for (int in_place = 0; in_place < 2; ++in_place) {
    memset(receive, 0x5a, (size_t)total * t->size);
    for (int i = 0; i < total; ++i)
      t->set(in_place ? receive : send, i, value_of(t->klass, op, rank, i, salt));
    MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send, receive, per_rank, t->type, op_handle(op),
                       comm);
    for (int i = 0; i < mine; ++i)
      expect(t, receive, i, want[i], in_place ? "reduce_scatter in place" : "reduce_scatter", op,
             -1, count);
  }
  free(per_rank);
}

/* MPI_Reduce_scatter_block: rank r gets block r of every rank's input folded in rank order; then
 * MPI_Reduce_scatter (scattered_counts). */
static void scattered_reductions(MPI_Comm comm, const type_info* t, int op, int salt) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int max = counts[COUNTS - 1];
  /* MPI_Reduce_scatter's blocks: up to max + r * max / 2 + r elements for rank r. */
  const size_t room = (size_t)(max + 1) * (size_t)size * (size_t)(size + 2);
  char* send = calloc(room, t->size);
  char* receive = calloc(room, t->size);
  canon* want = calloc(room, sizeof(canon));
  for (int c = 0; c < COUNTS; ++c) {
    const int count = counts[c];
    const int total = count * size;
    for (int i = 0; i < count; ++i) {
      const int at = rank * count + i;
      want[i] = rank_fold(t->klass, op, size, at, salt);
    }
    for (int in_place = 0; in_place < 2; ++in_place) {
      memset(receive, 0x5a, (size_t)total * t->size);
      for (int i = 0; i < total; ++i)
        t->set(in_place ? receive : send, i, value_of(t->klass, op, rank, i, salt));
      MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, receive, count, t->type,
                               op_handle(op), comm);
      for (int i = 0; i < count; ++i)
        expect(t, receive, i, want[i],
               in_place ? "reduce_scatter_block in place" : "reduce_scatter_block", op, -1, count);
    }
    scattered_counts(comm, t, op, salt + 11, count, send, receive, want);
  }
  free(send);
  free(receive);
  free(want);
}

static void reductions(MPI_Comm comm, const type_info* t, int op, int salt) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int max = counts[COUNTS - 1];
  char* send = calloc((size_t)max, t->size);
  char* receive = calloc((size_t)max, t->size);
  canon* want = calloc((size_t)max, sizeof(canon));
  int roots[3] = {0, size - 1, size / 2};
  for (int c = 0; c < COUNTS; ++c) {
    const int count = counts[c];
    for (int i = 0; i < count; ++i) {
      want[i] = rank_fold(t->klass, op, size, i, salt);
    }
    for (int in_place = 0; in_place < 2; ++in_place) {
      memset(receive, 0x5a, (size_t)count * t->size);
      for (int i = 0; i < count; ++i)
        t->set(in_place ? receive : send, i, value_of(t->klass, op, rank, i, salt));
      MPI_Allreduce(in_place ? MPI_IN_PLACE : send, receive, count, t->type, op_handle(op), comm);
      for (int i = 0; i < count; ++i)
        expect(t, receive, i, want[i], in_place ? "allreduce in place" : "allreduce", op, -1,
               count);
      for (int k = 0; k < 3; ++k) {
        const int root = roots[k];
        if (k > 0 && (root == roots[0] || (k == 2 && root == roots[1]))) continue;
        memset(receive, 0x5a, (size_t)count * t->size);
        const int here = rank == root && in_place;
        for (int i = 0; i < count; ++i)
          t->set(here ? receive : send, i, value_of(t->klass, op, rank, i, salt));
#ifdef MPICH_VERSION
        /* MPICH 4.0.2 crashes (plain, without the preload) in MPI_Reduce with MPI_IN_PLACE at a
         * root other than 0 from about 2 KiB. */
        if (in_place && root != 0 && (size_t)count * t->size >= 1024) continue;
#endif
        MPI_Reduce(here ? MPI_IN_PLACE : send, receive, count, t->type, op_handle(op), root, comm);
        if (rank == root)
          for (int i = 0; i < count; ++i)
            expect(t, receive, i, want[i], in_place ? "reduce in place" : "reduce", op, root,
                   count);
      }
      prefixes(comm, t, op, salt, count, in_place, send, receive);
    }
  }
  free(send);
  free(receive);
  free(want);
}

static canon data_of(const type_info* t, int r, int i, int salt) {
  canon v = {(r * 31 + i * 17 + salt) % 50, 0};
  if (t->klass == K_BOOL) v.a = v.a != 0;
  if (t->klass == K_COMPLEX || t->klass == K_PAIR) v.b = (r * 7 + i + salt) % 9;
  return v;
}

static void movements(MPI_Comm comm, const type_info* t, int salt) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int max = counts[COUNTS - 1];
  char* buffer = calloc((size_t)max * (size_t)size, t->size);
  char* mine = calloc((size_t)max, t->size);
  int roots[3] = {0, size - 1, size / 2};
  for (int c = 0; c < COUNTS; ++c) {
    const int count = counts[c];
    for (int k = 0; k < 3; ++k) {
      const int root = roots[k];
      if (k > 0 && (root == roots[0] || (k == 2 && root == roots[1]))) continue;
      memset(buffer, 0, (size_t)count * t->size);
      for (int i = 0; i < count; ++i)
        t->set(buffer, i, rank == root ? data_of(t, root, i, salt) : data_of(t, 99, i, 1));
      MPI_Bcast(buffer, count, t->type, root, comm);
      for (int i = 0; i < count; ++i)
        expect(t, buffer, i, data_of(t, root, i, salt), "bcast", -1, root, count);
    }
    for (int in_place = 0; in_place < 2; ++in_place) {
      memset(buffer, 0, (size_t)count * (size_t)size * t->size);
      memset(mine, 0, (size_t)count * t->size);
      char* own = in_place ? buffer + (size_t)rank * (size_t)count * t->size : mine;
      for (int i = 0; i < count; ++i) t->set(own, i, data_of(t, rank, i, salt));
      if (in_place)
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, count, t->type, comm);
      else
        MPI_Allgather(mine, count, t->type, buffer, count, t->type, comm);
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < count; ++i)
          expect(t, buffer + (size_t)r * (size_t)count * t->size, i, data_of(t, r, i, salt),
                 in_place ? "allgather in place" : "allgather", -1, r, count);
    }
  }
  free(buffer);
  free(mine);
}

/* MPI_Gather, MPI_Scatter (every root class) and MPI_Alltoall, in place and not. */
static void blocks(MPI_Comm comm, const type_info* t, int salt) {
#ifdef MPICH_VERSION
  /* MPICH 4.0.2 fails (plain, without the preload) with "Message truncated" in MPI_Scatter at a
   * root other than 0 and in MPI_Alltoall in place on the pair types (gaps in their layout). */
  if (t->klass == K_PAIR) return;
#endif
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int max = counts[COUNTS - 1];
  const size_t whole = (size_t)max * (size_t)size * t->size;
  char* buffer = calloc((size_t)max * (size_t)size, t->size);
  char* sent = calloc((size_t)max * (size_t)size, t->size);
  char* mine = calloc((size_t)max, t->size);
  int roots[3] = {0, size - 1, size / 2};
  for (int c = 0; c < COUNTS; ++c) {
    const int count = counts[c];
    const size_t block = (size_t)count * t->size;
    for (int k = 0; k < 3; ++k) {
      const int root = roots[k];
      if (k > 0 && (root == roots[0] || (k == 2 && root == roots[1]))) continue;
      for (int in_place = 0; in_place < 2; ++in_place) {
        const int here = in_place && rank == root;
        memset(buffer, 0, whole);
        memset(mine, 0, block);
        char* own = here ? buffer + (size_t)root * block : mine;
        for (int i = 0; i < count; ++i) t->set(own, i, data_of(t, rank, i, salt + root));
        MPI_Gather(here ? MPI_IN_PLACE : mine, count, t->type, buffer, count, t->type, root, comm);
        if (rank == root)
          for (int r = 0; r < size; ++r)
            for (int i = 0; i < count; ++i)
              expect(t, buffer + (size_t)r * block, i, data_of(t, r, i, salt + root),
                     in_place ? "gather in place" : "gather", -1, root, count);

        memset(mine, 0, block);
        memset(sent, 0, whole);
        if (rank == root)
          for (int r = 0; r < size; ++r)
            for (int i = 0; i < count; ++i)
              t->set(sent + (size_t)r * block, i, data_of(t, r + 40, i, salt + root));
        MPI_Scatter(sent, count, t->type, here ? MPI_IN_PLACE : mine, count, t->type, root, comm);
        const char* got = here ? sent + (size_t)root * block : mine;
        for (int i = 0; i < count; ++i)
          expect(t, got, i, data_of(t, rank + 40, i, salt + root),
                 in_place ? "scatter in place" : "scatter", -1, root, count);
      }
    }
    /* Block d of rank s carries data_of(s * size + d): each rank checks where its blocks came
     * from. */
    for (int in_place = 0; in_place < 2; ++in_place) {
      memset(buffer, 0, whole);
      char* out = in_place ? buffer : sent;
      for (int d = 0; d < size; ++d)
        for (int i = 0; i < count; ++i)
          t->set(out + (size_t)d * block, i, data_of(t, rank * size + d, i, salt + 3));
      if (in_place)
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, count, t->type, comm);
      else
        MPI_Alltoall(sent, count, t->type, buffer, count, t->type, comm);
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < count; ++i)
          expect(t, buffer + (size_t)r * block, i, data_of(t, r * size + rank, i, salt + 3),
                 in_place ? "alltoall in place" : "alltoall", -1, r, count);
    }
  }
  free(buffer);
  free(sent);
  free(mine);
}

/* MPI_Allgatherv, MPI_Gatherv and MPI_Scatterv (every root class), in place and not: rank 1 sends
 * nothing, the others different counts; the blocks lie in reverse rank order with gaps, which stay
 * untouched. Then equal counts (the preload serves a small MPI_Allgatherv of those as an
 * allgather), in the same scattered layout and one block after the other in rank order. */
static void vectors(MPI_Comm comm, const type_info* t, int salt) {
#ifdef MPICH_VERSION
  if (t->klass == K_PAIR) return; /* as in blocks() */
#endif
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* sizes = calloc((size_t)size, sizeof(int));
  int* displs = calloc((size_t)size, sizeof(int));
  int roots[3] = {0, size - 1, size / 2};
  for (int c = 0; c < 3 * COUNTS; ++c) {
    const int count = counts[c % COUNTS];
    const int equal = c / COUNTS;    /* 0: per-rank counts; 1, 2: every count the same */
    const int in_order = equal == 2; /* rank order, no gaps */
    int at = 1;
#ifdef MPICH_VERSION
    /* MPICH 4.0.2's MPI_Allgatherv on a one-rank communicator (plain, without the preload)
     * copies the block to the start of the buffer, ignoring its displacement. */
    if (size == 1) at = 0;
#endif
    if (in_order) at = 0;
    for (int r = 0; r < size; ++r)
      sizes[r] = equal ? count : r == 1 ? 0 : count + (r * count) / 3 + r;
    for (int r = in_order ? 0 : size - 1; in_order ? r < size : r >= 0; r += in_order ? 1 : -1) {
      displs[r] = at;
      at += sizes[r] + (in_order ? 0 : 2);
    }
    const size_t room = (size_t)at + 1;
    char* buffer = calloc(room, t->size);
    char* mine = calloc((size_t)sizes[rank] + 1, t->size);
    const int own = sizes[rank];
    for (int k = -1; k < 3; ++k) { /* k = -1: MPI_Allgatherv */
      const int root = k < 0 ? -1 : roots[k];
      if (k > 0 && (root == roots[0] || (k == 2 && root == roots[1]))) continue;
      for (int in_place = 0; in_place < 2; ++in_place) {
        const int here = in_place && (k < 0 || rank == root);
        memset(buffer, 0, room * t->size);
        memset(mine, 0, (size_t)(own + 1) * t->size);
        char* from = here ? buffer + (size_t)displs[rank] * t->size : mine;
        for (int i = 0; i < own; ++i) t->set(from, i, data_of(t, rank, i, salt + root));
        const char* what;
        if (k < 0) {
          MPI_Allgatherv(here ? MPI_IN_PLACE : mine, own, t->type, buffer, sizes, displs, t->type,
                         comm);
          what = in_place ? "allgatherv in place" : "allgatherv";
        } else {
          MPI_Gatherv(here ? MPI_IN_PLACE : mine, own, t->type, buffer, sizes, displs, t->type,
                      root, comm);
          what = in_place ? "gatherv in place" : "gatherv";
        }
        if (k >= 0) {
          /* MPI_Scatterv from the same layout: rank r receives its block (at the root in place:
           * the root's own block stays where it is). */
          memset(mine, 0, (size_t)(own + 1) * t->size);
          char* sent = calloc(room, t->size);
          if (rank == root)
            for (int r = 0; r < size; ++r)
              for (int i = 0; i < sizes[r]; ++i)
                t->set(sent + (size_t)displs[r] * t->size, i, data_of(t, r + 40, i, salt + root));
          MPI_Scatterv(sent, sizes, displs, t->type, here ? MPI_IN_PLACE : mine, own, t->type, root,
                       comm);
          const char* got = here ? sent + (size_t)displs[rank] * t->size : mine;
          for (int i = 0; i < own; ++i)
            expect(t, got, i, data_of(t, rank + 40, i, salt + root),
                   in_place ? "scatterv in place" : "scatterv", -1, root, count);
          canon none = {0, 0};
          if (!here) expect(t, mine, own, none, "scatterv (past the block)", -1, root, count);
          free(sent);
        }
        if (k >= 0 && rank != root) continue;
        canon zero = {0, 0};
        for (int r = 0; r < size; ++r) {
          for (int i = 0; i < sizes[r]; ++i)
            expect(t, buffer + (size_t)displs[r] * t->size, i, data_of(t, r, i, salt + root), what,
                   -1, root, count);
          /* the gap after each block (in rank order: after the last one) */
          if (!in_order || r == size - 1)
            expect(t, buffer + (size_t)(displs[r] + sizes[r]) * t->size, 0, zero, what, -1, root,
                   count);
        }
      }
    }
    free(buffer);
    free(mine);
  }
  free(sizes);
  free(displs);
}

/* MPI_Alltoallv, in place and not: what rank s sends rank d, zero for some pairs (symmetric in
 * place, as MPI requires there); send blocks in reverse rank order with gaps, receive blocks in
 * rank order with a gap of one element after each, which stays untouched. */
static int exchanged(int count, int s, int d, int symmetric) {
  if (symmetric && s > d) {
    const int t = s;
    s = d;
    d = t;
  }
  return (s + 2 * d) % 5 == 1 ? 0 : count + (s * 7 + d * 3) % (count + 1) + s;
}

static void exchanges(MPI_Comm comm, const type_info* t, int salt) {
#ifdef MPICH_VERSION
  if (t->klass == K_PAIR) return; /* as in blocks() */
#endif
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* send_counts = calloc((size_t)size, sizeof(int));
  int* send_displs = calloc((size_t)size, sizeof(int));
  int* receive_counts = calloc((size_t)size, sizeof(int));
  int* receive_displs = calloc((size_t)size, sizeof(int));
  for (int c = 0; c < COUNTS; ++c) {
    const int count = counts[c];
    for (int in_place = 0; in_place < 2; ++in_place) {
      int send_at = 1, receive_at = 0;
      for (int r = size - 1; r >= 0; --r) {
        send_counts[r] = exchanged(count, rank, r, in_place);
        send_displs[r] = send_at;
        send_at += send_counts[r] + 2;
      }
      for (int r = 0; r < size; ++r) {
        receive_counts[r] = exchanged(count, r, rank, in_place);
        receive_displs[r] = receive_at;
        receive_at += receive_counts[r] + 1;
      }
      char* sent = calloc((size_t)send_at, t->size);
      char* buffer = calloc((size_t)receive_at + 1, t->size);
      for (int d = 0; d < size; ++d) {
        char* block = in_place ? buffer + (size_t)receive_displs[d] * t->size
                               : sent + (size_t)send_displs[d] * t->size;
        for (int i = 0; i < send_counts[d]; ++i)
          t->set(block, i, data_of(t, rank * size + d + 80, i, salt + 5));
      }
      if (in_place)
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buffer, receive_counts,
                      receive_displs, t->type, comm);
      else
        MPI_Alltoallv(sent, send_counts, send_displs, t->type, buffer, receive_counts,
                      receive_displs, t->type, comm);
      const char* what = in_place ? "alltoallv in place" : "alltoallv";
      canon zero = {0, 0};
      for (int r = 0; r < size; ++r) {
        for (int i = 0; i < receive_counts[r]; ++i)
          expect(t, buffer + (size_t)receive_displs[r] * t->size, i,
                 data_of(t, r * size + rank + 80, i, salt + 5), what, -1, r, count);
        expect(t, buffer + (size_t)(receive_displs[r] + receive_counts[r]) * t->size, 0, zero, what,
               -1, r, count);
      }
      free(sent);
      free(buffer);
    }
  }
  free(send_counts);
  free(send_displs);
  free(receive_counts);
  free(receive_displs);
}

/* One type of each class (and the reduction element sizes): the other communicator kinds run
 * these, world and the split every type, to keep the run short. */
static int representative(const char* name) {
  const char* chosen[] = {
      "MPI_INT",    "MPI_UINT8_T", "MPI_DOUBLE", "MPI_LONG_DOUBLE", "MPI_C_DOUBLE_COMPLEX",
      "MPI_C_BOOL", "MPI_BYTE",    "MPI_2INT",   "MPI_UINT64_T"};
  for (size_t i = 0; i < sizeof chosen / sizeof chosen[0]; ++i)
    if (strcmp(chosen[i], name) == 0) return 1;
  return 0;
}

static void suite(MPI_Comm comm, const char* name, int salt, int every_type) {
  label = name;
  for (int k = 0; k < type_count; ++k) {
    if (!every_type && !representative(types[k].name)) continue;
    for (int op = 0; op < OPS; ++op)
      if (defined(types[k].klass, op)) {
        reductions(comm, &types[k], op, salt + k + op);
        scattered_reductions(comm, &types[k], op, salt + k + op);
      }
    movements(comm, &types[k], salt + k);
    blocks(comm, &types[k], salt + k);
    vectors(comm, &types[k], salt + k);
    exchanges(comm, &types[k], salt + k);
    MPI_Barrier(comm);
  }
}

/* Sums the counts and combines the hashes over world; rank 0 prints the communicator's line. */
static void report(const char* name) {
  long long local[2] = {checks, failures}, total[2] = {0, 0};
  unsigned long long all_hash = 0;
  MPI_Reduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hash, &all_hash, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("%s: %lld checks, %lld failures, results hash %016llx\n", name, total[0], total[1],
           all_hash);
  checks = 0;
  hash = 1469598103934665603ULL;
}

static long long all_failures;

static void run(MPI_Comm comm, const char* name, int salt, int every_type) {
  if (comm != MPI_COMM_NULL) suite(comm, name, salt, every_type);
  all_failures += failures;
  failures = 0;
  report(name);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  make_types();

  run(MPI_COMM_WORLD, "world", 0, 1);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  run(dup, "dup", 1, 0);

  MPI_Comm split; /* two halves, ranks in reverse order */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
  run(split, "split", 2, 1);

  /* The world ranks in reverse order, without the last one when there are 3 or more. */
  MPI_Group world_group, reversed;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int members = size >= 3 ? size - 1 : size;
  int* ranks = malloc(sizeof(int) * (size_t)members);
  for (int i = 0; i < members; ++i) ranks[i] = members - 1 - i;
  MPI_Group_incl(world_group, members, ranks, &reversed);
  MPI_Comm grouped = MPI_COMM_NULL;
  if (rank < members) MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 7, &grouped);
  run(grouped, "create_group", 3, 0);
  free(ranks);

  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  run(cart, "cartesian", 4, 0);

  /* Communicators with cachecomm state freed, then new ones (their handles may be reused). */
  MPI_Comm first, second, kept, fresh;
  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_dup(MPI_COMM_WORLD, &second);
  MPI_Comm_dup(MPI_COMM_WORLD, &kept);
  MPI_Comm warm[3] = {first, second, kept};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 6; ++i) {
      int one = 1, sum = 0;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, warm[c]);
    }
  MPI_Comm_free(&first);
  MPI_Comm_free(&second);
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  run(fresh, "after free (new)", 5, 0);
  run(kept, "after free (kept)", 6, 0);

  MPI_Comm_free(&fresh);
  MPI_Comm_free(&kept);
  MPI_Comm_free(&cart);
  if (grouped != MPI_COMM_NULL) MPI_Comm_free(&grouped);
  MPI_Group_free(&reversed);
  MPI_Group_free(&world_group);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  long long total = 0;
  MPI_Allreduce(&all_failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
