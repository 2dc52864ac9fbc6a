/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockloop - the 2010 proposal's microbenchmark, timed: ITERATIONS
 * pthread_mutex_lock + pthread_mutex_unlock pairs on one uncontended mutex.
 * Prints "ns_per_pair N.NN".
 *   usage: lockloop ITERATIONS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
	struct timespec t0, t1;
	long i, n;
	double ns;

	if (argc != 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: lockloop ITERATIONS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("ns_per_pair %.2f\n", ns / (double)n);
	return 0;
}
