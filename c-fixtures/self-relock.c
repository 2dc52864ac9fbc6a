/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * self-relock - the seed's first demo: a thread locks a normal mutex it
 * already holds, and waits for itself forever.  The mutex is on the heap,
 * made by pthread_mutex_init (named by where: truth "origin"; by who, by
 * where its holder is: truth "holder-in M main").
 * Expect: dl.stp and dl2.stp report thread T waiting for mutex M held by T.
 */
#include "fixture.h"

int main(int argc, char **argv)
{
	pthread_mutex_t *lock;

	fixture_start("self-relock", argc, argv);
	lock = fixture_heap_mutex();
	truth("mutex M %p", (void *)lock);
	truth("origin M initialised fixture_heap_mutex");
	truth("thread T %d", (int)gettid());
	CHECK(pthread_mutex_lock(lock));
	wait_for_go();
	truth("wait T M T");
	truth("holder-in M main");
	truth("expect deadlock");
	pthread_mutex_lock(lock); /* never returns */
	return 1;
}
