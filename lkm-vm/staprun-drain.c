/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * staprun-drain - inside the test VM, what stapsh runs as /usr/bin/staprun
 * (stapsh-relay binds it there, in each session's own mount namespace):
 * it runs the real staprun (bound at REAL_STAPRUN) with the same arguments,
 * and ends only once stapsh has passed on all that staprun wrote.
 *
 * Why: stapsh (SystemTap 4.8) reads staprun's output through pipes, but on
 * SIGCHLD it cleans up and exits at once, without reading what is still in
 * them.  A module whose end probes print and then exit (a -c program that
 * ended) lost that last output when stapsh saw the SIGCHLD before the data
 * (seen in the tests: lockorder's last cycle and its summary, once in a
 * few hundred sessions on the VM's one vCPU).  So this process, stapsh's
 * child, outlives staprun until both pipes are empty and stapsh is back in
 * poll() (it writes what it read before it polls again), at most 5 s; not
 * when stapsh is already cleaning up (told to quit: it SIGHUPs staprun and
 * waits for it, reading nothing more, so an interrupted session's end
 * output still stays in the VM, as doc/testing.md says).
 *
 * It runs staprun with stapio-drain.so (named by the relay in
 * STAPIO_DRAIN_SO) preloaded: the module's last output, which stapio 4.8
 * itself can lose, is read before stapio ends (stapio-drain.c).
 *
 * A SIGHUP (stapsh's way to stop staprun) is passed on to staprun; other
 * signals for the session (the relay's SIGTERM to the group) reach
 * staprun themselves.  Its exit status is staprun's.  Run by anything
 * but stapsh (stapio runs "staprun -d MODULE" through sh to unload its
 * module), it is the real staprun at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REAL_STAPRUN "/run/stapsh-relay-staprun"
#define SYS_POLL_X86_64 7
#define SYS_PPOLL_X86_64 271
#define SYS_WAIT4_X86_64 61

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* Bytes still unread in the pipe at FD (0 if it is not a pipe). */
static int unread(int fd)
{
	int n = 0;

	if (ioctl(fd, FIONREAD, &n) != 0)
		return 0;
	return n;
}

/* Where PID waits: 1 in poll(), 2 in wait4() (stapsh's cleanup, which
 * reads no more), 0 elsewhere (or running); -1: cannot tell. */
static int stapsh_waits_in(pid_t pid)
{
	char path[64], buf[64];
	FILE *f;
	long nr;
	int r = 0;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof buf, f) && sscanf(buf, "%ld", &nr) == 1)
		r = nr == SYS_POLL_X86_64 || nr == SYS_PPOLL_X86_64 ? 1 : nr == SYS_WAIT4_X86_64 ? 2 : 0;
	fclose(f);
	return r;
}

/* Is PID stapsh? */
static int parent_is_stapsh(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof comm, f))
		comm[0] = 0;
	fclose(f);
	return strcmp(comm, "stapsh\n") == 0;
}

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	struct sigaction sa;
	pid_t stapsh = getppid();
	int status = 0, i;

	(void)argc;
	/* (staprun run by another: stapio's "staprun -d", through sh) */
	if (!parent_is_stapsh(stapsh)) {
		execv(REAL_STAPRUN, argv);
		perror("staprun-drain: " REAL_STAPRUN);
		return 127;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pass_on;
	sigaction(SIGHUP, &sa, NULL);
	child = fork();
	if (child < 0) {
		perror("staprun-drain: fork");
		return 1;
	}
	if (child == 0) {
		const char *so = getenv("STAPIO_DRAIN_SO");

		signal(SIGHUP, SIG_DFL);
		/* (stapio-drain.c: stapio's last output read before it ends) */
		if (so && *so) {
			const char *was = getenv("LD_PRELOAD");
			char *both = NULL;

			if (was && *was && asprintf(&both, "%s:%s", so, was) > 0)
				setenv("LD_PRELOAD", both, 1);
			else
				setenv("LD_PRELOAD", so, 1);
			unsetenv("STAPIO_DRAIN_SO");
		}
		execv(REAL_STAPRUN, argv);
		perror("staprun-drain: " REAL_STAPRUN);
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	for (i = 0; i < 500; i++) {
		int waiting = stapsh_waits_in(stapsh);

		if (waiting < 0) {
			/* (no /proc/PID/syscall: a fixed grace instead) */
			if (i >= 10)
				break;
		} else if (waiting == 2 ||
			   (waiting == 1 && unread(STDOUT_FILENO) == 0 && unread(STDERR_FILENO) == 0)) {
			break;
		}
		nanosleep(&tick, NULL);
	}
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
