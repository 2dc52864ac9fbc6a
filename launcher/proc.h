/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h - what pthread-stap's helpers read from /proc.
 */
#ifndef LAUNCHER_PROC_H
#define LAUNCHER_PROC_H

#include <stdio.h>
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

#endif
