/* SPDX-License-Identifier: MIT */
/* VTune-style option parsing, knob parsing, near-miss suggestions and checked numbers. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/options.h"

/* Longer words get no suggestion: the distance table lives on the stack. */
#define NEAREST_MAX_LEN 128

static size_t nearest_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[NEAREST_MAX_LEN + 1];
	size_t i, j;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *options_nearest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL, *prefix = NULL;
	size_t best_dist = (size_t)-1, nprefix = 0;
	size_t lw, limit, i;

	if (!word || !*word || !candidates)
		return NULL;
	lw = strlen(word);
	for (i = 0; i < n; i++) {
		const char *c = candidates[i];

		if (!c || !*c)
			continue;
		if (strncasecmp(c, word, lw) == 0 && (!prefix || strcmp(prefix, c) != 0)) {
			prefix = c;
			nprefix++;
		}
	}
	if (nprefix == 1)
		return prefix;

	if (lw > NEAREST_MAX_LEN)
		return NULL;
	limit = lw / 3 > 2 ? lw / 3 : 2;
	for (i = 0; i < n; i++) {
		const char *c = candidates[i];
		size_t lc, d;

		if (!c || !*c)
			continue;
		lc = strlen(c);
		if (lc > NEAREST_MAX_LEN)
			continue;
		d = nearest_distance(word, lw, c, lc);
		/* Replacing every letter is no near miss: "-x" should not suggest "-r". */
		if (d > limit || d >= (lw > lc ? lw : lc))
			continue;
		if (d < best_dist) {
			best_dist = d;
			best = c;
		}
	}
	return best;
}

static size_t specs_count(const struct option_spec *specs)
{
	size_t n = 0;

	while (specs && specs[n].name)
		n++;
	return n;
}

/* Index of the spec called name (len bytes, not terminated) or by that alias, or -1. */
static long specs_find(const struct option_spec *specs, size_t nspecs, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < nspecs; i++) {
		const char *a = specs[i].alias;

		if (strlen(specs[i].name) == len && !memcmp(specs[i].name, name, len))
			return (long)i;
		if (a && strlen(a) == len && !memcmp(a, name, len))
			return (long)i;
	}
	return -1;
}

/* The nearest option name or alias to word, or NULL. */
static const char *specs_nearest(const struct option_spec *specs, size_t nspecs, const char *word)
{
	const char *stack_names[64] = { NULL };
	const char **names = stack_names;
	const char *best;
	size_t i, n = 0;

	if (2 * nspecs > sizeof(stack_names) / sizeof(stack_names[0])) {
		names = calloc(2 * nspecs, sizeof(*names));
		if (!names)
			return NULL;
	}
	for (i = 0; i < nspecs; i++)
		names[n++] = specs[i].name;
	for (i = 0; i < nspecs; i++)
		if (specs[i].alias)
			names[n++] = specs[i].alias;
	best = options_nearest(word, names, n);
	if (names != stack_names)
		free(names);
	return best;
}

static size_t choices_count(const char *const *choices)
{
	size_t n = 0;

	while (choices[n])
		n++;
	return n;
}

static int check_choice(struct options_result *r, const struct option_spec *spec, const char *shown,
			const char *value)
{
	const char *const *c;
	const char *near;
	size_t len;

	for (c = spec->choices; *c; c++)
		if (!strcmp(*c, value))
			return 0;

	near = options_nearest(value, spec->choices, choices_count(spec->choices));
	if (near) {
		err_set(r->error, sizeof(r->error),
			"invalid value '%s' for option '-%s' (did you mean '%s'?)", value, shown,
			near);
		return -EINVAL;
	}
	err_set(r->error, sizeof(r->error), "invalid value '%s' for option '-%s': expected ", value,
		shown);
	for (c = spec->choices; *c; c++) {
		len = strlen(r->error);
		err_set(r->error + len, sizeof(r->error) - len, "%s%s",
			c == spec->choices ? ""
			: c[1]             ? ", "
					   : " or ",
			*c);
	}
	return -EINVAL;
}

static int value_add(struct option_value *v, char *value)
{
	if (v->spec->kind == OPTION_VALUE && v->nvalues) {
		v->values[0] = value;
		return 0;
	}
	if (GROW(v->values, v->nvalues + 1, v->cap))
		return -ENOMEM;
	v->values[v->nvalues++] = value;
	return 0;
}

static int parse_word(struct options_result *r, const struct option_spec *specs, int argc,
		      char **argv, int *i)
{
	char *arg = argv[*i];
	char *name = arg + (arg[1] == '-' ? 2 : 1);
	char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct option_spec *spec;
	struct option_value *v;
	char *value;
	long idx;

	idx = specs_find(specs, r->nspecs, name, len);
	if (idx < 0) {
		char word[NEAREST_MAX_LEN + 1];
		const char *near;
		int wlen = (int)(len > NEAREST_MAX_LEN ? NEAREST_MAX_LEN : len);

		memcpy(word, name, (size_t)wlen);
		word[wlen] = '\0';
		near = len ? specs_nearest(specs, r->nspecs, word) : NULL;
		if (near)
			err_set(r->error, sizeof(r->error),
				"unknown option '%.*s' (did you mean '-%s'?)",
				(int)(name - arg) + wlen, arg, near);
		else
			err_set(r->error, sizeof(r->error), "unknown option '%.*s'",
				(int)(name - arg) + wlen, arg);
		return -EINVAL;
	}
	spec = &specs[idx];
	v = &r->values[idx];
	v->seen = true;

	if (spec->kind == OPTION_FLAG) {
		if (eq) {
			err_set(r->error, sizeof(r->error), "option '-%.*s' takes no value",
				(int)len, name);
			return -EINVAL;
		}
		return 0;
	}

	if (eq) {
		value = eq + 1;
	} else if (*i + 1 < argc && strcmp(argv[*i + 1], "--") != 0) {
		/* Even "-weird" is a value here: the option needs one. */
		value = argv[++*i];
	} else {
		value = NULL;
	}
	if (!value || !*value) {
		err_set(r->error, sizeof(r->error), "option '-%.*s' needs a value", (int)len, name);
		return -EINVAL;
	}
	if (spec->choices) {
		char shown[NEAREST_MAX_LEN + 1];
		int slen = (int)(len > NEAREST_MAX_LEN ? NEAREST_MAX_LEN : len);

		memcpy(shown, name, (size_t)slen);
		shown[slen] = '\0';
		if (check_choice(r, spec, shown, value))
			return -EINVAL;
	}
	if (value_add(v, value)) {
		err_set(r->error, sizeof(r->error), "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static bool is_option_word(const char *arg)
{
	return arg[0] == '-' && arg[1] != '\0';
}

int options_parse(struct options_result *r, const struct option_spec *specs, int argc, char **argv,
		  bool stop_at_nonoption)
{
	size_t i;
	int k, rc = 0;

	memset(r, 0, sizeof(*r));
	r->nspecs = specs_count(specs);
	r->rest_argv = argv + (argc > 0 ? argc : 0);
	r->values = calloc(r->nspecs ? r->nspecs : 1, sizeof(*r->values));
	if (!r->values) {
		err_set(r->error, sizeof(r->error), "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < r->nspecs; i++)
		r->values[i].spec = &specs[i];

	for (k = 1; k < argc; k++) {
		char *arg = argv[k];

		if (!strcmp(arg, "--")) {
			k++;
			break;
		}
		if (!is_option_word(arg)) {
			const char *near;

			if (stop_at_nonoption)
				break;
			near = specs_find(specs, r->nspecs, arg, strlen(arg)) >= 0 ? arg : NULL;
			if (near)
				err_set(r->error, sizeof(r->error),
					"unexpected argument '%s' (did you mean '-%s'?)", arg,
					near);
			else
				err_set(r->error, sizeof(r->error), "unexpected argument '%s'",
					arg);
			rc = -EINVAL;
			goto out;
		}
		rc = parse_word(r, specs, argc, argv, &k);
		if (rc)
			goto out;
	}
	if (k < argc) {
		r->rest_argv = argv + k;
		r->rest_argc = argc - k;
	}
out:
	if (rc) {
		/* Keep the message, drop the values: options_release() stays safe to call. */
		char error[sizeof(r->error)];

		memcpy(error, r->error, sizeof(error));
		options_release(r);
		memcpy(r->error, error, sizeof(error));
	}
	return rc;
}

void options_release(struct options_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->values && i < r->nspecs; i++)
		free(r->values[i].values);
	free(r->values);
	r->values = NULL;
	r->nspecs = 0;
	r->rest_argc = 0;
	r->rest_argv = NULL;
}

const struct option_value *options_get(const struct options_result *r, const char *name)
{
	size_t i;

	if (!r || !r->values || !name)
		return NULL;
	for (i = 0; i < r->nspecs; i++) {
		const struct option_spec *s = r->values[i].spec;

		if (!strcmp(s->name, name) || (s->alias && !strcmp(s->alias, name)))
			return &r->values[i];
	}
	return NULL;
}

const char *options_get_str(const struct options_result *r, const char *name)
{
	const struct option_value *v = options_get(r, name);

	if (!v || !v->nvalues)
		return NULL;
	return v->values[v->nvalues - 1];
}

bool options_has(const struct options_result *r, const char *name)
{
	const struct option_value *v = options_get(r, name);

	return v && v->seen;
}

#define HELP_COLUMN 30

static void help_print_row(const char *left, const char *text)
{
	int w = (int)strlen(left);

	/* At least two blanks between the name and its help, or the help on a line of its own. */
	if (w > HELP_COLUMN - 4)
		printf("  %s\n%*s%s\n", left, HELP_COLUMN, "", text ? text : "");
	else
		printf("  %-*s%s\n", HELP_COLUMN - 2, left, text ? text : "");
}

void options_print_help(const struct option_spec *specs, const char *tool, const char *synopsis,
			const char *description)
{
	const struct option_spec *s;
	char left[256];

	if (synopsis)
		printf("Usage: %s\n", synopsis);
	else
		printf("Usage: %s [options]\n", tool ? tool : "");
	if (description)
		printf("\n%s\n", description);
	if (!specs || !specs->name)
		return;
	printf("\nOptions:\n");
	for (s = specs; s->name; s++) {
		int n = snprintf(left, sizeof(left), "-%s", s->name);

		if (s->alias && n > 0 && (size_t)n < sizeof(left))
			n += snprintf(left + n, sizeof(left) - (size_t)n, ", -%s", s->alias);
		if (s->kind != OPTION_FLAG && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - (size_t)n, " %s",
				 s->metavar ? s->metavar : "VALUE");
		help_print_row(left, s->help);
		if (s->choices) {
			const char *const *c;

			printf("%*s%s", HELP_COLUMN, "", "one of: ");
			for (c = s->choices; *c; c++)
				printf("%s%s", c == s->choices ? "" : ", ", *c);
			printf("\n");
		}
		if (s->kind == OPTION_LIST)
			printf("%*s%s\n", HELP_COLUMN, "", "may be given more than once");
		if (s->example)
			printf("%*se.g. %s\n", HELP_COLUMN, "", s->example);
	}
}

void options_print_knobs(const struct knob_spec *knobs)
{
	const struct knob_spec *k;
	char left[256];

	if (!knobs || !knobs->name)
		return;
	printf("\nKnobs (-knob name=value):\n");
	for (k = knobs; k->name; k++) {
		snprintf(left, sizeof(left), "%s=%s", k->name, k->metavar ? k->metavar : "VALUE");
		help_print_row(left, k->help);
	}
}

bool options_help_or_version(const struct options_result *r, const struct option_spec *specs,
			     const struct knob_spec *knobs, const char *synopsis,
			     const char *description)
{
	if (options_has(r, "help")) {
		options_print_help(specs, log_tool(), synopsis, description);
		options_print_knobs(knobs);
		return true;
	}
	if (options_has(r, "version")) {
		printf("%s %s\n", log_tool(), PCOLLECT_VERSION);
		return true;
	}
	return false;
}

static const struct knob_spec *knobs_find(const struct knob_spec *knobs, const char *name,
					  size_t len)
{
	const struct knob_spec *k;

	for (k = knobs; k && k->name; k++)
		if (strlen(k->name) == len && !memcmp(k->name, name, len))
			return k;
	return NULL;
}

static const char *knobs_nearest(const struct knob_spec *knobs, const char *word)
{
	const char *stack_names[64] = { NULL };
	const char **names = stack_names;
	const char *best;
	size_t n = 0, i;

	while (knobs && knobs[n].name)
		n++;
	if (n > sizeof(stack_names) / sizeof(stack_names[0])) {
		names = calloc(n, sizeof(*names));
		if (!names)
			return NULL;
	}
	for (i = 0; i < n; i++)
		names[i] = knobs[i].name;
	best = options_nearest(word, names, n);
	if (names != stack_names)
		free(names);
	return best;
}

int knob_parse(const struct knob_spec *knobs, const char *arg, char *name, size_t name_size,
	       const char **value, char *err, size_t err_size)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct knob_spec *k;

	if (value)
		*value = NULL;
	if (name && name_size)
		*name = '\0';
	if (!len) {
		err_set(err, err_size, "invalid knob '%s': expected -knob name=value", arg);
		return -EINVAL;
	}
	k = knobs_find(knobs, arg, len);
	if (!k) {
		char word[NEAREST_MAX_LEN + 1];
		size_t wlen = len > NEAREST_MAX_LEN ? NEAREST_MAX_LEN : len;
		const char *near;

		memcpy(word, arg, wlen);
		word[wlen] = '\0';
		near = knobs_nearest(knobs, word);
		if (near)
			err_set(err, err_size, "unknown knob '%s' (did you mean '%s'?)", word,
				near);
		else if (!knobs || !knobs->name)
			err_set(err, err_size, "unknown knob '%s': this analysis has no knobs",
				word);
		else
			err_set(err, err_size, "unknown knob '%s'", word);
		return -EINVAL;
	}
	if (!eq || !eq[1]) {
		err_set(err, err_size, "knob '%s' needs a value: -knob %s=%s", k->name, k->name,
			k->metavar ? k->metavar : "VALUE");
		return -EINVAL;
	}
	if (name) {
		if (len >= name_size) {
			err_set(err, err_size, "knob name '%s' is too long", k->name);
			return -EINVAL;
		}
		memcpy(name, arg, len);
		name[len] = '\0';
	}
	if (value)
		*value = eq + 1;
	return 0;
}

/* "knob 'x'" stays as given; a bare word is quoted. */
static void number_error(char *err, size_t size, const char *what, const char *s,
			 const char *expected)
{
	bool phrase = what && (strchr(what, ' ') || strchr(what, '\''));

	if (phrase)
		err_set(err, size, "invalid value '%s' for %s: expected %s", s, what, expected);
	else
		err_set(err, size, "invalid value '%s' for '%s': expected %s", s, what ? what : "",
			expected);
}

/* Integral bounds print as integers: "from 1 to 1000000", not "1e+06". */
static void format_bound(char *buf, size_t size, double v)
{
	/* No floor(): common/ links without libm. */
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%g", v);
}

int options_parse_double(const char *what, const char *s, double min, double max, double *out,
			 char *err, size_t err_size)
{
	char expected[128], lo[48], hi[48];
	const char *p;
	char *end;
	double v;
	bool no_min = min <= -DBL_MAX, no_max = max >= DBL_MAX;

	format_bound(lo, sizeof(lo), min);
	format_bound(hi, sizeof(hi), max);
	if (no_min && no_max)
		snprintf(expected, sizeof(expected), "a number");
	else if (no_max)
		snprintf(expected, sizeof(expected), "a number of at least %s", lo);
	else if (no_min)
		snprintf(expected, sizeof(expected), "a number of at most %s", hi);
	else
		snprintf(expected, sizeof(expected), "a number from %s to %s", lo, hi);

	if (!s)
		s = "";
	/* Decimal notation only: strtod would also take " 1", "0x10", "nan" and "inf". */
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
			break;
	if (!*s || *p || !isdigit((unsigned char)s[strspn(s, "+-.")]))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v) || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	number_error(err, err_size, what, s, expected);
	return -EINVAL;
}

int options_parse_long(const char *what, const char *s, long min, long max, long *out, char *err,
		       size_t err_size)
{
	char expected[128];
	char *end;
	long v;

	if (min == LONG_MIN && max == LONG_MAX)
		snprintf(expected, sizeof(expected), "an integer");
	else if (max == LONG_MAX)
		snprintf(expected, sizeof(expected), "an integer of at least %ld", min);
	else if (min == LONG_MIN)
		snprintf(expected, sizeof(expected), "an integer of at most %ld", max);
	else
		snprintf(expected, sizeof(expected), "an integer from %ld to %ld", min, max);

	if (!s)
		s = "";
	/* strtol skips leading blanks; a value of " 5" is not what the user meant. */
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
		goto bad;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno == ERANGE || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	number_error(err, err_size, what, s, expected);
	return -EINVAL;
}

int options_check_dir(const char *option, const char *dir, char *err, size_t err_size)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		snprintf(err, err_size, "%s directory '%s' does not exist: %s", option, dir,
			 strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_size, "%s directory '%s' is not a directory", option, dir);
		return -EINVAL;
	}
	return 0;
}

int options_search_dir(const char *option, const char *value, const char *next, unsigned *kinds,
		       const char **dir, char *err, size_t err_size)
{
	static const struct {
		const char *type;
		unsigned kinds;
	} types[] = {
		{ "bin", SEARCH_DIR_BINARIES },
		{ "sym", SEARCH_DIR_BINARIES },
		{ "src", SEARCH_DIR_SOURCES },
		{ "all", SEARCH_DIR_BINARIES | SEARCH_DIR_SOURCES },
	};
	const char *colon = strchr(value, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	char type[16];
	size_t i, flags;

	*kinds = SEARCH_DIR_BINARIES;
	*dir = value;
	/* "TYPE:FLAGS=DIR", FLAGS of r and p only; anything else is a plain directory name. */
	if (colon && eq && colon - value < (ptrdiff_t)sizeof(type) &&
	    (flags = (size_t)(eq - colon - 1)) == strspn(colon + 1, "rp")) {
		snprintf(type, sizeof(type), "%.*s", (int)(colon - value), value);
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcmp(types[i].type, type))
				break;
		if (i == sizeof(types) / sizeof(types[0])) {
			snprintf(err, err_size,
				 "unknown search directory type '%s:' in '%s %s': "
				 "expected bin:, sym:, src: or all: (as in %s bin:=DIR)",
				 type, option, value, option);
			return -EINVAL;
		}
		*kinds = types[i].kinds;
		*dir = eq + 1;
		if (!**dir) {
			if (next)
				snprintf(
					err, err_size,
					"option '%s %s' names no directory: write it "
					"right after the '=' with no space, %s %sDIR ('%s', after the "
					"space, was taken as the program to run)",
					option, value, option, value, next);
			else
				snprintf(err, err_size,
					 "option '%s %s' names no directory: write it "
					 "right after the '=' with no space, %s %sDIR",
					 option, value, option, value);
			return -EINVAL;
		}
	}
	return options_check_dir("search", *dir, err, err_size) ? -EINVAL : 0;
}
