/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-churn - threads come and go, as in a program that starts a thread
 * per task: CHURN threads, one after another, each take mutex A then B;
 * then thread BA takes B then A.  A tracer that kept something per thread
 * it ever saw would fill its maps long before the end; one that keeps only
 * what threads hold sees the one cycle {A, B} with room to spare.
 * Truth: "truth mutex A|B ADDR", "truth thread BA TID", "truth churn N",
 * "truth cycle A B", "truth done".
 */
#include "lock-orders.h"

#define CHURN 300

static struct lk a = { .label = "A" }, b = { .label = "B" };

static void *ab_thread(void *arg)
{
	(void)arg;
	take(&a, LOCK);
	take(&b, LOCK);
	let_go(&b);
	let_go(&a);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i;

	fixture_start("lock-churn", argc, argv);
	lk_init(&a);
	lk_init(&b);
	truth("churn %d", CHURN);
	truth("expect none");
	wait_for_go();
	for (i = 0; i < CHURN; i++) {
		CHECK(pthread_create(&t, NULL, ab_thread, NULL));
		CHECK(pthread_join(t, NULL));
	}
	in_order(&b, LOCK, &a, LOCK, 1);
	truth("cycle A B");
	truth("done");
	return 0;
}
