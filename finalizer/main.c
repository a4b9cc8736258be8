/* SPDX-License-Identifier: MIT */
/* pfinalize's command line: parse the options and call finalize_run() (pcollect -finalize too). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/options.h"
#include "common/result.h"
#include "finalizer/finalize.h"

static const char *const modes[] = { "full", "fast", NULL };

static const struct option_spec specs[] = {
	{ "result-dir", "r", OPTION_VALUE, "DIR", "the result directory to finalize",
	  "pfinalize -r r000hs", NULL },
	{ "search-dir", NULL, OPTION_LIST, "DIR",
	  "where to look for binaries by file name (recursively), before their original path; "
	  "VTune's bin:=DIR, sym:=DIR, src:=DIR (sources), all:=DIR are taken too",
	  "pfinalize -r res -search-dir ./build -search-dir /opt/app/lib", NULL },
	{ "source-search-dir", NULL, OPTION_LIST, "DIR",
	  "where preport looks for source files (recorded in the database)", NULL, NULL },
	{ "j", "jobs", OPTION_VALUE, "N",
	  "threads to use (default: the number of CPUs); for a parallel job's DIR.<host> results, "
	  "up to N of them at once",
	  "pfinalize -r res -j 4", NULL },
	{ "finalization-mode", NULL, OPTION_VALUE, "MODE",
	  "full (inline chains, the default) or fast (no inline expansion)", NULL, modes },
	{ "no-debuginfod", NULL, OPTION_FLAG, NULL,
	  "never ask the debuginfod servers of DEBUGINFOD_URLS for debug files or binaries", NULL,
	  NULL },
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
	"[-finalization-mode full|fast] [-no-debuginfod] [-quiet|-verbose]";

static const char description[] =
	"Resolve the raw samples of a result directory (modules, functions, source lines,\n"
	"inlined calls) into DIR/result.db, the SQLite database preport reads (docs/schema.md).\n"
	"Given the -r of a parallel job whose ranks wrote DIR.<host> results, finalize them all\n"
	"(under mpirun or srun, each rank its share).";

/*
 * -search-dir and -source-search-dir: every directory must exist; VTune's typed ones go to
 * binaries or sources. *bins and *srcs are allocated (caller frees). Returns 0 or an exit
 * status.
 */
static int search_dirs(const struct options_result *r, const char ***bins, size_t *nbins,
		       const char ***srcs, size_t *nsrcs)
{
	const struct option_value *v = options_get(r, "search-dir");
	const struct option_value *sv = options_get(r, "source-search-dir");
	size_t n = v->nvalues + sv->nvalues + 1, i;
	char err[4096];

	*nbins = *nsrcs = 0;
	*bins = calloc(n, sizeof(**bins));
	*srcs = calloc(n, sizeof(**srcs));
	if (!*bins || !*srcs) {
		log_error("%s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	for (i = 0; i < v->nvalues; i++) {
		const char *dir;
		unsigned kinds;

		if (options_search_dir("-search-dir", v->values[i], NULL, &kinds, &dir, err,
				       sizeof(err))) {
			log_error("%s", err);
			return EXIT_USAGE;
		}
		if (kinds & SEARCH_DIR_BINARIES)
			(*bins)[(*nbins)++] = dir;
		if (kinds & SEARCH_DIR_SOURCES)
			(*srcs)[(*nsrcs)++] = dir;
	}
	for (i = 0; i < sv->nvalues; i++) {
		if (options_check_dir("source search", sv->values[i], err, sizeof(err))) {
			log_error("%s", err);
			return EXIT_USAGE;
		}
		(*srcs)[(*nsrcs)++] = sv->values[i];
	}
	return 0;
}

/*
 * A result directory that does not exist, where a parallel job's per-host ones do: the job.
 * Returns 1 when dir is no job (finalize it as a result), else 0 or a negative errno with
 * the job finalized.
 */
static int finalize_job_dir(const struct finalize_opts *o)
{
	struct result res;
	char **parts = NULL;
	size_t i;
	int ret;

	if ((ret = result_open(&res, o->result_dir))) {
		log_error("cannot list the results of job '%s': %s", o->result_dir, strerror(-ret));
		return ret;
	}
	if (res.kind != RESULT_JOB) {
		ret = 1;
	} else if (!(parts = calloc(res.nparts, sizeof(*parts)))) {
		log_error("cannot list the results of job '%s': %s", o->result_dir,
			  strerror(ENOMEM));
		ret = -ENOMEM;
	} else {
		for (i = 0; i < res.nparts; i++)
			parts[i] = res.parts[i].dir;
		ret = finalize_job(o, parts, res.nparts);
	}
	free(parts);
	result_close(&res);
	return ret;
}

int finalize_main(int argc, char **argv, const char *tool)
{
	struct options_result r;
	struct finalize_opts o = { 0 };
	const char **bins = NULL, **srcs = NULL;
	const char *s;
	char err[256];
	long jobs = 0;
	int ret;

	log_set_tool(tool);
	/* A write past the file size limit (ulimit -f) fails with EFBIG, told as "File too
	   large", instead of killing pfinalize with SIGXFSZ and leaving its temporary file. */
	signal(SIGXFSZ, SIG_IGN);
	if (options_parse(&r, specs, argc, argv, false)) {
		log_error("%s", r.error);
		fprintf(stderr, "%s: see '%s -help'\n", tool, tool);
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
		log_error("no result directory given: %s%s -r DIR", tool,
			  strcmp(tool, "pfinalize") ? " -finalize" : "");
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
	if ((ret = search_dirs(&r, &bins, &o.nsearch_dirs, &srcs, &o.nsource_dirs))) {
		free(bins);
		free(srcs);
		options_release(&r);
		return ret;
	}
	o.search_dirs = bins;
	o.source_dirs = srcs;
	s = options_get_str(&r, "finalization-mode");
	o.fast = s && !strcmp(s, "fast");
	o.quiet = options_has(&r, "quiet");
	o.no_debuginfod = options_has(&r, "no-debuginfod");
	if (o.quiet && options_has(&r, "verbose")) {
		log_error("options '-quiet' and '-verbose' exclude each other");
		options_release(&r);
		return EXIT_USAGE;
	}
	log_set_level(o.quiet ? -1 : options_has(&r, "verbose") ? 1 : 0);
	ret = finalize_job_dir(&o);
	if (ret == 1)
		ret = finalize_run(&o);
	free(bins);
	free(srcs);
	options_release(&r);
	return log_exit_code(ret);
}
