/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * abba - the seed's second demo: main holds A and wants B, its thread holds
 * B and wants A.  A barrier instead of the seed's sleep(1) makes the
 * deadlock certain.
 * Expect: dl2.stp reports the two-thread cycle; dl.stp reports nothing.
 */
#include "fixture.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	fixture_start("abba", argc, argv);
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("symbol A lock_a");
	truth("symbol B lock_b");
	fixture_abba(&lock_a, &lock_b);
}
