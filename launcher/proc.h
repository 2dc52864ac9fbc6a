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

#endif
