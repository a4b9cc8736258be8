/* SPDX-License-Identifier: MIT */
/* preport's command line: views as text, CSV or JSON, exports, the HTML report (pcollect -report).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/options.h"
#include "report/report.h"

static const char *const on_off[] = { "on", "off", NULL };
static const char *const stack_modes[] = { "user-only", "all", "python-only", NULL };
static const char *const recursion_modes[] = { "expand", "collapse", NULL };
static const char *const name_styles[] = { "full", "short", NULL };

static const struct option_spec specs[] = {
	{ "result-dir", "r", OPTION_LIST, "DIR|PATTERN",
	  "result to read, or a quoted pattern ('runs/*'): the runs it matches, merged; give "
	  "two for a difference report (hotspots, top-down, bottom-up, caller-callee)",
	  "preport -r r000hs -view hotspots", NULL },
	{ "view", "report", OPTION_VALUE, "NAME", "what to show (default: summary)",
	  "preport -r r000hs -view bottom-up", report_views },
	{ "group-by", NULL, OPTION_VALUE, "KEYS",
	  "hotspots rows by function, module, source-line, thread, process, rank, node, "
	  "wait-kind, sync-object, region, task (asyncio), run (-r PATTERN), or several joined "
	  "by commas; top-down, bottom-up, callstacks and the exports: thread, process, rank, "
	  "node, module, wait-kind, sync-object, region, task, run as the tree's top levels",
	  "preport -r r000hs -view top-down -group-by thread", NULL },
	{ "filter", NULL, OPTION_LIST, "KEY=VALUE",
	  "keep samples by module, thread, process, function, language (python, native), "
	  "wait-kind, sync-object, rank, node, region (a name in the region path) or run "
	  "(-r PATTERN: a run's path or last component); "
	  "KEY!=VALUE excludes",
	  "preport -r r000hs -view hotspots -filter module=libm.so.6", NULL },
	{ "limit", NULL, OPTION_VALUE, "N", "show at most N rows (hotspots, stacks, functions)",
	  NULL, NULL },
	{ "metric", NULL, OPTION_LIST, "NAME",
	  "show this metric (repeatable, in order; default: every metric of the result)",
	  "preport -r r000hs -view hotspots -metric 'CPU Time'", NULL },
	{ "sort-desc", NULL, OPTION_VALUE, "COLUMN",
	  "sort by this column or metric ('Wait Time', 'Wait Time:Self'), largest first",
	  "preport -r r000hs -view hotspots -sort-desc 'CPU Time:Total'", NULL },
	{ "threshold", NULL, OPTION_VALUE, "[METRIC:]PCT",
	  "hide tree nodes, stacks and functions below PCT percent of the total of every shown "
	  "metric (default 1), or of METRIC's",
	  "preport -r r000hs -view top-down -threshold "
	  "'Wait Time:5'",
	  NULL },
	{ "inline-mode", NULL, OPTION_VALUE, "on|off",
	  "on: inlined functions shown as their own frames (default); off: merged into their "
	  "caller",
	  NULL, on_off },
	{ "call-stack-mode", NULL, OPTION_VALUE, "MODE",
	  "user-only hides start-up, thread-entry, signal and agent frames and the Python "
	  "interpreter's own frames (default); all keeps them; python-only keeps only Python "
	  "frames in stacks that have some",
	  "preport -r r000hs -view hotspots "
	  "-call-stack-mode python-only",
	  stack_modes },
	{ "recursion-mode", NULL, OPTION_VALUE, "MODE",
	  "expand (default) or collapse: merge a recursive call into its outermost frame "
	  "(top-down, bottom-up, callstacks, caller-callee)",
	  "preport -r r000hs -view top-down "
	  "-recursion-mode collapse",
	  recursion_modes },
	{ "stitch", NULL, OPTION_FLAG, NULL,
	  "show a thread's time under the call stack that created it (pthread_create, "
	  "threading.Thread.start), as if the thread's work were a call made there",
	  "preport -r r000hs -view top-down -stitch", NULL },
	{ "name-style", NULL, OPTION_VALUE, "STYLE",
	  "full (default) or short: function names without C++ parameter lists", NULL,
	  name_styles },
	{ "function", NULL, OPTION_VALUE, "NAME",
	  "caller-callee, hotspots: this function only (its short name will do: relax)",
	  "preport -r r000hs -view caller-callee -function compute", NULL },
	{ "show-from", NULL, OPTION_VALUE, "NAME[@FILE]",
	  "start each stack that goes through this function at its outermost call, leaving out "
	  "its callers (pprof's show_from; FILE: the end of its source file's path, for a Python "
	  "'<module>')",
	  "preport -r r000hs -view top-down -show-from solve", NULL },
	{ "source-object", NULL, OPTION_VALUE, "function=NAME|file=PATH",
	  "source: the function or file to print with time per line",
	  "preport -r r000hs -view source -source-object function=compute", NULL },
	{ "source-search-dir", NULL, OPTION_LIST, "DIR",
	  "where to look for source files that moved since the build", NULL, NULL },
	{ "time-filter", NULL, OPTION_VALUE, "START:END",
	  "keep samples taken between START and END seconds from the start",
	  "preport -r r000hs -view hotspots -time-filter 1.5:3", NULL },
	{ "time-buckets", NULL, OPTION_VALUE, "N",
	  "timeline: cut the time into N buckets (default 20)",
	  "preport -r r000tr -view timeline -time-buckets 50", NULL },
	{ "format", NULL, OPTION_VALUE, "FMT",
	  "output format (default text); pstats, callgrind, folded, speedscope, chrome, pprof, "
	  "firefox: the profile for those tools; html: a self-contained interactive report",
	  "preport -r r000hs -format html -report-output report.html", report_formats },
	{ "csv-delimiter", NULL, OPTION_VALUE, "CHAR",
	  "CSV field separator: a character, or comma, tab, semicolon (default comma)", NULL,
	  NULL },
	{ "csv-raw", NULL, OPTION_FLAG, NULL,
	  "CSV cells as they are: no escaped control characters, no quote before a cell a "
	  "spreadsheet would take for a formula (=, +, -, @)",
	  NULL, NULL },
	{ "report-output", NULL, OPTION_VALUE, "FILE", "write the report to FILE", NULL, NULL },
	{ "width", NULL, OPTION_VALUE, "N",
	  "text width in columns (default: the terminal's; no limit into a file or pipe)", NULL,
	  NULL },
	{ "fail-if-slower", NULL, OPTION_VALUE, "PCT",
	  "with -r BASE -r NEW (each a set of runs: -r 'base/*'): exit 1 when the total or a "
	  "function's time grew by more than PCT percent beyond the runs' noise (one-sided "
	  "Mann-Whitney U at -fail-alpha, and the Hodges-Lehmann effect's lower bound above PCT)",
	  "preport -r 'base/*' -r 'new/*' -fail-if-slower 5", NULL },
	{ "fail-alpha", NULL, OPTION_VALUE, "ALPHA",
	  "-fail-if-slower's significance level (default 0.05)", NULL, NULL },
	{ "junit", NULL, OPTION_VALUE, "FILE",
	  "-fail-if-slower: write its verdicts as JUnit XML to FILE, for CI systems",
	  "preport -r 'base/*' -r 'new/*' -fail-if-slower 5 -junit gate.xml", NULL },
	{ "quiet", "q", OPTION_FLAG, NULL, "no progress messages", NULL, NULL },
	{ "verbose", "v", OPTION_FLAG, NULL,
	  "debug lines: the database read, where source files were looked for",
	  "preport -r r000hs -view source -source-object function=solve -v", NULL },
	{ "help", "h", OPTION_FLAG, NULL, "show this help", NULL, NULL },
	{ "version", NULL, OPTION_FLAG, NULL, "show the version", NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL },
};

static char parse_delimiter(const char *s)
{
	if (!s || !strcmp(s, "comma"))
		return ',';
	if (!strcmp(s, "tab") || !strcmp(s, "\\t"))
		return '\t';
	if (!strcmp(s, "semicolon"))
		return ';';
	if (!strcmp(s, "space"))
		return ' ';
	if (strlen(s) == 1 && s[0] != '"' && s[0] != '\n' && s[0] != '\r')
		return s[0];
	die(EXIT_USAGE,
	    "invalid value '%s' for option '-csv-delimiter': expected one character "
	    "or comma, tab, semicolon, space",
	    s);
}

static long number(const char *opt, const char *s, long min, long max)
{
	char what[64], err[256];
	long v;

	snprintf(what, sizeof(what), "option '-%s'", opt);
	if (options_parse_long(what, s, min, max, &v, err, sizeof(err)))
		die(EXIT_USAGE, "%s", err);
	return v;
}

/* -source-search-dir: each must exist. */
static void check_source_dirs(const struct report_opts *o)
{
	char err[4096];
	size_t i;

	for (i = 0; i < o->nsource_dirs; i++)
		if (options_check_dir("source search", o->source_dirs[i], err, sizeof(err)))
			die(EXIT_USAGE, "%s", err);
}

int report_main(int argc, char **argv, const char *tool)
{
	struct options_result res;
	struct report_opts o = { 0 };
	const struct option_value *v;
	char *threshold_metric = NULL;
	const char *s;
	char ferr[256];
	int rc;

	log_set_tool(tool);
	if (options_parse(&res, specs, argc, argv, false)) {
		log_error("%s", res.error);
		fprintf(stderr, "%s: see '%s -help'\n", tool, tool);
		options_release(&res);
		return EXIT_USAGE;
	}
	if (options_help_or_version(
		    &res, specs, NULL, "preport -r DIR [-view NAME] [options]",
		    "Print a view of a result collected by pcollect: summary, "
		    "hotspots, top-down, bottom-up,\ncaller-callee, callstacks, "
		    "source, timeline or mpi, as text, CSV or JSON; export it for\nother "
		    "tools (pstats, callgrind, folded, speedscope, chrome, pprof, firefox) or as an HTML "
		    "report\n(see docs/preport.md).")) {
		options_release(&res);
		return EXIT_OK;
	}
	if (res.rest_argc > 0)
		die(EXIT_USAGE, "unexpected argument '%s'; give the result with -r DIR",
		    res.rest_argv[0]);
	v = options_get(&res, "result-dir");
	o.results = (const char *const *)v->values;
	o.nresults = v->nvalues;
	if (!o.nresults)
		die(EXIT_USAGE, "no result given: use %s -r DIR (see '%s -help')", tool, tool);
	o.view = options_get_str(&res, "view");
	o.group_by = options_get_str(&res, "group-by");
	v = options_get(&res, "filter");
	o.filters = (const char *const *)v->values;
	o.nfilters = v->nvalues;
	o.limit = (s = options_get_str(&res, "limit")) ? number("limit", s, 1, 1000000000L) : 0;
	o.sort_desc = options_get_str(&res, "sort-desc");
	v = options_get(&res, "metric");
	o.metrics = (const char *const *)v->values;
	o.nmetrics = v->nvalues;
	o.threshold = 1.0;
	if ((s = options_get_str(&res, "threshold"))) {
		const char *colon = strrchr(s, ':');
		char err[256];

		/* "Wait Time:5": judged by that metric alone. */
		if (colon) {
			o.threshold_metric = threshold_metric = strndup(s, (size_t)(colon - s));
			s = colon + 1;
		}
		if (options_parse_double("option '-threshold'", s, 0, 100, &o.threshold, err,
					 sizeof(err)))
			die(EXIT_USAGE, "%s", err);
	}
	s = options_get_str(&res, "recursion-mode");
	o.collapse_recursion = s && !strcmp(s, "collapse");
	s = options_get_str(&res, "name-style");
	o.short_names = s && !strcmp(s, "short");
	s = options_get_str(&res, "inline-mode");
	o.inline_on = !s || !strcmp(s, "on");
	o.stitch = options_has(&res, "stitch");
	s = options_get_str(&res, "call-stack-mode");
	o.all_frames = s && !strcmp(s, "all");
	o.python_only = s && !strcmp(s, "python-only");
	o.function = options_get_str(&res, "function");
	o.show_from = options_get_str(&res, "show-from");
	o.source_object = options_get_str(&res, "source-object");
	v = options_get(&res, "source-search-dir");
	o.source_dirs = (const char *const *)v->values;
	o.nsource_dirs = v->nvalues;
	check_source_dirs(&o);
	o.time_filter = options_get_str(&res, "time-filter");
	o.time_buckets = (s = options_get_str(&res, "time-buckets"))
				 ? (int)number("time-buckets", s, 1, 10000)
				 : 0;
	s = options_get_str(&res, "format");
	o.format = !s || !strcmp(s, "text") ? REPORT_TEXT
		   : !strcmp(s, "csv")      ? REPORT_CSV
		   : !strcmp(s, "json")     ? REPORT_JSON
					    : REPORT_EXPORT;
	o.export_format = o.format == REPORT_EXPORT ? s : NULL;
	o.csv_delimiter = parse_delimiter(options_get_str(&res, "csv-delimiter"));
	o.csv_raw = options_has(&res, "csv-raw");
	o.output = options_get_str(&res, "report-output");
	o.width = (s = options_get_str(&res, "width")) ? (int)number("width", s, 40, 10000) : 0;
	o.fail_if_slower = -1;
	o.fail_alpha = 0.05;
	if ((s = options_get_str(&res, "fail-if-slower")) &&
	    options_parse_double("option '-fail-if-slower'", s, 0, 1e6, &o.fail_if_slower, ferr,
				 sizeof(ferr)))
		die(EXIT_USAGE, "%s", ferr);
	if ((s = options_get_str(&res, "fail-alpha")) &&
	    options_parse_double("option '-fail-alpha'", s, 1e-9, 0.5, &o.fail_alpha, ferr,
				 sizeof(ferr)))
		die(EXIT_USAGE, "%s", ferr);
	o.junit = options_get_str(&res, "junit");
	if ((o.junit || options_get_str(&res, "fail-alpha")) && o.fail_if_slower < 0)
		die(EXIT_USAGE, "options '-junit' and '-fail-alpha' go with -fail-if-slower PCT");
	if (o.fail_if_slower >= 0 && o.nresults != 2)
		die(EXIT_USAGE,
		    "option '-fail-if-slower' compares two sets of runs: -r 'base/*' "
		    "-r 'new/*' -fail-if-slower %s",
		    s ? s : options_get_str(&res, "fail-if-slower"));
	o.quiet = options_has(&res, "quiet");
	if (o.quiet && options_has(&res, "verbose"))
		die(EXIT_USAGE, "options '-quiet' and '-verbose' exclude each other");
	log_set_level(o.quiet ? -1 : options_has(&res, "verbose") ? 1 : 0);

	rc = report_run(&o);
	free(threshold_metric);
	options_release(&res);
	return log_exit_code(rc);
}
