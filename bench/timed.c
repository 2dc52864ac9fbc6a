/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timed - runs a program whose wall time a benchmark wants, as a process a
 * tracer can attach to before it starts:
 *     timed GO_FILE START_FILE PROGRAM [ARG]...
 * waits until GO_FILE exists (the tracer is attached to this pid), writes
 * the time (CLOCK_REALTIME, ns) to START_FILE, and execs PROGRAM: the same
 * process, so the tracer's -x PID sees it all.  The caller waits for it
 * and takes the end time.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 1000000 };
	struct timespec now;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: timed GO_FILE START_FILE PROGRAM [ARG]...\n");
		return 2;
	}
	while (access(argv[1], F_OK) != 0)
		nanosleep(&tick, NULL);
	clock_gettime(CLOCK_REALTIME, &now);
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	fprintf(f, "%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
	fclose(f);
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
