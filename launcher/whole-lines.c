/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * whole-lines - copies its input to its output, whole lines at a time
 *
 *     whole-lines < IN > OUT
 *
 * Each write(2) it makes ends at the end of a line (or at the end of its
 * input, or when a line is longer than its buffer).  pthread-stap passes a
 * report's filter output and stap's stderr through it: two processes that
 * write to one terminal then never split each other's lines.  stap writes
 * a coloured warning in pieces ("WARNING:", its text, then the newline) and
 * mawk writes a line's text and its newline apart, so that a report line
 * could land inside a warning, or a warning inside a report line (a test
 * that read the report saw neither).  It ignores SIGINT and SIGTERM, as the
 * filters do (a Ctrl-C is for stap), and ends at the end of its input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static char buf[65536];

/* Writes all of p; 0 when the reader is gone. */
static int write_all(const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= (size_t)n;
	}
	return 1;
}

int main(void)
{
	size_t have = 0;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf + have, sizeof buf - have);
		char *end;
		size_t whole;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		end = memrchr(buf, '\n', have);
		whole = end ? (size_t)(end - buf) + 1 : (have == sizeof buf ? have : 0);
		if (whole == 0)
			continue;
		if (!write_all(buf, whole))
			return 1;
		memmove(buf, buf + whole, have - whole);
		have -= whole;
	}
	return have && !write_all(buf, have);
}
