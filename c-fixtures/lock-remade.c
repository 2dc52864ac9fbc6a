/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-remade - locks let go while their identity moves on, and no
 * inconsistent order anywhere: a lock-order tracer that lost track of
 * what a thread holds would report orders, and cycles, that never were.
 *
 * 1. Thread BA takes mutex B, then A under it (an order B -> A).  Then
 *    thread HOLDER takes A, and while it holds A the main thread tries to
 *    destroy A, which fails with EBUSY (glibc's mutex_destroy mark fires
 *    first, as does the preload library's); HOLDER lets A go, then takes
 *    B alone.  A tracer that counted A as remade by the destroy, and so
 *    missed HOLDER's release of it, sees A -> B: a cycle with B -> A.
 * 2. Mutexes C1, C2 and C3 are initialised at one call site
 *    (make_heap_lk, a lock class).  Thread DC3 takes D, then C3 under it
 *    (D -> C3).  Thread CC takes C1, then C2 under it, lets C1 go, then
 *    C2, then takes D alone.  A tracer that kept held locks by class loses one of CC's
 *    two holds of the class: a cycle of D and the class.
 * 3. Thread WORKER and the main thread hand a job mutex J back and forth
 *    ROUNDS times, as pigz's threads do: the worker marks the job done
 *    under J, wakes the main thread (a condition variable), lets J go and
 *    takes the queue mutex Q alone; the main thread, woken with J, lets J
 *    go, destroys it and initialises it again for the next job, often
 *    before the worker's release has been told (glibc tells a release
 *    after the unlock).
 * The main thread holds nothing when it starts a thread.  Orders: B -> A,
 * D -> C3, C1 -> C2 (with lock classes: B -> A, D -> the class).
 * Truth: "truth mutex A|B|C1|C2|C3|D|J|Q ADDR", "truth origin C1|C2|C3
 * initialised make_heap_lk", "truth thread BA|HOLDER|DC3|CC|WORKER TID",
 * "truth result pthread_mutex_destroy EBUSY", "truth rounds N", "truth
 * order THREAD LOCK_A LOCK_B" for each order, "truth locks N" (its
 * pthread_mutex_lock calls), "truth done".
 */
#include "lock-orders.h"

#include <semaphore.h>

#define ROUNDS 200

/* (statically initialised: no init call, so each is a class of its own) */
static struct lk a = { .label = "A", .m = PTHREAD_MUTEX_INITIALIZER };
static struct lk b = { .label = "B", .m = PTHREAD_MUTEX_INITIALIZER };
static struct lk d = { .label = "D", .m = PTHREAD_MUTEX_INITIALIZER };
static struct lk *c1, *c2, *c3;
static pthread_mutex_t j, q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;
static int done;
/* (handshakes that take no pthread mutex: they would make orders) */
static sem_t held, tried, job_ready;

static void *holder(void *arg)
{
	(void)arg;
	truth("thread HOLDER %d", (int)gettid());
	take(&a, LOCK);
	CHECK(sem_post(&held));
	while (sem_wait(&tried) != 0)
		;
	let_go(&a);
	take(&b, LOCK);
	let_go(&b);
	return NULL;
}

static void *cc(void *arg)
{
	(void)arg;
	truth("thread CC %d", (int)gettid());
	take(c1, LOCK);
	take(c2, LOCK);
	let_go(c1);
	let_go(c2);
	take(&d, LOCK);
	let_go(&d);
	return NULL;
}

static void *worker(void *arg)
{
	int i;

	(void)arg;
	truth("thread WORKER %d", (int)gettid());
	for (i = 0; i < ROUNDS; i++) {
		while (sem_wait(&job_ready) != 0)
			;
		CHECK(pthread_mutex_lock(&j));
		done = 1;
		CHECK(pthread_cond_broadcast(&job_done));
		CHECK(pthread_mutex_unlock(&j));
		CHECK(pthread_mutex_lock(&q));
		CHECK(pthread_mutex_unlock(&q));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i, rc;

	fixture_start("lock-remade", argc, argv);
	CHECK(sem_init(&held, 0, 0));
	CHECK(sem_init(&tried, 0, 0));
	CHECK(sem_init(&job_ready, 0, 0));
	truth("mutex A %p", (void *)&a.m);
	truth("mutex B %p", (void *)&b.m);
	truth("mutex D %p", (void *)&d.m);
	truth("mutex J %p", (void *)&j);
	truth("mutex Q %p", (void *)&q);
	truth("rounds %d", ROUNDS);
	/* BA 2, HOLDER 2, DC3 2, CC 3, per round WORKER 2 and main 1 */
	truth("locks %d", 9 + 3 * ROUNDS);
	truth("expect none");
	wait_for_go();

	/* 1. a destroy that fails, while HOLDER holds A */
	in_order(&b, LOCK, &a, LOCK, 1);
	CHECK(pthread_create(&t, NULL, holder, NULL));
	while (sem_wait(&held) != 0)
		;
	rc = pthread_mutex_destroy(&a.m);
	truth("result pthread_mutex_destroy %s", errname(rc));
	if (rc != EBUSY)
		exit(2);
	CHECK(sem_post(&tried));
	CHECK(pthread_join(t, NULL));

	/* 2. two mutexes of one class held at once */
	c1 = make_heap_lk("C1");
	c2 = make_heap_lk("C2");
	c3 = make_heap_lk("C3");
	in_order(&d, LOCK, c3, LOCK, 1);
	CHECK(pthread_create(&t, NULL, cc, NULL));
	CHECK(pthread_join(t, NULL));
	truth("order CC C1 C2");

	/* 3. a job mutex handed over, destroyed and made again */
	CHECK(pthread_create(&t, NULL, worker, NULL));
	for (i = 0; i < ROUNDS; i++) {
		CHECK(pthread_mutex_init(&j, NULL));
		done = 0;
		CHECK(sem_post(&job_ready));
		CHECK(pthread_mutex_lock(&j));
		while (!done)
			CHECK(pthread_cond_wait(&job_done, &j));
		CHECK(pthread_mutex_unlock(&j));
		CHECK(pthread_mutex_destroy(&j));
	}
	CHECK(pthread_join(t, NULL));
	truth("done");
	return 0;
}
