/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rwlock-cycle - a deadlock through an rwlock: T1 holds rwlock W for
 * writing and wants mutex M; T2 holds M and wants to read W.
 * Truth: "truth rwlock W ADDR", the wait edges, "truth blocked T1 T2".
 * Expect: who reports the two-thread cycle, T2 waiting for W held for
 * writing by T1.
 */
#include "fixture.h"

static pthread_rwlock_t lock_w = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t lock_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t holding;
static pid_t tid2;

static void *t2(void *arg)
{
	(void)arg;
	tid2 = gettid();
	CHECK(pthread_mutex_lock(&lock_m));
	pthread_barrier_wait(&holding);
	pthread_rwlock_rdlock(&lock_w); /* never returns */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	fixture_start("rwlock-cycle", argc, argv);
	truth("rwlock W %p", (void *)&lock_w);
	truth("mutex M %p", (void *)&lock_m);
	CHECK(pthread_barrier_init(&holding, NULL, 2));
	CHECK(pthread_rwlock_wrlock(&lock_w));
	CHECK(pthread_create(&thread, NULL, t2, NULL));
	pthread_barrier_wait(&holding);
	truth("thread T1 %d", (int)gettid());
	truth("thread T2 %d", (int)tid2);
	truth("wait T1 M T2");
	truth("wait T2 W T1");
	truth("blocked T1 T2");
	truth("expect deadlock");
	pthread_mutex_lock(&lock_m); /* never returns */
	return 1;
}
