/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * in-container - run a fixture as a process in a container: its own mount
 * and PID namespaces, its own root (pivot_root), and a libc that is not the
 * host's file, as Docker, Podman and Kubernetes run programs.  A test
 * helper (root only), not a fixture of its own.
 *
 *     in-container [--libc DIR [--at PATH]] [--bind DIR]... -- CMD [ARG...]
 *
 * The root is a tmpfs holding the host's /usr, /etc, /dev and /tmp (bound:
 * the harness's control files are on /tmp), each --bind DIR at its own
 * path (the checkout, whose fixtures run), merged-/usr links, and a /proc
 * of its own.  --libc DIR: the libc.so.6 and ld-linux-x86-64.so.2 of DIR
 * serve in place of the host's, at the usual paths (/usr/lib/x86_64-linux-
 * gnu: the same path as the host's libc, another file), or with --at PATH,
 * at PATH inside (a path the host need not have; CMD then names them).
 *
 * CMD runs as process 2 of the namespace, under an init (process 1) that
 * reaps and ends with it.  Its standard output passes through this
 * program, which adds, as the host sees them:
 *   truth host pid PID               after "truth fixture NAME pid N"
 *   truth host thread LABEL TID      after "truth thread LABEL N"
 * When this program ends (killed too), the whole container is killed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../launcher/proc.h"

#define ROOT "/mnt"
#define MAX_BINDS 8

static const char *libc_dir, *libc_at, *binds[MAX_BINDS];
static int nbinds;
static char **cmd;

__attribute__((noreturn)) static void fail(const char *what, const char *arg)
{
	fprintf(stderr, "in-container: %s %s: %s\n", what, arg ? arg : "", strerror(errno));
	_exit(125);
}

/* mkdir -p PATH */
static void make_dirs(const char *path)
{
	char p[4096];
	size_t i;

	snprintf(p, sizeof p, "%s", path);
	for (i = 1; p[i]; i++)
		if (p[i] == '/') {
			p[i] = 0;
			if (mkdir(p, 0755) != 0 && errno != EEXIST)
				fail("mkdir", p);
			p[i] = '/';
		}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		fail("mkdir", p);
}

static void bind_at(const char *from, const char *inside, int file)
{
	char to[4096];

	snprintf(to, sizeof to, ROOT "%s", inside);
	if (file) {
		int fd = open(to, O_WRONLY | O_CREAT, 0644);

		if (fd >= 0)
			close(fd);
	} else {
		make_dirs(to);
	}
	if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) != 0)
		fail("bind", from);
}

/* The container's init: set up the root, run CMD, end with it. */
static int container_init(void *out_fd)
{
	static const char *const dirs[] = { "/usr", "/etc", "/dev", "/tmp" };
	static const char *const links[] = { "bin", "lib", "lib64", "sbin" };
	char from[4096], to[4096];
	pid_t child, w;
	size_t i;
	int status;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail("mount", "--make-rprivate /");
	if (mount("container-root", ROOT, "tmpfs", 0, "mode=0755") != 0)
		fail("mount tmpfs on", ROOT);
	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		bind_at(dirs[i], dirs[i], 0);
	for (i = 0; i < (size_t)nbinds; i++)
		bind_at(binds[i], binds[i], 0);
	for (i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(from, sizeof from, "usr/%s", links[i]);
		snprintf(to, sizeof to, ROOT "/%s", links[i]);
		if (symlink(from, to) != 0)
			fail("symlink", to);
	}
	if (libc_dir && libc_at) {
		bind_at(libc_dir, libc_at, 0);
	} else if (libc_dir) {
		snprintf(from, sizeof from, "%s/libc.so.6", libc_dir);
		bind_at(from, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1);
		snprintf(from, sizeof from, "%s/ld-linux-x86-64.so.2", libc_dir);
		bind_at(from, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 1);
	}
	make_dirs(ROOT "/proc");
	make_dirs(ROOT "/.old-root");
	if (chdir(ROOT) != 0)
		fail("chdir", ROOT);
	if (syscall(SYS_pivot_root, ".", ".old-root") != 0)
		fail("pivot_root", ROOT);
	if (umount2("/.old-root", MNT_DETACH) != 0 || rmdir("/.old-root") != 0)
		fail("umount", "/.old-root");
	if (mount("proc", "/proc", "proc", 0, NULL) != 0)
		fail("mount", "/proc");
	if (chdir("/") != 0)
		fail("chdir", "/");

	child = fork();
	if (child < 0)
		fail("fork", NULL);
	if (child == 0) {
		dup2((int)(long)out_fd, 1);
		close((int)(long)out_fd);
		execvp(cmd[0], cmd);
		fail("exec", cmd[0]);
	}
	close((int)(long)out_fd);
	for (;;) {
		w = wait(&status);
		if (w < 0 && errno != EINTR)
			return 125;
		if (w == child)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
}

/* The host pid of the only child of INIT (the container's process 2) */
static pid_t host_pid_of_cmd(pid_t init)
{
	char file[64], buf[256];
	int i;

	snprintf(file, sizeof file, "task/%d/children", (int)init);
	for (i = 0; i < 500; i++) {
		if (read_proc(init, file, buf, sizeof buf) == 0 && buf[0])
			return (pid_t)atoi(buf);
		usleep(10000);
	}
	return 0;
}

/* The host tid of the thread of PID that the container numbers NSTID */
static pid_t host_tid_of(pid_t pid, pid_t nstid)
{
	char path[64];
	struct dirent *e;
	pid_t found = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid > 0 && proc_ns_tid(pid, tid) == nstid)
			found = tid;
	}
	closedir(d);
	return found;
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024];
	char line[4096], label[256];
	int out[2], i, status, nstid;
	pid_t init, host = 0;
	FILE *in;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--libc") == 0 && i + 1 < argc)
			libc_dir = argv[++i];
		else if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
			libc_at = argv[++i];
		else if (strcmp(argv[i], "--bind") == 0 && i + 1 < argc && nbinds < MAX_BINDS)
			binds[nbinds++] = argv[++i];
		else
			break;
	}
	if (i + 1 >= argc || strcmp(argv[i], "--") != 0) {
		fprintf(stderr, "usage: in-container [--libc DIR [--at PATH]] [--bind DIR]... -- CMD [ARG...]\n");
		return 2;
	}
	cmd = argv + i + 1;
	if (pipe(out) != 0)
		fail("pipe", NULL);
	fflush(stdout);
	init = clone(container_init, stack + sizeof stack, CLONE_NEWNS | CLONE_NEWPID | SIGCHLD,
		     (void *)(long)out[1]);
	if (init < 0)
		fail("clone", NULL);
	close(out[1]);
	in = fdopen(out[0], "r");
	if (!in)
		fail("fdopen", NULL);
	while (fgets(line, sizeof line, in)) {
		fputs(line, stdout);
		if (strncmp(line, "truth fixture ", 14) == 0) {
			host = host_pid_of_cmd(init);
			printf("truth host pid %d\n", (int)host);
		} else if (host && sscanf(line, "truth thread %255s %d", label, &nstid) == 2) {
			pid_t tid = host_tid_of(host, (pid_t)nstid);

			if (tid)
				printf("truth host thread %s %d\n", label, (int)tid);
		}
		fflush(stdout);
	}
	if (waitpid(init, &status, 0) != init)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
