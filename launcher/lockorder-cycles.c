// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockorder-cycles - finds the cycles among the lock orders lockorder.stp
 * prints, as they come
 *
 * Reads the output of scripts/lockorder.stp on stdin and copies it to
 * stdout, except its order lines
 *   lockorder: order PID TID LOCK_A SITE_A LOCK_B SITE_B
 * (thread TID of process PID asked for lock B at SITE_B while it held lock
 * A, taken at SITE_A; a lock is its address, plus its generation << 48,
 * plus how it is taken in its low 3 bits: 0 mutex, 2 rwlock for writing,
 * 3 rwlock for reading, 4 and 5 the same for a writer-preferring
 * nonrecursive rwlock).  Each order is an edge A -> B of the process's
 * lock graph; each new edge is searched for the cycles it closes (every
 * simple path back from B to A), and each cycle of locks not reported yet
 * is reported at once, whole, in the order of its edges:
 *   lockorder: potential deadlock: N locks of pid PID are taken in a cycle:
 *   lockorder:   thread TID holds mutex 0x..., taken at 0x..., and asks for mutex 0x... at 0x...
 *   ... (N lines)
 * Lines "lockorder: made PID MUTEX SITE CLASS" say where a mutex was
 * initialised (before the orders into it); with lockorder.stp's class 1,
 * CLASS is the lock that stands for the mutexes initialised at SITE: it is
 * shown as "mutexes made at SITE".
 * A cycle counts only if each of its steps can block: a step into an
 * rwlock taken for reading, whose next step holds it for reading, cannot
 * (a read lock of glibc's default kinds waits for a writer only), unless
 * the rwlock prefers writers nonrecursively (a reader then waits behind a
 * waiting writer).  At the end of the input, a summary line.
 *
 * With lockorder.stp's stack N, a SITE whose bit 47 is set (above every
 * user-space address; bits 48 and up are ignored) stands for a stack, of
 * number -(SITE - 2^47), given by a line
 *   lockorder: stack 0xID FRAME... [cut]
 * (its frames, the call site first; "cut": the walk stopped at a frame
 * pointer it could not follow): each order of a cycle then shows both
 * its paths, where the held lock was taken and where the next was asked
 * for, as lockdep does:
 *   lockorder:     mutex 0x... was taken at:
 *   lockorder:       0x...           (a frame per line)
 *   lockorder:     mutex 0x... was asked for at:
 *   lockorder:       0x...
 * A cycle whose stacks have not all come yet (on BPF, lockorder.stp
 * prints them at its end) is reported as soon as they have, or at the
 * end of the input.
 *
 * With --origins (pthread-stap, when it names the session's addresses),
 * each cycle's report is preceded by a line per lock
 *   # pthread-stap: lock 0xADDR taken at 0xSITE
 * where SITE is where the lock was taken in the cycle's order from it, for launcher/symbolize to name a lock with no symbol of its own,
 * and for each made line without a class, before it is acted on,
 *   # pthread-stap: lock 0xMUTEX initialised at 0xSITE
 * (which symbolize prefers).
 *
 * Usage: stap lockorder.stp ... | lockorder-cycles [--origins]
 * (pthread-stap runs it)
 * It ignores SIGINT and SIGTERM (a Ctrl-C is for stap) and ends at the end
 * of its input.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_STEPS 1000000	/* per new edge: a dense graph ends early */

struct edge {
	int to;			/* node index */
	uint64_t a, b;		/* the locks, with their kind bits */
	uint64_t site_a, site_b;
	long tid;
};

struct node {
	long pid;
	uint64_t lock;		/* without kind bits */
	uint64_t class_site;	/* a class: where its mutexes are initialised */
	struct edge *out;
	int nout, cap;
	int on_path;
};

static struct node *nodes;
static int nnodes, cap_nodes;
/* open-addressing index of nodes by (pid, lock) */
static int *node_index;
static size_t index_size;

/* the cycles reported: their locks, from the lowest, in cycle order */
static char **reported;
static size_t nreported, cap_reported;

/* the stacks: their number's magnitude, frames, and whether cut */
struct stack {
	uint64_t key;
	uint64_t *pc;
	int n, cut;
};
static struct stack *stacks;
static size_t nstacks, cap_stacks;

/* the cycles found whose stacks have not all come: their orders */
struct order {
	long pid, tid;
	uint64_t a, b, site_a, site_b;
};
struct pending {
	struct order *o;
	int n;
};
static struct pending *pending;
static size_t npending, cap_pending;

static long orders, cycles, searches_cut, classes, delayed;
static int origins;	/* --origins */
static int ended;	/* lockorder.stp printed its end summary */

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fputs("lockorder-cycles: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

#define LOW48(v) ((v) & ((1ULL << 48) - 1))
#define STACK_BIT (1ULL << 47)

/* the stack a site stands for, or NULL (a call site, or a stack not
 * come yet) */
static struct stack *stack_of(uint64_t site)
{
	size_t i;

	site = LOW48(site);
	if (!(site & STACK_BIT))
		return NULL;
	for (i = 0; i < nstacks; i++)
		if (stacks[i].key == (site & ~STACK_BIT))
			return &stacks[i];
	return NULL;
}

/* a site as a call site: a stack's first frame (0 while it has not come) */
static uint64_t call_site(uint64_t site)
{
	struct stack *st;

	site = LOW48(site);
	if (!(site & STACK_BIT))
		return site;
	st = stack_of(site);
	return st && st->n ? st->pc[0] : 0;
}

/* "lockorder: stack 0xID FRAME... [cut]" */
static void add_stack(const char *line)
{
	const char *p = line + strlen("lockorder: stack ");
	char *end;
	uint64_t id = strtoull(p, &end, 16);
	struct stack st = { .key = -id, .pc = NULL, .n = 0, .cut = 0 };

	if (end == p || stack_of(st.key | STACK_BIT))
		return;
	for (p = end; *p == ' '; p = end) {
		uint64_t a = strtoull(p + 1, &end, 16);

		if (end == p + 1) {
			st.cut = strncmp(p + 1, "cut", 3) == 0;
			break;
		}
		st.pc = xrealloc(st.pc, (st.n + 1) * sizeof(*st.pc));
		st.pc[st.n++] = a;
	}
	if (nstacks == cap_stacks) {
		cap_stacks = cap_stacks ? cap_stacks * 2 : 64;
		stacks = xrealloc(stacks, cap_stacks * sizeof(*stacks));
	}
	stacks[nstacks++] = st;
}

static size_t hash(long pid, uint64_t lock)
{
	uint64_t h = lock * 0x9e3779b97f4a7c15ULL ^ (uint64_t)pid * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h ^ (h >> 29));
}

static void index_insert(int i)
{
	size_t k = hash(nodes[i].pid, nodes[i].lock) & (index_size - 1);

	while (node_index[k] >= 0)
		k = (k + 1) & (index_size - 1);
	node_index[k] = i;
}

static int node_of(long pid, uint64_t lock)
{
	size_t k;
	int i;

	if (index_size) {
		for (k = hash(pid, lock) & (index_size - 1); (i = node_index[k]) >= 0;
		     k = (k + 1) & (index_size - 1))
			if (nodes[i].pid == pid && nodes[i].lock == lock)
				return i;
	}
	if (nnodes == cap_nodes) {
		cap_nodes = cap_nodes ? cap_nodes * 2 : 256;
		nodes = xrealloc(nodes, cap_nodes * sizeof(*nodes));
	}
	i = nnodes++;
	memset(&nodes[i], 0, sizeof(nodes[i]));
	nodes[i].pid = pid;
	nodes[i].lock = lock;
	if ((size_t)nnodes * 2 > index_size) {
		size_t j;

		index_size = index_size ? index_size * 2 : 1024;
		node_index = xrealloc(node_index, index_size * sizeof(*node_index));
		for (j = 0; j < index_size; j++)
			node_index[j] = -1;
		for (j = 0; j < (size_t)nnodes; j++)
			index_insert((int)j);
	} else {
		index_insert(i);
	}
	return i;
}

/* Can a thread asking for a lock as 'take' block while another holds it
 * as 'hold'?  (kind bits: 0 mutex, 2/4 write, 3/5 read; 5 and 4 are a
 * writer-preferring nonrecursive rwlock's) */
static int blocks(unsigned take, unsigned hold)
{
	return !(take == 3 && hold == 3);
}

static const char *how(uint64_t lock)
{
	return (lock & 7) ? "rwlock" : "mutex";
}

static const char *mode(uint64_t lock)
{
	switch (lock & 7) {
	case 2: case 4: return " for writing";
	case 3: case 5: return " for reading";
	default: return "";
	}
}

/* "mutex 0x..." (with its generation when the address held another lock
 * before: lockorder.stp counts a lock's initialisations and destructions),
 * or for a class "mutexes made at 0x..." */
static void print_lock(long pid, uint64_t lock)
{
	uint64_t gen = lock >> 48;
	uint64_t addr = (lock & ((1ULL << 48) - 1)) & ~7ULL;
	int i = node_of(pid, (lock >> 3) << 3);	/* (may move nodes) */
	struct node *n = &nodes[i];

	if (n->class_site) {
		printf("mutexes made at 0x%" PRIx64, n->class_site);
		return;
	}
	printf("%s 0x%" PRIx64, how(lock), addr);
	if (gen >= 2)
		printf(" [generation %" PRIu64 "]", gen);
}

static int seen_cycle(const char *key)
{
	size_t i;

	for (i = 0; i < nreported; i++)
		if (strcmp(reported[i], key) == 0)
			return 1;
	if (nreported == cap_reported) {
		cap_reported = cap_reported ? cap_reported * 2 : 64;
		reported = xrealloc(reported, cap_reported * sizeof(*reported));
	}
	reported[nreported++] = strdup(key);
	return 0;
}

/* Both paths of an order (with stack N): where lock a was taken, where b
 * was asked for */
static void print_path(long pid, uint64_t lock, const char *what, uint64_t site)
{
	struct stack *st = stack_of(site);
	int i;

	if (!(LOW48(site) & STACK_BIT))
		return;
	printf("lockorder:     ");
	print_lock(pid, lock);
	printf("%s was %s at:\n", mode(lock), what);
	if (!st) {
		printf("lockorder:       (its stack did not come)\n");
		return;
	}
	for (i = 0; i < st->n; i++)
		printf("lockorder:       0x%" PRIx64 "\n", st->pc[i]);
	if (st->cut)
		printf("lockorder:       (cut: a frame without a frame pointer)\n");
}

/* a cycle's report, its orders in cycle order */
static void print_cycle(const struct order *o, int n)
{
	int i;

	if (origins)
		for (i = 0; i < n; i++) {
			struct node *l = &nodes[node_of(o[i].pid, (o[i].a >> 3) << 3)];

			if (!l->class_site && call_site(o[i].site_a))
				printf("# pthread-stap: lock 0x%" PRIx64 " taken at 0x%" PRIx64 "\n",
				       (uint64_t)((o[i].a & ((1ULL << 48) - 1)) & ~7ULL), call_site(o[i].site_a));
		}
	printf("lockorder: potential deadlock: %d locks of pid %ld are taken in a cycle:\n", n, o[0].pid);
	for (i = 0; i < n; i++) {
		printf("lockorder:   thread %ld holds ", o[i].tid);
		print_lock(o[i].pid, o[i].a);
		printf("%s, taken at 0x%" PRIx64 ", and asks for ", mode(o[i].a), call_site(o[i].site_a));
		print_lock(o[i].pid, o[i].b);
		printf("%s at 0x%" PRIx64 "\n", mode(o[i].b), call_site(o[i].site_b));
		print_path(o[i].pid, o[i].a, "taken", o[i].site_a);
		print_path(o[i].pid, o[i].b, "asked for", o[i].site_b);
	}
	fflush(stdout);
}

/* whether every stack the orders stand on has come */
static int stacks_came(const struct order *o, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (((LOW48(o[i].site_a) & STACK_BIT) && !stack_of(o[i].site_a)) ||
		    ((LOW48(o[i].site_b) & STACK_BIT) && !stack_of(o[i].site_b)))
			return 0;
	return 1;
}

/* the cycles kept for their stacks, reported once they have come (all of
 * them at the end of the input) */
static void report_pending(int at_end)
{
	size_t i, kept = 0;

	for (i = 0; i < npending; i++) {
		if (at_end || stacks_came(pending[i].o, pending[i].n)) {
			print_cycle(pending[i].o, pending[i].n);
			free(pending[i].o);
		} else {
			pending[kept++] = pending[i];
		}
	}
	npending = kept;
}

/* the cycle: path[0] is the new edge, path[1..n-1] lead back to its start */
static void report(struct edge **path, int n)
{
	char *key = NULL;
	size_t len = 0;
	FILE *k = open_memstream(&key, &len);
	struct order *o;
	int first = 0, i;

	if (!k) {
		fputs("lockorder-cycles: out of memory\n", stderr);
		exit(1);
	}
	/* the same cycle closed by another edge: the same locks, rotated */
	for (i = 1; i < n; i++)
		if (path[i]->a >> 3 < path[first]->a >> 3)
			first = i;
	for (i = 0; i < n; i++)
		fprintf(k, "%" PRIx64 " ", (path[(first + i) % n]->a >> 3) << 3);
	fclose(k);
	if (seen_cycle(key)) {
		free(key);
		return;
	}
	free(key);
	cycles++;
	o = xrealloc(NULL, n * sizeof(*o));
	for (i = 0; i < n; i++) {
		o[i].pid = nodes[path[i]->to].pid;
		o[i].tid = path[i]->tid;
		o[i].a = path[i]->a;
		o[i].b = path[i]->b;
		o[i].site_a = path[i]->site_a;
		o[i].site_b = path[i]->site_b;
	}
	if (stacks_came(o, n)) {
		print_cycle(o, n);
		free(o);
		return;
	}
	if (npending == cap_pending) {
		cap_pending = cap_pending ? cap_pending * 2 : 16;
		pending = xrealloc(pending, cap_pending * sizeof(*pending));
	}
	pending[npending].o = o;
	pending[npending].n = n;
	npending++;
	delayed++;
}

static struct edge **path;
static int path_cap;
static long steps;

/* Paths from node x (entered by path[depth - 1]) back to node 'home', the
 * new edge's start */
static void search(int x, int depth, int home)
{
	struct node *nx = &nodes[x];
	int i;

	if (++steps > SEARCH_STEPS)
		return;
	if (depth + 1 > path_cap) {
		path_cap = path_cap ? path_cap * 2 : 64;
		path = xrealloc(path, path_cap * sizeof(*path));
	}
	nx->on_path = 1;
	for (i = 0; i < nx->nout; i++) {
		struct edge *f = &nx->out[i];

		if (!blocks(path[depth - 1]->b & 7, f->a & 7))
			continue;
		path[depth] = f;
		if (f->to == home) {
			if (blocks(f->b & 7, path[0]->a & 7))
				report(path, depth + 1);
		} else if (!nodes[f->to].on_path) {
			search(f->to, depth + 1, home);
		}
	}
	nx->on_path = 0;
}

static void add_order(long pid, long tid, uint64_t a, uint64_t site_a, uint64_t b, uint64_t site_b)
{
	int na = node_of(pid, (a >> 3) << 3), nb = node_of(pid, (b >> 3) << 3);
	struct node *n = &nodes[na];
	struct edge *e;

	orders++;
	if (n->nout == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 4;
		n->out = xrealloc(n->out, n->cap * sizeof(*n->out));
	}
	e = &n->out[n->nout++];
	e->to = nb;
	e->a = a;
	e->b = b;
	e->site_a = site_a;
	e->site_b = site_b;
	e->tid = tid;
	if (na == nb)
		return;
	if (!path_cap) {
		path_cap = 64;
		path = xrealloc(path, path_cap * sizeof(*path));
	}
	path[0] = e;
	steps = 0;
	nodes[na].on_path = 1;
	search(nb, 1, na);
	nodes[na].on_path = 0;
	if (steps > SEARCH_STEPS)
		searches_cut++;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	long pid, tid;
	uint64_t a, sa, b, sb;

	if (argc == 2 && strcmp(argv[1], "--origins") == 0) {
		origins = 1;
	} else if (argc != 1) {
		fputs("usage: lockorder-cycles [--origins]\n", stderr);
		return 2;
	}

	/* a Ctrl-C is for stap: the report after it must still pass */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (getline(&line, &cap, stdin) > 0) {
		if (sscanf(line, "lockorder: order %ld %ld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
			   &pid, &tid, &a, &sa, &b, &sb) == 6) {
			add_order(pid, tid, a, sa, b, sb);
			continue;
		}
		if (sscanf(line, "lockorder: made %ld %" SCNx64 " %" SCNx64 " %" SCNx64, &pid, &a, &sa, &b) == 4) {
			if (b) {
				int i = node_of(pid, (b >> 3) << 3);	/* (may move nodes) */

				/* (said again before each handler's new orders into it) */
				if (!nodes[i].class_site)
					classes++;
				nodes[i].class_site = sa;
			} else if (origins) {
				printf("# pthread-stap: lock 0x%" PRIx64 " initialised at 0x%" PRIx64 "\n", a, sa);
			}
			continue;
		}
		if (strncmp(line, "lockorder: stack ", 17) == 0) {
			add_stack(line);
			if (npending)
				report_pending(0);
			continue;
		}
		if (strncmp(line, "lockorder: watched ", 19) == 0)
			ended = 1;
		fputs(line, stdout);
	}
	report_pending(1);
	if (!ended)
		;	/* the session never began, or was cut off: no summary */
	else if (orders)
		printf("lockorder: %ld potential deadlock%s (cycles of lock orders, each reported as its last order was first taken%s) among %d locks%s and %ld orders\n",
		       cycles, cycles == 1 ? "" : "s",
		       delayed ? ", or once the stacks of its call paths came" : "",
		       nnodes, classes ? " (lock classes among them)" : "", orders);
	else
		printf("lockorder: 0 potential deadlocks: no lock was taken while another was held\n");
	if (searches_cut)
		printf("lockorder: WARNING: the search for cycles was cut short %ld times (more than %d steps): some cycles may not be reported\n",
		       searches_cut, SEARCH_STEPS);
	free(line);
	return 0;
}
