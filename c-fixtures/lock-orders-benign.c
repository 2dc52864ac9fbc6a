/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-orders-benign - locks taken in opposite orders in ways that can
 * never deadlock: the lock-order finder must report none of them.  Each
 * pair runs in threads one after another (see lock-orders.h).
 *   trylock:   AB takes A then B; BA takes B, then A by trylock (trying
 *              cannot block: no order B -> A).
 *   timed:     CD takes C then D; DC takes D, then C by timedlock (it
 *              returns at its deadline: no order D -> C).
 *   recursive: a thread takes recursive mutex R, then G, then R again (a
 *              relock: no order G -> R); another takes R then G.
 *   reused:    X is taken before Y, destroyed, initialised again at the
 *              same address (a new mutex), which is taken after Y: the
 *              two lives of X are two locks.
 *   readers:   rwlocks P and Q (default kind) each taken for reading under
 *              the other's read lock: a read lock waits only for a writer.
 *   condvar:   W waits on condition variable K with mutex N, under no
 *              other lock, while main takes O then N and signals: the wait
 *              gives N up; taking it back is ordered after nothing.
 * Truth: as lock-orders.c ("truth order THREAD LOCK_A LOCK_B" for each
 * order it makes: what the script must count, none in a cycle), no
 * "truth cycle"; "truth expect none", "truth done".
 */
#include "lock-orders.h"

static struct lk a = { .label = "A" }, b = { .label = "B" };
static struct lk c = { .label = "C" }, d = { .label = "D" };
static struct lk r = { .label = "R", .kind = PTHREAD_MUTEX_RECURSIVE }, g = { .label = "G" };
static struct lk x = { .label = "X" }, y = { .label = "Y" };
static struct lk p = { .label = "P", .rw = 1 }, q = { .label = "Q", .rw = 1 };
static struct lk n = { .label = "N" }, o = { .label = "O" };
static pthread_cond_t k = PTHREAD_COND_INITIALIZER;
static int woken, waiting;

static void *relock_thread(void *arg)
{
	(void)arg;
	truth("thread RGR %d", (int)gettid());
	take(&r, LOCK);
	take(&g, LOCK);
	take(&r, LOCK);
	let_go(&r);
	let_go(&g);
	let_go(&r);
	return NULL;
}

static void *waiter_thread(void *arg)
{
	(void)arg;
	truth("thread W %d", (int)gettid());
	CHECK(pthread_mutex_lock(&n.m));
	waiting = 1;
	while (!woken)
		CHECK(pthread_cond_wait(&k, &n.m));
	CHECK(pthread_mutex_unlock(&n.m));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int seen = 0;

	fixture_start("lock-orders-benign", argc, argv);
	truth("thread main %d", (int)gettid());
	lk_init(&a); lk_init(&b); lk_init(&c); lk_init(&d);
	lk_init(&r); lk_init(&g); lk_init(&x); lk_init(&y);
	lk_init(&p); lk_init(&q); lk_init(&n); lk_init(&o);
	truth("expect none");
	wait_for_go();

	in_order(&a, LOCK, &b, LOCK, 1);
	in_order(&b, LOCK, &a, TRYLOCK, 0);

	in_order(&c, LOCK, &d, LOCK, 1);
	in_order(&d, LOCK, &c, TIMEDLOCK, 0);

	CHECK(pthread_create(&t, NULL, relock_thread, NULL));
	CHECK(pthread_join(t, NULL));
	truth("order RGR R G");
	in_order(&r, LOCK, &g, LOCK, 1);

	in_order(&x, LOCK, &y, LOCK, 1);
	CHECK(pthread_mutex_destroy(&x.m));
	CHECK(pthread_mutex_init(&x.m, NULL));
	in_order(&y, LOCK, &x, LOCK, 1);

	in_order(&p, RDLOCK, &q, RDLOCK, 1);
	in_order(&q, RDLOCK, &p, RDLOCK, 1);

	CHECK(pthread_create(&t, NULL, waiter_thread, NULL));
	while (!seen) {		/* until W waits (it has given N up) */
		CHECK(pthread_mutex_lock(&n.m));
		seen = waiting;
		CHECK(pthread_mutex_unlock(&n.m));
		sched_yield();
	}
	CHECK(pthread_mutex_lock(&o.m));
	CHECK(pthread_mutex_lock(&n.m));
	woken = 1;
	CHECK(pthread_cond_signal(&k));
	CHECK(pthread_mutex_unlock(&n.m));
	CHECK(pthread_mutex_unlock(&o.m));
	CHECK(pthread_join(t, NULL));
	truth("order main O N");

	truth("done");
	return 0;
}
