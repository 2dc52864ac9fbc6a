/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * who - what every thread of a running process waits for, and the
 * deadlocks among them, read from /proc alone: no tracing, no restart, any
 * glibc (with or without marks or the preload library).
 *
 *     who PID                 every thread, then the deadlocks
 *     who --deadlocks=P PID   only the deadlocks, as dl2 prints them, each
 *                             line prefixed "P:", the first saying "found
 *                             at attach" (pthread-stap dl2 -x)
 *     who --names [--deadlocks=P] PID
 *                             the same, and before the report a line
 *                             "# pthread-stap: lock 0xLOCK holder in 0xSITE"
 *                             per lock a thread waits for: where its
 *                             holder is now in the program's code (the
 *                             name of a heap lock, for launcher/symbolize)
 *     who --container PID     only where it runs: one line, its number in
 *                             its own PID namespace, a tab, the container
 *                             id (12 digits) or "-", a tab, the cgroup
 *                             (pthread-stap's first line and JSON)
 * Exit status: 0 no deadlock, 3 a deadlock was found, 1 an error.
 *
 * A process in a container (its own PID and mount namespaces) is read from
 * the host, by its host pid: the tids glibc writes into lock memory are
 * the container's, translated to the host's through each thread's NSpid
 * line (/proc/PID/task/TID/status); a thread is printed by its host tid
 * and, where it differs, the container's ("thread 32532 (7 in its
 * namespace)").  libc's symbols come from the file the process maps
 * (/proc/PID/map_files), whatever the host has at that path.  The
 * process's cgroup is said, so that containers can be told apart.
 *
 * How, per thread (x86_64, glibc):
 *   - /proc/PID/task/TID/syscall says whether it sleeps in futex(2), on
 *     which word, how (op) and expecting which value, and gives its stack
 *     pointer;
 *   - the function it sleeps in: the first word of its stack (read through
 *     /proc/PID/mem, from the stack pointer up) that is a return address
 *     inside one of libc's exported blocking functions (pthread_mutex_lock,
 *     pthread_cond_wait, pthread_rwlock_wrlock, pthread_join, ...), found
 *     in libc's .dynsym;
 *   - what it waits for:
 *       a mutex: its lock word is the futex; glibc records the owner's tid
 *         8 bytes further (also what a condition wait waits for when it
 *         takes its mutex back);
 *       an rwlock: its futex is 8 or 12 bytes into it; a writer's tid is
 *         24 bytes into it (__cur_writer); readers are not recorded;
 *       a thread to exit (pthread_join): the futex holds that thread's tid;
 *       a condition variable, a barrier, a semaphore: nobody in particular;
 *   - how long it has been asleep, about: now less the time it last ran
 *     (se.exec_start in /proc/PID/task/TID/sched, where the kernel has it).
 *   - where a lock's holder is (--names): the first word of the holder's
 *     stack, from its stack pointer up, that is a return address into the
 *     program's own code (a file mapped executable other than libc, the
 *     loader, libstdc++, libgcc_s, libm and the preload library), just
 *     after a call instruction: the function that called the lock
 *     function it sleeps in, or where it runs.  A heuristic (a stale word
 *     can look so): said as "holder in", never as where the lock was made.
 * A deadlock is a cycle of "waits for ... held by" (waits with a deadline
 * end, and do not count): each is printed once, as dl2 prints it.  A
 * thread waiting on a cycle without being part of it is listed with what
 * it waits for, and is in no cycle.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

#define MAX_THREADS 65536
#define STACK_SCAN 4096
#define SYS_FUTEX 202
#define FUTEX_CMD_MASK (~(128 | 256)) /* FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME */

enum what { RUNNING, SYSCALL, FUTEX, MUTEX, RWLOCK, JOIN, CONDVAR, BARRIER, SEMAPHORE };

struct thread {
	pid_t tid;                  /* as the host sees it */
	pid_t nstid;                /* as the process sees it (its PID namespace) */
	char comm[32];
	char state;
	enum what what;
	long nr;                    /* the syscall it sleeps in, -1 none */
	unsigned long addr;         /* the futex word */
	int timed;                  /* a deadline was given */
	unsigned long sp;           /* its user stack pointer, 0 unknown */
	pid_t holder;               /* who it waits for, host tid (0: nobody known) */
	pid_t holder_ns;            /* the same as the process sees it */
	int holder_gone;            /* no thread of the process (exited, or
	                             * the lock's memory lies) */
	double asleep;              /* seconds, < 0 unknown */
};

/* libc's exported blocking functions, by what a thread in them waits for */
static const struct {
	const char *name;
	enum what what;
} blocking[] = {
	{ "pthread_mutex_lock", MUTEX }, { "pthread_mutex_timedlock", MUTEX },
	{ "pthread_mutex_clocklock", MUTEX },
	{ "pthread_cond_wait", CONDVAR }, { "pthread_cond_timedwait", CONDVAR },
	{ "pthread_cond_clockwait", CONDVAR },
	{ "pthread_rwlock_rdlock", RWLOCK }, { "pthread_rwlock_wrlock", RWLOCK },
	{ "pthread_rwlock_timedrdlock", RWLOCK }, { "pthread_rwlock_timedwrlock", RWLOCK },
	{ "pthread_rwlock_clockrdlock", RWLOCK }, { "pthread_rwlock_clockwrlock", RWLOCK },
	{ "pthread_join", JOIN }, { "pthread_timedjoin_np", JOIN },
	{ "pthread_clockjoin_np", JOIN },
	{ "pthread_barrier_wait", BARRIER },
	{ "sem_wait", SEMAPHORE }, { "sem_timedwait", SEMAPHORE }, { "sem_clockwait", SEMAPHORE },
};
#define NBLOCKING (sizeof blocking / sizeof blocking[0])

struct range {
	unsigned long start, end;
	enum what what;
};

/* the program's own code: executable file mappings (see code_site) */
struct code {
	unsigned long start, end;
};

static pid_t pid;
static int mem_fd = -1;
static struct code *code;
static int ncode;
/* the kernel's uprobe trampolines ("[uprobes]"): a tracer's return probe
 * puts one in place of its function's return address, kept in the kernel */
static struct code trampolines;
static struct thread *threads;
static int nthreads;
static struct range *ranges;
static int nranges;
static int in_namespace;        /* the process has a PID namespace of its own */

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "who: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static int read_mem(unsigned long addr, void *buf, size_t size)
{
	return pread(mem_fd, buf, size, (off_t)addr) == (ssize_t)size ? 0 : -1;
}

/* The words of a stack from SP up: STACK_SCAN bytes, fewer (halved, 512
 * at least) where the stack ends sooner; how many words were read */
static size_t read_stack(unsigned long sp, unsigned long words[STACK_SCAN / sizeof(unsigned long)])
{
	size_t n;

	for (n = STACK_SCAN; n >= 512; n /= 2)
		if (read_mem(sp, words, n) == 0)
			return n / sizeof(unsigned long);
	return 0;
}

static struct thread *find_thread(pid_t tid)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	return NULL;
}

/* The thread a word of lock memory names: glibc writes tids as the
 * process sees them (its PID namespace's) */
static struct thread *find_thread_ns(pid_t nstid)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].nstid == nstid)
			return &threads[i];
	return NULL;
}

/* libc: the file the process maps (/proc/PID/map_files/START-END: the
 * same inode, in whatever mount namespace) and its load base, from
 * /proc/PID/maps, whose path column is the rest of the line */
static int find_libc(char *path, size_t size, unsigned long *base)
{
	char maps[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long start, end, offset;
		int at = 0;
		const char *file, *name;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &offset, &at) < 3 || !at)
			continue;
		file = line + at;
		line[strcspn(line, "\n")] = 0;
		name = strrchr(file, '/');
		if (!name || offset != 0)
			continue;
		name++;
		if (strcmp(name, "libc.so.6") == 0 ||
		    (strncmp(name, "libc-", 5) == 0 && strstr(name, ".so"))) {
			snprintf(path, size, "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
			*base = start;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

/* The address ranges of libc's blocking functions, from its .dynsym. */
static void load_ranges(void)
{
	char path[4096];
	unsigned long base;
	struct stat st;
	unsigned char *elf;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	int fd, i;

	if (find_libc(path, sizeof path, &base) != 0)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	elf = malloc((size_t)st.st_size);
	if (!elf || read(fd, elf, (size_t)st.st_size) != st.st_size) {
		free(elf);
		close(fd);
		return;
	}
	close(fd);
	eh = (const Elf64_Ehdr *)elf;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (unsigned long)eh->e_shnum * sizeof(Elf64_Shdr) > (unsigned long)st.st_size) {
		free(elf);
		return;
	}
	sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	ranges = calloc(64, sizeof *ranges);
	for (i = 0; ranges && i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *strtab;
		size_t n, k, j;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > (unsigned long)st.st_size ||
		    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size > (unsigned long)st.st_size)
			continue;
		sym = (const Elf64_Sym *)(elf + sh[i].sh_offset);
		strtab = (const char *)(elf + sh[sh[i].sh_link].sh_offset);
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		for (k = 0; k < n && nranges < 64; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
			    sym[k].st_name >= sh[sh[i].sh_link].sh_size)
				continue;
			for (j = 0; j < NBLOCKING; j++)
				if (strcmp(strtab + sym[k].st_name, blocking[j].name) == 0) {
					ranges[nranges].start = base + sym[k].st_value;
					ranges[nranges].end = base + sym[k].st_value + sym[k].st_size;
					ranges[nranges].what = blocking[j].what;
					nranges++;
				}
		}
	}
	free(elf);
}

/* Is NAME (a file's base name) a runtime library rather than the
 * program's own code: libc, the loader, the C++ and GCC runtimes, libm,
 * libpthread, the preload library? */
static int runtime_library(const char *name)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "ld-linux", "ld-", "libstdc++.so", "libgcc_s.so",
		"libm.so", "libm-", "libpthread.so", "libpthread-", "libdl.so",
	};
	size_t i;

	for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* The program's own code: every executable mapping of a file that is not
 * a runtime library, from /proc/PID/maps (its path being the rest of the
 * line: only its last component is looked at) */
static void load_code(void)
{
	char maps[64], line[4096];
	FILE *f;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long start, end;
		char perms[8];
		int at = 0;
		const char *name;
		struct code *more;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &at) < 3 || !at ||
		    perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line + at, "[uprobes]") == 0) {
			trampolines.start = start;
			trampolines.end = end;
			continue;
		}
		if (line[at] != '/')
			continue;
		name = strrchr(line + at, '/') + 1;
		if (runtime_library(name))
			continue;
		more = realloc(code, (size_t)(ncode + 1) * sizeof *code);
		if (!more)
			break;
		code = more;
		code[ncode].start = start;
		code[ncode].end = end;
		ncode++;
	}
	fclose(f);
}

/* Does the instruction before ADDR (a return address) look like a call:
 * call rel32 (e8), or an indirect call (ff /2) of 2, 3, 6 or 7 bytes? */
static int after_call(unsigned long addr)
{
	unsigned char b[7];
	static const int lengths[] = { 2, 3, 6, 7 };
	size_t i;

	if (addr < sizeof b || read_mem(addr - sizeof b, b, sizeof b) != 0)
		return 0;
	if (b[2] == 0xe8)
		return 1;
	for (i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
		const unsigned char *insn = b + sizeof b - lengths[i];

		if (insn[0] == 0xff && ((insn[1] >> 3) & 7) == 2)
			return 1;
	}
	return 0;
}

/* Where in the program's code a thread whose stack pointer is SP is: the
 * first return address into that code on its stack; 0 if none is found,
 * or if a return probe's trampoline comes first (*HIDDEN then 1): the
 * kernel keeps the return address it stands for, perhaps the one into
 * the program, and a return address further up would be an outer
 * frame's (measured: main's hidden, _start's found) */
static unsigned long code_site(unsigned long sp, int *hidden)
{
	unsigned long words[STACK_SCAN / sizeof(unsigned long)];
	size_t i, n = sp ? read_stack(sp, words) : 0;
	int c;

	*hidden = 0;
	for (i = 0; i < n; i++) {
		if (words[i] >= trampolines.start && words[i] < trampolines.end) {
			*hidden = 1;
			return 0;
		}
		for (c = 0; c < ncode; c++)
			if (words[i] > code[c].start && words[i] < code[c].end && after_call(words[i]))
				return words[i];
	}
	return 0;
}

/* The lines that name each lock a thread waits for by where its holder is
 * (--names), for launcher/symbolize */
static void print_holder_sites(void)
{
	int i;

	load_code();
	for (i = 0; i < nthreads; i++) {
		const struct thread *t = &threads[i], *h;
		unsigned long site;
		int hidden = 0;

		if ((t->what != MUTEX && t->what != RWLOCK) || !t->holder)
			continue;
		h = find_thread(t->holder);
		site = h ? code_site(h->sp, &hidden) : 0;
		if (site)
			printf("# pthread-stap: lock 0x%lx holder in 0x%lx\n", t->addr, site);
		else if (h && hidden)
			printf("# pthread-stap: lock 0x%lx holder hidden by a return probe\n", t->addr);
	}
}

/* The thread whose descriptor (struct pthread) holds ADDR, or NULL.
 * pthread_join sleeps on a word of the joined thread's descriptor (its
 * tid up to glibc 2.40, a join state since), and glibc puts a thread's
 * descriptor just above the top of its stack, in the same mapping: the
 * thread whose stack pointer is the nearest below ADDR in ADDR's mapping
 * (within 1 MiB), other than the main thread, whose descriptor is not
 * on its stack.  (Adjacent thread stacks may share one mapping: glibc
 * 2.42 marks guard pages with MADV_GUARD_INSTALL, not with a mapping.) */
static const struct thread *thread_descriptor_of(unsigned long addr)
{
	char maps[64], line[512];
	unsigned long start = 0, end = 0;
	const struct thread *nearest = NULL;
	FILE *f;
	int i, found = 0;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && addr >= start && addr < end)
			found = 1;
	fclose(f);
	if (!found)
		return NULL;
	for (i = 0; i < nthreads; i++) {
		const struct thread *t = &threads[i];

		if (t->tid != pid && t->sp >= start && t->sp < addr && addr - t->sp < (1UL << 20) &&
		    (!nearest || t->sp > nearest->sp))
			nearest = t;
	}
	return nearest;
}

/* The blocking function a thread sleeps in, from its stack; RUNNING if none. */
static enum what blocked_in(unsigned long sp)
{
	unsigned long words[STACK_SCAN / sizeof(unsigned long)];
	size_t i, n = read_stack(sp, words);
	int r;

	for (i = 0; i < n; i++)
		for (r = 0; r < nranges; r++)
			if (words[i] > ranges[r].start && words[i] <= ranges[r].end)
				return ranges[r].what;
	return RUNNING;
}

/* Seconds since the thread last ran, from the scheduler's clock; -1 if
 * the kernel does not say.  NOW is our own se.exec_start. */
static double exec_start(pid_t p, pid_t tid)
{
	char file[64], buf[2048];
	const char *line;
	double ms;

	if (tid)
		snprintf(file, sizeof file, "task/%d/sched", (int)tid);
	else
		snprintf(file, sizeof file, "sched");
	if (read_proc(p, file, buf, sizeof buf) != 0)
		return -1;
	line = strstr(buf, "se.exec_start");
	if (!line || sscanf(strchr(line, ':') + 1, "%lf", &ms) != 1)
		return -1;
	return ms / 1000.0;
}

/* The fields of /proc/PID/task/TID/syscall: the number (-1: not in a
 * system call; "running" counts as that), six arguments, the stack
 * pointer and the program counter.  Returns how many it read. */
static int read_syscall(pid_t tid, long *nr, unsigned long a[6], unsigned long *sp)
{
	char file[64], buf[512];
	unsigned long pc;
	int fields;

	*nr = -1;
	snprintf(file, sizeof file, "task/%d/syscall", (int)tid);
	if (read_proc(pid, file, buf, sizeof buf) != 0 || strncmp(buf, "running", 7) == 0)
		return 0;
	fields = sscanf(buf, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", nr, &a[0], &a[1], &a[2],
			&a[3], &a[4], &a[5], sp, &pc);
	if (fields < 1)
		*nr = -1;
	return fields;
}

/* T waits for the thread whose tid, as the process sees it, is NSTID */
static void set_holder(struct thread *t, pid_t nstid)
{
	const struct thread *h = nstid > 0 ? find_thread_ns(nstid) : NULL;

	t->holder_ns = nstid;
	t->holder = h ? h->tid : 0;
	t->holder_gone = nstid > 0 && !h;
}

static void look_at(struct thread *t, double now)
{
	unsigned long a[6], sp = 0;
	int fields;
	double last;

	t->what = RUNNING;
	t->asleep = -1;
	fields = read_syscall(t->tid, &t->nr, a, &sp);
	if (t->nr < 0)
		return;
	last = exec_start(pid, t->tid);
	/* (clocks of two CPUs may differ by a little: no negative time) */
	if (now >= 0 && last >= 0 && t->state != 'R')
		t->asleep = now > last ? now - last : 0;
	t->what = SYSCALL;
	if (t->nr != SYS_FUTEX || fields < 9)
		return;
	t->what = FUTEX;
	t->addr = a[0];
	t->timed = a[3] != 0;
	switch ((int)(a[1] & FUTEX_CMD_MASK)) {
	case 6:  /* FUTEX_LOCK_PI: a priority-inheritance mutex; the word holds the owner */
	case 13: /* FUTEX_LOCK_PI2 */
	{
		pid_t owner = (pid_t)(a[2] & 0x3fffffff);
		unsigned int word;

		t->what = MUTEX;
		if (owner == 0 && read_mem(t->addr, &word, sizeof word) == 0)
			owner = (pid_t)(word & 0x3fffffff);
		set_holder(t, owner);
		return;
	}
	case 0:  /* FUTEX_WAIT */
	case 9:  /* FUTEX_WAIT_BITSET */
	case 11: /* FUTEX_WAIT_REQUEUE_PI */
		break;
	default:
		return;
	}
	{
		enum what in = blocked_in(sp);
		int word[3];
		struct thread *owner = NULL;

		if (read_mem(t->addr, word, sizeof word) == 0) {
			owner = word[2] > 0 ? find_thread_ns(word[2]) : NULL;
			/* a mutex's owner, a thread of this process: whatever the
			 * function (a condition wait takes its mutex back so) */
			if (word[0] != 0 && owner && owner != t) {
				t->what = MUTEX;
				set_holder(t, word[2]);
				return;
			}
			if (in == MUTEX && word[0] != 0 && word[2] > 0) {
				t->what = MUTEX;
				set_holder(t, word[2]);
				return;
			}
		}
		if (in == RWLOCK) {
			int off, writer;

			t->what = RWLOCK;
			for (off = 8; off <= 12; off += 4)
				if (read_mem(t->addr - (unsigned long)off + 24, &writer, sizeof writer) == 0 &&
				    writer > 0 && find_thread_ns(writer) && writer != t->nstid) {
					/* the rwlock itself, found through its writer */
					t->addr -= (unsigned long)off;
					set_holder(t, writer);
					break;
				}
			return;
		}
		/* pthread_join sleeps on the joined thread's tid word, expecting
		 * that tid (the kernel clears it when the thread exits); glibc
		 * reaches it by a tail call, so its return address may not be
		 * on the stack */
		if (in == JOIN || in == RUNNING) {
			const struct thread *joined = thread_descriptor_of(t->addr);

			if (joined && joined != t) {
				t->what = JOIN;
				t->holder = joined->tid;
				t->holder_ns = joined->nstid;
				return;
			}
		}
		if (in == JOIN) {
			t->what = JOIN;
			return;
		}
		if (in == CONDVAR || in == BARRIER || in == SEMAPHORE)
			t->what = in;
	}
}

static const char *syscall_name(long nr)
{
	switch (nr) {
	case 0: return "read";
	case 1: return "write";
	case 7: return "poll";
	case 23: return "select";
	case 34: return "pause";
	case 35: return "nanosleep";
	case 43: return "accept";
	case 45: return "recvfrom";
	case 47: return "recvmsg";
	case 61: return "wait4";
	case 230: return "clock_nanosleep";
	case 232: return "epoll_wait";
	case 247: return "waitid";
	case 270: return "pselect6";
	case 271: return "ppoll";
	case 281: return "epoll_pwait";
	case 288: return "accept4";
	default: return NULL;
	}
}

/* A thread as the reports name it: by its host tid, and by the process's
 * own where that differs ("thread 32532 (7 in its namespace)"); one
 * that has exited, by the only tid known.  Into BUF, which it returns. */
static const char *thread_name(char *buf, size_t size, pid_t tid, pid_t nstid)
{
	if (tid && nstid && nstid != tid)
		snprintf(buf, size, "thread %d (%d in its namespace)", (int)tid, (int)nstid);
	else if (tid)
		snprintf(buf, size, "thread %d", (int)tid);
	else
		snprintf(buf, size, in_namespace ? "thread ? (%d in its namespace)" : "thread %d", (int)nstid);
	return buf;
}
#define THREAD_NAME(tid, nstid) thread_name((char[64]){ 0 }, 64, (tid), (nstid))

static void describe(const struct thread *t)
{
	const char *name;

	char comm[SAFE_SIZE(sizeof t->comm)];

	printf("who:   %s (%s) ", THREAD_NAME(t->tid, t->nstid), safe_text(comm, sizeof comm, t->comm));
	switch (t->what) {
	case RUNNING:
		printf(t->state == 'R' ? "is running" : "is not in a system call (state %c)", t->state);
		break;
	case SYSCALL:
		name = syscall_name(t->nr);
		if (name)
			printf("sleeps in %s()", name);
		else
			printf("sleeps in system call %ld", t->nr);
		break;
	case FUTEX:
		printf("waits on futex 0x%lx (not a lock with an owner)", t->addr);
		break;
	case MUTEX:
		printf("waits%s for mutex 0x%lx held by %s%s", t->timed ? " (with a deadline)" : "",
		       t->addr, THREAD_NAME(t->holder, t->holder_ns), t->holder_gone ? ", which is no thread of this process (it exited, or the lock's memory is not what it seems)" : "");
		break;
	case RWLOCK:
		if (t->holder)
			printf("waits%s for rwlock 0x%lx held for writing by %s",
			       t->timed ? " (with a deadline)" : "", t->addr, THREAD_NAME(t->holder, t->holder_ns));
		else
			printf("waits%s for an rwlock (futex 0x%lx) held by readers",
			       t->timed ? " (with a deadline)" : "", t->addr);
		break;
	case JOIN:
		printf("waits for %s to exit (pthread_join)", THREAD_NAME(t->holder, t->holder_ns));
		break;
	case CONDVAR:
		printf("waits on a condition variable (futex 0x%lx)%s", t->addr,
		       t->timed ? ", with a deadline" : "");
		break;
	case BARRIER:
		printf("waits at a barrier (futex 0x%lx)", t->addr);
		break;
	case SEMAPHORE:
		printf("waits on a semaphore (futex 0x%lx)", t->addr);
		break;
	}
	if (t->asleep >= 0 && t->what != RUNNING)
		printf(", asleep about %.1f s", t->asleep);
	putchar('\n');
}

/* One edge of a cycle, as dl2 prints it. */
static void print_edge(const char *prefix, const struct thread *t)
{
	const char *waiter = THREAD_NAME(t->tid, t->nstid), *holder = THREAD_NAME(t->holder, t->holder_ns);

	if (t->what == MUTEX)
		printf("%s:   %s waits for mutex 0x%lx held by %s\n", prefix, waiter, t->addr, holder);
	else if (t->what == RWLOCK)
		printf("%s:   %s waits for rwlock 0x%lx held by %s\n", prefix, waiter, t->addr, holder);
	else
		printf("%s:   %s waits for %s to exit\n", prefix, waiter, holder);
}

/* Marks and prints every cycle of waits-for (untimed: a deadline ends a
 * wait); returns how many.  A thread is in at most one cycle: each waits
 * for one thread at most. */
static int print_cycles(const char *prefix, const char *at_attach)
{
	int *state = calloc((size_t)nthreads, sizeof *state); /* 0 new, 1 on path, 2 done */
	int i, found = 0;

	if (!state)
		die("%s", "out of memory");
	for (i = 0; i < nthreads; i++) {
		struct thread *t = &threads[i];
		int len = 0, k;

		/* walk from t until the chain ends, meets a done thread, or loops */
		while (t && state[t - threads] == 0) {
			state[t - threads] = 1;
			t = (t->holder && !t->timed && !t->holder_gone) ? find_thread(t->holder) : NULL;
		}
		if (t && state[t - threads] == 1) {
			/* a new cycle through t */
			const struct thread *c = t;

			do {
				len++;
				c = find_thread(c->holder);
			} while (c != t);
			if (len == 1)
				printf("%s: deadlock%s: 1 thread of pid %d waits for itself:\n", prefix,
				       at_attach, (int)pid);
			else
				printf("%s: deadlock%s: %d threads of pid %d wait for each other:\n", prefix,
				       at_attach, len, (int)pid);
			c = t;
			for (k = 0; k < len; k++) {
				print_edge(prefix, c);
				c = find_thread(c->holder);
			}
			found++;
		}
		/* everything walked is now settled */
		for (k = 0; k < nthreads; k++)
			if (state[k] == 1)
				state[k] = 2;
	}
	free(state);
	return found;
}

/* Which container: the process's PID namespace, where it has its own, and
 * its cgroup (with the container id a runtime's cgroup path carries) */
static void where_it_runs(void)
{
	char cgroup[4096], id[80], safe[SAFE_SIZE(sizeof cgroup)];
	struct thread *main_thread = find_thread(pid);

	if (in_namespace && main_thread)
		printf("who: in its own PID namespace, as process %d there (each thread's number there in parentheses)\n",
		       (int)main_thread->nstid);
	if (proc_cgroup(pid, cgroup, sizeof cgroup) == 0) {
		if (cgroup_container_id(cgroup, id, sizeof id) == 0)
			printf("who: cgroup %s (container %s)\n", safe_text(safe, sizeof safe, cgroup), id);
		else
			printf("who: cgroup %s\n", safe_text(safe, sizeof safe, cgroup));
	}
}

static int by_tid(const void *a, const void *b)
{
	return (int)((const struct thread *)a)->tid - (int)((const struct thread *)b)->tid;
}

int main(int argc, char **argv)
{
	const char *prefix = NULL, *arg;
	char path[64], buf[1024], safe[SAFE_SIZE(sizeof buf)], *end;
	DIR *d;
	struct dirent *e;
	double now;
	int i, cycles, names = 0;

	if (argc == 3 && strcmp(argv[1], "--container") == 0) {
		char cgroup[4096], id[80], safe[SAFE_SIZE(sizeof cgroup)];

		pid = (pid_t)strtol(argv[2], &end, 10);
		if (!argv[2][0] || *end != 0 || pid <= 0)
			die("not a process id: %s", argv[2]);
		if (proc_cgroup(pid, cgroup, sizeof cgroup) != 0)
			die("cannot read the cgroup of process %s", argv[2]);
		printf("%d\t%s\t%s\n", (int)proc_ns_tid(pid, pid),
		       cgroup_container_id(cgroup, id, sizeof id) == 0 ? id : "-",
		       safe_text(safe, sizeof safe, cgroup));
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--names") == 0) {
		names = 1;
		argv++;
		argc--;
	}
	if (argc == 3 && strncmp(argv[1], "--deadlocks=", 12) == 0) {
		prefix = argv[1] + 12;
		arg = argv[2];
	} else if (argc == 2) {
		arg = argv[1];
	} else {
		fprintf(stderr, "usage: who [--names] [--deadlocks=PREFIX] PID | who --container PID\n");
		return 1;
	}
	pid = (pid_t)strtol(arg, &end, 10);
	if (*arg == 0 || *end != 0 || pid <= 0)
		die("not a process id: %s", arg);
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		die("no such process: %s", arg);
	threads = calloc(MAX_THREADS, sizeof *threads);
	if (!threads)
		die("%s", "out of memory");
	while ((e = readdir(d)) != NULL && nthreads < MAX_THREADS) {
		struct thread *t = &threads[nthreads];
		char file[64];
		const char *paren;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		t->tid = (pid_t)atoi(e->d_name);
		snprintf(file, sizeof file, "task/%d/stat", (int)t->tid);
		if (read_proc(pid, file, buf, sizeof buf) != 0)
			continue;
		paren = strrchr(buf, ')');
		t->state = paren && paren[1] ? paren[2] : '?';
		snprintf(file, sizeof file, "task/%d/comm", (int)t->tid);
		if (read_proc(pid, file, t->comm, sizeof t->comm) == 0)
			t->comm[strcspn(t->comm, "\n")] = 0;
		t->nstid = proc_ns_tid(pid, t->tid);
		if (t->nstid != t->tid)
			in_namespace = 1;
		nthreads++;
	}
	closedir(d);
	qsort(threads, (size_t)nthreads, sizeof *threads, by_tid);
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	mem_fd = open(path, O_RDONLY);
	if (mem_fd < 0)
		die("cannot read the memory of process %s (root, or the process's owner with ptrace allowed, can)", arg);
	load_ranges();
	now = exec_start(getpid(), 0);
	/* every thread's stack pointer first: a join is recognised by the
	 * joined thread's stack mapping */
	for (i = 0; i < nthreads; i++) {
		unsigned long a[6];
		long nr;
		int fields = read_syscall(threads[i].tid, &nr, a, &threads[i].sp);

		/* (a thread asleep outside a system call, in a page fault say:
		 * "-1 SP PC") */
		if (fields == 3 && nr == -1)
			threads[i].sp = a[0];
		else if (fields < 9)
			threads[i].sp = 0;
	}
	for (i = 0; i < nthreads; i++)
		look_at(&threads[i], now);
	if (names)
		print_holder_sites();

	if (prefix) {
		cycles = print_cycles(prefix, " found at attach");
		return cycles ? 3 : 0;
	}
	if (read_proc(pid, "comm", buf, sizeof buf) == 0)
		buf[strcspn(buf, "\n")] = 0;
	printf("who: process %d (%s), %d thread%s:\n", (int)pid, safe_text(safe, sizeof safe, buf), nthreads,
	       nthreads == 1 ? "" : "s");
	where_it_runs();
	for (i = 0; i < nthreads; i++)
		describe(&threads[i]);
	cycles = print_cycles("who", "");
	if (!cycles)
		printf("who: no deadlock\n");
	return cycles ? 3 : 0;
}
