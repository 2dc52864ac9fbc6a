/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stapsh-proxy - runs on the host, between `stap --remote` and one of the
 * test VM's stapsh ports: hands stap what the VM's stapsh sends one message
 * at a time, each only once stap has read the last.
 *
 *     stapsh-proxy LISTEN-SOCKET VM-SOCKET
 *
 * Why: stap 4.8's client reads stapsh through a stdio FILE and handles one
 * message ("data STREAM N\n" and its N bytes, or a line) per poll()
 * wake-up.  Two messages that reach it in one read(): the second waits in
 * the FILE buffer, unseen, until more bytes come: a session's line stays
 * unshown while its program waits (testsuite/pthread.session/
 * a-late-reader-gets-every-remote-line.exp).  Spacing messages in time in
 * the VM (lkm-vm/stapsh-relay.c once did, 30 ms) is not enough on a
 * loaded host: here stap's own socket says when it has read everything
 * (SIOCOUTQ: bytes sent to it and not yet read), and the next message
 * goes only then.
 *
 * One session at a time, as the VM's port serves them: each stap that
 * connects to LISTEN-SOCKET gets a connection of its own to VM-SOCKET
 * (qemu's end of the port), closed when stap leaves, and stap's
 * connection is closed when the VM's side ends (bytes from stap to the VM
 * pass unchanged).  Runs until killed (lkm-vm/stop).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char in[1 << 17];        /* from the VM, not yet handed to stap */
static size_t in_len;
static size_t msg_left;         /* bytes of the message being handed over */

static int unix_address(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path) {
		fprintf(stderr, "stapsh-proxy: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

/* The length of the message at the start of in[] (a line, or a data
 * header line and its payload), 0 while its header line is incomplete.
 * A message may be longer than what has come so far. */
static size_t message_length(void)
{
	const char *nl = memchr(in, '\n', in_len);
	size_t head;

	if (!nl)
		return in_len == sizeof in ? in_len : 0;
	head = (size_t)(nl - in) + 1;
	if (head > 5 && memcmp(in, "data ", 5) == 0) {
		char line[64], stream[16];
		size_t size;

		if (head < sizeof line) {
			memcpy(line, in, head);
			line[head] = 0;
			if (sscanf(line, "data %15s %zu", stream, &size) == 2)
				return head + size;
		}
	}
	return head;
}

/* Bytes sent to stap that it has not read yet (0 if unknown). */
static int unread_by(int fd)
{
	int n = 0;

	if (ioctl(fd, SIOCOUTQ, &n) < 0)
		return 0;
	return n;
}

/* Hands stap what it may have now: the rest of the current message, or,
 * once stap has read all before, the next one.  -1: stap is gone. */
static int hand_over(int client)
{
	while (in_len > 0) {
		size_t take;
		ssize_t n;

		if (msg_left == 0) {
			if (unread_by(client) > 0)
				return 0;
			msg_left = message_length();
			if (msg_left == 0)
				return 0;
		}
		take = msg_left < in_len ? msg_left : in_len;
		n = write(client, in, take);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		memmove(in, in + n, in_len - (size_t)n);
		in_len -= (size_t)n;
		msg_left -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One session: until stap leaves or the VM's side ends. */
static void serve(int client, const struct sockaddr_un *vm_addr)
{
	int vm = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int vm_open = 1;

	in_len = 0;
	msg_left = 0;
	if (vm < 0 || connect(vm, (const struct sockaddr *)vm_addr, sizeof *vm_addr) < 0) {
		perror("stapsh-proxy: connecting to the VM");
		if (vm >= 0)
			close(vm);
		return;
	}
	fcntl(client, F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd p[2] = { { .fd = client, .events = POLLIN },
				       { .fd = vm, .events = 0 } };
		/* (stap's unread bytes give no event when read: look again
		 * in a millisecond while a message waits for them) */
		int waiting = in_len > 0;
		ssize_t n;

		if (!vm_open)
			p[1].fd = -1;
		else if (in_len < sizeof in)
			p[1].events = POLLIN;
		if (waiting && msg_left > 0)
			p[0].events |= POLLOUT;
		if (!vm_open && in_len == 0)
			break;
		if (poll(p, 2, waiting ? 1 : -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[65536];

			n = read(client, buf, sizeof buf);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;          /* stap left */
			if (n > 0 && write_all(vm, buf, (size_t)n) < 0)
				break;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(vm, in + in_len, sizeof in - in_len);
			if (n > 0)
				in_len += (size_t)n;
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				vm_open = 0;
		}
		if (hand_over(client) < 0)
			break;
	}
	close(vm);
	close(client);
}

int main(int argc, char **argv)
{
	struct sockaddr_un listen_addr, vm_addr;
	int l;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LISTEN-SOCKET VM-SOCKET\n", argv[0]);
		return 2;
	}
	if (unix_address(&listen_addr, argv[1]) < 0 || unix_address(&vm_addr, argv[2]) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(argv[1]);
	if (l < 0 || bind(l, (const struct sockaddr *)&listen_addr, sizeof listen_addr) < 0 ||
	    listen(l, 8) < 0) {
		fprintf(stderr, "stapsh-proxy: cannot listen on %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (;;) {
		int client = accept4(l, NULL, NULL, SOCK_CLOEXEC);

		if (client < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("stapsh-proxy: accept");
			return 1;
		}
		serve(client, &vm_addr);
	}
}
