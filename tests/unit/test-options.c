/* SPDX-License-Identifier: MIT */
/* Unit tests of common/options.c: every option form, errors, suggestions, knobs, numbers. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/options.h"
#include "tests/unit/unit.h"

static const char *const analyses[] = {
	"hotspots", "memory-consumption", "threading", "locksandwaits", NULL,
};

static const struct option_spec specs[] = {
	{ "collect", NULL, OPTION_VALUE, "ANALYSIS", "the analysis to run",
	  "pcollect -collect hotspots -- ./app", analyses },
	{ "result-dir", "r", OPTION_VALUE, "DIR", "where the result goes", NULL, NULL },
	{ "knob", NULL, OPTION_LIST, "NAME=VALUE", "tune the analysis", NULL, NULL },
	{ "search-dir", NULL, OPTION_LIST, "DIR", "where to find binaries", NULL, NULL },
	{ "time-filter", NULL, OPTION_VALUE, "FROM:TO", "seconds to keep", NULL, NULL },
	{ "quiet", "q", OPTION_FLAG, NULL, "errors only", NULL, NULL },
	{ "help", "h", OPTION_FLAG, NULL, "show this help", NULL, NULL },
	{ NULL },
};

static const struct knob_spec knobs[] = {
	{ "sampling-interval", "MS", "time between samples" },
	{ "enable-stack-collection", "BOOL", "record call stacks" },
	{ "filter", "EXPR", "keep matching samples" },
	{ NULL },
};

/* Argument vectors built by parse(); their strings live until the next parse(). */
static char *arena[64];
static int arena_n;
static struct options_result res;

static void arena_free(void)
{
	while (arena_n)
		free(arena[--arena_n]);
}

/* Parse "prog", then the NULL-terminated words, against specs. */
static int parse(bool stop, ...)
{
	const char *w;
	va_list ap;

	options_release(&res);
	arena_free();
	arena[arena_n++] = strdup("pcollect");
	va_start(ap, stop);
	while ((w = va_arg(ap, const char *)) && arena_n < 63)
		arena[arena_n++] = strdup(w);
	va_end(ap);
	arena[arena_n] = NULL;
	return options_parse(&res, specs, arena_n, arena, stop);
}

static int suite_clean(void)
{
	options_release(&res);
	arena_free();
	return 0;
}

static void test_options_value_forms(void)
{
	CU_ASSERT_EQUAL(parse(false, "-collect", "hotspots", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "collect"), "hotspots");
	CU_ASSERT_EQUAL(parse(false, "-collect=threading", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "collect"), "threading");
	CU_ASSERT_EQUAL(parse(false, "--collect", "memory-consumption", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "collect"), "memory-consumption");
	CU_ASSERT_EQUAL(parse(false, "--collect=locksandwaits", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "collect"), "locksandwaits");
	CU_ASSERT_EQUAL(res.rest_argc, 0);
}

static void test_options_values_point_into_argv(void)
{
	const struct option_value *v;

	CU_ASSERT_EQUAL_FATAL(parse(false, "-r", "res", NULL), 0);
	v = options_get(&res, "result-dir");
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_PTR_EQUAL(v->values[0], arena[2]);
	CU_ASSERT_EQUAL_FATAL(parse(false, "-r=res", NULL), 0);
	v = options_get(&res, "r");
	CU_ASSERT_PTR_EQUAL(v->values[0], arena[1] + 3);
	CU_ASSERT_STRING_EQUAL(arena[1], "-r=res");
}

static void test_options_alias(void)
{
	const char *forms[][2] = {
		{ "-r", "res" },    { "-result-dir", "res" },     { "--r", "res" },
		{ "-r=res", NULL }, { "--result-dir=res", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		CU_ASSERT_EQUAL(parse(false, forms[i][0], forms[i][1], NULL), 0);
		CU_ASSERT_STRING_EQUAL(options_get_str(&res, "result-dir"), "res");
		CU_ASSERT_STRING_EQUAL(options_get_str(&res, "r"), "res");
		CU_ASSERT_PTR_EQUAL(options_get(&res, "r"), options_get(&res, "result-dir"));
		CU_ASSERT_TRUE(options_has(&res, "r"));
	}
}

static void test_options_value_last_wins(void)
{
	const struct option_value *v;

	CU_ASSERT_EQUAL_FATAL(parse(false, "-r", "a", "-result-dir=b", NULL), 0);
	v = options_get(&res, "r");
	CU_ASSERT_EQUAL(v->nvalues, 1);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "r"), "b");
}

static void test_options_flags(void)
{
	CU_ASSERT_EQUAL(parse(false, "-quiet", NULL), 0);
	CU_ASSERT_TRUE(options_has(&res, "quiet"));
	CU_ASSERT_TRUE(options_has(&res, "q"));
	CU_ASSERT_FALSE(options_has(&res, "help"));
	CU_ASSERT_PTR_NULL(options_get_str(&res, "quiet"));
	CU_ASSERT_EQUAL(parse(false, "--quiet", "-h", NULL), 0);
	CU_ASSERT_TRUE(options_has(&res, "quiet"));
	CU_ASSERT_TRUE(options_has(&res, "help"));
	CU_ASSERT_EQUAL(parse(false, "-q", NULL), 0);
	CU_ASSERT_TRUE(options_has(&res, "quiet"));
	CU_ASSERT_EQUAL(parse(false, NULL), 0);
	CU_ASSERT_FALSE(options_has(&res, "quiet"));
	CU_ASSERT_FALSE(options_has(&res, "r"));
	CU_ASSERT_PTR_NULL(options_get_str(&res, "r"));
}

static void test_options_flag_with_value_refused(void)
{
	CU_ASSERT_EQUAL(parse(false, "-quiet=yes", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-quiet' takes no value");
	CU_ASSERT_EQUAL(parse(false, "--q=", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-q' takes no value");
}

static void test_options_list_repeated(void)
{
	const struct option_value *v;

	CU_ASSERT_EQUAL_FATAL(parse(false, "-knob", "sampling-interval=5", "-search-dir", "a",
				    "--knob=filter=x", "--search-dir=b", "-search-dir", "c", NULL),
			      0);
	v = options_get(&res, "knob");
	CU_ASSERT_EQUAL_FATAL(v->nvalues, 2);
	CU_ASSERT_STRING_EQUAL(v->values[0], "sampling-interval=5");
	CU_ASSERT_STRING_EQUAL(v->values[1], "filter=x");
	v = options_get(&res, "search-dir");
	CU_ASSERT_EQUAL_FATAL(v->nvalues, 3);
	CU_ASSERT_STRING_EQUAL(v->values[0], "a");
	CU_ASSERT_STRING_EQUAL(v->values[1], "b");
	CU_ASSERT_STRING_EQUAL(v->values[2], "c");
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "search-dir"), "c");
	CU_ASSERT_TRUE(v->seen);
	CU_ASSERT_PTR_EQUAL(v->spec, &specs[3]);
}

static void test_options_double_dash_ends_options(void)
{
	CU_ASSERT_EQUAL_FATAL(parse(false, "-collect", "hotspots", "--", "./app", "-r", "x", NULL),
			      0);
	CU_ASSERT_EQUAL_FATAL(res.rest_argc, 3);
	CU_ASSERT_PTR_EQUAL(res.rest_argv, arena + 4);
	CU_ASSERT_STRING_EQUAL(res.rest_argv[0], "./app");
	CU_ASSERT_STRING_EQUAL(res.rest_argv[1], "-r");
	CU_ASSERT_PTR_NULL(res.rest_argv[3]);
	CU_ASSERT_FALSE(options_has(&res, "r"));

	/* "--" with nothing after it: no target. */
	CU_ASSERT_EQUAL(parse(false, "-q", "--", NULL), 0);
	CU_ASSERT_EQUAL(res.rest_argc, 0);
	CU_ASSERT_PTR_NULL(res.rest_argv[0]);
}

static void test_options_stop_at_nonoption(void)
{
	CU_ASSERT_EQUAL_FATAL(parse(true, "-collect", "hotspots", "./app", "arg", "-r", "x", NULL),
			      0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "collect"), "hotspots");
	CU_ASSERT_EQUAL_FATAL(res.rest_argc, 4);
	CU_ASSERT_STRING_EQUAL(res.rest_argv[0], "./app");
	CU_ASSERT_STRING_EQUAL(res.rest_argv[1], "arg");
	CU_ASSERT_FALSE(options_has(&res, "r"));

	/* A lone "-" is a word, not an option. */
	CU_ASSERT_EQUAL(parse(true, "-q", "-", NULL), 0);
	CU_ASSERT_EQUAL(res.rest_argc, 1);
	CU_ASSERT_STRING_EQUAL(res.rest_argv[0], "-");

	/* Only the first "--" ends the options; a later one belongs to the target. */
	CU_ASSERT_EQUAL(parse(true, "--", "./app", "--", "x", NULL), 0);
	CU_ASSERT_EQUAL(res.rest_argc, 3);
	CU_ASSERT_STRING_EQUAL(res.rest_argv[1], "--");
}

static void test_options_nonoption_refused(void)
{
	CU_ASSERT_EQUAL(parse(false, "-collect", "hotspots", "./app", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unexpected argument './app'");
	CU_ASSERT_EQUAL(parse(false, "collect", "hotspots", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error,
			       "unexpected argument 'collect' (did you mean '-collect'?)");
}

static void test_options_unknown_suggests(void)
{
	CU_ASSERT_EQUAL(parse(false, "-colect", "hotspots", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-colect' (did you mean '-collect'?)");
	CU_ASSERT_EQUAL(parse(false, "--colect=hotspots", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '--colect' (did you mean '-collect'?)");
	CU_ASSERT_EQUAL(parse(false, "-reslt-dir", "x", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error,
			       "unknown option '-reslt-dir' (did you mean '-result-dir'?)");
	/* A unique prefix. */
	CU_ASSERT_EQUAL(parse(false, "-res", "x", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-res' (did you mean '-result-dir'?)");
	CU_ASSERT_EQUAL(parse(false, "-search", "x", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-search' (did you mean '-search-dir'?)");
	/* Nothing close. */
	CU_ASSERT_EQUAL(parse(false, "-zzzzzzzz", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-zzzzzzzz'");
	CU_ASSERT_EQUAL(parse(false, "-x", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-x'");
	CU_ASSERT_EQUAL(parse(false, "---collect", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '---collect' (did you mean '-collect'?)");
}

static void test_options_unknown_after_good_ones(void)
{
	CU_ASSERT_EQUAL(parse(true, "-r", "res", "-kbob", "a=1", "./app", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "unknown option '-kbob' (did you mean '-knob'?)");
	/* After a failure the result holds nothing, and releasing it again is safe. */
	CU_ASSERT_PTR_NULL(options_get(&res, "r"));
	CU_ASSERT_FALSE(options_has(&res, "r"));
	options_release(&res);
	options_release(&res);
}

static void test_options_needs_value(void)
{
	CU_ASSERT_EQUAL(parse(false, "-r", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-r' needs a value");
	CU_ASSERT_EQUAL(parse(false, "-result-dir=", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-result-dir' needs a value");
	CU_ASSERT_EQUAL(parse(true, "-r", "--", "./app", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-r' needs a value");
	CU_ASSERT_EQUAL(parse(false, "-knob", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "option '-knob' needs a value");
}

static void test_options_value_may_start_with_dash(void)
{
	CU_ASSERT_EQUAL(parse(false, "-r", "-weird", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "r"), "-weird");
	CU_ASSERT_EQUAL(parse(false, "-time-filter", "-1:2", "-search-dir", "-d", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "time-filter"), "-1:2");
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "search-dir"), "-d");
	CU_ASSERT_EQUAL(parse(false, "-r", "-q", NULL), 0);
	CU_ASSERT_STRING_EQUAL(options_get_str(&res, "r"), "-q");
	CU_ASSERT_FALSE(options_has(&res, "quiet"));
}

static void test_options_choices(void)
{
	CU_ASSERT_EQUAL(parse(false, "-collect", "hotspot", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error,
			       "invalid value 'hotspot' for option '-collect' (did you mean "
			       "'hotspots'?)");
	CU_ASSERT_EQUAL(parse(false, "-collect=memory", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error, "invalid value 'memory' for option '-collect' (did you "
					  "mean 'memory-consumption'?)");
	CU_ASSERT_EQUAL(parse(false, "-collect", "xyz", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error,
			       "invalid value 'xyz' for option '-collect': expected hotspots, "
			       "memory-consumption, threading or locksandwaits");
	/* Choices are exact: the right word in capitals is suggested, not taken. */
	CU_ASSERT_EQUAL(parse(false, "-collect", "Hotspots", NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(res.error,
			       "invalid value 'Hotspots' for option '-collect' (did you mean "
			       "'hotspots'?)");
}

static void test_options_empty_table(void)
{
	static const struct option_spec none[] = { { NULL } };
	char *argv[] = { "prog", "-x", NULL };
	struct options_result r;

	CU_ASSERT_EQUAL(options_parse(&r, none, 1, argv, false), 0);
	CU_ASSERT_EQUAL(r.nspecs, 0);
	CU_ASSERT_PTR_NULL(options_get(&r, "x"));
	options_release(&r);
	CU_ASSERT_EQUAL(options_parse(&r, none, 2, argv, false), -EINVAL);
	CU_ASSERT_STRING_EQUAL(r.error, "unknown option '-x'");
	options_release(&r);
}

static void test_options_nearest(void)
{
	static const char *const words[] = { "collect", "result-dir", "r",
					     "knob",    "search-dir", "quiet" };
	static const char *const two[] = { "abcdefxyz", "abcdwxyz" };
	static const char *const prefixes[] = { "search-dir", "search-path" };
	size_t n = sizeof(words) / sizeof(words[0]);

	CU_ASSERT_STRING_EQUAL(options_nearest("colect", words, n), "collect");
	CU_ASSERT_STRING_EQUAL(options_nearest("COLLECT", words, n), "collect");
	CU_ASSERT_STRING_EQUAL(options_nearest("quite", words, n), "quiet");
	CU_ASSERT_STRING_EQUAL(options_nearest("res", words, n), "result-dir");
	CU_ASSERT_PTR_NULL(options_nearest("x", words, n));
	CU_ASSERT_PTR_NULL(options_nearest("", words, n));
	CU_ASSERT_PTR_NULL(options_nearest("elephant", words, n));
	CU_ASSERT_PTR_NULL(options_nearest("collect", NULL, 0));
	/* The limit is max(2, len/3): 3 edits allowed for 9 letters, not 4. */
	CU_ASSERT_STRING_EQUAL(options_nearest("abcdefghi", two, 1), "abcdefxyz");
	CU_ASSERT_PTR_NULL(options_nearest("abcdefghi", two + 1, 1));
	/* An ambiguous prefix falls back to edit distance. */
	CU_ASSERT_PTR_NULL(options_nearest("sea", prefixes, 2));
	CU_ASSERT_STRING_EQUAL(options_nearest("search-dit", prefixes, 2), "search-dir");
}

static void test_options_knob_parse_ok(void)
{
	char name[64], err[256];
	const char *value;

	CU_ASSERT_EQUAL(knob_parse(knobs, "sampling-interval=10", name, sizeof(name), &value, err,
				   sizeof(err)),
			0);
	CU_ASSERT_STRING_EQUAL(name, "sampling-interval");
	CU_ASSERT_STRING_EQUAL(value, "10");
	/* Only the first '=' splits. */
	CU_ASSERT_EQUAL(knob_parse(knobs, "filter=a=b", name, sizeof(name), &value, err,
				   sizeof(err)),
			0);
	CU_ASSERT_STRING_EQUAL(name, "filter");
	CU_ASSERT_STRING_EQUAL(value, "a=b");
}

static void test_options_knob_parse_errors(void)
{
	static const struct knob_spec none[] = { { NULL } };
	static const struct {
		const struct knob_spec *spec;
		const char *knob, *want;    /* want: the message, NULL: not checked */
		size_t name_size, err_size; /* 0: the whole buffer */
	} cases[] = {
		{ knobs, "sampling-intervl=10",
		  "unknown knob 'sampling-intervl' (did you mean 'sampling-interval'?)" },
		{ knobs, "enable-stack=true",
		  "unknown knob 'enable-stack' (did you mean 'enable-stack-collection'?)" },
		{ knobs, "bogus=1", "unknown knob 'bogus'" },
		{ knobs, "sampling-interval",
		  "knob 'sampling-interval' needs a value: -knob sampling-interval=MS" },
		{ knobs, "filter=", "knob 'filter' needs a value: -knob filter=EXPR" },
		{ knobs, "=5", "invalid knob '=5': expected -knob name=value" },
		{ knobs, "filter=1", NULL, 6 },
		{ none, "filter=1", "unknown knob 'filter': this analysis has no knobs" },
		/* A small error buffer truncates, never overflows. */
		{ knobs, "bogus=1", "unknown", 0, 8 },
	};
	char name[64], err[256];
	const char *value;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		value = "x";
		CU_ASSERT_EQUAL(knob_parse(cases[i].spec, cases[i].knob, name,
					   cases[i].name_size ? cases[i].name_size : sizeof(name),
					   &value, err,
					   cases[i].err_size ? cases[i].err_size : sizeof(err)),
				-EINVAL);
		if (cases[i].want)
			CU_ASSERT_STRING_EQUAL(err, cases[i].want);
	}
	CU_ASSERT_PTR_NULL(value); /* a knob refused has no value */
}

static void test_options_parse_double(void)
{
	static const char *const bad[] = {
		"abc", "10ms", "nan", "NaN",  "inf",   "-inf",   "infinity",
		"",    " 5",   "5 ",  "0x10", "1e999", "-1e999", "1e",
		".",   "-",    "+",   "e5",   "1..2",  "--5",    "1e5e5",
	};
	char err[256];
	double v = 0;
	size_t i;

	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", "0.5", 0, 1, &v, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, 0.5, 1e-12);
	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", ".25", 0, 1, &v, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, 0.25, 1e-12);
	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", "1e2", 0, 1000, &v, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, 100, 1e-9);
	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", "-2.5", -3, 0, &v, err, sizeof(err)), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, -2.5, 1e-12);
	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", "1", 1, 1000, &v, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(options_parse_double("knob 'x'", "1000", 1, 1000, &v, err, sizeof(err)), 0);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		CU_ASSERT_EQUAL(options_parse_double("knob 'x'", bad[i], -1e9, 1e9, &v, err,
						     sizeof(err)),
				-EINVAL);
		CU_ASSERT_DOUBLE_EQUAL(v, 42, 0);
	}

	CU_ASSERT_EQUAL(options_parse_double("knob 'sampling-interval'", "abc", 1, 1000, &v, err,
					     sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "invalid value 'abc' for knob 'sampling-interval': expected a "
				    "number from 1 to 1000");
	CU_ASSERT_EQUAL(options_parse_double("knob 'sampling-interval'", "0.5", 1, 1000, &v, err,
					     sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "invalid value '0.5' for knob 'sampling-interval': expected a "
				    "number from 1 to 1000");
	CU_ASSERT_EQUAL(options_parse_double("knob 'sampling-interval'", "1000.5", 1, 1000, &v, err,
					     sizeof(err)),
			-EINVAL);
	CU_ASSERT_EQUAL(options_parse_double("duration", "x", 0.5, 1e6, &v, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err,
			       "invalid value 'x' for 'duration': expected a number from 0.5 to "
			       "1000000");
	CU_ASSERT_EQUAL(options_parse_double("option '-d'", "x", 0, DBL_MAX, &v, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(
		err, "invalid value 'x' for option '-d': expected a number of at least 0");
	CU_ASSERT_EQUAL(options_parse_double("option '-d'", "x", -DBL_MAX, DBL_MAX, &v, err,
					     sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "invalid value 'x' for option '-d': expected a number");
	CU_ASSERT_EQUAL(options_parse_double("option '-d'", "1e300", -DBL_MAX, DBL_MAX, &v, err,
					     sizeof(err)),
			0);
}

static void test_options_parse_long(void)
{
	static const char *const bad[] = {
		"4.2",
		"12abc",
		"",
		" 1",
		"1 ",
		"abc",
		"99999999999999999999",
		"-99999999999999999999",
		"0x10",
		"+",
		"-",
		"1e3",
	};
	char err[256];
	long v = 0;
	size_t i;

	CU_ASSERT_EQUAL(options_parse_long("knob 'n'", "42", 0, 100, &v, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(v, 42);
	CU_ASSERT_EQUAL(options_parse_long("knob 'n'", "-5", -10, 10, &v, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(v, -5);
	CU_ASSERT_EQUAL(options_parse_long("knob 'n'", "+7", 0, 10, &v, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(v, 7);
	CU_ASSERT_EQUAL(options_parse_long("knob 'n'", "9223372036854775807", LONG_MIN, LONG_MAX,
					   &v, err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(v, LONG_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		CU_ASSERT_EQUAL(options_parse_long("knob 'n'", bad[i], LONG_MIN, LONG_MAX, &v, err,
						   sizeof(err)),
				-EINVAL);
		CU_ASSERT_EQUAL(v, 42);
	}
	CU_ASSERT_EQUAL(options_parse_long("knob 'n'", "0", 1, 1000, &v, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "invalid value '0' for knob 'n': expected an integer from 1 to "
				    "1000");
	CU_ASSERT_EQUAL(options_parse_long("option '-n'", "x", 1, LONG_MAX, &v, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(
		err, "invalid value 'x' for option '-n': expected an integer of at least 1");
}

/* Run fn with stdout in a file and return what it printed. */
static void capture_stdout(void (*fn)(void), char *buf, size_t size)
{
	char path[] = "/tmp/test-options.XXXXXX";
	int fd = mkstemp(path), saved;
	ssize_t n;

	buf[0] = '\0';
	CU_ASSERT_FATAL(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	fn();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
}

static void print_help(void)
{
	options_print_help(specs, "pcollect", "pcollect [options] [--] <target> [args]",
			   "Run a program and sample it.");
	options_print_knobs(knobs);
}

static void test_options_print_help(void)
{
	static char out[8192];

	capture_stdout(print_help, out, sizeof(out));
	CU_ASSERT_EQUAL(strncmp(out, "Usage: pcollect [options] [--] <target> [args]\n", 47), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nRun a program and sample it.\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(out, "\n  -collect ANALYSIS           the analysis to run\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(out, "\n  -result-dir, -r DIR         where the result goes\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  -quiet, -q                  errors only\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "e.g. pcollect -collect hotspots -- ./app\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(out, "one of: hotspots, memory-consumption, threading, locksandwaits\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Knobs (-knob name=value):\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(out, "\n  sampling-interval=MS        time between samples\n"));
	/* A name too long for the column puts its help on the next line. */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  enable-stack-collection=BOOL\n"));
}

/* options_search_dir() of "-search-dir <type>DIR"; *dir points into a buffer of its own. */
static int search_dir_typed(const char *type, const char *dir_name, unsigned *kinds,
			    const char **dir)
{
	static char value[128];
	char err[1024];

	snprintf(value, sizeof(value), "%s%s", type, dir_name);
	return options_search_dir("-search-dir", value, NULL, kinds, dir, err, sizeof(err));
}

/* -search-dir: a plain directory, VTune's typed forms, and the mistakes people make. */
static void test_options_search_dir(void)
{
	char err[1024], tmp[] = "/tmp/test-options.XXXXXX", file[64];
	const char *dir;
	unsigned kinds;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
	CU_ASSERT_EQUAL(search_dir_typed("", tmp, &kinds, &dir), 0);
	CU_ASSERT_STRING_EQUAL(dir, tmp);
	CU_ASSERT_EQUAL(kinds, SEARCH_DIR_BINARIES);
	CU_ASSERT_EQUAL(search_dir_typed("src:=", tmp, &kinds, &dir), 0);
	CU_ASSERT_STRING_EQUAL(dir, tmp);
	CU_ASSERT_EQUAL(kinds, SEARCH_DIR_SOURCES);
	CU_ASSERT_EQUAL(search_dir_typed("all:rp=", tmp, &kinds, &dir), 0);
	CU_ASSERT_EQUAL(kinds, SEARCH_DIR_BINARIES | SEARCH_DIR_SOURCES);
	CU_ASSERT_EQUAL(search_dir_typed("sym:=", tmp, &kinds, &dir), 0);
	CU_ASSERT_EQUAL(kinds, SEARCH_DIR_BINARIES);
	/* "bin:= ./app": the space took the directory away */
	CU_ASSERT_EQUAL(options_search_dir("-search-dir", "bin:=", "./app", &kinds, &dir, err,
					   sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "-search-dir bin:=DIR"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'./app'"));
	CU_ASSERT_EQUAL(options_search_dir("-search-dir", "bn:=/tmp", NULL, &kinds, &dir, err,
					   sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown search directory type 'bn:'"));
	CU_ASSERT_EQUAL(options_search_dir("-search-dir", "/nonexistent/dir", NULL, &kinds, &dir,
					   err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'/nonexistent/dir' does not exist"));
	snprintf(file, sizeof(file), "%s/f", tmp);
	f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	CU_ASSERT_EQUAL(options_check_dir("search", file, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not a directory"));
	unlink(file);
	rmdir(tmp);
}

UNIT_MAIN("options", NULL, suite_clean,
	  {
		  { "value_forms", test_options_value_forms },
		  { "values_point_into_argv", test_options_values_point_into_argv },
		  { "alias", test_options_alias },
		  { "value_last_wins", test_options_value_last_wins },
		  { "flags", test_options_flags },
		  { "flag_with_value_refused", test_options_flag_with_value_refused },
		  { "list_repeated", test_options_list_repeated },
		  { "double_dash_ends_options", test_options_double_dash_ends_options },
		  { "stop_at_nonoption", test_options_stop_at_nonoption },
		  { "nonoption_refused", test_options_nonoption_refused },
		  { "unknown_suggests", test_options_unknown_suggests },
		  { "unknown_after_good_ones", test_options_unknown_after_good_ones },
		  { "needs_value", test_options_needs_value },
		  { "value_may_start_with_dash", test_options_value_may_start_with_dash },
		  { "choices", test_options_choices },
		  { "empty_table", test_options_empty_table },
		  { "nearest", test_options_nearest },
		  { "knob_parse_ok", test_options_knob_parse_ok },
		  { "knob_parse_errors", test_options_knob_parse_errors },
		  { "parse_double", test_options_parse_double },
		  { "parse_long", test_options_parse_long },
		  { "print_help", test_options_print_help },
		  { "search_dir", test_options_search_dir },
	  })
