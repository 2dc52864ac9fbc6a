// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * launcher/pprof.c - writes a pprof profile (profile.proto, gzipped) from
 * the lines launcher/profile gives it on standard input
 *
 *   pprof --out FILE < LINES
 *
 * LINES are tab-separated fields, a record a line (launcher/profile makes
 * them from a report script's "profile 1" lines; no field holds a tab or
 * a newline: the names in them are made safe to print, control
 * characters escaped):
 *   type NAME UNIT                 a sample value's type (in order: the
 *                                  first is the period type, period 1)
 *   time START_NS DURATION_NS      when the session began, how long
 *   comment TEXT
 *   mapping START LIMIT OFFSET PATH BUILD_ID   a file mapping of the
 *                                  process (hex numbers; BUILD_ID hex, or
 *                                  "-" for none)
 *   sample V1 .. Vn L (KEY s|n VALUE)xL F (ADDR NAME)xF
 *                                  a sample: its n values (n the number of
 *                                  types), L labels (a string, or a
 *                                  number), its F frames innermost first
 *                                  (ADDR hex; NAME the function, "-" when
 *                                  unnamed)
 * Each distinct address is one Location (in the mapping that holds it;
 * with a Line of its Function when named), each distinct name one
 * Function; the strings are kept once.  The encoder is protobuf-c's,
 * over launcher/profile.proto; the file is written through zlib (gzip).
 * A malformed line is refused with its number; exit status 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

static const char *input_name = "standard input";
static unsigned long line_no;

static void die(const char *why)
{
	fprintf(stderr, "pprof: %s\n", why);
	exit(1);
}

static void bad_line(const char *why)
{
	fprintf(stderr, "pprof: %s line %lu: %s\n", input_name, line_no, why);
	exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(p, n * size);
	if (!q)
		die("out of memory");
	*cap = n;
	return q;
}

static char *copy(const char *s)
{
	char *c = strdup(s);
	if (!c)
		die("out of memory");
	return c;
}

/* ------------------------------------------------ hash of keys to ids */

/* An open-addressing table from a key (a string, or a number) to an index. */
struct table {
	size_t cap, n;
	char **str;
	uint64_t *num;
	size_t *val;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static uint64_t hash_num(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void table_rehash(struct table *t, int strings);

/* The slot of key S (strings) or X (numbers): where it is, or would go. */
static size_t table_slot(const struct table *t, const char *s, uint64_t x)
{
	size_t i = (size_t)(s ? hash_str(s) : hash_num(x)) & (t->cap - 1);
	while (t->val[i] != (size_t)-1) {
		if (s ? strcmp(t->str[i], s) == 0 : t->num[i] == x)
			return i;
		i = (i + 1) & (t->cap - 1);
	}
	return i;
}

/* The index of key S or X; NEW_INDEX (and the key kept) when it is new. */
static size_t table_get(struct table *t, const char *s, uint64_t x, size_t new_index, int *added)
{
	if ((t->n + 1) * 2 > t->cap)
		table_rehash(t, s != NULL);
	size_t i = table_slot(t, s, x);
	*added = t->val[i] == (size_t)-1;
	if (*added) {
		if (s)
			t->str[i] = copy(s);
		else
			t->num[i] = x;
		t->val[i] = new_index;
		t->n++;
	}
	return t->val[i];
}

static void table_rehash(struct table *t, int strings)
{
	struct table old = *t;
	t->cap = old.cap ? old.cap * 2 : 64;
	t->n = 0;
	t->str = strings ? calloc(t->cap, sizeof *t->str) : NULL;
	t->num = strings ? NULL : calloc(t->cap, sizeof *t->num);
	t->val = malloc(t->cap * sizeof *t->val);
	if ((strings ? !t->str : !t->num) || !t->val)
		die("out of memory");
	memset(t->val, 0xff, t->cap * sizeof *t->val);
	for (size_t i = 0; i < old.cap; i++) {
		if (old.val[i] == (size_t)-1)
			continue;
		size_t j = table_slot(t, strings ? old.str[i] : NULL, strings ? 0 : old.num[i]);
		if (strings)
			t->str[j] = old.str[i];
		else
			t->num[j] = old.num[i];
		t->val[j] = old.val[i];
		t->n++;
	}
	free(old.str);
	free(old.num);
	free(old.val);
}

/* ------------------------------------------------------- the profile */

static Profile profile = PERFTOOLS__PROFILES__PROFILE__INIT;
static size_t cap_strings, cap_types, cap_samples, cap_mappings, cap_locations, cap_functions, cap_comments;
static struct table strings, locations_by_addr, functions_by_name;

/* The string table index of S (added once). */
static int64_t string_id(const char *s)
{
	int added;
	size_t id = table_get(&strings, s, 0, profile.n_string_table, &added);
	if (added) {
		profile.string_table = grow(profile.string_table, &cap_strings, profile.n_string_table + 1,
					    sizeof *profile.string_table);
		profile.string_table[profile.n_string_table++] = copy(s);
	}
	return (int64_t)id;
}

static ValueType *value_type(const char *type, const char *unit)
{
	ValueType *v = malloc(sizeof *v);
	if (!v)
		die("out of memory");
	perftools__profiles__value_type__init(v);
	v->type = string_id(type);
	v->unit = string_id(unit);
	return v;
}

/* The id of the mapping that holds ADDR (0: none). */
static uint64_t mapping_of(uint64_t addr)
{
	for (size_t i = 0; i < profile.n_mapping; i++)
		if (addr >= profile.mapping[i]->memory_start && addr < profile.mapping[i]->memory_limit)
			return profile.mapping[i]->id;
	return 0;
}

/* The id of function NAME (added once). */
static uint64_t function_id(const char *name)
{
	int added;
	size_t i = table_get(&functions_by_name, name, 0, profile.n_function, &added);
	if (added) {
		Function *f = malloc(sizeof *f);
		if (!f)
			die("out of memory");
		perftools__profiles__function__init(f);
		f->id = profile.n_function + 1;
		f->name = f->system_name = string_id(name);
		profile.function = grow(profile.function, &cap_functions, profile.n_function + 1, sizeof *profile.function);
		profile.function[profile.n_function++] = f;
	}
	return profile.function[i]->id;
}

/* The id of the location at ADDR, named NAME ("-": unnamed) where it is new. */
static uint64_t location_id(uint64_t addr, const char *name)
{
	int added;
	size_t i = table_get(&locations_by_addr, NULL, addr, profile.n_location, &added);
	if (added) {
		Location *l = malloc(sizeof *l);
		if (!l)
			die("out of memory");
		perftools__profiles__location__init(l);
		l->id = profile.n_location + 1;
		l->address = addr;
		l->mapping_id = mapping_of(addr);
		if (strcmp(name, "-") != 0) {
			Line *line = malloc(sizeof *line);
			l->line = malloc(sizeof *l->line);
			if (!line || !l->line)
				die("out of memory");
			perftools__profiles__line__init(line);
			line->function_id = function_id(name);
			l->line[0] = line;
			l->n_line = 1;
			/* (a mapping with a named location: pprof takes its names
			 * as they are; one without any, it may name itself) */
			for (size_t m = 0; m < profile.n_mapping; m++)
				if (profile.mapping[m]->id == l->mapping_id)
					profile.mapping[m]->has_functions = 1;
		}
		profile.location = grow(profile.location, &cap_locations, profile.n_location + 1, sizeof *profile.location);
		profile.location[profile.n_location++] = l;
	}
	return profile.location[i]->id;
}

/* ------------------------------------------------------------- input */

#define MAX_FIELDS 4096

static uint64_t hex_field(const char *s)
{
	char *end;
	if (!*s)
		bad_line("an empty number");
	errno = 0;
	uint64_t v = strtoull(s, &end, 16);
	if (*end || errno)
		bad_line("not a hexadecimal number");
	return v;
}

static int64_t dec_field(const char *s)
{
	char *end;
	if (!*s)
		bad_line("an empty number");
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno)
		bad_line("not a decimal number");
	return v;
}

static void read_mapping(char **f, size_t n)
{
	if (n != 6)
		bad_line("a mapping needs START LIMIT OFFSET PATH BUILD_ID");
	Mapping *m = malloc(sizeof *m);
	if (!m)
		die("out of memory");
	perftools__profiles__mapping__init(m);
	m->id = profile.n_mapping + 1;
	m->memory_start = hex_field(f[1]);
	m->memory_limit = hex_field(f[2]);
	m->file_offset = hex_field(f[3]);
	m->filename = string_id(f[4]);
	m->build_id = string_id(strcmp(f[5], "-") ? f[5] : "");
	profile.mapping = grow(profile.mapping, &cap_mappings, profile.n_mapping + 1, sizeof *profile.mapping);
	profile.mapping[profile.n_mapping++] = m;
}

static void read_sample(char **f, size_t n)
{
	size_t at = 1, values = profile.n_sample_type;
	if (!values)
		bad_line("a sample before the value types");
	if (n < at + values + 1)
		bad_line("a sample without its values");
	Sample *s = malloc(sizeof *s);
	if (!s)
		die("out of memory");
	perftools__profiles__sample__init(s);
	s->value = malloc(values * sizeof *s->value);
	if (!s->value)
		die("out of memory");
	for (size_t i = 0; i < values; i++)
		s->value[i] = dec_field(f[at++]);
	s->n_value = values;
	size_t labels = (size_t)dec_field(f[at++]);
	if (labels > (n - at) / 3)
		bad_line("fewer labels than it says");
	s->label = malloc((labels ? labels : 1) * sizeof *s->label);
	if (!s->label)
		die("out of memory");
	for (size_t i = 0; i < labels; i++, at += 3) {
		Label *l = malloc(sizeof *l);
		if (!l)
			die("out of memory");
		perftools__profiles__label__init(l);
		l->key = string_id(f[at]);
		if (strcmp(f[at + 1], "s") == 0)
			l->str = string_id(f[at + 2]);
		else if (strcmp(f[at + 1], "n") == 0)
			l->num = dec_field(f[at + 2]);
		else
			bad_line("a label is s (a string) or n (a number)");
		s->label[s->n_label++] = l;
	}
	if (at >= n)
		bad_line("a sample without its frame count");
	size_t frames = (size_t)dec_field(f[at++]);
	if (frames * 2 != n - at)
		bad_line("not as many frames as it says");
	s->location_id = malloc((frames ? frames : 1) * sizeof *s->location_id);
	if (!s->location_id)
		die("out of memory");
	for (size_t i = 0; i < frames; i++, at += 2)
		s->location_id[i] = location_id(hex_field(f[at]), f[at + 1]);
	s->n_location_id = frames;
	profile.sample = grow(profile.sample, &cap_samples, profile.n_sample + 1, sizeof *profile.sample);
	profile.sample[profile.n_sample++] = s;
}

static void read_line(char *line)
{
	static char *f[MAX_FIELDS];
	size_t n = 0;
	for (char *p = line;; ) {
		if (n == MAX_FIELDS)
			bad_line("too many fields");
		f[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (strcmp(f[0], "type") == 0) {
		if (n != 3)
			bad_line("a type needs NAME UNIT");
		profile.sample_type = grow(profile.sample_type, &cap_types, profile.n_sample_type + 1,
					   sizeof *profile.sample_type);
		profile.sample_type[profile.n_sample_type++] = value_type(f[1], f[2]);
		if (profile.n_sample_type == 1) {
			profile.period_type = value_type(f[1], f[2]);
			profile.period = 1;
		}
	} else if (strcmp(f[0], "time") == 0) {
		if (n != 3)
			bad_line("a time needs START_NS DURATION_NS");
		profile.time_nanos = dec_field(f[1]);
		profile.duration_nanos = dec_field(f[2]);
	} else if (strcmp(f[0], "comment") == 0) {
		if (n != 2)
			bad_line("a comment is one field");
		profile.comment = grow(profile.comment, &cap_comments, profile.n_comment + 1, sizeof *profile.comment);
		profile.comment[profile.n_comment++] = string_id(f[1]);
	} else if (strcmp(f[0], "mapping") == 0) {
		read_mapping(f, n);
	} else if (strcmp(f[0], "sample") == 0) {
		read_sample(f, n);
	} else {
		bad_line("not a type, time, comment, mapping or sample line");
	}
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	if (argc == 3 && strcmp(argv[1], "--out") == 0)
		out = argv[2];
	else
		die("usage: pprof --out FILE < LINES");

	string_id("");		/* string_table[0] */
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		line_no++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		read_line(line);
	}
	free(line);
	if (!profile.n_sample_type)
		die("no value types in the input: nothing to write");

	size_t size = perftools__profiles__profile__get_packed_size(&profile);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		die("out of memory");
	perftools__profiles__profile__pack(&profile, buf);
	gzFile gz = gzopen(out, "wb9");
	if (!gz) {
		fprintf(stderr, "pprof: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (size && gzwrite(gz, buf, (unsigned)size) != (int)size) {
		fprintf(stderr, "pprof: cannot write %s\n", out);
		gzclose(gz);
		return 1;
	}
	if (gzclose(gz) != Z_OK) {
		fprintf(stderr, "pprof: cannot write %s\n", out);
		return 1;
	}
	free(buf);
	return 0;
}
