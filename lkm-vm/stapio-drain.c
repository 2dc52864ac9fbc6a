/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stapio-drain.so - inside the test VM, preloaded (by staprun-drain) into
 * staprun and so into stapio, which staprun becomes: before stapio stops
 * its reader of the module's output, it lets that reader read what is
 * still there.
 *
 * Why: SystemTap 4.8's stapio, once the module has run its end probes and
 * answered STP_EXIT, sets stop_threads and signals its reader threads,
 * which then end without reading what the module flushed last; the end
 * probes' output is lost, and nothing says so (upstream PR31597, fixed in
 * SystemTap 5.1 by a sleep before close_relayfs()).  Seen in the tests,
 * in the VM's one vCPU under emulation: lockorder -c's last lines, "watched
 * N lock calls" and the cycle finder's summary after it, missing once in
 * some thousand sessions.
 *
 * How: stapio's cleanup_and_exit() starts its signal thread again (the
 * same start routine as the first thread stapio ever creates) right before
 * close_relayfs().  At that second start, this library waits (2 s at most)
 * until no relay file stapio has open (/sys/kernel/debug/systemtap/
 * MODULE/traceN) has data to read: the reader, which runs while this
 * thread sleeps, has taken it all (a read in progress is finished: the
 * reader is joined).  When data was waiting, it says so on the VM's
 * console, as the relay does for its sessions.  In every other program,
 * and for stapio's children (its -c command above all), it does nothing
 * and takes itself out of LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RELAY_FILES 64

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int in_stapio;
static void *(*first_routine)(void *);
static int drained;

/* Takes this library (the LD_PRELOAD entry naming stapio-drain) out of
 * the environment that children inherit. */
static void leave_environment(void)
{
	const char *v = getenv("LD_PRELOAD");
	char kept[4096] = "";
	const char *p = v;

	if (!v)
		return;
	while (*p) {
		size_t n = strcspn(p, ": ");

		if (n && !memmem(p, n, "stapio-drain", 12) && strlen(kept) + n + 2 < sizeof kept) {
			if (kept[0])
				strcat(kept, ":");
			strncat(kept, p, n);
		}
		p += n;
		p += strspn(p, ": ");
	}
	if (kept[0])
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
}

__attribute__((constructor)) static void init(void)
{
	char exe[512];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	const char *base;

	exe[len > 0 ? len : 0] = 0;
	base = strrchr(exe, '/');
	in_stapio = base && strcmp(base, "/stapio") == 0;
	/* (staprun keeps it: it execs stapio; its binary is bound elsewhere
	 * in the VM, so it is known by the name it was run as) */
	if (!in_stapio && strcmp(program_invocation_short_name, "staprun") == 0)
		return;
	leave_environment();
}

/* The relay files stapio has open, into fds[]; their number. */
static int relay_files(struct pollfd *fds)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && n < MAX_RELAY_FILES) {
		char target[512];
		ssize_t len;
		const char *base;

		if (e->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		base = strrchr(target, '/');
		if (strstr(target, "/systemtap/") && base && strncmp(base, "/trace", 6) == 0 &&
		    base[6] >= '0' && base[6] <= '9') {
			fds[n].fd = atoi(e->d_name);
			fds[n].events = POLLIN;
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Waits until the relay files have nothing left to read (2 s at most). */
static void drain(void)
{
	const struct timespec tick = { 0, 2 * 1000 * 1000 };
	struct pollfd fds[MAX_RELAY_FILES];
	int n = relay_files(fds), waited = 0, i;

	for (i = 0; i < 1000; i++) {
		int r = poll(fds, (nfds_t)n, 0);

		if (r <= 0)
			break;
		{
			int pending = 0, j;

			for (j = 0; j < n; j++)
				if (fds[j].revents & POLLIN)
					pending = 1;
			if (!pending)
				break;
		}
		waited = 1;
		nanosleep(&tick, NULL);
	}
	if (waited) {
		int c = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);

		if (c >= 0) {
			dprintf(c, "stapio-drain: stapio %d: output was still unread at its end: read in %d ms%s\n",
				(int)getpid(), i * 2, i == 1000 ? " (gave up)" : "");
			close(c);
		}
	}
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
	static create_fn real;

	if (!real)
		real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!real) {
		errno = ENOSYS;
		return ENOSYS;
	}
	if (in_stapio) {
		if (!first_routine)
			first_routine = routine;
		else if (routine == first_routine && !drained) {
			drained = 1;
			drain();
		}
	}
	return real(thread, attr, routine, arg);
}
