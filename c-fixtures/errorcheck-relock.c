/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * errorcheck-relock - a thread relocks an errorcheck mutex it holds: the
 * call returns EDEADLK instead of blocking.
 * Expect: no report from dl.stp or dl2.stp.
 */
#include "fixture.h"

int main(int argc, char **argv)
{
	pthread_mutex_t lock;
	int rc;

	fixture_start("errorcheck-relock", argc, argv);
	mutex_init_kind(&lock, PTHREAD_MUTEX_ERRORCHECK);
	truth("mutex E %p", (void *)&lock);
	truth("thread T %d", (int)gettid());
	truth("expect none");
	truth("locks 2");
	wait_for_go();
	CHECK(pthread_mutex_lock(&lock));
	rc = pthread_mutex_lock(&lock);
	truth("result relock %s", errname(rc));
	if (rc != EDEADLK)
		return 2;
	CHECK(pthread_mutex_unlock(&lock));
	CHECK(pthread_mutex_destroy(&lock));
	truth("done");
	return 0;
}
