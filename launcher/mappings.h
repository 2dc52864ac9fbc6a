/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mappings.h - the memory map of a traced process as end-with-target keeps
 * it for launcher/symbolize, which names the addresses of a report with it
 * (the BPF runtime cannot): a file in the format of /proc/PID/maps.
 *
 * Two sources, because either alone misses some:
 *   - copies of /proc/PID/maps, taken while the process lives: every
 *     mapping of a process, but only while it lives (an exited process
 *     has none, and a -c command can live a millisecond);
 *   - the kernel's mmap records for the process (a perf event of type
 *     dummy, with mmap, mmap_data and comm_exec): every mapping its main
 *     thread makes from the moment the event is opened, kept in a ring
 *     buffer until read, however short the process's life and however
 *     late the read.  start-gate waits for end-with-target to open it
 *     before it execs the command, so the command's whole image (the
 *     program, the dynamic loader, the libraries it loads) is recorded.
 *     Records from before the command's exec (the gate's own image) are
 *     left out: the COMM record of the exec starts the map afresh.  Other
 *     threads' mappings are not recorded (a task-bound event that is
 *     inherited cannot have a ring buffer): the copies cover them.
 *
 * The map is the last copy, then each record read since, a newer mapping
 * replacing what it overlaps, as mmap does; an unmapping is not recorded,
 * so a region unmapped since the copy keeps its last mapping (the report
 * names an address by what was there).  Addresses in order, as in
 * /proc/PID/maps (symbolize's .bss rule reads the mapping before).
 */
#ifndef PTHREAD_TAPSET_MAPPINGS_H
#define PTHREAD_TAPSET_MAPPINGS_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAPPINGS_RING_PAGES 32

struct mapping {
	unsigned long start, end, offset, inode;
	unsigned int major, minor;
	char perms[5];
	char *path; /* "" when anonymous */
};

struct mappings {
	struct mapping *v;
	size_t n, cap;
	int fd;          /* the mmap records' event, -1 without */
	char *ring;      /* its ring buffer: a page of control, then the data */
	size_t page, data_size;
	int exec_seen;   /* the map is of the command's own image */
	int changed;     /* since the file was last written */
};

static inline void mappings_init(struct mappings *m)
{
	memset(m, 0, sizeof *m);
	m->fd = -1;
	m->exec_seen = 1;
}

static inline void mappings_clear(struct mappings *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].path);
	m->n = 0;
	m->changed = 1;
}

static inline int mappings_append(struct mappings *m, const struct mapping *add)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct mapping *v = realloc(m->v, cap * sizeof *v);

		if (!v)
			return -1;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n] = *add;
	m->v[m->n].path = strdup(add->path ? add->path : "");
	if (!m->v[m->n].path)
		return -1;
	m->n++;
	m->changed = 1;
	return 0;
}

/* ADD, a new mapping: what it overlaps is cut away (split in two when it
 * lies inside one), then it goes in at its place in address order. */
static inline void mappings_insert(struct mappings *m, const struct mapping *add)
{
	size_t i, at;

	for (i = 0; i < m->n; i++) {
		struct mapping *o = &m->v[i];

		if (o->end <= add->start || o->start >= add->end)
			continue;
		if (o->start < add->start && o->end > add->end) {
			struct mapping tail = *o;

			tail.offset += add->end - o->start;
			tail.start = add->end;
			o->end = add->start;
			/* (o moves with the array: not used after) */
			if (mappings_append(m, &tail) != 0)
				return;
		} else if (o->start < add->start) {
			o->end = add->start;
		} else if (o->end > add->end) {
			o->offset += add->end - o->start;
			o->start = add->end;
		} else {
			free(o->path);
			memmove(o, o + 1, (m->n - i - 1) * sizeof *o);
			m->n--;
			i--;
		}
	}
	if (mappings_append(m, add) != 0)
		return;
	/* into address order (the new one and a split's tail are last) */
	for (i = 1; i < m->n; i++)
		for (at = i; at > 0 && m->v[at - 1].start > m->v[at].start; at--) {
			struct mapping t = m->v[at];

			m->v[at] = m->v[at - 1];
			m->v[at - 1] = t;
		}
}

/* The map becomes TEXT, a copy of /proc/PID/maps. */
static inline void mappings_from_proc(struct mappings *m, const char *text)
{
	const char *line = text;

	mappings_clear(m);
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096 + 256];
		struct mapping add;
		int used = 0;

		if (len < sizeof buf) {
			memcpy(buf, line, len);
			buf[len] = 0;
			memset(&add, 0, sizeof add);
			if (sscanf(buf, "%lx-%lx %4s %lx %x:%x %lu %n", &add.start, &add.end, add.perms,
				   &add.offset, &add.major, &add.minor, &add.inode, &used) >= 7 && used > 0) {
				add.path = buf + used;
				mappings_append(m, &add);
			}
		}
		line += len + (nl != NULL);
	}
}

/* Writes the map to PATH (through PATH.tmp and a rename) if it changed. */
static inline void mappings_write(struct mappings *m, const char *path)
{
	char tmp[4096];
	FILE *out;
	size_t i;
	int ok;

	if (!m->changed || (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
		return;
	out = fopen(tmp, "w");
	if (!out)
		return;
	for (i = 0; i < m->n; i++) {
		const struct mapping *p = &m->v[i];

		fprintf(out, "%08lx-%08lx %s %08lx %02x:%02x %lu %s\n", p->start, p->end, p->perms,
			p->offset, p->major, p->minor, p->inode, p->path);
	}
	ok = fclose(out) == 0;
	if (ok && rename(tmp, path) == 0)
		m->changed = 0;
	else
		unlink(tmp);
}

/* The mmap records of PID's main thread from now on; COMMAND: PID is a
 * -c command's gate, whose records before its exec are left out.  Without
 * them (an event the kernel refuses), the copies alone. */
static inline void mappings_record(struct mappings *m, pid_t pid, int command)
{
	struct perf_event_attr attr;
	long fd;
	void *ring;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.mmap_data = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	m->data_size = MAPPINGS_RING_PAGES * m->page;
	ring = mmap(NULL, m->page + m->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (ring == MAP_FAILED) {
		close((int)fd);
		return;
	}
	m->fd = (int)fd;
	m->ring = ring;
	m->exec_seen = !command;
}

/* Reads the records that came since the last read into the map. */
static inline void mappings_read_records(struct mappings *m)
{
	static unsigned char rec[65536];
	struct perf_event_mmap_page *control;
	uint64_t head, tail;

	if (m->fd < 0)
		return;
	control = (struct perf_event_mmap_page *)m->ring;
	head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
	tail = control->data_tail;
	while (tail < head) {
		const unsigned char *data = (const unsigned char *)m->ring + m->page;
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(tail + i) % m->data_size];
		if (h.size < sizeof h || tail + h.size > head)
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % m->data_size];
		rec[h.size - 1] = 0;
		tail += h.size;
		if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC)) {
			/* a new image: nothing of the old one stays */
			mappings_clear(m);
			m->exec_seen = 1;
		} else if (h.type == PERF_RECORD_MMAP2 && m->exec_seen && h.size > 72) {
			struct mapping add;
			uint32_t prot, flags;
			uint64_t addr, len, pgoff, ino;

			memcpy(&addr, rec + 16, 8);
			memcpy(&len, rec + 24, 8);
			memcpy(&pgoff, rec + 32, 8);
			memcpy(&add.major, rec + 40, 4);
			memcpy(&add.minor, rec + 44, 4);
			memcpy(&ino, rec + 48, 8);
			memcpy(&prot, rec + 64, 4);
			memcpy(&flags, rec + 68, 4);
			add.start = (unsigned long)addr;
			add.end = (unsigned long)(addr + len);
			add.offset = (unsigned long)pgoff;
			add.inode = (unsigned long)ino;
			add.perms[0] = prot & PROT_READ ? 'r' : '-';
			add.perms[1] = prot & PROT_WRITE ? 'w' : '-';
			add.perms[2] = prot & PROT_EXEC ? 'x' : '-';
			add.perms[3] = flags & MAP_SHARED ? 's' : 'p';
			add.perms[4] = 0;
			/* (an anonymous mapping is "//anon" in a record) */
			add.path = (char *)rec + 72;
			if (strcmp(add.path, "//anon") == 0) {
				add.path = "";
				add.offset = 0;
			}
			mappings_insert(m, &add);
		}
	}
	__atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);
}

#endif
