/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-orders - locks taken in orders that form cycles, by threads that
 * run one after another, so that nothing ever hangs: the lock-order
 * finder must see each cycle all the same.
 *   abba:    thread AB takes mutex A then B; later, BA takes B then A.
 *   cycle 3: C1 -> C2, C2 -> C3, C3 -> C1, each by its own thread (no two
 *            locks are taken in both orders).
 *   cycle 4: D1 -> D2 -> D3 -> D4 -> D1, likewise.
 *   cycle 9: E1 -> ... -> E9 -> E1, likewise.
 *   rwlock:  thread WM holds rwlock W for writing and takes mutex M; MR
 *            holds M and takes W for reading (a reader waits for a writer).
 *   heap:    mutexes on the heap, which have no symbol: H1 made by
 *            pthread_mutex_init (in make_heap_lk), H2 zeroed by calloc
 *            (no init call); H1H2 takes H1 then H2, H2H1 the reverse.
 *            Their names: where H1 was made, where H2 was taken ("truth
 *            origin LABEL initialised|taken FUNCTION").
 * Truth: "truth mutex|rwlock LABEL ADDR", "truth thread LABEL TID" (a
 * thread's label is its order's, e.g. C1C2), "truth code FUNCTION ADDR",
 * and per order taken (a thread asked for LOCK_B while holding LOCK_A):
 *   truth order THREAD LOCK_A LOCK_B
 * and per cycle of orders that can block (locks in cycle order):
 *   truth cycle LOCK...
 * (lock-orders-benign.c: orders that must not be reported.)  Ends by
 * itself ("truth done").
 */
#include "lock-orders.h"

static struct lk a = { .label = "A" }, b = { .label = "B" };
static struct lk c[3], d[4], e[9];
static struct lk w = { .label = "W", .rw = 1 }, m = { .label = "M" };

/* a cycle of n locks, each order by its own thread */
static void cycle_of(struct lk *l, int n, const char *prefix, char (*names)[4])
{
	char cycle[128] = "cycle";
	int i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "%s%d", prefix, i + 1);
		l[i].label = names[i];
		lk_init(&l[i]);
		strcat(cycle, " ");
		strcat(cycle, names[i]);
	}
	for (i = 0; i < n; i++)
		in_order(&l[i], LOCK, &l[(i + 1) % n], LOCK, 1);
	truth("%s", cycle);
}

int main(int argc, char **argv)
{
	static char cn[3][4], dn[4][4], en[9][4];

	fixture_start("lock-orders", argc, argv);
	truth_code(take);
	truth_code(orders_thread);
	truth_code(make_heap_lk);
	truth_code_end();
	lk_init(&a);
	lk_init(&b);
	lk_init(&w);
	lk_init(&m);
	truth("expect none");
	wait_for_go();

	in_order(&a, LOCK, &b, LOCK, 1);
	in_order(&b, LOCK, &a, LOCK, 1);
	truth("cycle A B");

	cycle_of(c, 3, "C", cn);
	cycle_of(d, 4, "D", dn);
	cycle_of(e, 9, "E", en);

	in_order(&w, WRLOCK, &m, LOCK, 1);
	in_order(&m, LOCK, &w, RDLOCK, 1);
	truth("cycle W M");

	{
		struct lk *h1 = make_heap_lk("H1"), *h2 = zeroed_heap_lk("H2");

		in_order(h1, LOCK, h2, LOCK, 1);
		in_order(h2, LOCK, h1, LOCK, 1);
		truth("cycle H1 H2");
	}

	truth("done");
	return 0;
}
