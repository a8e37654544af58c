/* Bounded concurrency for workers: wait for a slot until the deadline. */
#ifndef VERIFETCH_WORKER_SLOT_H
#define VERIFETCH_WORKER_SLOT_H

#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

bool vf_worker_slot_take(sem_t *slots, int64_t deadline_ms);
void vf_worker_slot_give(sem_t *slots);

#endif
