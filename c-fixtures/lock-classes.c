/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-classes - many locks of one kind taken in inconsistent orders, as
 * a real program's per-object locks are: ACCOUNTS accounts, each with a
 * mutex initialised in new_account(), and the global mutex bank.  Thread
 * GA takes bank, then each account's mutex in turn (under bank); later,
 * thread AG takes each account's mutex, then bank under it.  Every
 * account makes a cycle with bank; as a lock class (the mutexes
 * initialised in new_account()), they are one.  Nothing hangs: the threads
 * run one after the other.
 * Truth: "truth mutex bank ADDR", "truth mutex accountN ADDR", "truth
 * thread GA|AG TID", "truth code FUNCTION ADDR" (new_account: the class's
 * init site), "truth order THREAD LOCK_A LOCK_B" for each order, "truth
 * cycle bank accountN" for each account, "truth accounts N"; "truth done".
 */
#include "fixture.h"

#define ACCOUNTS 50

struct account {
	pthread_mutex_t lock;
	long balance;
};

static pthread_mutex_t bank = PTHREAD_MUTEX_INITIALIZER;
static struct account *accounts[ACCOUNTS];

__attribute__((noinline)) static struct account *new_account(void)
{
	struct account *a = calloc(1, sizeof(*a));

	if (!a) {
		fprintf(stderr, "lock-classes: out of memory\n");
		exit(2);
	}
	CHECK(pthread_mutex_init(&a->lock, NULL));
	__asm__ volatile("" ::: "memory");	/* (no tail call) */
	return a;
}

/* GA: the bank, then each account under it (an audit) */
static void *audit(void *arg)
{
	long sum = 0;
	int i;

	(void)arg;
	truth("thread GA %d", (int)gettid());
	CHECK(pthread_mutex_lock(&bank));
	for (i = 0; i < ACCOUNTS; i++) {
		CHECK(pthread_mutex_lock(&accounts[i]->lock));
		sum += accounts[i]->balance;
		CHECK(pthread_mutex_unlock(&accounts[i]->lock));
	}
	CHECK(pthread_mutex_unlock(&bank));
	return (void *)sum;
}

/* AG: each account, then the bank under it (a deposit reported) */
static void *deposits(void *arg)
{
	int i;

	(void)arg;
	truth("thread AG %d", (int)gettid());
	for (i = 0; i < ACCOUNTS; i++) {
		CHECK(pthread_mutex_lock(&accounts[i]->lock));
		accounts[i]->balance += 10;
		CHECK(pthread_mutex_lock(&bank));
		CHECK(pthread_mutex_unlock(&bank));
		CHECK(pthread_mutex_unlock(&accounts[i]->lock));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i;

	fixture_start("lock-classes", argc, argv);
	truth_code(new_account);
	truth_code(audit);
	truth_code(deposits);
	truth_code_end();
	truth("mutex bank %p", (void *)&bank);
	truth("accounts %d", ACCOUNTS);
	truth("expect none");
	wait_for_go();

	for (i = 0; i < ACCOUNTS; i++) {
		accounts[i] = new_account();
		truth("mutex account%d %p", i, (void *)&accounts[i]->lock);
	}
	CHECK(pthread_create(&t, NULL, audit, NULL));
	CHECK(pthread_join(t, NULL));
	for (i = 0; i < ACCOUNTS; i++)
		truth("order GA bank account%d", i);
	CHECK(pthread_create(&t, NULL, deposits, NULL));
	CHECK(pthread_join(t, NULL));
	for (i = 0; i < ACCOUNTS; i++) {
		truth("order AG account%d bank", i);
		truth("cycle bank account%d", i);
	}
	truth("done");
	return 0;
}
