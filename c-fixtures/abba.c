/*
 * abba - the seed's second demo: main holds A and wants B, its thread holds
 * B and wants A.  A barrier instead of the seed's sleep(1) makes the
 * deadlock certain.
 * Expect: dl2.stp reports the two-thread cycle; dl.stp reports nothing.
 */
#include "fixture.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t holding, go;
static pid_t child_tid;

static void *child(void *arg)
{
	(void)arg;
	child_tid = gettid();
	CHECK(pthread_mutex_lock(&lock_b));
	pthread_barrier_wait(&holding);
	pthread_barrier_wait(&go);
	pthread_mutex_lock(&lock_a); /* never returns */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	fixture_start("abba", argc, argv);
	CHECK(pthread_barrier_init(&holding, NULL, 2));
	CHECK(pthread_barrier_init(&go, NULL, 2));
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	CHECK(pthread_mutex_lock(&lock_a));
	CHECK(pthread_create(&thread, NULL, child, NULL));
	pthread_barrier_wait(&holding);
	truth("thread T1 %d", (int)gettid());
	truth("thread T2 %d", (int)child_tid);
	wait_for_go();
	truth("wait T1 B T2");
	truth("wait T2 A T1");
	truth("expect deadlock");
	pthread_barrier_wait(&go);
	pthread_mutex_lock(&lock_b); /* never returns */
	return 1;
}
