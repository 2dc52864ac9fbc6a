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

/*
 * Text the traced program controls (its thread names, symbol names, file
 * names, cgroup path), made safe to print on root's terminal and in a
 * report's lines: printable ASCII and valid UTF-8 stay as they are; a
 * backslash becomes "\\"; every control character, DEL and each byte that
 * is not part of valid UTF-8 becomes "\xNN".  So no escape sequence, no
 * line break and no invalid byte gets through, and the name is still
 * recognisable.  The project's one escaping: launcher/safe-text applies it
 * to lines (for launcher/symbolize and pthread-stap), and the tapset's
 * __pthread_safe_text() (pthread-tapset-report.stp) writes the same.
 */

/* The length of the valid UTF-8 sequence of 2 to 4 bytes at S, else 0
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF) */
static inline size_t utf8_sequence(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* S (LEN bytes) made safe as above, into BUF (cut short, never in the
 * middle of an escape or a character, when BUF is too small); BUF */
static inline char *safe_text_n(char *buf, size_t size, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t o = 0;

	if (!size)
		return buf;
	while (p < end) {
		char piece[8];
		size_t in = 1, out = 1;

		if (*p >= 0x80 && end - p >= 2 && (in = utf8_sequence(p)) && (size_t)(end - p) >= in) {
			memcpy(piece, p, out = in);
		} else if (in = 1, *p == '\\') {
			memcpy(piece, "\\\\", out = 2);
		} else if (*p < 0x20 || *p >= 0x7f) {
			snprintf(piece, sizeof piece, "\\x%02x", *p);
			out = 4;
		} else {
			piece[0] = (char)*p;
		}
		if (o + out >= size)
			break;
		memcpy(buf + o, piece, out);
		o += out;
		p += in;
	}
	buf[o] = 0;
	return buf;
}

/* NUL-terminated S made safe, into BUF; BUF */
static inline char *safe_text(char *buf, size_t size, const char *s)
{
	return safe_text_n(buf, size, s, strlen(s));
}
/* (a buffer of the size safe text of a string of N bytes needs at most) */
#define SAFE_SIZE(n) (4 * (n) + 1)

#endif
