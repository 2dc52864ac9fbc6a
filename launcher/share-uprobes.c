/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * share-uprobes.c - preloaded into stapbpf (the BPF runtime): the probes
 * of a session that sit on the same instruction share one uprobe.
 *
 * stapbpf (SystemTap 4.8 to 5.x) gives every probe of a script its own
 * tracefs uprobe event ("p:stapprobe_PID_N PATH:0xOFFSET" written to
 * uprobe_events) and its own perf event on it, with the probe's BPF
 * program.  A tapset probes the same instruction for several of its
 * probes (pthread_mutex_lock's entry is pthread.mutex.lock's,
 * .contended's, .acquired's... on the functions source), so a script had
 * 2 to 6 uprobes on one instruction: contention on libc's functions 67
 * uprobes on 35 instructions.  That costs twice:
 *   - each hit runs the kernel's uprobe dispatch once per uprobe
 *     (consumer): a filter check, a perf trace call, a BPF run;
 *   - at the end, the last close of each uprobe's perf event waits for an
 *     RCU grace period under the kernel's event_mutex, one after another:
 *     70 to 85 ms each here, so the report (printed after the detaching)
 *     came about 5 s after the session was over.
 * A tracefs event carries any number of perf events, each with its own
 * BPF program: the kernel keeps them in one array, run once per hit.  So
 * this library, in stapbpf only, at each perf_event_open of a uprobe
 * event whose definition (kind, file, offset) an earlier event of the
 * session has, with the same process, CPU, group and attributes, opens
 * the perf event on that earlier event instead.  The later event stays
 * defined, unused, and is removed as stapbpf removes it (after every perf
 * event is closed: see close_all below).  What each probe sees is
 * unchanged: the same instruction, the same registers, its own program.
 * Only the end's grace periods, one per instruction, and the dispatch are
 * fewer.
 * In any other program it does nothing: stap passes its environment on to
 * stapbpf, which it runs; pthread-stap gives a -c command an LD_PRELOAD of
 * its own.  PTHREAD_STAP_SHARE_UPROBES=0 (pthread-stap) leaves it out.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_EVENTS 4096
#define MAX_NAME 128

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef long (*syscall_fn)(long, ...);
typedef int (*close_fn)(int);
typedef int (*ioctl_fn)(int, unsigned long, ...);

struct uevent {
	char name[MAX_NAME];	/* group/event */
	char *definition;	/* "p PATH:0xOFFSET", as written */
	long id;		/* tracefs id; 0 until read */
	int opened;		/* a perf event of its own was opened on it */
	int shared_with;	/* index of the event its perf event is on, or -1 */
	/* how its perf event was opened (to be shared, the same) */
	struct perf_event_attr attr;
	long pid, cpu, group, flags;
	int fd;			/* its perf event (own or shared), or -1 */
	int prog_fd;		/* its program, while its attaching waits */
	int attach_deferred;
};

static int active;
static write_fn real_write;
static syscall_fn real_syscall;
static close_fn real_close;
static ioctl_fn real_ioctl;
static int all_closed;		/* every event's perf event closed at once */
static struct uevent events[MAX_EVENTS];
static int nevents;
static char tracefs[PATH_MAX];	/* the directory of uprobe_events */

__attribute__((constructor)) static void share_uprobes_init(void)
{
	real_write = (write_fn)dlsym(RTLD_NEXT, "write");
	real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	real_close = (close_fn)dlsym(RTLD_NEXT, "close");
	real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	active = real_write && real_syscall && real_close && real_ioctl && strcmp(program_invocation_short_name, "stapbpf") == 0;
}

/* fd is open on a tracefs uprobe_events: its directory into tracefs */
static int is_uprobe_list(int fd)
{
	char link[64], path[PATH_MAX];
	static const char tail[] = "/uprobe_events";
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < (ssize_t)sizeof(tail))
		return 0;
	path[n] = '\0';
	if (strcmp(path + n - (sizeof(tail) - 1), tail) != 0)
		return 0;
	path[n - (sizeof(tail) - 1)] = '\0';
	snprintf(tracefs, sizeof(tracefs), "%s", path);
	return 1;
}

/* the length of TEXT's first LEN bytes before a blank or a newline */
static size_t word_length(const char *text, size_t len)
{
	size_t n = 0;

	while (n < len && text[n] != ' ' && text[n] != '\t' && text[n] != '\n' && text[n] != '\0')
		n++;
	return n;
}

/* "NAME" or "GROUP/NAME" of a definition or removal, as group/name */
static int event_name(const char *text, size_t len, char *name)
{
	size_t n = word_length(text, len);

	if (n == 0 || n >= MAX_NAME - sizeof("uprobes/"))
		return -1;
	if (memchr(text, '/', n))
		snprintf(name, MAX_NAME, "%.*s", (int)n, text);
	else
		snprintf(name, MAX_NAME, "uprobes/%.*s", (int)n, text);
	return 0;
}

/* a definition "K:NAME ARGS" was written: remember it */
static void defined(const char *text, size_t len)
{
	struct uevent *e;
	const char *args;
	size_t n;

	if (nevents == MAX_EVENTS)
		return;
	e = &events[nevents];
	if (event_name(text + 2, len - 2, e->name) != 0)
		return;
	args = text + 2 + word_length(text + 2, len - 2);
	n = len - (size_t)(args - text);
	while (n > 0 && (args[n - 1] == '\n' || args[n - 1] == ' '))
		n--;
	e->definition = malloc(n + 3);
	if (!e->definition)
		return;
	snprintf(e->definition, n + 3, "%c%.*s", text[0], (int)n, args);
	e->id = 0;
	e->opened = 0;
	e->shared_with = -1;
	e->fd = -1;
	e->attach_deferred = 0;
	nevents++;
}

static long event_id(struct uevent *e)
{
	char path[PATH_MAX + MAX_NAME + 16], buf[32];
	ssize_t n;
	int fd;

	if (e->id)
		return e->id;
	snprintf(path, sizeof(path), "%s/events/%s/id", tracefs, e->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return e->id = -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	e->id = n > 0 ? strtol(buf, NULL, 10) : -1;
	return e->id;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const char *text = buf;
	ssize_t rc;

	if (!real_write)
		share_uprobes_init();
	if (!active || count < 3 || text[1] != ':' || (text[0] != 'p' && text[0] != 'r') || !is_uprobe_list(fd))
		return real_write(fd, buf, count);
	rc = real_write(fd, buf, count);
	if (rc == (ssize_t)count)
		defined(text, count);
	return rc;
}

/* the event, of this session's uprobes, whose tracefs id is ID */
static int event_of_id(long id)
{
	int i;

	for (i = 0; i < nevents; i++)
		if (event_id(&events[i]) == id)
			return i;
	return -1;
}

/* an event of the same definition with a perf event opened alike */
static int sharable(int i, const struct perf_event_attr *attr, long pid, long cpu, long group, long flags)
{
	int j;

	for (j = 0; j < i; j++) {
		const struct uevent *e = &events[j];

		if (e->opened && e->pid == pid && e->cpu == cpu && e->group == group && e->flags == flags &&
		    strcmp(e->definition, events[i].definition) == 0 && memcmp(&e->attr, attr, sizeof(*attr)) == 0)
			return j;
	}
	return -1;
}

/*
 * The order of the programs on one instruction.  The kernel ran the
 * uprobes on one instruction last registered first (a uprobe's list of
 * consumers), and the tapset relies on it where two of its probes sit on
 * one instruction (a session of every process: the probe that notes a
 * thread's numbers in its PID namespace runs before the script's, which
 * reads them: tapset/bpf/pthread-tapset-runtime.stp); a tracefs event runs
 * its programs in the order they were attached.  So the programs of the
 * session's uprobes are attached when stapbpf attaches its last uprobe's
 * (it attaches them one after another, before its begin probes run), all
 * together, last first: the order the kernel had.  Should anything else
 * come first (an error), they are attached then.
 */
static int attach_all(void)
{
	int i, failed = 0;

	for (i = nevents - 1; i >= 0; i--) {
		if (!events[i].attach_deferred)
			continue;
		events[i].attach_deferred = 0;
		if (real_ioctl(events[i].fd, PERF_EVENT_IOC_SET_BPF, (unsigned long)events[i].prog_fd) < 0 && !failed) {
			failed = errno;
			fprintf(stderr, "Error installing bpf for probe %s: %s\n", events[i].name, strerror(errno));
		}
	}
	if (failed) {
		errno = failed;
		return -1;
	}
	return 0;
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	unsigned long arg;
	int i;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real_ioctl)
		share_uprobes_init();
	if (!active)
		return real_ioctl(fd, request, arg);
	if (request == PERF_EVENT_IOC_SET_BPF && fd >= 0 && !all_closed)
		for (i = 0; i < nevents; i++)
			if (events[i].fd == fd) {
				events[i].prog_fd = (int)arg;
				events[i].attach_deferred = 1;
				return i == nevents - 1 ? attach_all() : 0;
			}
	attach_all();
	return real_ioctl(fd, request, arg);
}

static long perf_event_open_shared(struct perf_event_attr *user_attr, long pid, long cpu, long group, long flags)
{
	struct perf_event_attr attr;
	size_t size = user_attr->size ? user_attr->size : PERF_ATTR_SIZE_VER0;
	int i, s;
	long fd;

	if (user_attr->type != PERF_TYPE_TRACEPOINT || size > sizeof(attr) ||
	    (i = event_of_id((long)user_attr->config)) < 0 || events[i].opened || events[i].shared_with >= 0) {
		attach_all();
		return real_syscall(SYS_perf_event_open, user_attr, pid, cpu, group, flags);
	}
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, user_attr, size);
	attr.config = 0;
	s = sharable(i, &attr, pid, cpu, group, flags);
	if (s >= 0) {
		attr.config = (__u64)events[s].id;
		fd = real_syscall(SYS_perf_event_open, &attr, pid, cpu, group, flags);
		if (fd >= 0) {
			events[i].shared_with = s;
			events[i].fd = (int)fd;
		}
		return fd;
	}
	fd = real_syscall(SYS_perf_event_open, user_attr, pid, cpu, group, flags);
	if (fd >= 0) {
		events[i].opened = 1;
		events[i].attr = attr;
		events[i].pid = pid;
		events[i].cpu = cpu;
		events[i].group = group;
		events[i].flags = flags;
		events[i].fd = (int)fd;
	}
	return fd;
}

long syscall(long number, ...)
{
	va_list ap;
	long a[6];
	int k;

	if (!real_syscall)
		share_uprobes_init();
	va_start(ap, number);
	for (k = 0; k < 6; k++)
		a[k] = va_arg(ap, long);
	va_end(ap);
	if (active && number == SYS_perf_event_open && a[0] && nevents > 0)
		return perf_event_open_shared((struct perf_event_attr *)a[0], a[1], a[2], a[3], a[4]);
	return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * Closing a uprobe's perf event waits for RCU grace periods: a tasks-trace
 * one as its program is detached (about 28 ms here), and, for the last
 * perf event on a tracefs event, the tracepoint's (about 45 ms more),
 * under the kernel's event_mutex.  stapbpf closes them one after another.
 * The first close of one closes them all, each in a thread of its own, so
 * that the grace periods the kernel lets overlap do, and returns when all
 * are closed; stapbpf's later closes of them do nothing.  (stapbpf closes
 * them when it detaches the session's uprobes, all of them, before it
 * removes their events and runs the end probe.)
 */
static void *close_one(void *arg)
{
	real_close((int)(long)arg);
	return NULL;
}

static void close_all(void)
{
	static pthread_t threads[MAX_EVENTS];
	static char started[MAX_EVENTS];
	pthread_attr_t attr;
	int i, have_attr = pthread_attr_init(&attr) == 0;

	if (have_attr)
		pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < nevents; i++) {
		started[i] = 0;
		if (events[i].fd < 0)
			continue;
		started[i] = pthread_create(&threads[i], have_attr ? &attr : NULL, close_one,
					    (void *)(long)events[i].fd) == 0;
		if (!started[i])
			real_close(events[i].fd);
	}
	for (i = 0; i < nevents; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	if (have_attr)
		pthread_attr_destroy(&attr);
}

int close(int fd)
{
	int i;

	if (!real_close)
		share_uprobes_init();
	if (active && fd >= 0)
		for (i = 0; i < nevents; i++)
			if (events[i].fd == fd) {
				if (!all_closed) {
					int j;

					/* (detached before attached: an error) */
					for (j = 0; j < nevents; j++)
						events[j].attach_deferred = 0;
					all_closed = 1;
					close_all();
				}
				events[i].fd = -1;
				return 0;
			}
	return real_close(fd);
}
