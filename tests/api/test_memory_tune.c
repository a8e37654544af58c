/* The broker's idle heap trim (issue 15): free heap pages go back to the
 * kernel only once a large response was built and the broker has answered
 * nothing for a quiet second, so a caller asking one large page after
 * another keeps reusing the same pages instead of faulting them in again. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/memory_tune.h"

#define BLOCKS 24
#define BLOCK_BYTES (512u * 1024u)   /* below the mmap threshold: from the heap */

static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    long size = 0, resident = 0;
    cr_assert_eq(fscanf(f, "%ld %ld", &size, &resident), 2);
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* 12 MiB of touched heap, freed below a block that stays in use, so it is a
 * free chunk inside the heap (what a 1 MiB lookup's buffers leave behind),
 * not a top that free() would hand back by itself. */
static void *free_twelve_mib_inside_the_heap(void)
{
    char *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(BLOCK_BYTES);
        cr_assert_not_null(blocks[i]);
        memset(blocks[i], 0x5a, BLOCK_BYTES);
    }
    void *pin = malloc(64);
    cr_assert_not_null(pin);
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    return pin;
}

/* The broker's heap settings, then the freed 12 MiB; returns the resident
 * size with them still held. */
static long start_with_twelve_free_mib(void **pin)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer's allocator is not glibc's");
#endif
    vf_memory_tune_startup();
    *pin = free_twelve_mib_inside_the_heap();
    return resident_kib();
}

static void sleep_past_quiet(void)
{
    usleep((VF_MEMORY_QUIET_BEFORE_TRIM_MS + 150) * 1000);
}

Test(memory_tune, the_heap_goes_back_only_after_a_large_answer_and_a_quiet_second)
{
    void *pin;
    long held = start_with_twelve_free_mib(&pin);

    /* Quiet, but nothing large was built: nothing to give back. */
    vf_memory_request_done();
    sleep_past_quiet();
    vf_memory_tick(true);
    cr_assert_gt(resident_kib(), held - 2048, "trimmed with no large answer built");

    /* A large answer just went out: the next lookup may want the pages. */
    vf_memory_note_response(1u << 20);
    vf_memory_request_done();
    vf_memory_tick(true);
    cr_assert_gt(resident_kib(), held - 2048, "trimmed right after an answer");

    /* A second later, but a request is being answered. */
    sleep_past_quiet();
    vf_memory_tick(false);
    cr_assert_gt(resident_kib(), held - 2048, "trimmed while a request was in flight");

    /* Quiet for a second and nothing in flight: the free chunk goes back. */
    vf_memory_tick(true);
    long after = resident_kib();
    cr_log_info("resident %ld KiB with 12 MiB free in the heap, %ld KiB after the trim", held, after);
    cr_assert_lt(after, held - 6144, "the quiet trim gave back %ld of 12288 KiB", held - after);
    free(pin);
}

Test(memory_tune, small_answers_never_trim)
{
    void *pin;
    long held = start_with_twelve_free_mib(&pin);
    vf_memory_note_response(64u * 1024u);
    vf_memory_request_done();
    sleep_past_quiet();
    vf_memory_tick(true);
    cr_assert_gt(resident_kib(), held - 2048, "a 64 KiB answer made the heap shrink");
    free(pin);
}
