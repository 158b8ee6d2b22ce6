/* Two processes, no MPI: a writer copies `bytes` into a shared slot and raises a flag, a reader
 * waits for it, copies the slot out and answers; per batch of 200 hand-offs the mean time.
 * slot_copy_probe BYTES RING SHM [PLACES]: RING slots of 256 KiB, SHM 1 a POSIX shared-memory
 * segment (as cachecomm's) or 0 anonymous shared memory, PLACES areas per slot that successive
 * uses walk through (default 256 KiB / BYTES, the nonblocking channel's walk; 1: always the slot's
 * start). Run it several times in a row: on the session-32 VM each launch printed either ~3-4 us
 * or ~25-45 us per 64 KiB hand-off, whatever the layout, while a one-process memcpy of the same
 * size stayed at 30-40 GB/s (see docs/results/session32.md). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s BYTES RING SHM [PLACES]\n", argv[0]);
    return 2;
  }
  const size_t bytes = (size_t)atol(argv[1]);
  const long ring = atol(argv[2]);
  const int use_shm = atoi(argv[3]);
  const size_t slot = 256u << 10;
  const size_t places = argc > 4 ? (size_t)atol(argv[4]) : slot / bytes;
  const size_t total = 4096 + (size_t)ring * slot;
  char* base = NULL;
  if (use_shm) {
    char name[64];
    snprintf(name, sizeof name, "/slot_copy_probe.%d", (int)getpid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)total) != 0) return 1;
    base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    shm_unlink(name);
    close(fd);
  } else {
    base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }
  if (base == MAP_FAILED) return 1;
  memset(base, 0, total);
  long* posted = (long*)base;            /* the writer's flag, on a line of its own */
  long* answered = (long*)(base + 2048); /* the reader's */
  char* slots = base + 4096;
  char* user = malloc(bytes);
  memset(user, 3, bytes);
  const int reader = fork() == 0;
  pin(reader ? 1 : 0);
  long sequence = 0;
  for (int batch = 0; batch < 10; ++batch) {
    const double start = now();
    for (int i = 0; i < 200; ++i) {
      ++sequence;
      char* area =
          slots + (size_t)(sequence % ring) * slot + (size_t)(sequence / ring) % places * bytes;
      if (!reader) {
        memcpy(area, user, bytes);
        __atomic_store_n(posted, sequence, __ATOMIC_RELEASE);
        while (__atomic_load_n(answered, __ATOMIC_ACQUIRE) != sequence) {
        }
      } else {
        while (__atomic_load_n(posted, __ATOMIC_ACQUIRE) != sequence) {
        }
        memcpy(user, area, bytes);
        __atomic_store_n(answered, sequence, __ATOMIC_RELEASE);
      }
    }
    if (!reader) printf("%.1f ", (now() - start) / 200 * 1e6);
  }
  if (!reader) {
    printf("\n");
    wait(NULL);
  }
  return 0;
}
