/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fixture.h - what every fixture shares: printing the truth the tests
 * compare reports against, and the optional "go" handshake.
 *
 * A fixture prints lines of the form "truth KEY VALUES...", flushed at once:
 *   truth fixture NAME pid PID
 *   truth mutex LABEL ADDRESS         (ADDRESS as %p: 0x...)
 *   truth thread LABEL TID
 *   truth wait THREAD MUTEX HOLDER    (labels: THREAD will wait for MUTEX,
 *                                      held by HOLDER: one edge of a cycle)
 *   truth expect deadlock|none
 *   truth locks N                     (pthread_mutex_lock calls it makes)
 *   truth result CALL ERRNAME         (what a call it makes returned)
 *   truth done                        (a benign fixture finished)
 *   truth waits LOCK KIND WAITED ACQUIRED HOLDER
 *                                     (LOCK's KIND acquisitions: how many
 *                                      waited, of how many, held by whom)
 *   truth code FUNCTION ADDRESS       (where a function's code starts; and
 *   truth code end ADDRESS             where the program's code ends: which
 *                                      function a probe's caller is in)
 * With --wait-for-go as its only argument, a fixture stops before its
 * interesting part until a line arrives on stdin (or, with
 * FIXTURE_GO_FILE=PATH in its environment, until PATH exists), so that a
 * tracer started afterwards with -x PID sees it (the harness says go once
 * the tracer's probes are live).
 *
 * With FIXTURE_STOP_FILE=PATH in its environment, a fixture exits (status
 * 0) as soon as PATH exists: how a harness ends a deadlocked fixture it
 * cannot signal, e.g. one running inside the test VM (the file is on the
 * host's /tmp, which the VM shares).
 *
 * With FIXTURE_EXIT_FILE=PATH in its environment, a fixture that has
 * finished (its main returned, or it called exit) waits until PATH exists
 * before it exits: its memory map stays readable, e.g. for a tool that
 * names its locks after a window ends.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fixture_wait_for_go;

static void fixture_wait_for_file(const char *path)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK) != 0)
		nanosleep(&tick, NULL);
}

static const char *fixture_exit_file;

static void fixture_wait_for_exit_file(void)
{
	fflush(stdout);
	fixture_wait_for_file(fixture_exit_file);
}

static void *fixture_watch_stop_file(void *path)
{
	fixture_wait_for_file((const char *)path);
	fflush(stdout);
	_exit(0);
}

__attribute__((format(printf, 1, 2))) static void truth(const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	fputs("truth ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

static void fixture_start(const char *name, int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--wait-for-go") == 0) {
		fixture_wait_for_go = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--wait-for-go]\n", name);
		exit(2);
	}
	truth("fixture %s pid %d", name, (int)getpid());
	fixture_exit_file = getenv("FIXTURE_EXIT_FILE");
	if (fixture_exit_file && atexit(fixture_wait_for_exit_file) != 0) {
		fprintf(stderr, "fixture: atexit failed\n");
		exit(2);
	}
	if (getenv("FIXTURE_STOP_FILE")) {
		pthread_t watcher;
		int rc = pthread_create(&watcher, NULL, fixture_watch_stop_file,
					getenv("FIXTURE_STOP_FILE"));

		if (rc != 0) {
			fprintf(stderr, "fixture: watcher thread: %s\n", strerror(rc));
			exit(2);
		}
	}
}

/* truth "code FUNCTION ADDRESS", and "code end ADDRESS" (see above) */
#define truth_code(fn) truth("code %s %p", #fn, (void *)(fn))
extern char etext[];
static inline void truth_code_end(void)
{
	truth("code end %p", (void *)etext);
}

/* Pins the calling thread (and the threads it creates afterwards) to CPU */
static inline void fixture_pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0) {
		fprintf(stderr, "fixture: sched_setaffinity: %s\n", strerror(errno));
		exit(2);
	}
}

/*
 * Pins the process (and the threads it creates afterwards) to the CPU it
 * runs on.  For fixtures whose test compares the order of each thread's
 * events: the runtimes buffer probe output per CPU, so the events of a
 * thread that moved between CPUs may be printed out of order.
 */
static inline void fixture_one_cpu(void)
{
	int cpu = sched_getcpu();

	fixture_pin_to(cpu < 0 ? 0 : cpu);
}

/* Blocks until the harness says go (only with --wait-for-go; once). */
static inline void wait_for_go(void)
{
	char line[64];

	if (!fixture_wait_for_go)
		return;
	fixture_wait_for_go = 0;
	truth("waiting for go");
	if (getenv("FIXTURE_GO_FILE")) {
		fixture_wait_for_file(getenv("FIXTURE_GO_FILE"));
		return;
	}
	if (!fgets(line, sizeof line, stdin)) {
		fprintf(stderr, "fixture: stdin closed before go\n");
		exit(2);
	}
}

/* A pthread call that must succeed: the fixture is wrong otherwise. */
#define CHECK(call)                                                          \
	do {                                                                 \
		int rc_ = (call);                                            \
		if (rc_ != 0) {                                              \
			fprintf(stderr, "fixture: %s: %s\n", #call, strerror(rc_)); \
			exit(2);                                             \
		}                                                            \
	} while (0)

static inline const char *errname(int rc)
{
	switch (rc) {
	case 0: return "OK";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EPERM: return "EPERM";
	default: return "OTHER";
	}
}

static inline void mutex_init_kind(pthread_mutex_t *m, int kind)
{
	pthread_mutexattr_t attr;

	CHECK(pthread_mutexattr_init(&attr));
	CHECK(pthread_mutexattr_settype(&attr, kind));
	CHECK(pthread_mutex_init(m, &attr));
	CHECK(pthread_mutexattr_destroy(&attr));
}

/* Is thread TID of this process asleep in futex(2)?  If so, and ADDR is
 * not NULL, *ADDR is the futex word it waits on: /proc/self/task/TID/syscall
 * then reads "202 0xADDR ..." (202: futex on x86_64). */
static inline int fixture_futex_wait(pid_t tid, unsigned long *addr)
{
	char path[64], buf[256];
	unsigned long nr, arg = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof buf, f) && sscanf(buf, "%lu %lx", &nr, &arg) >= 1 && nr == 202;
	fclose(f);
	if (ok && addr)
		*addr = arg;
	return ok;
}

/* Is thread TID asleep in futex(2) on ADDR, the lock word of a mutex it
 * waits for? */
static inline int fixture_sleeps_on(pid_t tid, const void *addr)
{
	unsigned long word;

	return fixture_futex_wait(tid, &word) && word == (unsigned long)addr;
}

/* Is thread TID asleep in futex(2), on any word? */
static inline int fixture_in_futex(pid_t tid)
{
	return fixture_futex_wait(tid, NULL);
}

/* A mutex on the heap, made by pthread_mutex_init (default attributes):
 * a lock with no symbol, named by where it was made, here (truth "origin
 * LABEL initialised fixture_heap_mutex"). */
__attribute__((noinline, unused)) static pthread_mutex_t *fixture_heap_mutex(void)
{
	pthread_mutex_t *m = (pthread_mutex_t *)malloc(sizeof *m);

	if (!m)
		exit(2);
	CHECK(pthread_mutex_init(m, NULL));
	return m;
}

/* A deadline MS milliseconds from now on CLOCK. */
static inline struct timespec fixture_in_future(clockid_t clock, long ms)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/*
 * The seed's AB-BA deadlock: the calling thread (T1) holds A and wants B,
 * a new thread (T2) holds B and wants A.  Barriers, not the seed's
 * sleep(1), make it certain.  Prints the threads, waits for go, prints the
 * wait edges and "expect deadlock", and never returns.
 */
static struct {
	pthread_mutex_t *a, *b;
	pthread_barrier_t holding, go;
	pid_t t2;
} fixture_abba_state;

static void *fixture_abba_t2(void *arg)
{
	(void)arg;
	fixture_abba_state.t2 = gettid();
	CHECK(pthread_mutex_lock(fixture_abba_state.b));
	pthread_barrier_wait(&fixture_abba_state.holding);
	pthread_barrier_wait(&fixture_abba_state.go);
	pthread_mutex_lock(fixture_abba_state.a); /* never returns */
	return NULL;
}

__attribute__((noreturn)) static inline void fixture_abba(pthread_mutex_t *a, pthread_mutex_t *b)
{
	pthread_t thread;

	fixture_abba_state.a = a;
	fixture_abba_state.b = b;
	CHECK(pthread_barrier_init(&fixture_abba_state.holding, NULL, 2));
	CHECK(pthread_barrier_init(&fixture_abba_state.go, NULL, 2));
	CHECK(pthread_mutex_lock(a));
	CHECK(pthread_create(&thread, NULL, fixture_abba_t2, NULL));
	pthread_barrier_wait(&fixture_abba_state.holding);
	truth("thread T1 %d", (int)gettid());
	truth("thread T2 %d", (int)fixture_abba_state.t2);
	wait_for_go();
	truth("wait T1 B T2");
	truth("wait T2 A T1");
	truth("expect deadlock");
	pthread_barrier_wait(&fixture_abba_state.go);
	pthread_mutex_lock(b); /* never returns */
	exit(1);
}

#endif
