/* Plain MPI program: every MPI-3 one-sided call on a window from MPI_Win_allocate, in every
 * synchronization mode and mixed on one window, plus the window's attributes and queries. Run with
 * and without the preload library, it must print the same (rank 0 prints what every rank saw);
 * each section also checks its own expected values, prints "BAD ..." for each that is wrong and
 * makes the program fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { slots = 256, iterations = 200 };

static int rank, size, failures;

static void check(int ok, const char* what) {
  if (!ok) {
    printf("BAD rank %d: %s\n", rank, what);
    ++failures;
  }
}

static void print_all(const char* label, const long long* mine, int n) {
  long long* all = (long long*)malloc(sizeof(long long) * (size_t)(n * size));
  MPI_Gather(mine, n, MPI_LONG_LONG, all, n, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s:", label);
    for (int i = 0; i < n * size; ++i) printf(" %lld", all[i]);
    printf("\n");
  }
  free(all);
}

/* Byte offset of the int in MPI_SHORT_INT's layout (a C struct of short and int). */
static size_t offsetof_index(void) {
  struct {
    short value;
    int index;
  } probe;
  return (size_t)((char*)&probe.index - (char*)&probe);
}

static int compare_ll(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return (x > y) - (x < y);
}

/* Fetched values are each rank's view of a race; sorted, they are deterministic. */
static void print_sorted(const char* label, long long mine) {
  long long* all = (long long*)malloc(sizeof(long long) * (size_t)size);
  MPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(all, (size_t)size, sizeof(long long), compare_ll);
    printf("%s:", label);
    for (int i = 0; i < size; ++i) printf(" %lld", all[i]);
    printf("\n");
  }
  free(all);
}

static void queries(MPI_Win win, long long* base, MPI_Aint bytes) {
  int flag = 0;
  int* flavor = NULL;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  check(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "create flavor is MPI_WIN_FLAVOR_ALLOCATE");
  int* model = NULL;
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  check(flag && *model == MPI_WIN_UNIFIED, "memory model is MPI_WIN_UNIFIED");
  void* attr_base = NULL;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &attr_base, &flag);
  check(flag && attr_base == base, "MPI_WIN_BASE is the allocated base");
  MPI_Aint* attr_size = NULL;
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &attr_size, &flag);
  check(flag && *attr_size == bytes, "MPI_WIN_SIZE is this rank's size");
  int* unit = NULL;
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
  check(flag && *unit == (int)sizeof(long long), "MPI_WIN_DISP_UNIT");
  MPI_Group group, world_group;
  int same = MPI_UNEQUAL;
  MPI_Win_get_group(win, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_compare(group, world_group, &same);
  check(same == MPI_IDENT, "MPI_Win_get_group is the communicator's group");
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  MPI_Win_set_name(win, "conformance window");
  MPI_Win_get_name(win, name, &length);
  check(strcmp(name, "conformance window") == 0 && length == 18, "MPI_Win_get_name");
  MPI_Errhandler handler;
  MPI_Win_get_errhandler(win, &handler);
  check(handler == MPI_ERRORS_ARE_FATAL, "a new window's error handler is MPI_ERRORS_ARE_FATAL");
  MPI_Errhandler_free(&handler);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_get_errhandler(win, &handler);
  check(handler == MPI_ERRORS_RETURN, "MPI_Win_set_errhandler sticks");
  MPI_Errhandler_free(&handler);
  /* Shared query on an allocate window: what the MPI library answers (Open MPI 4.1 refuses it). */
  MPI_Aint query_size = -1;
  int query_unit = -1;
  void* query_base = NULL;
  const int code = MPI_Win_shared_query(win, rank, &query_size, &query_unit, &query_base);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(code, &error_class);
  int all_classes_same = 0, lowest = 0, highest = 0;
  MPI_Allreduce(&error_class, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&error_class, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  all_classes_same = lowest == highest;
  if (rank == 0)
    printf("shared_query: class %d%s\n", error_class, all_classes_same ? "" : " (differs)");
  if (code == MPI_SUCCESS) check(query_base == base && query_size == bytes, "shared_query");
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
  MPI_Info info;
  char value[MPI_MAX_INFO_VAL + 1];
  MPI_Win_get_info(win, &info);
  MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, value, &flag);
  if (rank == 0) printf("accumulate_ordering: %s\n", flag ? value : "(unset)");
  MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, value, &flag);
  if (rank == 0) printf("accumulate_ops: %s\n", flag ? value : "(unset)");
  MPI_Info_free(&info);
}

/* Passive target: exclusive and shared locks, lock_all with flush, flush_local, flush_all and
 * MPI_Win_sync over direct stores. */
static void passive_target(MPI_Win win, long long* base) {
  const int right = (rank + 1) % size;
  for (int i = 0; i < slots; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  long long value = 1000 + rank;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  long long seen = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Get(&seen, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_unlock(right, win);
  check(seen == 1000 + rank, "get under a shared lock sees the exclusive-lock put");
  base[1] = seen;

  /* lock_all: put, flush, get back; flush_local releases the origin buffer. */
  MPI_Win_lock_all(0, win);
  long long mine[2] = {2000 + rank, 3000 + rank};
  MPI_Put(mine, 2, MPI_LONG_LONG, right, 2, 2, MPI_LONG_LONG, win);
  MPI_Win_flush(right, win);
  long long back[2] = {0, 0};
  MPI_Get(back, 2, MPI_LONG_LONG, right, 2, 2, MPI_LONG_LONG, win);
  MPI_Win_flush(right, win);
  check(back[0] == 2000 + rank && back[1] == 3000 + rank, "get after flush sees the put");
  long long local = 4000 + rank;
  MPI_Put(&local, 1, MPI_LONG_LONG, right, 4, 1, MPI_LONG_LONG, win);
  MPI_Win_flush_local(right, win);
  local = -1; /* the origin buffer is free again after flush_local */
  (void)local;
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Direct stores made visible with MPI_Win_sync inside lock_all (the unified model). */
  MPI_Win_lock_all(0, win);
  base[5] = 5000 + rank;
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  long long direct = -1;
  MPI_Get(&direct, 1, MPI_LONG_LONG, right, 5, 1, MPI_LONG_LONG, win);
  MPI_Win_flush(right, win);
  MPI_Win_unlock_all(win);
  check(direct == 5000 + right, "win_sync publishes direct stores");
  base[6] = direct;
  MPI_Barrier(MPI_COMM_WORLD);
  print_all("passive target", base, 7);
}

/* Every predefined accumulate operation into rank 0, in a fence epoch (fence == 1) or under
 * lock_all; results are order-independent. Displacements count 8-byte units: the int of slot d
 * is ints[2 * d]. (MPI_NO_OP is for the fetching calls only: see atomics.) */
static void accumulate_ops(MPI_Win win, long long* base, int fence) {
  MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                  MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  const int count = (int)(sizeof ops / sizeof ops[0]);
  int* ints = (int*)base;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < 2 * slots; ++i) ints[i] = 0;
    ints[2 * 1] = 1;       /* PROD */
    ints[2 * 3] = 1 << 20; /* MIN */
    ints[2 * 4] = 1;       /* LAND */
    ints[2 * 7] = ~0;      /* BAND */
    ints[64] = 1 << 20;    /* MINLOC value */
  }
  if (fence) {
    MPI_Win_fence(0, win);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
  }
  const int operand[] = {rank + 1,  rank + 1, rank * 3,     rank + 5,  1,
                         rank == 1, rank % 2, ~(1 << rank), 1 << rank, 1 << rank};
  for (int op = 0; op < count; ++op)
    MPI_Accumulate(&operand[op], 1, MPI_INT, 0, op, 1, MPI_INT, ops[op], win);
  /* MPI_REPLACE: each rank its own element. */
  const int replacement = 500 + rank;
  MPI_Accumulate(&replacement, 1, MPI_INT, 0, 20 + rank, 1, MPI_INT, MPI_REPLACE, win);
  /* MINLOC/MAXLOC on MPI_2INT (slots 32, 33) and MAXLOC on MPI_SHORT_INT (slot 64). */
  int pair[2] = {10 - rank, rank};
  MPI_Accumulate(pair, 1, MPI_2INT, 0, 32, 1, MPI_2INT, MPI_MINLOC, win);
  MPI_Accumulate(pair, 1, MPI_2INT, 0, 33, 1, MPI_2INT, MPI_MAXLOC, win);
  struct {
    short value;
    int index;
  } short_int = {(short)(rank * 2), rank};
  MPI_Accumulate(&short_int, 1, MPI_SHORT_INT, 0, 64, 1, MPI_SHORT_INT, MPI_MAXLOC, win);
  if (fence) {
    MPI_Win_fence(0, win);
  } else {
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
  }
  /* Atomic reads of the pairs (MPI_Get_accumulate with MPI_NO_OP), defined after the epoch. */
  int pair_read[2] = {-1, -1};
  struct {
    short value;
    int index;
  } short_int_read = {-1, -1};
  MPI_Get_accumulate(NULL, 0, MPI_2INT, pair_read, 1, MPI_2INT, 0, 33, 1, MPI_2INT, MPI_NO_OP, win);
  MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, &short_int_read, 1, MPI_SHORT_INT, 0, 64, 1,
                     MPI_SHORT_INT, MPI_NO_OP, win);
  if (fence) {
    MPI_Win_fence(0, win);
  } else {
    MPI_Win_unlock_all(win);
  }
  check(pair_read[0] == 10 && pair_read[1] == 0, "atomic get of an MPI_2INT pair");
  check(short_int_read.value == (size - 1) * 2 && short_int_read.index == size - 1,
        "atomic get of an MPI_SHORT_INT pair");
  if (rank == 0) {
    long long result[20] = {0};
    for (int op = 0; op < count; ++op) result[op] = ints[2 * op];
    for (int r = 0; r < size && r < 4; ++r) result[10 + r] = ints[2 * (20 + r)];
    for (int i = 0; i < 4; ++i) result[14 + i] = ints[64 + i];
    short value;
    int index;
    memcpy(&value, (char*)base + 512, sizeof value);
    memcpy(&index, (char*)base + 512 + offsetof_index(), sizeof index);
    result[18] = value * 100 + index;
    check(result[0] == (long long)size * (size + 1) / 2, "MPI_SUM");
    check(result[14] == 10 - (size - 1) && result[15] == size - 1, "MPI_MINLOC on MPI_2INT");
    check(result[16] == 10 && result[17] == 0, "MPI_MAXLOC on MPI_2INT");
    check(result[18] == (size - 1) * 2 * 100 + size - 1, "MPI_MAXLOC on MPI_SHORT_INT");
    printf("accumulate ops (%s):", fence ? "fence" : "lock_all");
    for (int i = 0; i < 19; ++i) printf(" %lld", result[i]);
    printf("\n");
  }
  if (fence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

/* Get_accumulate, Fetch_and_op and Compare_and_swap racing on rank 0's counters, mixed with
 * plain accumulates of the same op. mode: 0 = lock_all, 1 = fence epoch, 2 = PSCW. */
static void atomics(MPI_Win win, long long* base, int mode) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < 16; ++i) base[i] = 0;
  MPI_Group world_group, zero_group, all_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int zero = 0;
  MPI_Group_incl(world_group, 1, &zero, &zero_group);
  all_group = world_group;
  if (mode == 1)
    MPI_Win_fence(0, win);
  else if (mode == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
  } else {
    if (rank == 0) MPI_Win_post(all_group, 0, win);
    MPI_Win_start(zero_group, 0, win);
  }
  /* In fence and PSCW epochs the fetched values are defined only once the epoch ends: each call
   * gets its own result slot, read afterwards. */
  const long long one = 1;
  static long long fetched[iterations], old[iterations][2];
  for (int i = 0; i < iterations; ++i) {
    MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG_LONG, 0, 0, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
    long long two[2] = {1, 2};
    MPI_Get_accumulate(two, 2, MPI_LONG_LONG, old[i], 2, MPI_LONG_LONG, 0, 1, 2, MPI_LONG_LONG,
                       MPI_SUM, win);
    if (mode == 0) MPI_Win_flush(0, win);
  }
  /* Compare_and_swap: exactly one rank turns 0 into its rank + 1. MPI_INT: Open MPI 4.1.4's osc
   * rdma crashes (SIGSEGV in btl vader) on an 8-byte compare-and-swap to another rank. */
  int desired = rank + 1, expected = 0, result = -1;
  MPI_Compare_and_swap(&desired, &expected, &result, MPI_INT, 0, 3, win);
  if (mode == 0) MPI_Win_flush(0, win);
  /* Fetch_and_op with MPI_NO_OP and MPI_REPLACE, Get_accumulate with MPI_NO_OP. */
  long long replaced = 0, replacement = 7;
  if (rank == 0) MPI_Fetch_and_op(&replacement, &replaced, MPI_LONG_LONG, 0, 4, MPI_REPLACE, win);
  if (mode == 0) MPI_Win_flush_all(win);
  if (mode == 1)
    MPI_Win_fence(0, win);
  else if (mode == 0) {
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
  } else {
    MPI_Win_complete(win);
    if (rank == 0) MPI_Win_wait(win);
    if (rank == 0) MPI_Win_post(all_group, 0, win);
    MPI_Win_start(zero_group, 0, win);
  }
  long long counter = -1, four = -1;
  int swapped = -1;
  MPI_Fetch_and_op(NULL, &counter, MPI_LONG_LONG, 0, 0, MPI_NO_OP, win);
  long long pair[2];
  MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, pair, 2, MPI_LONG_LONG, 0, 1, 2, MPI_LONG_LONG,
                     MPI_NO_OP, win);
  MPI_Fetch_and_op(NULL, &swapped, MPI_INT, 0, 3, MPI_NO_OP, win);
  MPI_Fetch_and_op(NULL, &four, MPI_LONG_LONG, 0, 4, MPI_NO_OP, win);
  if (mode == 1)
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  else if (mode == 0) {
    MPI_Win_unlock_all(win);
  } else {
    MPI_Win_complete(win);
    if (rank == 0) MPI_Win_wait(win);
  }
  const long long first_fetch = fetched[0];
  for (int i = 0; i < iterations; ++i) {
    /* Atomic per element only: the two fetched elements need not come from one moment. */
    check(old[i][0] >= 0 && old[i][0] < (long long)iterations * size && old[i][1] >= 0 &&
              old[i][1] < 2LL * iterations * size,
          "get_accumulate fetched a value the target held");
    check(fetched[i] >= 0 && fetched[i] < 2LL * iterations * size,
          "fetch_and_op fetched a value the target held");
  }
  check(counter == 2LL * iterations * size, "fetch_and_op and accumulate add up");
  check(pair[0] == (long long)iterations * size && pair[1] == 2LL * iterations * size,
        "get_accumulate adds up");
  check(four == 7, "fetch_and_op MPI_REPLACE");
  long long won = result == 0;
  long long winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  check(winners == 1, "exactly one compare_and_swap wins");
  check(swapped >= 1 && swapped <= size, "compare_and_swap stored a rank + 1");
  const char* names[] = {"lock_all", "fence", "pscw"};
  char label[64];
  snprintf(label, sizeof label, "atomics (%s) totals", names[mode]);
  long long totals[5] = {counter, pair[0], pair[1], winners, four};
  if (rank == 0) {
    printf("%s: %lld %lld %lld %lld %lld\n", label, totals[0], totals[1], totals[2], totals[3],
           totals[4]);
  }
  snprintf(label, sizeof label, "atomics (%s) first fetch-and-op", names[mode]);
  print_sorted(label, first_fetch == 0 ? 0 : 1); /* exactly one rank came first */
  MPI_Group_free(&zero_group);
  MPI_Group_free(&world_group);
}

/* Request-based operations under lock_all; MPI_Wait completes each locally (and the get). */
static void request_based(MPI_Win win, long long* base) {
  const int right = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 16; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  MPI_Request requests[4];
  MPI_Status statuses[2];
  long long value = 100 + rank, one = 1;
  MPI_Rput(&value, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, &requests[0]);
  MPI_Raccumulate(&one, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, MPI_SUM, win, &requests[1]);
  MPI_Waitall(2, requests, statuses);
  MPI_Win_flush_all(win);
  long long seen = -1, old = -1;
  MPI_Rget(&seen, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, &requests[2]);
  MPI_Wait(&requests[2], MPI_STATUS_IGNORE);
  check(seen == 100 + rank, "rget after rput and flush");
  MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &old, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG,
                      MPI_SUM, win, &requests[3]);
  MPI_Wait(&requests[3], MPI_STATUS_IGNORE);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  base[3] = seen;
  print_all("request based", base, 4);
  print_sorted("rget_accumulate fetched", old);
}

/* One window through fence, PSCW, passive target and fence again; each epoch reads what the one
 * before wrote. */
static void mixed(MPI_Win win, long long* base) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 16; ++i) base[i] = 0;
  MPI_Win_fence(0, win);
  long long value = 10 + rank;
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_fence(0, win); /* no MPI_MODE_NOSUCCEED: PSCW after a plain fence */
  MPI_Group world_group, left_group, right_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, 1, &left, &left_group);
  MPI_Group_incl(world_group, 1, &right, &right_group);
  long long got = -1;
  MPI_Win_post(left_group, 0, win);
  MPI_Win_start(right_group, 0, win);
  MPI_Get(&got, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  MPI_Win_complete(win); /* the get's buffer is defined from here on */
  MPI_Win_wait(win);
  MPI_Win_post(left_group, 0, win);
  MPI_Win_start(right_group, 0, win);
  value = got + 100;
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win);
  long long one = 1;
  MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, MPI_SUM, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  check(got == 10 + rank, "PSCW get sees the fence put");
  /* Passive target right after PSCW. */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  long long previous = -1;
  MPI_Fetch_and_op(&one, &previous, MPI_LONG_LONG, right, 2, MPI_SUM, win);
  MPI_Get(&got, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win);
  MPI_Win_unlock(right, win);
  check(previous == 1, "passive fetch_and_op sees the PSCW accumulate");
  check(got == 110 + rank, "passive get sees the PSCW put");
  MPI_Win_lock_all(0, win);
  MPI_Accumulate(&one, 1, MPI_LONG_LONG, left, 3, 1, MPI_LONG_LONG, MPI_SUM, win);
  MPI_Win_unlock_all(win);
  /* And a fence epoch again. */
  MPI_Win_fence(0, win);
  long long fenced = -1;
  MPI_Get(&fenced, 1, MPI_LONG_LONG, left, 3, 1, MPI_LONG_LONG, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  check(fenced == 1, "fence get sees the passive accumulate");
  base[4] = fenced;
  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&world_group);
  MPI_Barrier(MPI_COMM_WORLD);
  print_all("mixed", base, 5);
}

/* Accumulates MPI may do anywhere but cachecomm's atomics only on aligned elements: an int at a
 * byte offset of 2, in a window of displacement unit 1. */
static void misaligned(void) {
  char* bytes = NULL;
  MPI_Win win;
  MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bytes, &win);
  memset(bytes, 0, 64);
  MPI_Win_fence(0, win);
  const int one = 1;
  int fetched = -1;
  MPI_Accumulate(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win);
  MPI_Fetch_and_op(&one, &fetched, MPI_INT, 0, 10, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0) {
    int at2, at10;
    memcpy(&at2, bytes + 2, sizeof at2);
    memcpy(&at10, bytes + 10, sizeof at10);
    check(at2 == size && at10 == size, "misaligned accumulates add up");
    printf("misaligned: %d %d\n", at2, at10);
  }
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  /* "multiple": the same at MPI_THREAD_MULTIPLE (one thread uses the window). */
  if (argc > 1 && strcmp(argv[1], "multiple") == 0) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
  const MPI_Aint bytes = (MPI_Aint)(slots * sizeof(long long));
  long long* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(bytes, (int)sizeof(long long), info, MPI_COMM_WORLD, &base, &win);
  MPI_Info_free(&info);
  queries(win, base, bytes);
  passive_target(win, base);
  accumulate_ops(win, base, 1);
  accumulate_ops(win, base, 0);
  for (int mode = 0; mode < 3; ++mode) atomics(win, base, mode);
  request_based(win, base);
  mixed(win, base);
  MPI_Win_free(&win);
  misaligned();
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("done, %d failed checks\n", all_failures);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
