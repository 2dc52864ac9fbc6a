/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-waits - contention whose every figure is known, for the contention
 * and hold-time scripts:
 *   mutex hot_lock (global): ROUNDS times, thread H takes it (in
 *     hold_hot), lets W1 and W2 call for it (in wait_hot), waits until
 *     both sleep on it, holds it HOLD_MS more, and releases it.  Each
 *     round: 3 acquisitions, 2 of them waited, both while H held it.
 *   mutex quiet_lock (global): main takes it QUIET times; never waited.
 *   rwlock table_lock (global): H holds it for writing (in write_table)
 *     while W1 calls for a read lock (in read_table): 1 read acquisition
 *     waited, on H.  Then W1 holds a read lock while H calls for the write
 *     lock: 1 write acquisition waited, on the readers.
 *   cond ready (global), its mutex ready_lock: W2 waits for it about
 *     HOLD_MS (in await_ready) until main signals: a condition wait, never
 *     contention.
 *   mutex heap_lock (on the heap, no symbol: made by H with malloc and
 *     pthread_mutex_init, in fixture_heap_mutex): H takes it (in hold_heap),
 *     W1 calls for it (in wait_heap) and sleeps, H holds it HOLD_MS more:
 *     2 acquisitions, 1 waited, on H.  Its name is where it was made:
 *     "truth origin heap_lock initialised fixture_heap_mutex".
 * Truth: "truth mutex|rwlock|cond LABEL ADDR", "truth thread LABEL TID",
 * "truth code FUNCTION ADDR", and per lock:
 *   truth waits LABEL KIND WAITED ACQUIRED HOLDER   (HOLDER: a thread
 *                                                    label, or "readers")
 * and the call paths, two frames deep (the lock call's function, and the
 * thread's function that called it), of the waits and of the holds that
 * made others wait:
 *   truth waited-at LABEL KIND FUNCTION CALLER COUNT
 *   truth held-at LABEL KIND THREAD FUNCTION CALLER
 * and, at the end, the bounds of each mutex's total wait (the sleeps from
 * the moment a waiter is about to sleep until it holds the mutex): at
 * least HOLD_MS each, at most the lock calls that waited took:
 *   truth wait-ns LABEL MIN_NS MAX_NS
 * Expect: no deadlock.
 */
#include "fixture.h"
#include <sched.h>

#define ROUNDS 3
#define QUIET 100
#define HOLD_MS 30

pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t step;
static pthread_mutex_t *heap_lock;
static pid_t tid_h, tid_w1, tid_w2;
static int is_ready;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* until thread tid sleeps on a futex inside the object at addr (size) */
static void until_asleep_in(pid_t tid, const void *addr, size_t size)
{
	unsigned long word = 0;

	while (!fixture_futex_wait(tid, &word) || word < (unsigned long)addr ||
	       word >= (unsigned long)addr + size)
		sched_yield();
}

__attribute__((noinline)) static void hold_hot(void)
{
	CHECK(pthread_mutex_lock(&hot_lock));
}

/* nanoseconds the lock calls that waited took, added up per lock: no
 * tracer can measure a longer wait inside them */
static long long hot_wait_ns, heap_wait_ns;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* (inlined: the lock call stays in its caller, the call site the truth names) */
static inline __attribute__((always_inline)) void lock_timed(pthread_mutex_t *m, long long *total)
{
	long long t0 = now_ns();

	CHECK(pthread_mutex_lock(m));
	__atomic_add_fetch(total, now_ns() - t0, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static void wait_hot(void)
{
	lock_timed(&hot_lock, &hot_wait_ns);
	CHECK(pthread_mutex_unlock(&hot_lock));
}

__attribute__((noinline)) static void write_table(void)
{
	CHECK(pthread_rwlock_wrlock(&table_lock));
}

__attribute__((noinline)) static void read_table(void)
{
	CHECK(pthread_rwlock_rdlock(&table_lock));
}

__attribute__((noinline)) static void hold_heap(void)
{
	CHECK(pthread_mutex_lock(heap_lock));
}

__attribute__((noinline)) static void wait_heap(void)
{
	lock_timed(heap_lock, &heap_wait_ns);
	CHECK(pthread_mutex_unlock(heap_lock));
}

__attribute__((noinline)) static void await_ready(void)
{
	CHECK(pthread_mutex_lock(&ready_lock));
	while (!is_ready)
		CHECK(pthread_cond_wait(&ready, &ready_lock));
	CHECK(pthread_mutex_unlock(&ready_lock));
}

static void *holder(void *arg)
{
	int r;

	(void)arg;
	tid_h = gettid();
	pthread_barrier_wait(&step);		/* tids known */
	pthread_barrier_wait(&step);		/* go */
	for (r = 0; r < ROUNDS; r++) {
		hold_hot();
		pthread_barrier_wait(&step);	/* W1, W2: call for it */
		until_asleep_in(tid_w1, &hot_lock, sizeof hot_lock);
		until_asleep_in(tid_w2, &hot_lock, sizeof hot_lock);
		sleep_ms(HOLD_MS);
		CHECK(pthread_mutex_unlock(&hot_lock));
		pthread_barrier_wait(&step);	/* round over */
	}
	/* the table: a reader waits for this writer */
	write_table();
	pthread_barrier_wait(&step);		/* W1: read it */
	until_asleep_in(tid_w1, &table_lock, sizeof table_lock);
	sleep_ms(HOLD_MS);
	CHECK(pthread_rwlock_unlock(&table_lock));
	pthread_barrier_wait(&step);		/* W1 reads */
	/* this writer waits for the reader (W1 lets go once it sleeps) */
	write_table();
	CHECK(pthread_rwlock_unlock(&table_lock));
	pthread_barrier_wait(&step);		/* done */
	/* the heap's lock: W1 waits for this holder */
	heap_lock = fixture_heap_mutex();
	truth("mutex heap_lock %p", (void *)heap_lock);
	hold_heap();
	pthread_barrier_wait(&step);		/* W1: call for it */
	until_asleep_in(tid_w1, heap_lock, sizeof *heap_lock);
	sleep_ms(HOLD_MS);
	CHECK(pthread_mutex_unlock(heap_lock));
	pthread_barrier_wait(&step);		/* heap over */
	return NULL;
}

static void *waiter1(void *arg)
{
	int r;

	(void)arg;
	tid_w1 = gettid();
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&step);
		wait_hot();
		pthread_barrier_wait(&step);
	}
	pthread_barrier_wait(&step);		/* H writes */
	read_table();				/* waits for H */
	pthread_barrier_wait(&step);		/* reads */
	until_asleep_in(tid_h, &table_lock, sizeof table_lock);	/* H waits for this reader */
	sleep_ms(HOLD_MS);
	CHECK(pthread_rwlock_unlock(&table_lock));
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);		/* H holds the heap's lock */
	wait_heap();				/* waits for H */
	pthread_barrier_wait(&step);
	return NULL;
}

static void *waiter2(void *arg)
{
	int r;

	(void)arg;
	tid_w2 = gettid();
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&step);
		wait_hot();
		pthread_barrier_wait(&step);
	}
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	await_ready();				/* main signals it */
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);		/* the heap's lock */
	pthread_barrier_wait(&step);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w1, w2;
	int r, i;

	fixture_start("lock-waits", argc, argv);
	CHECK(pthread_barrier_init(&step, NULL, 4));
	CHECK(pthread_create(&h, NULL, holder, NULL));
	CHECK(pthread_create(&w1, NULL, waiter1, NULL));
	CHECK(pthread_create(&w2, NULL, waiter2, NULL));
	pthread_barrier_wait(&step);		/* tids known */
	truth_code(hold_hot);
	truth_code(wait_hot);
	truth_code(write_table);
	truth_code(read_table);
	truth_code(await_ready);
	truth_code(fixture_heap_mutex);
	truth_code(hold_heap);
	truth_code(wait_heap);
	truth_code(holder);
	truth_code(waiter1);
	truth_code(waiter2);
	truth_code(main);
	truth_code_end();
	truth("mutex hot_lock %p", (void *)&hot_lock);
	truth("mutex quiet_lock %p", (void *)&quiet_lock);
	truth("rwlock table_lock %p", (void *)&table_lock);
	truth("mutex ready_lock %p", (void *)&ready_lock);
	truth("cond ready %p", (void *)&ready);
	truth("thread H %d", (int)tid_h);
	truth("thread W1 %d", (int)tid_w1);
	truth("thread W2 %d", (int)tid_w2);
	truth("thread T %d", (int)gettid());
	truth("waits hot_lock mutex %d %d H", 2 * ROUNDS, 3 * ROUNDS);
	truth("waits quiet_lock mutex 0 %d -", QUIET);
	truth("waits table_lock rw-read 1 1 H");
	truth("waits table_lock rw-write 1 2 readers");
	truth("waited-at hot_lock mutex wait_hot waiter1 %d", ROUNDS);
	truth("waited-at hot_lock mutex wait_hot waiter2 %d", ROUNDS);
	truth("waited-at table_lock rw-read read_table waiter1 1");
	truth("waited-at table_lock rw-write write_table holder 1");
	truth("held-at hot_lock mutex H hold_hot holder");
	truth("held-at table_lock rw-read H write_table holder");
	truth("waits heap_lock mutex 1 2 H");
	truth("waited-at heap_lock mutex wait_heap waiter1 1");
	truth("held-at heap_lock mutex H hold_heap holder");
	truth("origin heap_lock initialised fixture_heap_mutex");
	truth("expect none");
	wait_for_go();
	pthread_barrier_wait(&step);		/* go */
	for (i = 0; i < QUIET; i++) {
		CHECK(pthread_mutex_lock(&quiet_lock));
		CHECK(pthread_mutex_unlock(&quiet_lock));
	}
	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&step);
		pthread_barrier_wait(&step);
	}
	pthread_barrier_wait(&step);		/* H writes */
	pthread_barrier_wait(&step);		/* W1 reads */
	/* W2 waits for the condition about HOLD_MS */
	until_asleep_in(tid_w2, &ready, sizeof ready);
	sleep_ms(HOLD_MS);
	CHECK(pthread_mutex_lock(&ready_lock));
	is_ready = 1;
	CHECK(pthread_mutex_unlock(&ready_lock));
	CHECK(pthread_cond_signal(&ready));
	pthread_barrier_wait(&step);		/* done */
	pthread_barrier_wait(&step);		/* the heap's lock */
	pthread_barrier_wait(&step);
	CHECK(pthread_join(h, NULL));
	CHECK(pthread_join(w1, NULL));
	CHECK(pthread_join(w2, NULL));
	/* each wait lasts at least HOLD_MS (its holder sleeps that long once
	 * the waiters sleep), and at most its lock call */
	truth("wait-ns hot_lock %lld %lld", 2 * ROUNDS * HOLD_MS * 1000000LL, hot_wait_ns);
	truth("wait-ns heap_lock %lld %lld", HOLD_MS * 1000000LL, heap_wait_ns);
	truth("done");
	return 0;
}
