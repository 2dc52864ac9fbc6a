/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quick-exit - a program that lives a few milliseconds: two threads lock
 * and unlock one mutex ROUNDS times each, then it exits 0.  The kind of
 * program (a test of another project, a command-line tool) with which
 * stapbpf's -c used to miss the exit and run forever.
 * Expect: no report; the session ends by itself with its summary.
 */
#include "fixture.h"

#define ROUNDS 5

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		CHECK(pthread_mutex_lock(&lock));
		CHECK(pthread_mutex_unlock(&lock));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[2];
	int i;

	fixture_start("quick-exit", argc, argv);
	truth("mutex M %p", (void *)&lock);
	truth("expect none");
	truth("locks %d", 2 * ROUNDS);
	wait_for_go();
	for (i = 0; i < 2; i++)
		CHECK(pthread_create(&threads[i], NULL, worker, NULL));
	for (i = 0; i < 2; i++)
		CHECK(pthread_join(threads[i], NULL));
	truth("done");
	return 0;
}
