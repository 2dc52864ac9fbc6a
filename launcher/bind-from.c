/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bind-from - show a file of a process in a container at a path of this
 * mount namespace, then run a command (pthread-stap, for stap to read and
 * probe a container's libc: uprobes attach to the file itself).
 *
 *     bind-from PID FILE TARGET -- CMD [ARG...]
 *     bind-from fd:N FILE TARGET -- CMD [ARG...]
 *
 * FILE is the path as process PID sees it; TARGET an existing file here.
 * Or, in place of the process, its mount namespace as an open file
 * descriptor N (of /proc/PID/ns/mnt, opened while the process ran: the
 * namespace lasts while it is open, the process may have exited since),
 * not passed on to CMD (close-on-exec): CMD does not hold the namespace.
 * Run it in a mount namespace of its own (unshare --mount --propagation
 * private): the host's mounts are left alone.  A bind mount cannot take
 * its source from another mount namespace, so the file is cloned there
 * (open_tree, after setns into PID's mount namespace), and the clone
 * mounted here (move_mount).  The clone must be the very file PID maps
 * (the device and inode of /proc/PID/map_files/RANGE, given as DEV:INO
 * in the environment variable BIND_FROM_ID): a path inside a container is
 * the container's to change.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

__attribute__((noreturn)) static void die(const char *what, const char *arg)
{
	fprintf(stderr, "pthread-stap: cannot show the container's %s here: %s: %s\n", arg, what,
		strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	char ns[64], cwd[4096];
	const char *file, *target, *want;
	int own_ns, their_ns, tree;
	struct stat st;

	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: bind-from PID|fd:N FILE TARGET -- CMD [ARG...]\n");
		return 2;
	}
	file = argv[2];
	target = argv[3];
	want = getenv("BIND_FROM_ID");
	if (!getcwd(cwd, sizeof cwd))
		die("getcwd", file);
	own_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (strncmp(argv[1], "fd:", 3) == 0) {
		char *end;
		long fd;

		errno = 0;
		fd = strtol(argv[1] + 3, &end, 10);
		if (errno || end == argv[1] + 3 || *end || fd < 0 || fd > 65535) {
			errno = EBADF;
			die("no mount namespace descriptor", file);
		}
		their_ns = (int)fd;
		if (fcntl(their_ns, F_SETFD, FD_CLOEXEC) != 0)
			die("its mount namespace descriptor", file);
	} else {
		snprintf(ns, sizeof ns, "/proc/%s/ns/mnt", argv[1]);
		their_ns = open(ns, O_RDONLY | O_CLOEXEC);
	}
	if (own_ns < 0 || their_ns < 0)
		die("open its mount namespace", file);
	if (setns(their_ns, CLONE_NEWNS) != 0)
		die("setns", file);
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, file, OPEN_TREE_CLONE | O_CLOEXEC);
	if (tree < 0)
		die("open_tree", file);
	if (setns(own_ns, CLONE_NEWNS) != 0 || chdir(cwd) != 0)
		die("setns back", file);
	if (fstat(tree, &st) != 0)
		die("fstat", file);
	if (want) {
		char id[64];

		snprintf(id, sizeof id, "%lu:%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
		if (strcmp(id, want) != 0) {
			errno = ESTALE;
			die("not the file the process maps", file);
		}
	}
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) != 0)
		die("move_mount", file);
	close(tree);
	unsetenv("BIND_FROM_ID");
	execvp(argv[5], argv + 5);
	fprintf(stderr, "pthread-stap: cannot run %s: %s\n", argv[5], strerror(errno));
	return 127;
}
