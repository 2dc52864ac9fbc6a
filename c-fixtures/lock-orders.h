/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-orders.h - what the lock-order fixtures share: a lock (a mutex or
 * an rwlock) with a label, and in_order(), which runs a thread that takes
 * two locks, one after the other, and lets them go, while the main thread
 * waits for it (so nothing can hang).
 */
#ifndef LOCK_ORDERS_H
#define LOCK_ORDERS_H

#include "fixture.h"

enum op { LOCK, TRYLOCK, TIMEDLOCK, RDLOCK, WRLOCK, TRYRDLOCK };

struct lk {
	const char *label;
	int rw;				/* an rwlock, else a mutex */
	int kind;			/* the mutex type, or the rwlock kind */
	pthread_mutex_t m;
	pthread_rwlock_t r;
};

struct job {
	struct lk *first, *second;
	enum op op1, op2;
	char label[16];
};

/* (initialised at run time: the truth gives the addresses) */
__attribute__((unused)) static void lk_init(struct lk *l)
{
	if (l->rw) {
		pthread_rwlockattr_t attr;

		CHECK(pthread_rwlockattr_init(&attr));
		CHECK(pthread_rwlockattr_setkind_np(&attr, l->kind));
		CHECK(pthread_rwlock_init(&l->r, &attr));
		truth("rwlock %s %p", l->label, (void *)&l->r);
	} else {
		pthread_mutexattr_t attr;

		CHECK(pthread_mutexattr_init(&attr));
		CHECK(pthread_mutexattr_settype(&attr, l->kind));
		CHECK(pthread_mutex_init(&l->m, &attr));
		truth("mutex %s %p", l->label, (void *)&l->m);
	}
}

/* A mutex on the heap, made by a call (truth "origin LABEL initialised
 * make_heap_lk": it is named by where it was made) */
__attribute__((noinline, unused)) static struct lk *make_heap_lk(const char *label)
{
	struct lk *l = calloc(1, sizeof *l);

	if (!l)
		exit(2);
	l->label = label;
	CHECK(pthread_mutex_init(&l->m, NULL));
	truth("mutex %s %p", label, (void *)&l->m);
	truth("origin %s initialised make_heap_lk", label);
	return l;
}

/* A mutex on the heap, all zeroes (PTHREAD_MUTEX_INITIALIZER), with no
 * init call: named by where a thread of in_order() took it ("origin
 * LABEL taken take") */
__attribute__((unused)) static struct lk *zeroed_heap_lk(const char *label)
{
	struct lk *l = calloc(1, sizeof *l);

	if (!l)
		exit(2);
	l->label = label;
	truth("mutex %s %p", label, (void *)&l->m);
	truth("origin %s taken take", label);
	return l;
}

/* takes lock l as op says (every op succeeds here: nothing else holds it) */
__attribute__((noinline)) static void take(struct lk *l, enum op op)
{
	struct timespec deadline;

	switch (op) {
	case LOCK: CHECK(pthread_mutex_lock(&l->m)); break;
	case TRYLOCK: CHECK(pthread_mutex_trylock(&l->m)); break;
	case TIMEDLOCK:
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 10;
		CHECK(pthread_mutex_timedlock(&l->m, &deadline));
		break;
	case RDLOCK: CHECK(pthread_rwlock_rdlock(&l->r)); break;
	case WRLOCK: CHECK(pthread_rwlock_wrlock(&l->r)); break;
	case TRYRDLOCK: CHECK(pthread_rwlock_tryrdlock(&l->r)); break;
	}
	__asm__ volatile("" ::: "memory");	/* (no tail call: take is on the stack) */
}

static void let_go(struct lk *l)
{
	if (l->rw)
		CHECK(pthread_rwlock_unlock(&l->r));
	else
		CHECK(pthread_mutex_unlock(&l->m));
}

__attribute__((noinline)) static void *orders_thread(void *arg)
{
	struct job *j = arg;

	truth("thread %s %d", j->label, (int)gettid());
	take(j->first, j->op1);
	take(j->second, j->op2);
	let_go(j->second);
	let_go(j->first);
	return NULL;
}

/* A thread (labelled FIRSTSECOND) takes first then second.  makes_order:
 * whether that is an order (truth "order THREAD FIRST SECOND"). */
static void in_order(struct lk *first, enum op op1, struct lk *second, enum op op2, int makes_order)
{
	struct job j = { first, second, op1, op2, "" };
	pthread_t t;

	snprintf(j.label, sizeof j.label, "%s%s", first->label, second->label);
	CHECK(pthread_create(&t, NULL, orders_thread, &j));
	CHECK(pthread_join(t, NULL));
	if (makes_order)
		truth("order %s %s %s", j.label, first->label, second->label);
}

#endif
