/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h - what pthread-stap's helpers read from /proc.
 */
#ifndef LAUNCHER_PROC_H
#define LAUNCHER_PROC_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* Reads /proc/PID/FILE into buf (NUL-terminated); 0 on success. */
static inline int read_proc(pid_t pid, const char *file, char *buf, size_t size)
{
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

/* Is process PID's command name NAME?  0 also when it cannot be read. */
static inline int proc_comm_is(pid_t pid, const char *name)
{
	char comm[64];

	if (read_proc(pid, "comm", comm, sizeof comm) != 0)
		return 0;
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, name) == 0;
}

/* The signal set on line FIELD ("SigCgt", "SigIgn"...) of
 * /proc/PID/status, bit N-1 for signal N; 0 on success. */
static inline int proc_signal_set(pid_t pid, const char *field, unsigned long long *set)
{
	char status[4096], key[32];
	const char *line;

	if (read_proc(pid, "status", status, sizeof status) != 0)
		return -1;
	snprintf(key, sizeof key, "\n%s:", field);
	line = strstr(status, key);
	if (!line || sscanf(line + strlen(key), "%llx", set) != 1)
		return -1;
	return 0;
}

/* Thread TID of process PID as its own PID namespace numbers it: the last
 * field of the NSpid line of its status (the tid itself where the kernel
 * has no such line, or in the host's namespace). */
static inline pid_t proc_ns_tid(pid_t pid, pid_t tid)
{
	char file[64], status[4096];
	const char *line;
	long v;
	int n = 0;

	snprintf(file, sizeof file, "task/%d/status", (int)tid);
	if (read_proc(pid, file, status, sizeof status) != 0)
		return tid;
	line = strstr(status, "\nNSpid:");
	if (!line)
		return tid;
	line += 7;
	while (sscanf(line, "%ld%n", &v, &n) == 1 && n > 0) {
		tid = (pid_t)v;
		line += n;
	}
	return tid;
}

/* The cgroup (v2: the "0::" line of /proc/PID/cgroup; v1: the first
 * line's path) into BUF; 0 on success. */
static inline int proc_cgroup(pid_t pid, char *buf, size_t size)
{
	char text[4096];
	const char *line, *path;

	if (read_proc(pid, "cgroup", text, sizeof text) != 0 || !text[0])
		return -1;
	line = strstr(text, "0::");
	if (line != text && !(line && line[-1] == '\n'))
		line = text;
	path = strchr(line, ':');
	path = path ? strchr(path + 1, ':') : NULL;
	if (!path)
		return -1;
	snprintf(buf, size, "%.*s", (int)strcspn(path + 1, "\n"), path + 1);
	return 0;
}

/* The container id a container runtime's cgroup path carries (Docker's
 * docker-ID.scope or /docker/ID, Podman's libpod-ID, containerd's
 * cri-containerd-ID, CRI-O's crio-ID: 64 hex digits), its first 12 digits
 * as `docker ps` shows them, into ID; 0 if there is one. */
static inline int cgroup_container_id(const char *cgroup, char *id, size_t size)
{
	size_t i, run = 0;
	int found = -1;

	for (i = 0; cgroup[i]; i++) {
		char c = cgroup[i];

		run = ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) ? run + 1 : 0;
		if (run == 64 && !((cgroup[i + 1] >= '0' && cgroup[i + 1] <= '9') ||
				   (cgroup[i + 1] >= 'a' && cgroup[i + 1] <= 'f'))) {
			snprintf(id, size, "%.12s", cgroup + i + 1 - 64);
			found = 0;
		}
	}
	return found;
}

#endif
