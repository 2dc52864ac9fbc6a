/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crash - a traced program that dies: it takes a mutex LOCKS times, then
 * ends by SIGSEGV (built as crash-segv) or abort() (crash-abort), with a
 * thread still holding another mutex.
 * Expect: no report; the session ends by itself, with its summary.
 */
#include "fixture.h"
#include <signal.h>

#define LOCKS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t holding;

static void *holder(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&held));
	pthread_barrier_wait(&holding);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	int i;

	fixture_start("crash", argc, argv);
	truth("mutex M %p", (void *)&lock);
	truth("expect none");
	truth("locks %d", LOCKS + 1);
	CHECK(pthread_barrier_init(&holding, NULL, 2));
	wait_for_go();
	CHECK(pthread_create(&thread, NULL, holder, NULL));
	pthread_barrier_wait(&holding);
	for (i = 0; i < LOCKS; i++) {
		CHECK(pthread_mutex_lock(&lock));
		CHECK(pthread_mutex_unlock(&lock));
	}
	truth("crashing");
#ifdef CRASH_ABORT
	abort();
#else
	raise(SIGSEGV);
#endif
	return 1;
}
