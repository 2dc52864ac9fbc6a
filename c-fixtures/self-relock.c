/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * self-relock - the seed's first demo: a thread locks a normal mutex it
 * already holds, and waits for itself forever.
 * Expect: dl.stp and dl2.stp report thread T waiting for mutex M held by T.
 */
#include "fixture.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	fixture_start("self-relock", argc, argv);
	truth("mutex M %p", (void *)&lock);
	truth("thread T %d", (int)gettid());
	CHECK(pthread_mutex_lock(&lock));
	wait_for_go();
	truth("wait T M T");
	truth("expect deadlock");
	pthread_mutex_lock(&lock); /* never returns */
	return 1;
}
