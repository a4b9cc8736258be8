/* SPDX-License-Identifier: MIT */
/* pfinalize: parse the options and call finalize_run(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/options.h"
#include "finalizer/finalize.h"

static const char *const modes[] = { "full", "fast", NULL };

static const struct option_spec specs[] = {
	{ "result-dir", "r", OPTION_VALUE, "DIR", "the result directory to finalize",
	  "pfinalize -r r000hs", NULL },
	{ "search-dir", NULL, OPTION_LIST, "DIR",
	  "where to look for binaries by file name (recursively), before their original path",
	  "pfinalize -r res -search-dir ./build -search-dir /opt/app/lib", NULL },
	{ "source-search-dir", NULL, OPTION_LIST, "DIR",
	  "where preport looks for source files (recorded in the database)", NULL, NULL },
	{ "j", "jobs", OPTION_VALUE, "N", "threads to use (default: the number of CPUs)",
	  "pfinalize -r res -j 4", NULL },
	{ "finalization-mode", NULL, OPTION_VALUE, "MODE",
	  "full (inline chains, the default) or fast (no inline expansion)", NULL, modes },
	{ "quiet", "q", OPTION_FLAG, NULL, "print errors only, no summary", NULL, NULL },
	{ "verbose", "v", OPTION_FLAG, NULL,
	  "debug lines: the files tried for each module, the symbols and DWARF read",
	  "pfinalize -r res -v -search-dir ./build", NULL },
	{ "help", "h", OPTION_FLAG, NULL, "show this help", NULL, NULL },
	{ "version", NULL, OPTION_FLAG, NULL, "show the version", NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL },
};

static const char synopsis[] =
	"pfinalize -r DIR [-search-dir DIR]... [-source-search-dir DIR]... [-j N] "
	"[-finalization-mode full|fast] [-quiet|-verbose]";

static const char description[] =
	"Resolve the raw samples of a result directory (modules, functions, source lines,\n"
	"inlined calls) into DIR/result.db, the SQLite database preport reads (docs/schema.md).";

int main(int argc, char **argv)
{
	struct options_result r;
	struct finalize_opts o = { 0 };
	const struct option_value *v;
	const char *s;
	char err[256];
	long jobs = 0;
	int ret;

	log_set_tool("pfinalize");
	if (options_parse(&r, specs, argc, argv, false)) {
		log_error("%s", r.error);
		fprintf(stderr, "pfinalize: see 'pfinalize -help'\n");
		options_release(&r);
		return EXIT_USAGE;
	}
	if (options_help_or_version(&r, specs, NULL, synopsis, description)) {
		options_release(&r);
		return EXIT_OK;
	}
	if (r.rest_argc > 0) {
		log_error("unexpected argument '%s'", r.rest_argv[0]);
		options_release(&r);
		return EXIT_USAGE;
	}
	o.result_dir = options_get_str(&r, "result-dir");
	if (!o.result_dir) {
		log_error("no result directory given: pfinalize -r DIR");
		options_release(&r);
		return EXIT_USAGE;
	}
	if ((s = options_get_str(&r, "j")) &&
	    options_parse_long("option '-j'", s, 1, 1024, &jobs, err, sizeof(err))) {
		log_error("%s", err);
		options_release(&r);
		return EXIT_USAGE;
	}
	o.jobs = (int)jobs;
	v = options_get(&r, "search-dir");
	if (v && v->seen) {
		o.search_dirs = (const char *const *)v->values;
		o.nsearch_dirs = v->nvalues;
	}
	v = options_get(&r, "source-search-dir");
	if (v && v->seen) {
		o.source_dirs = (const char *const *)v->values;
		o.nsource_dirs = v->nvalues;
	}
	s = options_get_str(&r, "finalization-mode");
	o.fast = s && !strcmp(s, "fast");
	o.quiet = options_has(&r, "quiet");
	if (o.quiet && options_has(&r, "verbose")) {
		log_error("options '-quiet' and '-verbose' exclude each other");
		options_release(&r);
		return EXIT_USAGE;
	}
	log_set_level(o.quiet ? -1 : options_has(&r, "verbose") ? 1 : 0);
	ret = finalize_run(&o);
	options_release(&r);
	return log_exit_code(ret);
}
