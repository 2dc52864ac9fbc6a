/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-holds - holds whose every duration is known, for the hold-time
 * script.  One phase at a time (a barrier between phases):
 *   1. mutex long_lock (global): thread A holds it LONG times, LONG_MS
 *      each (in hold_long).
 *   2. thread B takes long_lock by trylock and holds it TRY_MS (in
 *      try_long), then by lock for BRIEF_MS (in hold_briefly).
 *   3. mutex quick_lock (global): main takes it QUICK times, holding it
 *      for nothing (in quick).
 *   4. recursive mutex nested_lock (global): A takes it (in hold_nested),
 *      relocks it twice more (a lock, a trylock, in relock_nested), holds
 *      it NESTED_MS, and unlocks it three times: one hold.
 *   5. rwlock table_lock (global): A holds it for writing WRITE_MS (in
 *      write_table), asking for it again inside (EDEADLK: the same
 *      hold, which goes on); then R (in read_table, a nested read lock inside: one
 *      hold) and B (by tryrdlock, in try_read_table) each hold a read lock
 *      READ_MS, at the same time.
 *   6. mutex ready_lock (global) with cond ready: W holds ready_lock
 *      COND_MS, waits for ready (the wait gives the mutex up: the hold
 *      ends), main sees it asleep, sleeps WAIT_MS and signals (in
 *      set_ready, holding ready_lock for nothing); W, woken with the mutex
 *      again, holds it COND_MS more (all in await_ready): two holds, and
 *      the wait between them is no hold.
 *   7. mutexes on the heap, which have no symbol: main makes made_lock
 *      (malloc, pthread_mutex_init in fixture_heap_mutex) and zeroed_lock
 *      (calloc: all zeroes, PTHREAD_MUTEX_INITIALIZER, no init call);
 *      then A holds each HEAP_MS, HEAPS times (hold_made, hold_zeroed).
 *      Their names are where they were made, and where zeroed_lock was
 *      first taken: "truth origin LABEL initialised|first-taken FUNCTION";
 *      main destroys both at the end, before the report.
 * Every hold is measured by the thread with CLOCK_MONOTONIC (the clock
 * of stap's ktime_get_ns): INNER from the lock call's return to the
 * unlock call, OUTER from the lock call to the unlock call's return (for
 * a hold ended by a condition wait: to when main saw W asleep; for one
 * begun by its wake-up: from main's unlock call after setting is_ready).  A tracer's hold lies
 * between the two.  Printed at the end, so that printing takes no time
 * from the holds:
 *   truth hold LOCK KIND THREAD FUNCTION INNER_NS OUTER_NS
 * with "truth mutex|rwlock|cond LABEL ADDR", "truth thread LABEL TID",
 * "truth code FUNCTION ADDR".  Every hold's function is called from
 * do_phase, called from phases, called from thread_body (main for thread
 * T): a known call path for the stacks a tracer shows.
 * Expect: no deadlock.
 */
#include "fixture.h"

#define LONG 3
#define LONG_MS 30
#define TRY_MS 20
#define BRIEF_MS 2
#define QUICK 100
#define NESTED_MS 20
#define WRITE_MS 25
#define READ_MS 20
#define COND_MS 5
#define WAIT_MS 30
#define HEAPS 2
#define HEAP_MS 2
#define NTHREADS 5
enum { T_MAIN, T_A, T_B, T_R, T_W };	/* the threads */

pthread_mutex_t long_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t quick_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t nested_lock;
pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t *made_lock, *zeroed_lock;	/* on the heap */
static pthread_barrier_t step;
static pid_t tid_of[NTHREADS];	/* by thread (T_MAIN...) */
static int is_ready;
static long asleep_at, freed_at;	/* main's clock (phase 6) */

struct hold {
	const char *lock, *kind, *thread, *function;
	long inner, outer;
};
/* each thread's own records: no lock around them */
static struct hold holds[NTHREADS][QUICK + 8];
static int nholds[NTHREADS];

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* one hold of thread t: called at times called, took, unlocking, unlocked */
static void record(int t, const char *thread, const char *lock, const char *kind,
		   const char *function, long called, long took, long unlocking, long unlocked)
{
	struct hold *h = &holds[t][nholds[t]++];

	h->lock = lock;
	h->kind = kind;
	h->thread = thread;
	h->function = function;
	h->inner = unlocking - took;
	h->outer = unlocked - called;
}

/*
 * A function that makes one hold of lock by thread t (its label: thread)
 * and records it: take (a pthread call), hold ms, give.  Each function so
 * made is its own call site (noinline), as the report's call sites are.
 */
#define HOLD_FUNCTION(name, t, thread, lock, kind, take, ms, give)                   \
	HOLD_FUNCTION_OF(name, t, thread, #lock, &lock, kind, take, ms, give)
/* (the lock at address lockp, whose label is label) */
#define HOLD_FUNCTION_OF(name, t, thread, label, lockp, kind, take, ms, give)        \
	__attribute__((noinline)) static void name(void)                             \
	{                                                                            \
		long called = now_ns(), took, unlocking;                             \
                                                                                     \
		CHECK(take(lockp));                                                  \
		took = now_ns();                                                     \
		if (ms)                                                              \
			sleep_ms(ms);                                                \
		unlocking = now_ns();                                                \
		CHECK(give(lockp));                                                  \
		record(t, thread, label, kind, #name, called, took, unlocking, now_ns()); \
	}

HOLD_FUNCTION(hold_long, T_A, "A", long_lock, "mutex", pthread_mutex_lock, LONG_MS, pthread_mutex_unlock)
HOLD_FUNCTION(try_long, T_B, "B", long_lock, "mutex", pthread_mutex_trylock, TRY_MS, pthread_mutex_unlock)
HOLD_FUNCTION(hold_briefly, T_B, "B", long_lock, "mutex", pthread_mutex_lock, BRIEF_MS, pthread_mutex_unlock)
HOLD_FUNCTION(quick, T_MAIN, "T", quick_lock, "mutex", pthread_mutex_lock, 0, pthread_mutex_unlock)
HOLD_FUNCTION(try_read_table, T_B, "B", table_lock, "rw-read", pthread_rwlock_tryrdlock, READ_MS, pthread_rwlock_unlock)
HOLD_FUNCTION_OF(hold_made, T_A, "A", "made_lock", made_lock, "mutex", pthread_mutex_lock, HEAP_MS, pthread_mutex_unlock)
HOLD_FUNCTION_OF(hold_zeroed, T_A, "A", "zeroed_lock", zeroed_lock, "mutex", pthread_mutex_lock, HEAP_MS, pthread_mutex_unlock)


__attribute__((noinline)) static void relock_nested(void)
{
	CHECK(pthread_mutex_lock(&nested_lock));
	CHECK(pthread_mutex_trylock(&nested_lock));
}

__attribute__((noinline)) static void hold_nested(void)
{
	long called = now_ns(), took, unlocking;

	CHECK(pthread_mutex_lock(&nested_lock));
	took = now_ns();
	relock_nested();
	sleep_ms(NESTED_MS);
	CHECK(pthread_mutex_unlock(&nested_lock));
	CHECK(pthread_mutex_unlock(&nested_lock));
	unlocking = now_ns();
	CHECK(pthread_mutex_unlock(&nested_lock));
	record(T_A, "A", "nested_lock", "mutex", "hold_nested", called, took, unlocking, now_ns());
}

__attribute__((noinline)) static void read_table(void)
{
	long called = now_ns(), took, unlocking;

	CHECK(pthread_rwlock_rdlock(&table_lock));
	took = now_ns();
	CHECK(pthread_rwlock_rdlock(&table_lock));	/* nested: the same hold */
	sleep_ms(READ_MS);
	CHECK(pthread_rwlock_unlock(&table_lock));
	unlocking = now_ns();
	CHECK(pthread_rwlock_unlock(&table_lock));
	record(T_R, "R", "table_lock", "rw-read", "read_table", called, took, unlocking, now_ns());
}

/* phase 5, A: a write hold, a failed write lock call inside it */
__attribute__((noinline)) static void write_table(void)
{
	long called = now_ns(), took, unlocking;
	int rc;

	CHECK(pthread_rwlock_wrlock(&table_lock));
	took = now_ns();
	rc = pthread_rwlock_wrlock(&table_lock);	/* the writer asks again */
	if (rc != EDEADLK) {
		fprintf(stderr, "fixture: write_table: a second wrlock gave %s, not EDEADLK\n", errname(rc));
		exit(2);
	}
	sleep_ms(WRITE_MS);
	unlocking = now_ns();
	CHECK(pthread_rwlock_unlock(&table_lock));
	record(T_A, "A", "table_lock", "rw-write", "write_table", called, took, unlocking, now_ns());
}

/* phase 6, W: a hold, a wait (no hold), a hold */
__attribute__((noinline)) static void await_ready(void)
{
	long called = now_ns(), took, waiting, woken, unlocking;

	CHECK(pthread_mutex_lock(&ready_lock));
	took = now_ns();
	sleep_ms(COND_MS);
	while (!is_ready) {
		waiting = now_ns();
		CHECK(pthread_cond_wait(&ready, &ready_lock));
		woken = now_ns();
		/* the hold before: it ended once W slept (main saw it asleep
		 * by asleep_at), else (woken without a signal) at the latest
		 * when the wait returned */
		record(T_W, "W", "ready_lock", "mutex", "await_ready", called, took, waiting,
		       is_ready ? asleep_at : woken);
		/* the hold after: W took the mutex back after main set
		 * is_ready under it and let it go (else after its call) */
		called = is_ready ? freed_at : waiting;
		took = woken;
		if (!is_ready)
			continue;
	}
	sleep_ms(COND_MS);
	unlocking = now_ns();
	CHECK(pthread_mutex_unlock(&ready_lock));
	record(T_W, "W", "ready_lock", "mutex", "await_ready", called, took, unlocking, now_ns());
}

/* phase 6, main */
__attribute__((noinline)) static void set_ready(void)
{
	long called, took, unlocking;
	unsigned long word = 0;

	/* until W sleeps on the condition */
	while (!fixture_futex_wait(tid_of[T_W], &word) || word < (unsigned long)&ready ||
	       word >= (unsigned long)&ready + sizeof ready)
		sched_yield();
	asleep_at = now_ns();
	sleep_ms(WAIT_MS);
	called = now_ns();
	CHECK(pthread_mutex_lock(&ready_lock));
	took = now_ns();
	is_ready = 1;
	unlocking = now_ns();
	freed_at = unlocking;
	CHECK(pthread_mutex_unlock(&ready_lock));
	record(T_MAIN, "T", "ready_lock", "mutex", "set_ready", called, took, unlocking, now_ns());
	CHECK(pthread_cond_signal(&ready));
}

/* what thread me does in each phase; a barrier ends every phase */
#define PHASES 9
__attribute__((noinline)) static void do_phase(int phase, int me)
{
	int i;

	if (phase == 1 && me == T_A)
		for (i = 0; i < LONG; i++)
			hold_long();
	if (phase == 2 && me == T_B) {
		try_long();
		hold_briefly();
	}
	if (phase == 3 && me == T_MAIN)
		for (i = 0; i < QUICK; i++)
			quick();
	if (phase == 4 && me == T_A)
		hold_nested();
	if (phase == 5 && me == T_A)
		write_table();
	if (phase == 6 && me == T_R)
		read_table();
	if (phase == 6 && me == T_B)
		try_read_table();
	if (phase == 7 && me == T_W)
		await_ready();
	if (phase == 7 && me == T_MAIN)
		set_ready();
	if (phase == 8 && me == T_MAIN) {
		made_lock = fixture_heap_mutex();
		zeroed_lock = calloc(1, sizeof *zeroed_lock);
		if (!zeroed_lock)
			exit(2);
		truth("mutex made_lock %p", (void *)made_lock);
		truth("mutex zeroed_lock %p", (void *)zeroed_lock);
	}
	if (phase == 9 && me == T_A)
		for (i = 0; i < HEAPS; i++) {
			hold_made();
			hold_zeroed();
		}
	__asm__ volatile("" ::: "memory");	/* no tail call: do_phase stays on the stack */
}

__attribute__((noinline)) static void phases(int me)
{
	int phase;

	for (phase = 1; phase <= PHASES; phase++) {
		do_phase(phase, me);
		pthread_barrier_wait(&step);
	}
}

static void *thread_body(void *arg)
{
	int me = (int)(long)arg;

	tid_of[me] = gettid();
	pthread_barrier_wait(&step);		/* tids known */
	pthread_barrier_wait(&step);		/* go */
	phases(me);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const label[NTHREADS] = { "T", "A", "B", "R", "W" };
	pthread_t th[NTHREADS];
	pthread_mutexattr_t recursive;
	int i, j;

	fixture_start("lock-holds", argc, argv);
	CHECK(pthread_mutexattr_init(&recursive));
	CHECK(pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE));
	CHECK(pthread_mutex_init(&nested_lock, &recursive));
	CHECK(pthread_barrier_init(&step, NULL, NTHREADS));
	for (i = 1; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, thread_body, (void *)(long)i));
	pthread_barrier_wait(&step);		/* tids known */
	truth_code(hold_long);
	truth_code(try_long);
	truth_code(hold_briefly);
	truth_code(quick);
	truth_code(relock_nested);
	truth_code(hold_nested);
	truth_code(write_table);
	truth_code(read_table);
	truth_code(try_read_table);
	truth_code(await_ready);
	truth_code(set_ready);
	truth_code(hold_made);
	truth_code(hold_zeroed);
	truth_code(fixture_heap_mutex);
	truth_code(do_phase);
	truth_code(phases);
	truth_code(thread_body);
	truth_code(main);
	truth_code_end();
	truth("mutex long_lock %p", (void *)&long_lock);
	truth("mutex quick_lock %p", (void *)&quick_lock);
	truth("mutex nested_lock %p", (void *)&nested_lock);
	truth("rwlock table_lock %p", (void *)&table_lock);
	truth("mutex ready_lock %p", (void *)&ready_lock);
	truth("cond ready %p", (void *)&ready);
	truth("origin made_lock initialised fixture_heap_mutex");
	truth("origin zeroed_lock first-taken hold_zeroed");
	tid_of[T_MAIN] = gettid();
	for (i = 0; i < NTHREADS; i++)
		truth("thread %s %d", label[i], (int)tid_of[i]);
	truth("expect none");
	wait_for_go();
	pthread_barrier_wait(&step);		/* go */
	phases(T_MAIN);
	for (i = 1; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL));
	/* (destroyed before the report: their names stay) */
	CHECK(pthread_mutex_destroy(made_lock));
	CHECK(pthread_mutex_destroy(zeroed_lock));
	for (i = 0; i < NTHREADS; i++)
		for (j = 0; j < nholds[i]; j++)
			truth("hold %s %s %s %s %ld %ld", holds[i][j].lock, holds[i][j].kind,
			      holds[i][j].thread, holds[i][j].function,
			      holds[i][j].inner, holds[i][j].outer);
	truth("done");
	return 0;
}
