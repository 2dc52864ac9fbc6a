/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hung-mix - a process that is already hung when someone arrives, in the
 * ways a real one is: T1 and T2 deadlocked over A and B (AB-BA); T3
 * waiting for A, behind that cycle but not in it; T4 waiting forever on a
 * condition variable (not a deadlock: nobody holds anything it needs); and
 * main (T0) joining T4.
 * Truth: the cycle's wait edges, and
 *   truth behind T3 A T1      (T3 waits for A, held by T1)
 *   truth condwait T4 C
 *   truth joins T0 T4
 *   truth blocked T0 T1 T2 T3 T4   (every thread that will sleep)
 * Expect: who reports the one cycle, and each thread's wait.
 */
#include "fixture.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t holding;
static pid_t tids[5];

static void *t1(void *arg)
{
	(void)arg;
	tids[1] = gettid();
	CHECK(pthread_mutex_lock(&lock_a));
	pthread_barrier_wait(&holding);
	pthread_mutex_lock(&lock_b); /* never returns */
	return NULL;
}

static void *t2(void *arg)
{
	(void)arg;
	tids[2] = gettid();
	CHECK(pthread_mutex_lock(&lock_b));
	pthread_barrier_wait(&holding);
	pthread_mutex_lock(&lock_a); /* never returns */
	return NULL;
}

static void *t3(void *arg)
{
	(void)arg;
	tids[3] = gettid();
	pthread_barrier_wait(&holding);
	pthread_mutex_lock(&lock_a); /* never returns: T1 holds A */
	return NULL;
}

static void *t4(void *arg)
{
	(void)arg;
	tids[4] = gettid();
	CHECK(pthread_mutex_lock(&lock_c));
	pthread_barrier_wait(&holding);
	for (;;)
		pthread_cond_wait(&cond, &lock_c); /* nobody signals */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[4];
	void *(*fn[4])(void *) = { t1, t2, t3, t4 };
	int i;

	fixture_start("hung-mix", argc, argv);
	tids[0] = gettid();
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("cond C %p", (void *)&cond);
	CHECK(pthread_barrier_init(&holding, NULL, 5));
	for (i = 0; i < 4; i++)
		CHECK(pthread_create(&threads[i], NULL, fn[i], NULL));
	pthread_barrier_wait(&holding);
	for (i = 0; i <= 4; i++)
		truth("thread T%d %d", i, (int)tids[i]);
	truth("wait T1 B T2");
	truth("wait T2 A T1");
	truth("behind T3 A T1");
	truth("condwait T4 C");
	truth("joins T0 T4");
	truth("blocked T0 T1 T2 T3 T4");
	truth("expect deadlock");
	pthread_join(threads[3], NULL); /* never returns */
	return 1;
}
