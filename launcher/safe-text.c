/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * safe-text - each line of the standard input made safe to print (proc.h's
 * safe_text: control characters, DEL, bytes that are not valid UTF-8 as
 * "\xNN", a backslash as "\\"), one line out per line in.
 *
 * launcher/symbolize reads symbol names through it, and pthread-stap the
 * file names it takes from a traced process: both are the program's to
 * choose, and root's terminal must not run them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int main(void)
{
	char *line = NULL, *out = NULL;
	size_t cap = 0, out_cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			n--;
		if (out_cap < SAFE_SIZE((size_t)n)) {
			out_cap = SAFE_SIZE((size_t)n);
			free(out);
			out = malloc(out_cap);
			if (!out)
				return 1;
		}
		puts(safe_text_n(out, out_cap, line, (size_t)n));
		fflush(stdout);
	}
	free(line);
	free(out);
	return 0;
}
