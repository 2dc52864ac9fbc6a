/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-handoffs - locks passed between threads in an order the fixture
 * fixes, so that every acquisition and handoff (an acquisition by another
 * thread than the lock's last taker) is known, for handoffs.stp.  Threads
 * A and B take turns through two semaphores (futexes, no pthread lock):
 *   mutex ping_lock (global): A, B, A, B... ROUNDS times each: every
 *     acquisition but the first is a handoff (A to B ROUNDS times, B to A
 *     ROUNDS - 1).
 *   mutex batch_lock (global): A takes it BATCH times in a row, then B
 *     BATCH times (by trylock), then A BATCH times: two handoffs.
 *   rwlock table_lock (global): A write-locks it, B read-locks it, in
 *     turn TABLE times each: every write after the first is a handoff from
 *     B, every read one from A.
 *   mutex solo_lock (global): main takes it SOLO times; never a handoff.
 * Truth: "truth mutex|rwlock LABEL ADDR", "truth thread LABEL TID", per
 * lock and kind (mutex, rw-read, rw-write):
 *   truth handoffs LABEL KIND ACQUIRED HANDOFFS THREADS
 *   truth passed LABEL KIND FROM TO COUNT       (thread labels)
 *   truth taken LABEL KIND THREAD COUNT
 * and "truth expect none", "truth done".
 */
#include "fixture.h"
#include <semaphore.h>
#include <sys/syscall.h>

#define ROUNDS 100
#define BATCH 40
#define TABLE 20
#define SOLO 30

pthread_mutex_t ping_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t solo_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t turn_a, turn_b;

static void take_turn(sem_t *mine)
{
	while (sem_wait(mine) != 0)
		if (errno != EINTR) {
			perror("fixture: sem_wait");
			exit(2);
		}
}

static void give_turn(sem_t *theirs)
{
	if (sem_post(theirs) != 0) {
		perror("fixture: sem_post");
		exit(2);
	}
}

static void take_and_release(pthread_mutex_t *m, int times, int by_trylock)
{
	int i;

	for (i = 0; i < times; i++) {
		CHECK(by_trylock ? pthread_mutex_trylock(m) : pthread_mutex_lock(m));
		CHECK(pthread_mutex_unlock(m));
	}
}

static void *thread_a(void *arg)
{
	int i;

	(void)arg;
	truth("thread A %ld", (long)syscall(SYS_gettid));
	for (i = 0; i < ROUNDS; i++) {
		take_turn(&turn_a);
		take_and_release(&ping_lock, 1, 0);
		give_turn(&turn_b);
	}
	take_turn(&turn_a);
	take_and_release(&batch_lock, BATCH, 0);
	give_turn(&turn_b);
	take_turn(&turn_a);
	take_and_release(&batch_lock, BATCH, 0);
	for (i = 0; i < TABLE; i++) {
		CHECK(pthread_rwlock_wrlock(&table_lock));
		CHECK(pthread_rwlock_unlock(&table_lock));
		give_turn(&turn_b);
		take_turn(&turn_a);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	int i;

	(void)arg;
	truth("thread B %ld", (long)syscall(SYS_gettid));
	for (i = 0; i < ROUNDS; i++) {
		take_turn(&turn_b);
		take_and_release(&ping_lock, 1, 0);
		give_turn(&turn_a);
	}
	take_turn(&turn_b);
	take_and_release(&batch_lock, BATCH, 1);
	give_turn(&turn_a);
	for (i = 0; i < TABLE; i++) {
		take_turn(&turn_b);
		CHECK(pthread_rwlock_rdlock(&table_lock));
		CHECK(pthread_rwlock_unlock(&table_lock));
		give_turn(&turn_a);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	fixture_start("lock-handoffs", argc, argv);
	if (sem_init(&turn_a, 0, 0) != 0 || sem_init(&turn_b, 0, 0) != 0) {
		perror("fixture: sem_init");
		return 2;
	}
	truth("mutex ping_lock %p", (void *)&ping_lock);
	truth("mutex batch_lock %p", (void *)&batch_lock);
	truth("mutex solo_lock %p", (void *)&solo_lock);
	truth("rwlock table_lock %p", (void *)&table_lock);
	truth("thread main %ld", (long)getpid());
	truth("handoffs ping_lock mutex %d %d 2", 2 * ROUNDS, 2 * ROUNDS - 1);
	truth("passed ping_lock mutex A B %d", ROUNDS);
	truth("passed ping_lock mutex B A %d", ROUNDS - 1);
	truth("taken ping_lock mutex A %d", ROUNDS);
	truth("taken ping_lock mutex B %d", ROUNDS);
	truth("handoffs batch_lock mutex %d 2 2", 3 * BATCH);
	truth("passed batch_lock mutex A B 1");
	truth("passed batch_lock mutex B A 1");
	truth("taken batch_lock mutex A %d", 2 * BATCH);
	truth("taken batch_lock mutex B %d", BATCH);
	truth("handoffs table_lock rw-write %d %d 1", TABLE, TABLE - 1);
	truth("passed table_lock rw-write B A %d", TABLE - 1);
	truth("taken table_lock rw-write A %d", TABLE);
	truth("handoffs table_lock rw-read %d %d 1", TABLE, TABLE);
	truth("passed table_lock rw-read A B %d", TABLE);
	truth("taken table_lock rw-read B %d", TABLE);
	truth("handoffs solo_lock mutex %d 0 1", SOLO);
	truth("taken solo_lock mutex main %d", SOLO);
	truth("expect none");
	wait_for_go();
	CHECK(pthread_create(&a, NULL, thread_a, NULL));
	CHECK(pthread_create(&b, NULL, thread_b, NULL));
	take_and_release(&solo_lock, SOLO, 0);
	give_turn(&turn_a);
	CHECK(pthread_join(a, NULL));
	CHECK(pthread_join(b, NULL));
	truth("done");
	return 0;
}
