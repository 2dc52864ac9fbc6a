/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workloads - the lock patterns make bench times, each for a given number
 * of operations, timed by itself:
 *   single N          N lock+unlock pairs on one mutex, in main, in a
 *                     process of one thread (the 2010 proposal's loop;
 *                     glibc >= 2.35 then locks without atomics)
 *   contended T N     T threads, N pairs each, on one shared mutex
 *   private T N       T threads, N pairs each, each on a mutex of its own
 *   rwlock T N        T threads, N rdlock+unlock pairs each on one rwlock,
 *                     every 16th pair a wrlock+unlock instead
 *   condvar N         two threads hand a token back and forth N times
 *                     through one mutex and two condition variables
 *   locks L N         one thread, N pairs spread round-robin over L
 *                     distinct mutexes (how a script's maps grow)
 *   spaced W N        one thread, N pairs on one mutex, each followed by W
 *                     steps of work outside the lock (the lock rate falls
 *                     as W grows: a tracer's overhead at a given rate)
 *   paced T N         T threads, N pairs each on a mutex of its own, one
 *                     pair every 10 ms, asleep between (an idle server:
 *                     make bench's report latency attaches to it)
 *   deep D N          single's N pairs, made D calls deeper than main
 *                     (a stack N walk's every frame; built with frame
 *                     pointers: workloads-fp)
 * Prints "ns_per_op X" (wall time over all operations: pairs, or hand-offs)
 * and "ops N".  (Zeroed memory is a default mutex in glibc: the L mutexes
 * are calloc'ed.)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n_ops;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t ping = PTHREAD_COND_INITIALIZER, pong = PTHREAD_COND_INITIALIZER;
static int turn;
static volatile long sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *contended(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < n_ops; i++) {
		pthread_mutex_lock(&shared);
		sink++;
		pthread_mutex_unlock(&shared);
	}
	return NULL;
}

/* n_ops pairs on a mutex of the thread's own, each followed by a sleep of
 * gap (none: NULL; inlined, the test leaves private's loop) */
static inline void own_mutex_pairs(const struct timespec *gap)
{
	pthread_mutex_t own;
	long i;

	pthread_mutex_init(&own, NULL);
	for (i = 0; i < n_ops; i++) {
		pthread_mutex_lock(&own);
		pthread_mutex_unlock(&own);
		if (gap)
			nanosleep(gap, NULL);
	}
	pthread_mutex_destroy(&own);
}

static void *private(void *arg)
{
	(void)arg;
	own_mutex_pairs(NULL);
	return NULL;
}

static void *paced(void *arg)
{
	static const struct timespec gap = { 0, 10 * 1000 * 1000 };

	(void)arg;
	own_mutex_pairs(&gap);
	return NULL;
}

static void *readers(void *arg)
{
	long i, v = 0;

	(void)arg;
	for (i = 0; i < n_ops; i++) {
		if (i % 16 == 15) {
			pthread_rwlock_wrlock(&table);
			sink++;
		} else {
			pthread_rwlock_rdlock(&table);
			v += sink;
		}
		pthread_rwlock_unlock(&table);
	}
	return (void *)v;
}

/* the condvar hand-off: side 0 waits for turn 0, passes to 1, and back */
static void *hand_off(void *arg)
{
	int me = (int)(long)arg;
	long i;

	for (i = 0; i < n_ops; i++) {
		pthread_mutex_lock(&shared);
		while (turn != me)
			pthread_cond_wait(me ? &pong : &ping, &shared);
		turn = !me;
		pthread_cond_signal(me ? &ping : &pong);
		pthread_mutex_unlock(&shared);
	}
	return NULL;
}

/* the pairs of single, d calls below the caller (the work after each call
 * keeps it a call, with a frame of its own) */
__attribute__((noinline)) static long nested(int d)
{
	long r;

	if (d == 0) {
		contended(NULL);
		return 0;
	}
	r = nested(d - 1);
	sink += r;
	return r + 1;
}

static void run_threads(int n, void *(*fn)(void *))
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	int i;

	if (!t) {
		fprintf(stderr, "workloads: out of memory\n");
		exit(2);
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(long)i) != 0) {
			fprintf(stderr, "workloads: pthread_create failed\n");
			exit(2);
		}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
}

static void usage(void)
{
	fprintf(stderr, "usage: workloads single N | contended T N | private T N | rwlock T N | condvar N | locks L N | spaced W N | paced T N | deep D N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double t0, t1;
	long threads = 1, total;

	if (argc < 3)
		usage();
	n_ops = atol(argv[argc - 1]);
	if (argc == 4)
		threads = atol(argv[2]);
	if (n_ops <= 0 || threads < 0 || (threads == 0 && strcmp(argv[1], "spaced") != 0) ||
	    (threads > 4096 && strcmp(argv[1], "locks") != 0 && strcmp(argv[1], "spaced") != 0))
		usage();
	total = n_ops * threads;
	if (strcmp(argv[1], "deep") == 0 && argc == 4) {
		if (threads > 64)
			usage();
		t0 = now_ns();
		nested((int)threads);
		t1 = now_ns();
		printf("ns_per_op %.2f\nops %ld\n", (t1 - t0) / (double)n_ops, n_ops);
		return 0;
	}
	t0 = now_ns();
	if (strcmp(argv[1], "single") == 0 && argc == 3) {
		contended(NULL);
	} else if (strcmp(argv[1], "contended") == 0 && argc == 4) {
		run_threads((int)threads, contended);
	} else if (strcmp(argv[1], "private") == 0 && argc == 4) {
		run_threads((int)threads, private);
	} else if (strcmp(argv[1], "paced") == 0 && argc == 4) {
		run_threads((int)threads, paced);
	} else if (strcmp(argv[1], "rwlock") == 0 && argc == 4) {
		run_threads((int)threads, readers);
	} else if (strcmp(argv[1], "condvar") == 0 && argc == 3) {
		run_threads(2, hand_off);
		total = n_ops * 2;
	} else if (strcmp(argv[1], "locks") == 0 && argc == 4) {
		long l = threads, i;
		pthread_mutex_t *m = calloc((size_t)l, sizeof(*m));

		if (!m) {
			fprintf(stderr, "workloads: out of memory\n");
			return 2;
		}
		t0 = now_ns();
		for (i = 0; i < n_ops; i++) {
			pthread_mutex_lock(&m[i % l]);
			pthread_mutex_unlock(&m[i % l]);
		}
		total = n_ops;
		free(m);
	} else if (strcmp(argv[1], "spaced") == 0 && argc == 4) {
		long w = threads, i, j;

		for (i = 0; i < n_ops; i++) {
			pthread_mutex_lock(&shared);
			pthread_mutex_unlock(&shared);
			for (j = 0; j < w; j++)
				sink++;
		}
		total = n_ops;
	} else {
		usage();
	}
	t1 = now_ns();
	printf("ns_per_op %.2f\nops %ld\n", (t1 - t0) / (double)total, total);
	return 0;
}
