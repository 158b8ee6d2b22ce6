/* What the preload tests that print digests share (preload_collectives.c, preload_large_count.c):
 * each rank folds its results into `digest` (FNV-1a); print_digests prints every rank's, gathered
 * by the program itself (each test gathers with the calls it exercises). */
#ifndef CACHECOMM_TESTS_PRELOAD_RESULT_DIGEST_H
#define CACHECOMM_TESTS_PRELOAD_RESULT_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DIGEST_START 1469598103934665603ULL
static uint64_t digest = DIGEST_START;

static void mix(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < bytes; ++i) digest = (digest ^ p[i]) * 1099511628211ULL;
}

/* Prints "label: <digest of rank 0> <digest of rank 1> ..." (the caller resets `digest` to
 * DIGEST_START on every rank for the next part). */
static void print_digests(const char* label, const uint64_t* all, int size) {
  printf("%s:", label);
  for (int i = 0; i < size; ++i) printf(" %016llx", (unsigned long long)all[i]);
  printf("\n");
}

#endif
