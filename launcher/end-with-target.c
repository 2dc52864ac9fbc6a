/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * end-with-target - makes a pthread-stap session end when it should: when
 * its traced process is gone, when it is interrupted, and never leaving a
 * runtime process behind, whatever the runtime.
 *
 *     end-with-target STAP_PID -x PID       the process given to stap -x
 *     end-with-target STAP_PID -c PIDFILE   the command stap -c started,
 *                                           through start-gate --pid-file
 *     end-with-target STAP_PID -s           no target (system-wide)
 *     ... --maps FILE                       also keep the target's
 *                                           memory map in FILE, as
 *                                           /proc/PID/maps writes it
 *                                           (launcher/symbolize names
 *                                           addresses with it; kept as
 *                                           launcher/mappings.h says)
 *     ... --threads FILE                    also keep, in FILE, a line
 *                                           "HOST NS" per thread the
 *                                           target ever had: its tid on
 *                                           this host and in the target's
 *                                           PID namespace (symbolize
 *                                           names threads with it)
 *
 * pthread-stap starts it in the background, then execs stap, so STAP_PID
 * is its own pid (or stapbpf, run directly with a cached BPF object: then
 * STAP_PID is the session itself).  Every 20 ms it looks at (a process is known by its pid
 * and start time, so a reused pid is never mistaken for it):
 *   - stap's runtime process, the "session": stap's child named stapbpf
 *     (BPF runtime) or staprun/stapio (kernel-module runtime);
 *   - the target: PID, or with -c the pid start-gate wrote to PIDFILE
 *     (read once it appears, then deleted).
 *
 * The target has exited (or is a zombie):
 *   - before any session started (stap was still compiling): it says so
 *     in one line and stops stap (SIGTERM: stap then exits 1, silently;
 *     sent once stap handles it, so never to a stap just exec'd, which it
 *     would kill);
 *   - else it lets the runtime end by itself for 500 ms (stapbpf with -c;
 *     the kernel-module runtime's own exit probe), which also lets the
 *     last probe output drain, then sends stap SIGINT, as a user's Ctrl-C
 *     would: the end probes print the summary.  stapbpf with -x never
 *     sees the process exit, and with -c it can miss it (start-gate.c).
 *     A stapbpf is interrupted only while its main thread waits in
 *     pause(): out of it, it is ending by itself (detaching its probes,
 *     then running its end probes, where a SIGINT makes it abort).
 *
 * stapbpf missed its wake-up: stapbpf (SystemTap 4.8 up to 5.x) waits
 * with `while (!exit_flag) pause();`.  A SIGINT/SIGTERM (or SIGCHLD) whose
 * handler runs after the test and before pause() sets the flag and is
 * lost: stapbpf sleeps in pause() forever, and stap with it.  Measured:
 * one detach in twelve hung so, when SIGINT came right after the begin
 * probe's output.  Its SIGINT/SIGTERM handler first sets its own signal
 * to SIG_IGN, and the exit phase sets both back to the handler; so the
 * main thread sitting in pause (syscall 34) for 200 ms with exactly one
 * of the two ignored is that state, and nothing else: it then gets the
 * other signal, whose handler interrupts pause() and the exit goes on.
 *
 * stap is gone (ended, or killed with SIGKILL) while its session still
 * runs: the session gets SIGTERM (and the wake-up above if need be), so
 * no orphaned runtime keeps probing the target.
 *
 * It ignores SIGINT: a Ctrl-C goes to stap.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mappings.h"
#include "proc.h"

#define TICK_MS 20
#define GRACE_TICKS (500 / TICK_MS)
#define STUCK_TICKS (200 / TICK_MS)
/* until the -c command's pid is known, and in the target's first second:
 * the pid file read, the maps and the thread numbers copied every
 * millisecond (a command may live a few, and they are gone with it) */
#define FAST_TICKS (1000 / TICK_MS)
#define SYS_PAUSE_X86_64 34

struct proc {
	pid_t pid;
	unsigned long long start; /* field 22 of /proc/PID/stat */
};

/* Reads /proc/PID/stat: state, parent, start time, command name. */
static int proc_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start,
		     char *comm, size_t comm_size)
{
	char buf[1024], *close_paren, *open_paren, *p;
	int ppid_i, field;

	if (read_proc(pid, "stat", buf, sizeof buf) != 0)
		return -1;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren[1] != ' ')
		return -1;
	if (comm) {
		size_t len = (size_t)(close_paren - open_paren - 1);

		if (len >= comm_size)
			len = comm_size - 1;
		memcpy(comm, open_paren + 1, len);
		comm[len] = 0;
	}
	if (sscanf(close_paren + 2, "%c %d", state, &ppid_i) != 2)
		return -1;
	*ppid = ppid_i;
	/* the start time is field 22; the state is field 3 */
	p = close_paren + 2;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", start) != 1)
		return -1;
	return 0;
}

static int remember(struct proc *p, pid_t pid)
{
	char state;
	pid_t ppid;

	p->pid = pid;
	p->start = 0;
	return proc_stat(pid, &state, &ppid, &p->start, NULL, 0);
}

/* Still running: it exists, is the same process, and is not a zombie. */
static int alive(const struct proc *p)
{
	char state;
	pid_t ppid;
	unsigned long long start;

	if (p->pid <= 0 || proc_stat(p->pid, &state, &ppid, &start, NULL, 0) != 0)
		return 0;
	return start == p->start && state != 'Z' && state != 'X';
}

/* The first child of PARENT whose command name is in NAMES; 0 if none. */
static pid_t find_child(pid_t parent, const char *const *names)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		char state, comm[64];
		pid_t pid, ppid;
		unsigned long long start;
		const char *const *n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		if (proc_stat(pid, &state, &ppid, &start, comm, sizeof comm) != 0 ||
		    ppid != parent)
			continue;
		for (n = names; *n; n++)
			if (strcmp(comm, *n) == 0)
				found = pid;
	}
	closedir(d);
	return found;
}

static pid_t read_pid_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

/* PID is stap (or stapbpf, which pthread-stap runs itself with a cached
 * BPF object) and has a handler for SIG (SigCgt in /proc/PID/status). */
static int catches(pid_t pid, int sig)
{
	char state, comm[64];
	pid_t ppid;
	unsigned long long start, caught;

	if (proc_stat(pid, &state, &ppid, &start, comm, sizeof comm) != 0 ||
	    (strcmp(comm, "stap") != 0 && strcmp(comm, "stapbpf") != 0) ||
	    proc_signal_set(pid, "SigCgt", &caught) != 0)
		return 0;
	return (caught >> (sig - 1)) & 1;
}

/* stapbpf's main thread (PID) sits in pause(): it waits for its end. */
static int in_pause(pid_t pid)
{
	char syscall_line[64];

	return read_proc(pid, "syscall", syscall_line, sizeof syscall_line) == 0 &&
	       isdigit((unsigned char)syscall_line[0]) &&
	       atoi(syscall_line) == SYS_PAUSE_X86_64;
}

/* The signal that wakes a stapbpf stuck in pause() after its interrupt
 * handler ran (see the top of this file), or 0 if it is not in that state. */
static int stapbpf_wakeup(pid_t pid)
{
	unsigned long long ignored;
	int int_ignored, term_ignored;

	if (proc_signal_set(pid, "SigIgn", &ignored) != 0)
		return 0;
	int_ignored = (ignored >> (SIGINT - 1)) & 1;
	term_ignored = (ignored >> (SIGTERM - 1)) & 1;
	if (int_ignored == term_ignored || !in_pause(pid))
		return 0;
	return int_ignored ? SIGTERM : SIGINT;
}

/* Takes /proc/PID/maps into MAP when it changed since the last copy,
 * kept in *LAST (malloc'd). */
static void copy_maps(pid_t pid, struct mappings *map, char **last)
{
	char src[64], tmp[4096];
	char *buf = NULL;
	size_t size = 0;
	FILE *in, *out;

	snprintf(src, sizeof src, "/proc/%d/maps", (int)pid);
	in = fopen(src, "r");
	if (!in)
		return;
	out = open_memstream(&buf, &size);
	if (!out) {
		fclose(in);
		return;
	}
	for (;;) {
		size_t n = fread(tmp, 1, sizeof tmp, in);

		if (n == 0)
			break;
		fwrite(tmp, 1, n, out);
	}
	fclose(in);
	fclose(out);
	/* (an exiting process has none left) */
	if (size == 0 || (*last && strcmp(*last, buf) == 0)) {
		free(buf);
		return;
	}
	mappings_from_proc(map, buf);
	free(*last);
	*last = buf;
}

/* Appends to PATH a line "HOST NS" for each thread of PID not in it yet
 * (KNOWN: the host tids written so far, *NKNOWN of them, sorted).  Lines
 * are never taken back: a report names a thread after it has exited. */
static void keep_threads(pid_t pid, const char *path, pid_t **known, size_t *nknown)
{
	char dir[64];
	DIR *d;
	struct dirent *e;
	FILE *out = NULL;

	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		pid_t tid, ns, *grown;
		size_t lo = 0, hi = *nknown;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		tid = (pid_t)atoi(e->d_name);
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if ((*known)[mid] < tid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < *nknown && (*known)[lo] == tid)
			continue;
		ns = proc_ns_tid(pid, tid);
		if (!out)
			out = fopen(path, "a");
		if (!out)
			break;
		grown = realloc(*known, (*nknown + 1) * sizeof **known);
		if (!grown)
			break;
		*known = grown;
		memmove(*known + lo + 1, *known + lo, (*nknown - lo) * sizeof **known);
		(*known)[lo] = tid;
		(*nknown)++;
		fprintf(out, "%d %d\n", (int)tid, (int)ns);
	}
	closedir(d);
	if (out)
		fclose(out);
}

static void tick(int ms)
{
	const struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* The pid file is read: gone, and with it the session's private directory
 * that held it, when this keeps no file there (with --maps or --threads,
 * pthread-stap removes it at the end) */
static void remove_pid_file(const char *path, int keeps_files)
{
	char dir[4096];
	char *slash;

	unlink(path);
	if (keeps_files)
		return;
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		rmdir(dir);
	}
}

/* The -c command's pid, once its gate wrote it to PID_FILE: remembered
 * in TARGET, its mmap records opened in MAP (when kept), then the file
 * removed, which tells the gate to exec the command (KEEP_DIR: see
 * remove_pid_file) */
static void watch_started(struct proc *target, const char *pid_file, struct mappings *map,
			  int keep_dir)
{
	pid_t t = read_pid_file(pid_file);

	/* a process already gone leaves start 0: not alive */
	if (t > 0) {
		remember(target, t);
		if (map)
			mappings_record(map, t, 1);
		remove_pid_file(pid_file, keep_dir);
	}
}

int main(int argc, char **argv)
{
	static const char *const runtimes[] = { "stapbpf", "staprun", "stapio", NULL };
	struct proc stap, session = { 0, 0 }, target = { 0, 0 };
	const char *mode = argc > 2 ? argv[2] : "", *pid_file = NULL, *maps_file = NULL;
	int attach = strcmp(mode, "-x") == 0, gone_ticks = -1, stuck_ticks = 0;
	int interrupted = 0, terminated = 0, nargs = argc, fast_ticks = 0, short_tick = 0, fast, ms;
	char *maps_copy = NULL;
	struct mappings map;
	const char *threads_file = NULL;
	pid_t *threads_known = NULL;
	size_t nthreads_known = 0;

	for (;;) {
		if (nargs >= 5 && strcmp(argv[nargs - 2], "--maps") == 0)
			maps_file = argv[nargs - 1];
		else if (nargs >= 5 && strcmp(argv[nargs - 2], "--threads") == 0)
			threads_file = argv[nargs - 1];
		else
			break;
		nargs -= 2;
	}
	if (!((attach && nargs == 4) || (strcmp(mode, "-c") == 0 && nargs == 4) ||
	      (strcmp(mode, "-s") == 0 && nargs == 3))) {
		fprintf(stderr, "usage: end-with-target STAP_PID (-x PID | -c PIDFILE | -s) [--maps FILE] [--threads FILE]\n");
		return 2;
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* hold no terminal or pipe open but stderr's */
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		return 2;
	if (remember(&stap, (pid_t)atoi(argv[1])) != 0)
		return 0;
	mappings_init(&map);
	if (attach) {
		remember(&target, (pid_t)atoi(argv[3]));
		if (maps_file && target.pid)
			mappings_record(&map, target.pid, 0);
	}
	else if (strcmp(mode, "-c") == 0)
		pid_file = argv[3];

	for (;; tick(short_tick ? 1 : TICK_MS), short_tick = 0) {
		int stap_alive = alive(&stap), session_alive;

		if (!session.pid && stap_alive) {
			/* stapbpf run by pthread-stap itself is the session */
			pid_t s = proc_comm_is(stap.pid, "stapbpf") ? stap.pid : find_child(stap.pid, runtimes);

			if (s)
				remember(&session, s);
		}
		session_alive = alive(&session);
		if (!stap_alive) {
			if (pid_file)
				remove_pid_file(pid_file, maps_file || threads_file);
			if (!session_alive)
				return 0;
			/* stap is gone, its runtime is not: stop it */
			if (!terminated)
				kill(session.pid, SIGTERM);
			terminated = 1;
		}

		/* a stapbpf that missed its wake-up */
		if (session_alive && proc_comm_is(session.pid, "stapbpf")) {
			int sig = stapbpf_wakeup(session.pid);

			stuck_ticks = sig ? stuck_ticks + 1 : 0;
			if (stuck_ticks >= STUCK_TICKS) {
				kill(session.pid, sig);
				stuck_ticks = 0;
			}
		}
		if (!stap_alive)
			continue;

		/* until the target is known, and its first second: every
		 * millisecond */
		fast = !target.pid || fast_ticks < FAST_TICKS;
		for (ms = 0; ms < (fast ? TICK_MS : 1); ms++) {
			if (ms)
				tick(1);
			if (pid_file && !target.pid)
				watch_started(&target, pid_file, maps_file ? &map : NULL,
					      maps_file || threads_file);
			/* (the records first: a copy is newer than they) */
			if (maps_file) {
				mappings_read_records(&map);
				if (target.pid && map.exec_seen && alive(&target))
					copy_maps(target.pid, &map, &maps_copy);
				mappings_write(&map, maps_file);
			}
			if (threads_file && target.pid && alive(&target))
				keep_threads(target.pid, threads_file, &threads_known, &nthreads_known);
		}
		if (fast) {
			fast_ticks += target.pid != 0;
			short_tick = 1;
		}
		if (gone_ticks < 0 && target.pid && !alive(&target)) {
			gone_ticks = 0;
			if (!session_alive && attach) {
				/* stap exits 1, silently, on SIGTERM once it
				 * handles it: until then (a stap just exec'd)
				 * the signal would kill it, so wait */
				if (!catches(stap.pid, SIGTERM)) {
					gone_ticks = -1;
					continue;
				}
				fprintf(stderr, "pthread-stap: process %d exited before tracing started\n",
					(int)target.pid);
				kill(stap.pid, SIGTERM);
				interrupted = 1;
			}
		}
		if (gone_ticks >= 0 && !interrupted && ++gone_ticks >= GRACE_TICKS) {
			/* (a stapbpf just exec'd: once it handles SIGINT) */
			if (proc_comm_is(stap.pid, "stapbpf") && !catches(stap.pid, SIGINT))
				continue;
			/* a stapbpf out of pause() is ending by itself (-c):
			 * detaching its probes takes 0.1 s each on a slow
			 * machine, and a SIGINT during its end probes aborts
			 * it (SIGABRT, no summary) */
			if (session_alive && proc_comm_is(session.pid, "stapbpf") &&
			    !in_pause(session.pid))
				continue;
			kill(stap.pid, SIGINT);
			interrupted = 1;
		}
	}
}
