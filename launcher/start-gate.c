/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * start-gate - how pthread-stap starts a -c command under the BPF runtime:
 * the command is exec'd only once stapbpf can notice that it ended.
 *
 *     start-gate [--pid-file PATH] [--output PID OUT_FD ERR_FD] CMD [ARG...]
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
 *
 * With --output PID OUT_FD ERR_FD, the command's standard output and error
 * become the descriptors OUT_FD and ERR_FD of process PID (pthread-stap,
 * whose own output and error they are), taken with pidfd_getfd(2): the
 * command writes where the user reads, not into the pipe of pthread-stap's
 * filters, so a command that outlives the session (a hung program, a
 * session ended by a timer or a signal) does not hold the filters open,
 * and pthread-stap returns once stap's own output is printed.  (They
 * cannot simply be inherited: stapbpf closes every descriptor above 2
 * before it starts its command.)  A descriptor that cannot be taken (a
 * kernel before 5.6, PID gone) is left as it is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* Makes descriptor TEXT of process PIDFD our descriptor TO, if it can. */
static void take_output(int pidfd, const char *text, int to)
{
#ifdef SYS_pidfd_getfd
	char *end;
	long fd = strtol(text, &end, 10);
	int got;

	if (pidfd < 0 || *text == '\0' || *end != '\0' || fd < 0 || fd > 65535)
		return;
	got = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	if (got < 0)
		return;
	if (got != to && dup2(got, to) == to)
		close(got);
#else
	(void)pidfd, (void)text, (void)to;
#endif
}

/* A pidfd of the process whose pid is TEXT, or -1. */
static int open_pidfd(const char *text)
{
#ifdef SYS_pidfd_open
	char *end;
	long pid = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || pid <= 0 || pid > 4194304)
		return -1;
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
	(void)text;
	return -1;
#endif
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
	const char *pid_file = NULL;
	int waited, first = 1;

	if (argc > 2 && strcmp(argv[1], "--pid-file") == 0) {
		pid_file = argv[2];
		write_pid_file(pid_file);
		first = 3;
	}
	if (argc > first + 3 && strcmp(argv[first], "--output") == 0) {
		int pidfd = open_pidfd(argv[first + 1]);

		take_output(pidfd, argv[first + 2], STDOUT_FILENO);
		take_output(pidfd, argv[first + 3], STDERR_FILENO);
		if (pidfd >= 0)
			close(pidfd);
		first += 4;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: start-gate [--pid-file PATH] [--output PID OUT_FD ERR_FD] CMD [ARG...]\n");
		return 2;
	}
	waited = 0;
	if (proc_comm_is(parent, "stapbpf"))
		for (; waited < GATE_LIMIT_MS && !catches_sigchld(parent); waited++)
			nanosleep(&tick, NULL);
	if (pid_file)
		for (; waited < GATE_LIMIT_MS && access(pid_file, F_OK) == 0; waited++)
			nanosleep(&tick, NULL);
	execvp(argv[first], argv + first);
	fprintf(stderr, "%s: %s\n", argv[first], strerror(errno));
	return 127;
}
