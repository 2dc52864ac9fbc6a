/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostile - a program that tries to take over the terminal, the JSON and
 * the parsers of whoever traces it, through the names it controls.
 *
 * Its locks and its locking function carry symbol names with control
 * characters, quotes, backslashes and bytes that are not UTF-8 (the build
 * renames them with objcopy, see the Makefile; the names below are the
 * ones in the source):
 *   hostile_esc        "evil" ESC[2J ESC[31m "RED" ESC[0m  (clears the
 *                      screen, turns it red)
 *   hostile_quote      quote"},"injected":"1                (ends a JSON
 *                      string, adds a field)
 *   hostile_backslash  back\slash
 *   hostile_bytes      "bytes" 0xff 0xfe                    (not UTF-8)
 *   hostile_take       "take" ESC "]0;owned" BEL            (sets a
 *                      terminal's title), the function that takes them
 * Its second thread W names itself "w" ESC "[31mred" (prctl).  A mutex,
 * mapped_lock, lies in a file it maps whose name holds a newline and ends
 * in " (deleted)" (and which it deletes).
 *
 * By default, one step after another (each a handshake, no timing):
 *   1. main takes esc, then quote under it, and gives both up; then W
 *      takes quote, then esc under it: a lock-order cycle of two locks;
 *   2. W takes bytes; main asks for it and waits until W, having seen
 *      main asleep on it, gives it up: one contended acquisition;
 *   3. main takes backslash BACKSLASH times and mapped_lock MAPPED times;
 * and exits.  Every acquisition is in hostile_take.  Truth: "truth mutex
 * LABEL ADDR" (LABEL: esc, quote, backslash, bytes, mapped), "truth
 * thread main|W TID", "truth holds LABEL N" (acquisitions of each),
 * "truth locks N" (pthread_mutex_lock calls in all),
 * "truth waits bytes mutex 1 2 W" (as fixture.h says), "truth done".
 *
 * Built as hostile-hang (HOSTILE_HANG defined): a deadlock among the named
 * locks (main holds quote and asks for esc; W holds esc and asks for
 * quote), and a third thread F waits for fake_lock, a mutex whose owner
 * field names thread 999999, which is no thread of this process: truth
 * "wait main esc W", "wait W quote main", "thread F TID", "mutex fake
 * ADDR", "fake owner 999999", "blocked main W F", "expect deadlock" (the
 * harness waits until the three sleep).
 */
#include "fixture.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define BACKSLASH 5
#define MAPPED 3
#define FAKE_OWNER 999999

pthread_mutex_t hostile_esc = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hostile_quote = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hostile_backslash = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hostile_bytes = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *mapped_lock;
static pthread_barrier_t step;
static pid_t main_tid, w_tid;
#ifdef HOSTILE_HANG
static const int hang = 1;
#else
static const int hang = 0;
#endif

/* Every acquisition of the program: one call site, a hostile name */
__attribute__((noinline)) void hostile_take(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_lock(m));
}

static void give(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_unlock(m));
}

static void until_asleep_on(pid_t tid, const void *lock)
{
	const struct timespec tick = { 0, 1000 * 1000 };

	while (!fixture_sleeps_on(tid, lock))
		nanosleep(&tick, NULL);
}

static void *w_body(void *arg)
{
	(void)arg;
	w_tid = gettid();
	prctl(PR_SET_NAME, "w\033[31mred", 0, 0, 0);
	if (hang) {
		hostile_take(&hostile_esc);
		pthread_barrier_wait(&step);
		until_asleep_on(main_tid, &hostile_esc);
		hostile_take(&hostile_quote);	/* never returns */
		return NULL;
	}
	pthread_barrier_wait(&step);	/* 1: main's order is done */
	hostile_take(&hostile_quote);
	hostile_take(&hostile_esc);
	give(&hostile_esc);
	give(&hostile_quote);
	hostile_take(&hostile_bytes);	/* 2 */
	pthread_barrier_wait(&step);
	until_asleep_on(main_tid, &hostile_bytes);
	give(&hostile_bytes);
	return NULL;
}

static volatile pid_t f_tid;

static void *f_body(void *arg)
{
	(void)arg;
	f_tid = gettid();
	hostile_take(&fake_lock);	/* never returns */
	return NULL;
}

/* mapped_lock: in a file whose name has a newline and ends " (deleted)" */
static void map_lock_file(void)
{
	char dir[] = "/tmp/hostile.XXXXXX", path[128];
	pthread_mutexattr_t attr;
	int fd;

	if (!mkdtemp(dir)) {
		perror("fixture: mkdtemp");
		exit(2);
	}
	snprintf(path, sizeof path, "%s/map\nfile (deleted)", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror("fixture: the mapped file");
		exit(2);
	}
	mapped_lock = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mapped_lock == MAP_FAILED) {
		perror("fixture: mmap");
		exit(2);
	}
	close(fd);
	unlink(path);
	rmdir(dir);
	CHECK(pthread_mutexattr_init(&attr));
	CHECK(pthread_mutex_init(mapped_lock, &attr));
}

int main(int argc, char **argv)
{
	pthread_t w, f;
	int i;

	fixture_start(hang ? "hostile-hang" : "hostile", argc, argv);
	main_tid = gettid();
	map_lock_file();
	truth("mutex esc %p", (void *)&hostile_esc);
	truth("mutex quote %p", (void *)&hostile_quote);
	truth("mutex backslash %p", (void *)&hostile_backslash);
	truth("mutex bytes %p", (void *)&hostile_bytes);
	truth("mutex mapped %p", (void *)mapped_lock);
	truth("thread main %d", (int)main_tid);
	CHECK(pthread_barrier_init(&step, NULL, 2));
	if (hang)
		wait_for_go();
	CHECK(pthread_create(&w, NULL, w_body, NULL));
	if (hang) {
		/* the fake owner: the lock word says "locked, with waiters" */
		fake_lock.__data.__lock = 2;
		fake_lock.__data.__owner = FAKE_OWNER;
		truth("mutex fake %p", (void *)&fake_lock);
		truth("fake owner %d", FAKE_OWNER);
		CHECK(pthread_create(&f, NULL, f_body, NULL));
		while (!f_tid)
			sched_yield();
		truth("thread F %d", (int)f_tid);
		pthread_barrier_wait(&step);	/* W holds esc */
		truth("thread W %d", (int)w_tid);
		truth("wait main esc W");
		truth("wait W quote main");
		truth("blocked main W F");
		hostile_take(&hostile_quote);
		/* (the harness then waits until all three sleep in futex) */
		truth("expect deadlock");
		hostile_take(&hostile_esc);	/* never returns */
		return 0;
	}
	wait_for_go();
	hostile_take(&hostile_esc);	/* 1 */
	hostile_take(&hostile_quote);
	give(&hostile_quote);
	give(&hostile_esc);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);	/* 2: W holds bytes */
	hostile_take(&hostile_bytes);
	give(&hostile_bytes);
	CHECK(pthread_join(w, NULL));
	for (i = 0; i < BACKSLASH; i++) {	/* 3 */
		hostile_take(&hostile_backslash);
		give(&hostile_backslash);
	}
	for (i = 0; i < MAPPED; i++) {
		hostile_take(mapped_lock);
		give(mapped_lock);
	}
	truth("thread W %d", (int)w_tid);
	truth("holds esc 2");
	truth("holds quote 2");
	truth("holds bytes 2");
	truth("holds backslash %d", BACKSLASH);
	truth("holds mapped %d", MAPPED);
	truth("locks %d", 2 + 2 + 2 + BACKSLASH + MAPPED);
	truth("waits bytes mutex 1 2 W");
	truth("done");
	return 0;
}
