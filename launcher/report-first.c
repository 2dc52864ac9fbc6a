/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report-first.c - preloaded into stapbpf (the BPF runtime): a session's
 * report is printed before its uprobes are detached, not after.
 *
 * stapbpf (SystemTap 4.8 to 5.x) ends a session in this order: it closes
 * the perf event of each probe and removes the probe's event from tracefs
 * ("-:stapprobe_PID_N" written to uprobe_events), one probe after another,
 * then runs the end probe, which prints the report.  Closing a uprobe's
 * perf event waits for an RCU tasks-trace grace period, and the kernel
 * closes them one at a time: 70 to 85 ms each here, for the 20 to 80
 * uprobes of a script, so the report came 2 to 6 s after the session was
 * over.
 *
 * The probes left attached until the end probe has run change nothing it
 * reads: every probe stap compiles for BPF first reads the session's exit
 * flag and does nothing once it is set (its prologue), and the flag is set
 * before stapbpf starts detaching.  So this library, in stapbpf only:
 *   - defers its close() of a perf event and its write of a "-:" removal
 *     to a tracefs event list, all but the first uprobe's: that close waits
 *     for the grace period after which no probe that read the flag unset
 *     is still running (a probe runs in an RCU tasks-trace read section);
 *   - at exit, once the end probe has printed (first of the exit
 *     handlers, before stapbpf's static objects are destroyed: a thread
 *     of it may still poll its perf buffers): flushes stdio, points
 *     standard output at /dev/null (whoever reads it gets its end now, and
 *     prints the report), ignores SIGINT and SIGTERM (as stapbpf does while
 *     it detaches: a second Ctrl-C would leave the events defined), then
 *     closes and removes what it deferred, as stapbpf would have.
 * Should its tables fill, what it deferred is done at once.
 * In any other program it does nothing: stap passes its environment on to
 * stapbpf, which it runs; pthread-stap gives a -c command an LD_PRELOAD of
 * its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FDS 4096
#define MAX_REMOVALS 4096
#define MAX_LINE 128
#define MAX_LISTS 4

typedef int (*close_fn)(int);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static int active;
static close_fn real_close;
static write_fn real_write;

/* the perf events whose close is deferred, in stapbpf's order */
static int fds[MAX_FDS];
static size_t nfds;
/* the descriptor of the last close() call, if deferred, else -1 */
static int last_deferred = -1;
static int barrier_done;
static int exit_registered;

static void report_first_detach(void);

/* the removals deferred: a line for one of the event lists */
static char lists[MAX_LISTS][PATH_MAX];
static size_t nlists;
static struct {
	size_t list;
	size_t len;
	char line[MAX_LINE];
} removals[MAX_REMOVALS];
static size_t nremovals;

__attribute__((constructor)) static void report_first_init(void)
{
	real_close = (close_fn)dlsym(RTLD_NEXT, "close");
	real_write = (write_fn)dlsym(RTLD_NEXT, "write");
	active = real_close && real_write && strcmp(program_invocation_short_name, "stapbpf") == 0;
}

/* what /proc/self/fd/FD links to, into BUF; 0 if it can be read */
static int fd_target(int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int is_perf_event(int fd)
{
	char target[64];

	return fd_target(fd, target, sizeof(target)) == 0 && strcmp(target, "anon_inode:[perf_event]") == 0;
}

/* a tracefs list of probe events (uprobe_events, kprobe_events) */
static int is_event_list(const char *path)
{
	size_t n = strlen(path);
	static const char tail[] = "probe_events";

	return n > sizeof(tail) && strcmp(path + n - (sizeof(tail) - 1), tail) == 0 && strstr(path, "/tracing/") != NULL;
}

static void close_deferred(void)
{
	size_t i;

	for (i = 0; i < nfds; i++)
		real_close(fds[i]);
	nfds = 0;
	last_deferred = -1;
}

int close(int fd)
{
	if (!real_close)
		report_first_init();
	if (active && nfds < MAX_FDS && is_perf_event(fd)) {
		/* (registered now, after stapbpf's own: run first at exit,
		 * before its static objects are destroyed) */
		if (!exit_registered)
			exit_registered = atexit(report_first_detach) == 0;
		fds[nfds++] = fd;
		last_deferred = fd;
		return 0;
	}
	last_deferred = -1;
	return real_close(fd);
}

static size_t list_index(const char *path)
{
	size_t i;

	for (i = 0; i < nlists; i++)
		if (strcmp(lists[i], path) == 0)
			return i;
	if (nlists == MAX_LISTS)
		return MAX_LISTS;
	snprintf(lists[nlists], sizeof(lists[nlists]), "%s", path);
	return nlists++;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const char *text = buf;
	char path[PATH_MAX];
	size_t list;

	if (!real_write)
		report_first_init();
	if (!active || count < 2 || count >= MAX_LINE || text[0] != '-' || text[1] != ':' ||
	    fd_target(fd, path, sizeof(path)) != 0 || !is_event_list(path))
		return real_write(fd, buf, count);
	/* the first uprobe's event: closed now, its removal now (the barrier) */
	if (!barrier_done && strstr(path, "uprobe_events") && last_deferred >= 0 && nfds > 0 &&
	    fds[nfds - 1] == last_deferred) {
		barrier_done = 1;
		real_close(fds[--nfds]);
		last_deferred = -1;
		return real_write(fd, buf, count);
	}
	list = list_index(path);
	if (list == MAX_LISTS || nremovals == MAX_REMOVALS) {
		/* (no room: every deferred event closed now, this one removed) */
		close_deferred();
		return real_write(fd, buf, count);
	}
	removals[nremovals].list = list;
	removals[nremovals].len = count;
	memcpy(removals[nremovals].line, text, count);
	nremovals++;
	return (ssize_t)count;
}

/* at exit (also this library's destructor, should atexit have failed):
 * the report is out; now detach, as stapbpf would have */
__attribute__((destructor)) static void report_first_detach(void)
{
	size_t i, l;
	int null;

	if (!active || (nfds == 0 && nremovals == 0))
		return;
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	fflush(NULL);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		real_close(null);
	}
	close_deferred();
	for (l = 0; l < nlists; l++) {
		int fd = open(lists[l], O_WRONLY | O_CLOEXEC);

		for (i = 0; i < nremovals; i++) {
			if (removals[i].list != l)
				continue;
			if (fd < 0 || real_write(fd, removals[i].line, removals[i].len) < 0)
				fprintf(stderr, "Error removing probe %.*s: %s\n", (int)removals[i].len - 2,
					removals[i].line + 2, strerror(errno));
		}
		if (fd >= 0)
			real_close(fd);
	}
	nremovals = 0;
}
