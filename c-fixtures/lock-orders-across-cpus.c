/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lock-orders-across-cpus - a cycle of two mutexes on the heap, one of
 * them made by pthread_mutex_init on one CPU, both taken in the cycle's
 * orders on another.  A tracer that reads its output CPU by CPU (the BPF
 * runtime reads each CPU's buffer in turn, the lowest first) can then
 * read the orders before the init, though the init came first: the
 * report must still name H1 by where it was made.
 *   The main thread, pinned to the highest CPU it may use, makes H1 by
 *   pthread_mutex_init (in make_heap_lk) and H2 zeroed (no init call);
 *   then, pinned to the lowest, it runs thread H1H2, which takes H1 then
 *   H2, and after it H2H1, which takes H2 then H1.
 * Truth: as lock-orders ("mutex", "thread", "code", "order", "cycle",
 * "origin"), and "cpus HIGH LOW" (the two CPUs; with fewer than two CPUs
 * allowed it takes no lock), then "done"; then it waits until it is
 * killed, so that a tracer whose output was held back finds the process
 * still there while it catches up.
 */
#include "lock-orders.h"

int main(int argc, char **argv)
{
	cpu_set_t allowed;
	int cpu, high = -1, low = -1;

	fixture_start("lock-orders-across-cpus", argc, argv);
	truth_code(take);
	truth_code(orders_thread);
	truth_code(make_heap_lk);
	truth_code_end();
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
		fprintf(stderr, "fixture: sched_getaffinity: %s\n", strerror(errno));
		exit(2);
	}
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &allowed)) {
			if (low < 0)
				low = cpu;
			high = cpu;
		}
	}
	truth("cpus %d %d", high, low);
	truth("expect none");
	wait_for_go();

	if (high != low) {
		struct lk *h1, *h2;

		fixture_pin_to(high);
		h1 = make_heap_lk("H1");
		h2 = zeroed_heap_lk("H2");
		fixture_pin_to(low);	/* (the threads it makes start here too) */
		in_order(h1, LOCK, h2, LOCK, 1);
		in_order(h2, LOCK, h1, LOCK, 1);
		truth("cycle H1 H2");
	}

	truth("done");
	for (;;)
		pause();
}
