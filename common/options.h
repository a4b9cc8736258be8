/* SPDX-License-Identifier: MIT */
/* VTune-style command-line options shared by pcollect, pfinalize and preport. */
#ifndef PCOLLECT_COMMON_OPTIONS_H
#define PCOLLECT_COMMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Options are long names with one dash (-collect hotspots, -r res); "--name" is accepted too.
 * A value is given as "-opt value" or "-opt=value". "--" ends the options; what follows is the
 * target command (pcollect) and is left in options_result.rest.
 *
 * Each tool describes its options in a NULL-terminated table of struct option_spec and gets
 * back, for each option seen, its values in command-line order.
 */
enum option_kind {
	OPTION_FLAG,  /* no value: -quiet */
	OPTION_VALUE, /* one value; given twice, the last wins: -r res */
	OPTION_LIST,  /* repeatable, each value kept: -search-dir a -search-dir b */
};

struct option_spec {
	const char *name;  /* "collect", without dashes */
	const char *alias; /* another spelling ("r" for "result-dir"), or NULL */
	enum option_kind kind;
	const char *metavar; /* "DIR", shown in -help; NULL for flags */
	const char *help;    /* one line */
	const char *example; /* a whole example command line, shown in -help; may be NULL */
	/* With a non-NULL choices list (NULL-terminated), the value must be one of them. */
	const char *const *choices;
};

/* One parsed option: which spec and its values. */
struct option_value {
	const struct option_spec *spec;
	size_t nvalues, cap;
	char **values; /* pointers into argv or into strings owned by the result */
	bool seen;
};

struct options_result {
	struct option_value *values; /* one per spec, in table order */
	size_t nspecs;
	int rest_argc;    /* what follows "--" (or the first non-option word) */
	char **rest_argv; /* points into the caller's argv */
	char error[512];  /* after a failure: the message, without the tool's name */
};

/*
 * Parse argv[1..argc-1] against the NULL-name-terminated table specs.
 * stop_at_nonoption: a word that is not an option ends the options (pcollect's target may
 * follow without "--"); otherwise such a word is an error. A lone "-" is such a word.
 * OPTION_VALUE and OPTION_LIST take the next word as their value even when it starts with '-'
 * (-r -weird), but not "--"; an empty value is refused. A flag given "=value" is refused.
 * An unknown option or a value not among choices is refused naming the nearest candidate.
 * Returns 0, or -EINVAL with r->error set, e.g.
 *   unknown option '-colect' (did you mean '-collect'?)
 *   option '-r' needs a value
 *   invalid value 'hotspot' for option '-collect' (did you mean 'hotspots'?)
 * The caller frees with options_release(), which is safe after a failure and when repeated.
 */
int options_parse(struct options_result *r, const struct option_spec *specs, int argc, char **argv,
		  bool stop_at_nonoption);
void options_release(struct options_result *r);

/* The parsed value of the option named name (or its alias). */
const struct option_value *options_get(const struct options_result *r, const char *name);
/* The last value given, or NULL when the option was not given. */
const char *options_get_str(const struct options_result *r, const char *name);
bool options_has(const struct options_result *r, const char *name);

/* Print "Usage: <synopsis>" and every option with its metavar, help and example. */
void options_print_help(const struct option_spec *specs, const char *tool, const char *synopsis,
			const char *description);

/*
 * Knobs: "-knob name=value". A knob table lists each valid knob name and a help line.
 * knob_parse() splits "name=value", checks the name against the table and returns 0, or
 * -EINVAL with err set ("unknown knob 'sampling-intervl' (did you mean 'sampling-interval'?)"
 * or "knob 'x' needs a value: -knob x=VALUE").
 */
struct knob_spec {
	const char *name;
	const char *metavar; /* "MS" */
	const char *help;
};
int knob_parse(const struct knob_spec *knobs, const char *arg, char *name, size_t name_size,
	       const char **value, char *err, size_t err_size);

/* Print the NULL-name-terminated knob table ("Knobs (-knob name=value):" then one row each). */
void options_print_knobs(const struct knob_spec *knobs);

/*
 * What every tool does with -help (the help, then the knobs when knobs is not NULL) and
 * -version ("<tool> <version>"), on stdout. True when one of them was given: the tool then
 * exits 0.
 */
bool options_help_or_version(const struct options_result *r, const struct option_spec *specs,
			     const struct knob_spec *knobs, const char *synopsis,
			     const char *description);

/*
 * The candidate closest to word, or NULL when none is close enough: the candidate word is a
 * prefix of, when only one; otherwise the first with the smallest edit distance (ignoring
 * case), if that distance is at most max(2, strlen(word) / 3) and less than the length of the
 * longer word (replacing every letter is no near miss).
 */
const char *options_nearest(const char *word, const char *const *candidates, size_t n);

/*
 * Number parsing with range checks, for option and knob values. Return 0 or -EINVAL with err
 * set ("invalid value 'abc' for knob 'sampling-interval': expected a number from 1 to 1000").
 * what names the subject as the message shows it: "knob 'sampling-interval'" or
 * "option '-duration'"; a bare word is quoted ("for 'duration'"). Only decimal notation is
 * taken: no trailing garbage, no leading blanks, no hex, NaN or infinity. A bound of
 * -DBL_MAX/DBL_MAX (LONG_MIN/LONG_MAX) means unbounded on that side.
 */
int options_parse_double(const char *what, const char *s, double min, double max, double *out,
			 char *err, size_t err_size);
int options_parse_long(const char *what, const char *s, long min, long max, long *out, char *err,
		       size_t err_size);

/*
 * What a -search-dir directory is searched for. VTune's typed form names it: "bin:=DIR"
 * (binaries), "sym:=DIR" (debug files), "src:=DIR" (sources), "all:=DIR" (everything); a
 * bare "DIR" is for binaries and debug files.
 */
enum search_dir_kind {
	SEARCH_DIR_BINARIES = 1 << 0, /* binaries and their debug files */
	SEARCH_DIR_SOURCES = 1 << 1,
};

/*
 * Parse a -search-dir value (option names the option in messages, "-search-dir") and check
 * that its directory exists. VTune's flags before '=' ("bin:rp=DIR": r recursive, p path)
 * are accepted; every search here is recursive. next is the word that followed the option
 * on the command line, or NULL: when the value is "bin:=" with nothing after the '=', the
 * user wrote a space there and next was taken for something else (pcollect: the program),
 * which the message says. Sets *kinds (enum search_dir_kind) and *dir (pointing into value).
 * Returns 0, or -EINVAL with err set: "option '-search-dir': no directory after 'bin:=' ...",
 * "search directory 'x' does not exist", "unknown search directory type 'bn:' ...".
 */
int options_search_dir(const char *option, const char *value, const char *next, unsigned *kinds,
		       const char **dir, char *err, size_t err_size);

/* Check that dir exists and is a directory; err: "search directory 'x' does not exist". */
int options_check_dir(const char *option, const char *dir, char *err, size_t err_size);

#endif
