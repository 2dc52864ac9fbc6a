/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cxx-locks - the C++ standard library's locks, as a C++ program takes
 * them (libstdc++ calls libc's pthread functions inline, from the
 * program's own member functions).  In namespace bank, two Accounts
 * (globals checking and savings, each with a std::mutex m as its first
 * member), a std::shared_mutex rates_lock and a std::mutex ready_m with a
 * std::condition_variable ready_cv.  One phase at a time:
 *   1. main deposits into checking DEPOSITS times (Account::deposit:
 *      std::lock_guard);
 *   2. main transfers from checking to savings (Account::transfer:
 *      lock_guard on its own m, then unique_lock on the other's m); then
 *      thread T transfers from savings to checking: the two orders of
 *      one pair of locks, never at the same time (lockorder's cycle of 2,
 *      no deadlock);
 *   3. main sets the rate once (set_rate: std::unique_lock of
 *      rates_lock, a write lock), T reads it READS times (read_rate:
 *      std::shared_lock, read locks);
 *   4. thread W waits for ready (await_ready: unique_lock of ready_m and
 *      ready_cv.wait), main sees it asleep in the wait (and ready_m free:
 *      a try_lock), sets ready (set_ready: lock_guard) and notifies:
 *      ready_m is held twice by W (the wait ends the first hold, its
 *      wake-up begins the second: libstdc++'s condition_variable::wait
 *      jumps to pthread_cond_wait, so its caller is await_ready) and
 *      twice by main;
 *   5. main audits both accounts at once (audit: std::scoped_lock of
 *      checking.m and savings.m, taken in std::lock<std::mutex,
 *      std::mutex>, out of line).
 * Built with -DCXX_DEADLOCK it is cxx-deadlock instead: main and T
 * transfer at the same time, each holding its own account's lock when
 * it asks for the other's: main holds checking.m and waits for
 * savings.m, T the reverse (barriers make it certain), forever.
 *
 * Prints "truth mutex|rwlock|cond LABEL ADDR", "truth thread LABEL TID",
 * "truth holds LABEL KIND N" (LABEL's holds of KIND mutex, rw-read or
 * rw-write), "truth symbol LABEL NAME" (the lock's name as the symbol
 * table has it, demangled: the rest of the line), "truth code LABEL
 * ADDR" and "truth code end ADDR" (where each function's code starts, and
 * the program's ends), "truth demangled LABEL NAME" (that function's
 * name, demangled), "truth takes LABEL FUNCTION N" (N of
 * LABEL's holds began in FUNCTION), and, for cxx-deadlock, "truth wait
 * ..." and "truth expect deadlock" (see fixture.h).
 * Expect: cxx-locks no deadlock; cxx-deadlock the cycle of main and T.
 */
#include "fixture.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <thread>

#define DEPOSITS 5
#define READS 3

namespace bank {

class Account {
public:
	std::mutex m;
	long balance = 100;

	void deposit(long amount);
	void transfer(Account &to, long amount);
};

Account checking, savings;
std::shared_mutex rates_lock;
long rate = 1;
std::mutex ready_m;
std::condition_variable ready_cv;
bool is_ready;

#ifdef CXX_DEADLOCK
static pthread_barrier_t holding;
#endif

__attribute__((noinline)) void Account::deposit(long amount)
{
	std::lock_guard<std::mutex> guard(m);

	balance += amount;
}

__attribute__((noinline)) void Account::transfer(Account &to, long amount)
{
	std::lock_guard<std::mutex> mine(m);

#ifdef CXX_DEADLOCK
	pthread_barrier_wait(&holding);	/* both hold their own */
#endif
	std::unique_lock<std::mutex> theirs(to.m);
	balance -= amount;
	to.balance += amount;
}

__attribute__((noinline)) long read_rate()
{
	std::shared_lock<std::shared_mutex> reading(rates_lock);

	return rate;
}

__attribute__((noinline)) void set_rate(long r)
{
	std::unique_lock<std::shared_mutex> writing(rates_lock);

	rate = r;
}

__attribute__((noinline)) void await_ready()
{
	std::unique_lock<std::mutex> lk(ready_m);

	ready_cv.wait(lk, [] { return is_ready; });
}

__attribute__((noinline)) void set_ready()
{
	{
		std::lock_guard<std::mutex> guard(ready_m);

		is_ready = true;
	}
	ready_cv.notify_one();
}

__attribute__((noinline)) void audit()
{
	std::scoped_lock both(checking.m, savings.m);

	if (checking.balance + savings.balance != 200 + DEPOSITS)
		fprintf(stderr, "cxx-locks: the bank lost money\n");
}

} /* namespace bank */

/* the code address of a member function (Itanium C++ ABI: a non-virtual
 * member's pointer holds its address) */
template <typename F> static void *code_of(F f)
{
	void *p;

	static_assert(sizeof f >= sizeof p, "a member function pointer");
	memcpy(&p, &f, sizeof p);
	return p;
}

static void truth_function(const char *label, void *addr, const char *demangled)
{
	truth("code %s %p", label, addr);
	truth("demangled %s %s", label, demangled);
}

int main(int argc, char **argv)
{
#ifdef CXX_DEADLOCK
	fixture_start("cxx-deadlock", argc, argv);
#else
	fixture_start("cxx-locks", argc, argv);
#endif
	truth("mutex checking %p", (void *)&bank::checking.m);
	truth("mutex savings %p", (void *)&bank::savings.m);
	truth("symbol checking bank::checking");
	truth("symbol savings bank::savings");
	truth_function("deposit", code_of(&bank::Account::deposit), "bank::Account::deposit(long)");
	truth_function("transfer", code_of(&bank::Account::transfer),
		       "bank::Account::transfer(bank::Account&, long)");
	truth("thread main %d", (int)gettid());
#ifdef CXX_DEADLOCK
	CHECK(pthread_barrier_init(&bank::holding, NULL, 2));
	pid_t t_tid = 0;
	pthread_barrier_t started;
	CHECK(pthread_barrier_init(&started, NULL, 2));
	std::thread t([&] {
		t_tid = gettid();
		pthread_barrier_wait(&started);
		pthread_barrier_wait(&started);	/* go */
		bank::savings.transfer(bank::checking, 1);	/* never returns */
	});
	pthread_barrier_wait(&started);
	truth("thread T %d", (int)t_tid);
	truth_code_end();
	wait_for_go();
	truth("wait main savings T");
	truth("wait T checking main");
	truth("expect deadlock");
	pthread_barrier_wait(&started);
	bank::checking.transfer(bank::savings, 1);	/* never returns */
	t.join();
	return 1;
#else
	truth("rwlock rates %p", (void *)&bank::rates_lock);
	truth("mutex ready %p", (void *)&bank::ready_m);
	truth("cond ready_cv %p", (void *)&bank::ready_cv);
	truth("symbol rates bank::rates_lock");
	truth("symbol ready bank::ready_m");
	truth_function("read_rate", (void *)&bank::read_rate, "bank::read_rate()");
	truth_function("set_rate", (void *)&bank::set_rate, "bank::set_rate(long)");
	truth_function("await_ready", (void *)&bank::await_ready, "bank::await_ready()");
	truth_function("set_ready", (void *)&bank::set_ready, "bank::set_ready()");
	truth_function("audit", (void *)&bank::audit, "bank::audit()");
	/* scoped_lock's std::lock, which GCC keeps out of line: the two
	 * audit locks are taken there */
	truth_function("lock_both",
		       (void *)static_cast<void (*)(std::mutex &, std::mutex &)>(&std::lock<std::mutex, std::mutex>),
		       "void std::lock<std::mutex, std::mutex>(std::mutex&, std::mutex&)");
	truth_function("main", (void *)&main, "main");
	truth_code_end();
	wait_for_go();

	for (int i = 0; i < DEPOSITS; i++)
		bank::checking.deposit(1);
	bank::checking.transfer(bank::savings, 1);
	pid_t t_tid = 0;
	std::thread t([&] {
		t_tid = gettid();
		bank::savings.transfer(bank::checking, 1);
	});
	t.join();
	truth("thread T %d", (int)t_tid);

	bank::set_rate(2);
	std::thread r([&] {
		for (int i = 0; i < READS; i++)
			bank::read_rate();
	});
	r.join();

	pid_t w_tid = 0;
	std::atomic<int> w_started{0};
	std::thread w([&] {
		w_tid = gettid();
		w_started = 1;
		bank::await_ready();
	});
	while (!w_started)
		sched_yield();
	/* W asleep in its condition wait (ready_m given up) */
	while (!fixture_in_futex(w_tid) || !bank::ready_m.try_lock())
		sched_yield();
	bank::ready_m.unlock();
	bank::set_ready();
	w.join();
	truth("thread W %d", (int)w_tid);

	bank::audit();

	truth("holds checking mutex %d", DEPOSITS + 2 + 1);
	truth("takes checking deposit %d", DEPOSITS);
	truth("takes checking transfer 2");
	truth("takes checking lock_both 1");
	truth("holds savings mutex 3");
	truth("takes savings transfer 2");
	truth("takes savings lock_both 1");
	truth("holds rates rw-write 1");
	truth("takes rates set_rate 1");
	truth("holds rates rw-read %d", READS);
	truth("takes rates read_rate %d", READS);
	truth("holds ready mutex 4");
	truth("takes ready await_ready 2");
	truth("takes ready set_ready 1");
	truth("takes ready main 1");
	truth("done");
	return 0;
#endif
}
