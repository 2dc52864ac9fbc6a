/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trylock-fail - main holds A; a thread's trylock on A fails with EBUSY;
 * then main releases A and the thread takes it with a plain lock.  And,
 * inverted, the thread holds B while main trylocks B: an AB-BA pattern
 * that cannot deadlock because one side only tries.
 * Expect: no report from dl.stp or dl2.stp.
 */
#include "fixture.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t step;

static void *child(void *arg)
{
	int rc;

	(void)arg;
	CHECK(pthread_mutex_lock(&lock_b));
	pthread_barrier_wait(&step);         /* main holds A, we hold B */
	rc = pthread_mutex_trylock(&lock_a);
	truth("result child-trylock-A %s", errname(rc));
	pthread_barrier_wait(&step);         /* main may now try B */
	pthread_barrier_wait(&step);         /* main tried B */
	CHECK(pthread_mutex_unlock(&lock_b));
	CHECK(pthread_mutex_lock(&lock_a));  /* blocks until main lets go */
	CHECK(pthread_mutex_unlock(&lock_a));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	int rc;

	fixture_start("trylock-fail", argc, argv);
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("expect none");
	truth("locks 3");
	CHECK(pthread_barrier_init(&step, NULL, 2));
	wait_for_go();
	CHECK(pthread_mutex_lock(&lock_a));
	CHECK(pthread_create(&thread, NULL, child, NULL));
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	rc = pthread_mutex_trylock(&lock_b);
	truth("result main-trylock-B %s", errname(rc));
	pthread_barrier_wait(&step);
	CHECK(pthread_mutex_unlock(&lock_a));
	CHECK(pthread_join(thread, NULL));
	truth("done");
	return 0;
}
