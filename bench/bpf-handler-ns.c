// SPDX-License-Identifier: GPL-2.0-or-later
// bench/bpf-handler-ns.c - how long BPF programs' handlers run, their own
// time only (no uprobe trap): the kernel's run-time statistics, turned on
// for as long as this program runs (BPF_ENABLE_STATS: off again when its
// descriptor closes, so nothing of the host's settings changes).
//
// Usage: bpf-handler-ns COMMAND [ARG]...
// Runs COMMAND and, every 50 ms while it runs, reads every BPF program
// loaded since it started (their run count and nanoseconds).  When
// COMMAND ends, prints one line per program that ran,
//   prog ID TYPE NAME runs N ns N ns_per_run N
// then "handler_runs N" and "handler_ns N" (their sums), and exits with
// COMMAND's status.  (A program's last 50 ms before it is unloaded are
// not counted: its ns per run are exact, its totals a lower bound.)
// For make bench (tools/bench, PARTS=handlers).
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROGS 4096

struct prog {
	uint32_t id;
	uint32_t type;
	char name[BPF_OBJ_NAME_LEN];
	uint64_t runs, ns;
};

static struct prog progs[MAX_PROGS];
static int nprogs;

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

// ids of the programs loaded before COMMAND, which are not its
static uint32_t before[MAX_PROGS];
static int nbefore;

static int was_before(uint32_t id)
{
	for (int i = 0; i < nbefore; i++)
		if (before[i] == id)
			return 1;
	return 0;
}

static struct prog *prog_of(uint32_t id)
{
	for (int i = 0; i < nprogs; i++)
		if (progs[i].id == id)
			return &progs[i];
	if (nprogs == MAX_PROGS)
		return NULL;
	progs[nprogs].id = id;
	return &progs[nprogs++];
}

// read every program's statistics (first: only note which exist)
static void sample(int first)
{
	union bpf_attr attr;
	uint32_t id = 0;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &attr) < 0)
			return;
		id = attr.next_id;
		if (first) {
			if (nbefore < MAX_PROGS)
				before[nbefore++] = id;
			continue;
		}
		if (was_before(id))
			continue;
		memset(&attr, 0, sizeof(attr));
		attr.prog_id = id;
		int fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;
		struct bpf_prog_info info;
		memset(&info, 0, sizeof(info));
		memset(&attr, 0, sizeof(attr));
		attr.info.bpf_fd = (uint32_t)fd;
		attr.info.info_len = sizeof(info);
		attr.info.info = (uint64_t)(uintptr_t)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) == 0) {
			struct prog *p = prog_of(id);
			if (p) {
				p->type = info.type;
				memcpy(p->name, info.name, sizeof(p->name));
				p->runs = info.run_cnt;
				p->ns = info.run_time_ns;
			}
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bpf-handler-ns COMMAND [ARG]...\n");
		return 2;
	}
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	int stats = (int)sys_bpf(BPF_ENABLE_STATS, &attr);
	if (stats < 0) {
		fprintf(stderr, "bpf-handler-ns: cannot turn on BPF run-time statistics: %s\n",
			strerror(errno));
		return 1;
	}
	sample(1);
	pid_t child = fork();
	if (child < 0) {
		perror("bpf-handler-ns: fork");
		return 1;
	}
	if (child == 0) {
		close(stats);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "bpf-handler-ns: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	int status = 0;
	for (;;) {
		sample(0);
		pid_t r = waitpid(child, &status, WNOHANG);
		if (r == child)
			break;
		if (r < 0 && errno != EINTR) {
			perror("bpf-handler-ns: waitpid");
			return 1;
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	close(stats);
	uint64_t runs = 0, ns = 0;
	for (int i = 0; i < nprogs; i++) {
		const struct prog *p = &progs[i];
		if (!p->runs)
			continue;
		printf("prog %u %u %s runs %llu ns %llu ns_per_run %.1f\n", p->id, p->type,
		       p->name[0] ? p->name : "-", (unsigned long long)p->runs,
		       (unsigned long long)p->ns, (double)p->ns / (double)p->runs);
		runs += p->runs;
		ns += p->ns;
	}
	printf("handler_runs %llu\nhandler_ns %llu\n", (unsigned long long)runs,
	       (unsigned long long)ns);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
