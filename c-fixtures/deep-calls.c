/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deep-calls - lock calls at the end of long call paths, for stacks as
 * deep as a tracer keeps them (stack 16): main calls depth_1, which calls
 * depth_2, and so on; depth_LIMIT calls hold_deep, which locks and
 * unlocks deep_lock.  LONG_HOLDS holds come through all 15 functions
 * (hold_deep, depth_15 ... depth_1 are the 16 innermost frames, main the
 * seventeenth), SHORT_HOLDS through the first 8 (ten frames to main).
 * Then two threads, one after the other (nothing hangs), take two mutexes
 * in both orders along paths of their own: AB takes order_a in ab_outer
 * and order_b in ab_inner (called by ab_outer); BA takes order_b in
 * ba_outer and order_a in ba_inner (from ba_middle, from ba_outer): a
 * lock-order cycle whose four call paths differ.
 * Built as is and with frame pointers (deep-calls-fp).
 * Truth: "truth mutex deep_lock ADDR", "truth code FUNCTION ADDR" for
 * every function of the paths (and _start), and per path
 *   truth path COUNT hold_deep depth_K ... depth_1 main
 * (its frames from the lock call's caller to main); "truth thread AB|BA
 * TID", and per lock taken in the orders
 *   truth taken-along THREAD LOCK FUNCTION...
 * (the path from the lock call's caller to the thread's start routine);
 * "truth cycle order_a order_b".
 * Expect: no deadlock; the holds, each along its path; one lock-order
 * cycle.
 */
#include "fixture.h"

extern char _start[];	/* the program's entry (crt1.o) */

#define LONG_HOLDS 6
#define SHORT_HOLDS 4

static pthread_mutex_t deep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t order_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t order_b = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline, noclone)) static int hold_deep(void)
{
	CHECK(pthread_mutex_lock(&deep_lock));
	CHECK(pthread_mutex_unlock(&deep_lock));
	__asm__ volatile("" ::: "memory");
	return 1;
}

/* depth_K: hold_deep at the path's end (K == limit), else depth_K+1; the
 * work after the call keeps it a call (no tail call, no frame shared) */
#define DEPTH(k, next)							\
	__attribute__((noinline, noclone)) static int depth_##k(int limit) \
	{								\
		int r = limit == k ? hold_deep() : next(limit);		\
									\
		__asm__ volatile("" ::: "memory");			\
		return r + 1;						\
	}
static int no_deeper(int limit)
{
	(void)limit;
	return hold_deep();
}
DEPTH(15, no_deeper)
DEPTH(14, depth_15)
DEPTH(13, depth_14)
DEPTH(12, depth_13)
DEPTH(11, depth_12)
DEPTH(10, depth_11)
DEPTH(9, depth_10)
DEPTH(8, depth_9)
DEPTH(7, depth_8)
DEPTH(6, depth_7)
DEPTH(5, depth_6)
DEPTH(4, depth_5)
DEPTH(3, depth_4)
DEPTH(2, depth_3)
DEPTH(1, depth_2)

/* AB: order_a, then order_b one call deeper */
__attribute__((noinline, noclone)) static int ab_inner(void)
{
	CHECK(pthread_mutex_lock(&order_b));
	CHECK(pthread_mutex_unlock(&order_b));
	__asm__ volatile("" ::: "memory");
	return 1;
}
__attribute__((noinline, noclone)) static int ab_outer(void)
{
	int r;

	CHECK(pthread_mutex_lock(&order_a));
	r = ab_inner();
	CHECK(pthread_mutex_unlock(&order_a));
	return r + 1;
}
static void *ab_thread(void *arg)
{
	(void)arg;
	truth("thread AB %d", (int)gettid());
	truth("taken-along AB order_a ab_outer ab_thread");
	truth("taken-along AB order_b ab_inner ab_outer ab_thread");
	ab_outer();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

/* BA: order_b, then order_a two calls deeper */
__attribute__((noinline, noclone)) static int ba_inner(void)
{
	CHECK(pthread_mutex_lock(&order_a));
	CHECK(pthread_mutex_unlock(&order_a));
	__asm__ volatile("" ::: "memory");
	return 1;
}
__attribute__((noinline, noclone)) static int ba_middle(void)
{
	int r = ba_inner();

	__asm__ volatile("" ::: "memory");
	return r + 1;
}
__attribute__((noinline, noclone)) static int ba_outer(void)
{
	int r;

	CHECK(pthread_mutex_lock(&order_b));
	r = ba_middle();
	CHECK(pthread_mutex_unlock(&order_b));
	return r + 1;
}
static void *ba_thread(void *arg)
{
	(void)arg;
	truth("thread BA %d", (int)gettid());
	truth("taken-along BA order_b ba_outer ba_thread");
	truth("taken-along BA order_a ba_inner ba_middle ba_outer ba_thread");
	ba_outer();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static void truth_path(int count, int limit)
{
	char path[512];
	int k, len;

	len = snprintf(path, sizeof(path), "hold_deep");
	for (k = limit; k >= 1; k--)
		len += snprintf(path + len, sizeof(path) - len, " depth_%d", k);
	truth("path %d %s main", count, path);
}

int main(int argc, char **argv)
{
	/* (read at run time: no copy of the functions for one limit) */
	volatile int long_path = 15, short_path = 8;
	pthread_t t;
	int i;

	fixture_start("deep-calls", argc, argv);
	truth("mutex deep_lock %p", (void *)&deep_lock);
	truth("mutex order_a %p", (void *)&order_a);
	truth("mutex order_b %p", (void *)&order_b);
	truth_code(hold_deep);
	truth_code(depth_1); truth_code(depth_2); truth_code(depth_3);
	truth_code(depth_4); truth_code(depth_5); truth_code(depth_6);
	truth_code(depth_7); truth_code(depth_8); truth_code(depth_9);
	truth_code(depth_10); truth_code(depth_11); truth_code(depth_12);
	truth_code(depth_13); truth_code(depth_14); truth_code(depth_15);
	truth_code(no_deeper);
	truth_code(ab_inner); truth_code(ab_outer); truth_code(ab_thread);
	truth_code(ba_inner); truth_code(ba_middle); truth_code(ba_outer);
	truth_code(ba_thread);
	truth_code(truth_path);
	truth_code(main);
	truth_code(_start);	/* (the program's entry, after main in .text) */
	truth_code_end();
	truth("expect none");
	wait_for_go();
	for (i = 0; i < LONG_HOLDS; i++)
		depth_1(long_path);
	for (i = 0; i < SHORT_HOLDS; i++)
		depth_1(short_path);
	truth_path(LONG_HOLDS, 15);
	truth_path(SHORT_HOLDS, 8);
	CHECK(pthread_create(&t, NULL, ab_thread, NULL));
	CHECK(pthread_join(t, NULL));
	CHECK(pthread_create(&t, NULL, ba_thread, NULL));
	CHECK(pthread_join(t, NULL));
	truth("cycle order_a order_b");
	truth("done");
	return 0;
}
