/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recursive-relock - a thread relocks a recursive mutex it holds, twice,
 * then unlocks it three times.  Legal, never blocks.
 * Expect: no report from dl.stp or dl2.stp.
 */
#include "fixture.h"

int main(int argc, char **argv)
{
	pthread_mutex_t lock;

	fixture_start("recursive-relock", argc, argv);
	mutex_init_kind(&lock, PTHREAD_MUTEX_RECURSIVE);
	truth("mutex R %p", (void *)&lock);
	truth("thread T %d", (int)gettid());
	truth("expect none");
	truth("locks 3");
	wait_for_go();
	CHECK(pthread_mutex_lock(&lock));
	CHECK(pthread_mutex_lock(&lock));
	CHECK(pthread_mutex_lock(&lock));
	CHECK(pthread_mutex_unlock(&lock));
	CHECK(pthread_mutex_unlock(&lock));
	CHECK(pthread_mutex_unlock(&lock));
	CHECK(pthread_mutex_destroy(&lock));
	truth("done");
	return 0;
}
