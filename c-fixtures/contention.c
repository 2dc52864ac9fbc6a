/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contention - WORKERS threads take A then B, in that order, ITERATIONS
 * times each: heavy contention, never a cycle.
 * Expect: no report from dl.stp or dl2.stp.
 */
#include "fixture.h"

#define WORKERS 4
#define ITERATIONS 2000

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static long counter;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	pthread_barrier_wait(&start);
	for (i = 0; i < ITERATIONS; i++) {
		CHECK(pthread_mutex_lock(&lock_a));
		CHECK(pthread_mutex_lock(&lock_b));
		counter++;
		CHECK(pthread_mutex_unlock(&lock_b));
		CHECK(pthread_mutex_unlock(&lock_a));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[WORKERS];
	int i;

	fixture_start("contention", argc, argv);
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("expect none");
	truth("locks %d", WORKERS * ITERATIONS * 2);
	CHECK(pthread_barrier_init(&start, NULL, WORKERS));
	wait_for_go();
	for (i = 0; i < WORKERS; i++)
		CHECK(pthread_create(&threads[i], NULL, worker, NULL));
	for (i = 0; i < WORKERS; i++)
		CHECK(pthread_join(threads[i], NULL));
	if (counter != WORKERS * ITERATIONS)
		return 2;
	truth("done");
	return 0;
}
