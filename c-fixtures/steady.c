/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * steady - a program at work while tracers come and go: WORKERS threads
 * take A then B, count under both, and let go, over and over, until the
 * file named by FIXTURE_FINISH_FILE exists (or, without it, for 2000
 * rounds each).  Then it checks that both shared counters equal the sum
 * of the rounds every thread counted on its own: tracing, attaching or
 * detaching must never change what a program computes.
 * With STEADY_PACE_MS=N in its environment, each thread rests N ms between
 * rounds (a workload a slow, emulated runtime keeps up with).  With
 * STEADY_HOLD_MS=N, each thread holds both locks N ms in each round: with
 * N at least twice the pace, every round of every thread waits for A (the
 * others hold it longer than it rests), so each second has contention.
 * Truth at the end: "truth rounds N", "truth result counters OK" (or BAD,
 * exit status 2), "truth done".
 */
#include "fixture.h"

#define WORKERS 4
#define ROUNDS_WITHOUT_FILE 2000

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static long counter_a, counter_b;
static int finish;
static struct timespec pace, hold;

static void *worker(void *arg)
{
	long *rounds = arg;

	while (!__atomic_load_n(&finish, __ATOMIC_ACQUIRE)) {
		CHECK(pthread_mutex_lock(&lock_a));
		counter_a++;
		CHECK(pthread_mutex_lock(&lock_b));
		counter_b++;
		if (hold.tv_nsec)
			nanosleep(&hold, NULL);
		CHECK(pthread_mutex_unlock(&lock_b));
		CHECK(pthread_mutex_unlock(&lock_a));
		if (++*rounds == ROUNDS_WITHOUT_FILE && !getenv("FIXTURE_FINISH_FILE"))
			break;
		if (pace.tv_nsec)
			nanosleep(&pace, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[WORKERS];
	long rounds[WORKERS] = { 0 }, total = 0;
	const char *finish_file = getenv("FIXTURE_FINISH_FILE");
	int i, ok;

	if (getenv("STEADY_PACE_MS"))
		pace.tv_nsec = atol(getenv("STEADY_PACE_MS")) % 1000 * 1000000L;
	if (getenv("STEADY_HOLD_MS"))
		hold.tv_nsec = atol(getenv("STEADY_HOLD_MS")) % 1000 * 1000000L;

	fixture_start("steady", argc, argv);
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("expect none");
	wait_for_go();
	for (i = 0; i < WORKERS; i++)
		CHECK(pthread_create(&threads[i], NULL, worker, &rounds[i]));
	truth("working");
	if (finish_file) {
		fixture_wait_for_file(finish_file);
		__atomic_store_n(&finish, 1, __ATOMIC_RELEASE);
	}
	for (i = 0; i < WORKERS; i++) {
		CHECK(pthread_join(threads[i], NULL));
		total += rounds[i];
	}
	ok = counter_a == total && counter_b == total;
	truth("rounds %ld", total);
	truth("result counters %s", ok ? "OK" : "BAD");
	truth("done");
	return ok ? 0 : 2;
}
