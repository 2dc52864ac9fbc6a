/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * start-gate - how pthread-stap starts a -c command under the BPF runtime:
 * the command is exec'd only once stapbpf can notice that it ended.
 *
 *     start-gate [--pid-file PATH] CMD [ARG...]
 *
 * stapbpf (SystemTap 4.8 up to 5.x) releases its -c command and only then
 * installs its SIGCHLD handler.  A command that lives a few milliseconds
 * can exit in between; its SIGCHLD is then lost (ignored by default) and
 * stapbpf waits for it forever, with the command a zombie.  Measured here:
 * 7 of 20 runs of `pthread-stap dl -c SHORT-PROGRAM` never ended, and every
 * hung stapbpf had a zombie child and, by then, SIGCHLD caught.
 *
 * pthread-stap runs `stap -c "start-gate CMD..."`.  The gate is what
 * stapbpf starts; it waits until its parent catches SIGCHLD (bit 17 of
 * SigCgt in /proc/PPID/status), then execs CMD in its own process, so the
 * command keeps the pid stap gave it (target()).  Under any parent other
 * than stapbpf it execs CMD at once.  The wait is bounded (10 s): a gate
 * must never keep the command from running.
 *
 * With --pid-file, it first writes its pid (the command's, since it execs
 * in place) to PATH, atomically: end-with-target learns there which
 * process to watch, however short-lived, and removes the file once it
 * records the process's mappings (launcher/mappings.h); the gate execs
 * CMD only then, so that the records hold the command's whole image.
 * That wait is bounded too (within the same 10 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

#define GATE_LIMIT_MS 10000

/* Does PID catch SIGCHLD yet?  Yes too when it cannot be read (gone). */
static int catches_sigchld(pid_t pid)
{
	unsigned long long caught;

	if (proc_signal_set(pid, "SigCgt", &caught) != 0)
		return 1;
	return (caught >> (SIGCHLD - 1)) & 1;
}

/* Writes our pid to PATH through a temporary file and a rename. */
static void write_pid_file(const char *path)
{
	char tmp[4096];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) == 0)
		rename(tmp, path);
}

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 1000 * 1000 };
	pid_t parent = getppid();
	int waited, first = 1;

	if (argc > 2 && strcmp(argv[1], "--pid-file") == 0) {
		write_pid_file(argv[2]);
		first = 3;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: start-gate [--pid-file PATH] CMD [ARG...]\n");
		return 2;
	}
	waited = 0;
	if (proc_comm_is(parent, "stapbpf"))
		for (; waited < GATE_LIMIT_MS && !catches_sigchld(parent); waited++)
			nanosleep(&tick, NULL);
	if (first == 3)
		for (; waited < GATE_LIMIT_MS && access(argv[2], F_OK) == 0; waited++)
			nanosleep(&tick, NULL);
	execvp(argv[first], argv + first);
	fprintf(stderr, "%s: %s\n", argv[first], strerror(errno));
	return 127;
}
