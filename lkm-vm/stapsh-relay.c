/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stapsh-relay - runs inside the test VM: serves `stap --remote` sessions
 * from the host over one virtio-serial port, one fresh stapsh per session.
 *
 *     stapsh-relay PORT-DEVICE [STAPSH]
 *
 * Why not `stapsh -l PORT` in a loop: virtio_console drops data the host
 * sends while no guest process holds the port open (the next session's
 * first bytes would be lost and the host would hang), and blocks guest
 * writes while the host is disconnected.  So the relay keeps the port open
 * for the VM's lifetime; a session starts with the host's first bytes and
 * ends when the host disconnects or its stapsh exits, and its stapsh (with
 * anything it started) is then stopped.
 *
 * And it merges stapsh's output frames.  While a script runs, stapsh sends
 * "data STREAM N\n" + N bytes per piece of output; the relay gathers a
 * burst of output (until stapsh is quiet for 20 ms) and sends it as one
 * frame per stream: fewer frames for the host's stapsh-proxy to hand to
 * stap one read at a time (lkm-vm/stapsh-proxy.c says why).  Lines that
 * are not data frames pass unchanged.
 *
 * And stapsh runs staprun-drain (next to the relay) as /usr/bin/staprun,
 * bound there in the session's own mount namespace: stapsh exits on
 * staprun's SIGCHLD without reading the rest of its output, and
 * staprun-drain.c outlives staprun until stapsh has passed it all on;
 * staprun-drain preloads stapio-drain.so (named in STAPIO_DRAIN_SO) into
 * staprun, and so into stapio: stapio-drain.c lets stapio's reader read
 * the module's last output before stapio stops it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int port;
static char drain[4096];        /* staprun-drain, next to the relay */
static char drain_so[4096];     /* stapio-drain.so, next to it too */
static char label[128] = "?";   /* the port's name, in every message */
static char buf[65536];

/* The port's name (org.systemtap.stapsh.N), from sysfs; else DEV. */
static void read_label(const char *dev)
{
	const char *base = strrchr(dev, '/');
	char path[256];
	FILE *f;

	snprintf(label, sizeof label, "%s", dev);
	snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", base ? base + 1 : dev);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(label, sizeof label, f))
		label[strcspn(label, "\n")] = 0;
	fclose(f);
}

/* Writes all of p to fd (the non-blocking port: waiting up to 5 s for
 * room); -1 once the other side is gone. */
static int write_all(int fd, const char *p, ssize_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, (size_t)len);

		if (n > 0) {
			p += n;
			len -= n;
		} else if (n < 0 && errno == EAGAIN) {
			struct pollfd w = { .fd = fd, .events = POLLOUT };

			if (poll(&w, 1, 5000) <= 0 || (w.revents & POLLOUT) == 0)
				return -1;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			return -1;
		}
	}
	return 0;
}

static int port_write(const char *p, ssize_t len)
{
	return write_all(port, p, len);
}

/* Blocks until the host connects and sends its first bytes. */
static ssize_t wait_for_host(void)
{
	for (;;) {
		struct pollfd r = { .fd = port, .events = POLLIN };
		ssize_t n;

		if (poll(&r, 1, -1) < 0 && errno != EINTR)
			return -1;
		n = read(port, buf, sizeof buf);
		if (n > 0)
			return n;
		/* no host: POLLHUP and read() == 0 until one connects */
		usleep(20000);
	}
}

/* In a stapsh child: /usr/bin/staprun becomes staprun-drain in this
 * process's own mount namespace (the real one bound at the path
 * staprun-drain runs).  Left as it is should any step fail. */
static void bind_staprun_drain(void)
{
	static const char real[] = "/run/stapsh-relay-staprun";
	int fd;

	if (access(drain, X_OK) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return;
	fd = open(real, O_WRONLY | O_CREAT | O_CLOEXEC, 0700);
	if (fd < 0)
		return;
	close(fd);
	if (mount("/usr/bin/staprun", real, NULL, MS_BIND, NULL) == 0 &&
	    mount(drain, "/usr/bin/staprun", NULL, MS_BIND, NULL) == 0 &&
	    access(drain_so, R_OK) == 0)
		setenv("STAPIO_DRAIN_SO", drain_so, 1);
}

static pid_t start_stapsh(const char *stapsh, int *fd)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		bind_staprun_drain();
		dup2(sv[1], 0);
		dup2(sv[1], 1);
		dup2(sv[1], 2);
		execl(stapsh, stapsh, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	*fd = sv[0];
	return pid;
}

/* Reads what stapsh sends until it has been quiet for 20 ms, or buf is
 * full; returns what read() would for the first piece if nothing came. */
static ssize_t read_burst(int sh)
{
	ssize_t got = read(sh, buf, sizeof buf);

	while (got > 0 && (size_t)got < sizeof buf) {
		struct pollfd r = { .fd = sh, .events = POLLIN };
		ssize_t n;

		if (poll(&r, 1, 20) <= 0 || (r.revents & POLLIN) == 0)
			break;
		n = read(sh, buf + got, sizeof buf - (size_t)got);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* The frame parser: survives across bursts. */
enum { STDOUT_STREAM, STDERR_STREAM, NSTREAMS };
static const char *const stream_name[NSTREAMS] = { "stdout", "stderr" };
static struct {
	char line[256];          /* a header or plain line being read */
	size_t line_len;
	int stream;              /* payload being read: its stream, */
	size_t left;             /* and how many bytes are still due */
	char data[NSTREAMS][sizeof buf];
	size_t data_len[NSTREAMS];
} fr = { .stream = -1 };

/* Sends the gathered payloads, one frame per stream; -1: host gone. */
static int flush_frames(void)
{
	char head[64];
	int i;

	for (i = 0; i < NSTREAMS; i++) {
		int len;

		if (!fr.data_len[i])
			continue;
		len = snprintf(head, sizeof head, "data %s %zu\n", stream_name[i], fr.data_len[i]);
		if (port_write(head, len) < 0 || port_write(fr.data[i], (ssize_t)fr.data_len[i]) < 0)
			return -1;
		fr.data_len[i] = 0;
	}
	return 0;
}

/* Feeds n bytes from stapsh through the parser; plain lines go out at
 * once (after any data gathered before them).  -1: host gone. */
static int parse_frames(const char *p, size_t n)
{
	while (n > 0) {
		if (fr.stream >= 0) {           /* payload bytes */
			size_t take = n < fr.left ? n : fr.left;
			size_t room = sizeof fr.data[0] - fr.data_len[fr.stream];

			if (take > room) {
				if (flush_frames() < 0)
					return -1;
				room = sizeof fr.data[0];
			}
			memcpy(fr.data[fr.stream] + fr.data_len[fr.stream], p, take);
			fr.data_len[fr.stream] += take;
			fr.left -= take;
			p += take;
			n -= take;
			if (fr.left == 0)
				fr.stream = -1;
			continue;
		}
		/* header or plain line: up to and including '\n' */
		fr.line[fr.line_len++] = *p++;
		n--;
		if (fr.line[fr.line_len - 1] != '\n' && fr.line_len < sizeof fr.line - 1)
			continue;
		fr.line[fr.line_len] = 0;
		{
			char name[16];
			size_t len;
			int i, stream = -1;

			if (sscanf(fr.line, "data %15s %zu", name, &len) == 2)
				for (i = 0; i < NSTREAMS; i++)
					if (strcmp(name, stream_name[i]) == 0)
						stream = i;
			if (stream >= 0) {
				fr.stream = len ? stream : -1;
				fr.left = len;
			} else if (flush_frames() < 0 ||
				   port_write(fr.line, (ssize_t)fr.line_len) < 0) {
				return -1;
			}
		}
		fr.line_len = 0;
	}
	return 0;
}

/*
 * A session's first bytes can come before the port is seen connected:
 * virtio_console takes the host's opening of the port from a queue of its
 * own, in a work item, after the data (under TCG, now and then, long
 * enough for stapsh to answer): until then the port reads as hung up
 * (poll: POLLIN | POLLHUP, read: 0).  That is no hang-up: waits (5 s at
 * most) until the port is connected; 0 if it never was.  (Ending the
 * session there, as the relay once did, left the host's stap waiting for
 * an answer for ever: a VM-RETRY after 60 s, one session in some
 * hundreds, "a session: stapsh N" then at once "the host left".)
 */
static int host_connects(void)
{
	int t;

	for (t = 0; t < 500; t++) {
		struct pollfd r = { .fd = port, .events = POLLIN | POLLOUT };

		/* (a hung-up port polls ready at once, POLLIN | POLLHUP; an
		 * open one POLLOUT: the host, which has sent its first bytes,
		 * now waits for stapsh's answer and sends nothing more, so
		 * POLLIN alone never told an open port, and the session ended
		 * after these 5 s all the same) */
		if (poll(&r, 1, 10) > 0 && !(r.revents & POLLHUP)) {
			fprintf(stderr, "stapsh-relay: %s: the port opened after the session's first bytes (%d ms)\n",
				label, t * 10);
			return 1;
		}
		usleep(10000);
	}
	return 0;
}

/* Relays between the host and stapsh until either side ends the session;
 * returns the stapsh socket, or -1 once it was closed.  The session is
 * over as soon as stapsh has gone (it says "quit" to the host first), not
 * only when the host disconnects: a host that disconnects and a new one
 * that connects before this loop polls again leave no hang-up to see, and
 * the new session's first bytes would go to a stapsh that is no more (the
 * new host then waited forever for its reply, 1 attach in 3 after a
 * detach in the tests). */
static int relay(int sh)
{
	int connected = 0;

	for (;;) {
		struct pollfd p[2] = { { .fd = port, .events = POLLIN },
				       { .fd = sh, .events = POLLIN } };
		ssize_t n;
		int hung_up = 0;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return sh;
		}
		if (!(p[0].revents & POLLHUP))
			connected = 1;
		if (p[0].revents & POLLIN) {
			n = read(port, buf, sizeof buf);
			hung_up = n == 0;
			if (n > 0 && write_all(sh, buf, n) < 0) {
				close(sh);
				return -1;
			}
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			hung_up = 1;
		}
		if (hung_up) {
			if (connected || !host_connects())
				return sh;
			connected = 1;
			continue;
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			n = read_burst(sh);
			if (n > 0) {
				if (parse_frames(buf, (size_t)n) < 0 || flush_frames() < 0)
					return sh;
			} else if (n == 0 || errno != EINTR) {
				close(sh);
				return -1;
			}
		}
	}
}

/* Stops a session's stapsh and all it started: 3 s to end, then signals.
 * Says on the console (the VM's, kept by the tests) how it went. */
static void finish(pid_t pid, const char *why)
{
	static const int sigs[] = { 0, SIGTERM, SIGKILL };
	static const char *const how[] = { "ended", "ended on SIGTERM", "killed" };
	unsigned i;
	int t;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		if (sigs[i])
			kill(-pid, sigs[i]);
		for (t = 0; t < 300; t++) {
			if (waitpid(pid, NULL, WNOHANG) == pid) {
				fprintf(stderr, "stapsh-relay: %s: %s; stapsh %d %s\n", label, why, (int)pid, how[i]);
				return;
			}
			usleep(10000);
		}
	}
	fprintf(stderr, "stapsh-relay: %s: %s; stapsh %d did not end\n", label, why, (int)pid);
}

int main(int argc, char **argv)
{
	const char *stapsh = argc > 2 ? argv[2] : "/usr/lib/systemtap/stapsh";

	if (argc < 2) {
		fprintf(stderr, "usage: %s PORT-DEVICE [STAPSH]\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	port = open(argv[1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (port < 0) {
		perror(argv[1]);
		return 1;
	}
	read_label(argv[1]);
	{
		const char *slash = strrchr(argv[0], '/');

		snprintf(drain, sizeof drain, "%.*sstaprun-drain",
			 slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
		snprintf(drain_so, sizeof drain_so, "%.*sstapio-drain.so",
			 slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	}
	fprintf(stderr, "stapsh-relay: %s: serving %s\n", label, argv[1]);
	for (;;) {
		ssize_t first;
		int sh = -1;
		pid_t pid;

		/* (the tests wait for this line before a port's next session:
		 * a host that connects while the last session is being ended
		 * can lose its first bytes, and then waits for ever) */
		fprintf(stderr, "stapsh-relay: %s: ready\n", label);
		first = wait_for_host();

		if (first < 0)
			return 1;
		pid = start_stapsh(stapsh, &sh);
		if (pid < 0) {
			perror("stapsh-relay: starting stapsh");
			return 1;
		}
		fprintf(stderr, "stapsh-relay: %s: a session: stapsh %d\n", label, (int)pid);
		memset(&fr, 0, sizeof fr);
		fr.stream = -1;
		if (write_all(sh, buf, first) < 0) {
			close(sh);
			sh = -1;
		}
		if (sh >= 0)
			sh = relay(sh);
		if (sh >= 0)
			close(sh);
		finish(pid, sh >= 0 ? "the host left" : "stapsh left");
	}
}
