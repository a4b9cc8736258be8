/* SPDX-License-Identifier: MIT */
/* pcollect: parse the command line and hand the collection to collect_run(). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent-env.h"
#include "collector/pcollect/launcher.h"
#include "common/log.h"
#include "common/str.h"
#include "common/options.h"

static const char *const analyses[] = { "hotspots", "threading", "locksandwaits",
					"memory-consumption", NULL };
static const char *const finalization_modes[] = { "full", "fast", "deferred", "none", NULL };
static const char *const result_modes[] = { "private", "group", NULL };
static const char *const commands[] = { "pause", "resume", "stop", "snapshot", NULL };

static const struct option_spec specs[] = {
	{ "collect", "c", OPTION_VALUE, "ANALYSIS",
	  "analysis to run: hotspots (where the CPU time goes, with call stacks), threading "
	  "(the same and where the threads wait: locks, conditions, sleeps, I/O, joins, the GIL, "
	  "OpenMP; locksandwaits is its older name) or memory-consumption (every allocation and "
	  "free: allocated, peak, leaked bytes per call stack)",
	  "pcollect -collect threading -r res -- ./app args", analyses },
	{ "result-dir", "r", OPTION_VALUE, "DIR",
	  "result directory to create (default: the next free r000hs, r001hs, ..., r000tr for "
	  "threading, r000mc for memory-consumption)",
	  NULL, NULL },
	{ "knob", NULL, OPTION_LIST, "NAME=VALUE", "set an analysis knob (see Knobs below)",
	  "pcollect -collect hotspots -knob sampling-interval=1 -- ./app", NULL },
	{ "duration", "d", OPTION_VALUE, "SEC",
	  "stop sampling after SEC seconds; the program runs on to its end", NULL, NULL },
	{ "data-limit", NULL, OPTION_VALUE, "MB",
	  "stop sampling once the raw data reaches MB megabytes (default 1000, 0: no limit)", NULL,
	  NULL },
	{ "ring-buffer", NULL, OPTION_VALUE, "SEC",
	  "keep only the last SEC seconds of samples, waits and MPI calls (at most one chunk "
	  "more), in bounded space: for long runs; -command snapshot finalizes the window so far",
	  "pcollect -ring-buffer 60 -r res -- ./server", NULL },
	{ "follow-child", NULL, OPTION_FLAG, NULL,
	  "profile child processes too: fork, exec, posix_spawn, system (the default)", NULL,
	  NULL },
	{ "no-follow-child", NULL, OPTION_FLAG, NULL,
	  "profile only the launched process and the programs it execs", NULL, NULL },
	{ "finalization-mode", NULL, OPTION_VALUE, "MODE",
	  "after the run: full or fast (finalize), deferred (-archive, finalize elsewhere), none",
	  "pcollect -collect hotspots -finalization-mode=none -- ./app", finalization_modes },
	{ "trace-mpi", NULL, OPTION_FLAG, NULL,
	  "trace MPI calls (Open MPI, MPICH): MPI time, calls and bytes per call site and rank",
	  "mpirun -np 4 pcollect -collect hotspots -trace-mpi -r res -- ./app", NULL },
	{ "archive", NULL, OPTION_FLAG, NULL,
	  "copy the binaries that have samples into the result, to finalize on another machine",
	  NULL, NULL },
	{ "result-mode", NULL, OPTION_VALUE, "MODE",
	  "who may read the result: private (you only, the default) or group (your group too)",
	  "pcollect -collect hotspots -result-mode group -r /shared/res -- ./app", result_modes },
	{ "search-dir", NULL, OPTION_LIST, "DIR",
	  "where finalization looks for binaries and debug files (repeatable); VTune's bin:=DIR, "
	  "sym:=DIR, src:=DIR (sources, for preport), all:=DIR are taken too",
	  "pcollect -collect hotspots -search-dir bin:=./build -- ./build/app", NULL },
	{ "finalize", NULL, OPTION_FLAG, NULL,
	  "finalize a result instead of collecting: pcollect -finalize -r DIR [pfinalize's "
	  "options] runs pfinalize",
	  "pcollect -finalize -r r000hs.nid00058", NULL },
	{ "report", NULL, OPTION_VALUE, "NAME",
	  "report a result instead of collecting: pcollect -report hotspots -r DIR [preport's "
	  "options] runs preport -view hotspots (VTune's names: summary, hotspots, top-down, "
	  "bottom-up, callstacks, caller-callee, gprof-cc)",
	  "pcollect -report hotspots -r r000hs", NULL },
	{ "target-pid", NULL, OPTION_VALUE, "PID",
	  "attach to a running process instead of starting a program: sample it (its threads, "
	  "the children it makes from then on) until -duration, Ctrl-C, -command stop or its "
	  "end, then let it go and finalize",
	  "pcollect -collect hotspots -target-pid 4321 "
	  "-duration 10 -r res",
	  NULL },
	{ "target-loads-agent", NULL, OPTION_FLAG, NULL,
	  "-target-pid: the target, pcollect's caller, loads the agent itself (no ptrace): pcollect "
	  "writes the agent's path and configuration to stdout and reads the answer of its "
	  "pcollect_attach() and then the end from stdin (the Python module's pcollect.profile())",
	  NULL, NULL },
	{ "start-paused", NULL, OPTION_FLAG, NULL,
	  "start with sampling paused: the program's pcollect_resume(), -resume-after or "
	  "'-command resume' starts it",
	  "pcollect -collect hotspots -start-paused -- ./app", NULL },
	{ "resume-after", NULL, OPTION_VALUE, "SEC",
	  "start paused and resume SEC seconds after the start (fractions allowed)",
	  "pcollect -collect hotspots -resume-after 5 -- ./app", NULL },
	{ "command", NULL, OPTION_VALUE, "CMD",
	  "steer a running collection from another shell: pause, resume or stop it (every "
	  "process of it), or finalize what it holds so far into DIR/snapshots/N (snapshot); "
	  "with -r DIR",
	  "pcollect -r res -command pause", commands },
	{ "quiet", "q", OPTION_FLAG, NULL, "print only errors", NULL, NULL },
	{ "verbose", "v", OPTION_FLAG, NULL,
	  "debug lines: the agent and result directory, then as pfinalize -verbose", NULL, NULL },
	{ "help", "h", OPTION_FLAG, NULL, "show this help", NULL, NULL },
	{ "version", NULL, OPTION_FLAG, NULL, "show the version", NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL },
};

static const struct knob_spec knobs[] = {
	{ "sampling-interval", "MS",
	  "CPU time between samples of a thread, 1 to 1000 ms, fractions allowed (default 10); "
	  "memory-consumption: wall time between two points of the live heap timeline" },
	{ "stack-depth", "N", "frames kept per call stack, 1 to 2048 (default 256)" },
	{ "sampling-clock", "timer|task-clock",
	  "per-thread CPU-time timer, fires at kernel ticks (default), or perf task-clock event" },
	{ "sampling-signal", "N",
	  "the real-time signal the samples come with (default: the highest one the program "
	  "leaves free, chosen by each process)" },
	{ "mpi-threshold", "US",
	  "-trace-mpi: an MPI call this long (microseconds) is recorded with its own call stack "
	  "and time; shorter ones are summed per call site (default 100)" },
	{ "enable-wait-time", "true|false",
	  "hotspots: also record where the threads wait, as -collect threading (default false)" },
	{ "wait-threshold", "US",
	  "waits at least this long get their own call stack; shorter ones are summed per call "
	  "site, 0 to 1000000 us, fractions allowed (default 100)" },
	{ "sampling", "exact|bytes:N",
	  "memory-consumption: every allocation (exact, the default), or a Poisson sample of one "
	  "per N bytes allocated on average, 1 to 2^31, with unbiased totals" },
	{ NULL, NULL, NULL },
};

static const char synopsis[] =
	"pcollect [-collect hotspots|threading|memory-consumption] [options] [--] program "
	"[args...]\n"
	"       pcollect [-collect hotspots] [options] -target-pid PID\n"
	"       pcollect -r DIR -command pause|resume|stop|snapshot";
static const char description[] =
	"Run a program and record where each of its threads and child processes spends its CPU\n"
	"time, with full call stacks, and with -collect threading where they wait, or with\n"
	"-collect memory-consumption what it allocates and frees. pfinalize turns the result\n"
	"into a database; preport shows it. Without -collect, hotspots.";

static _Noreturn void usage_error(const char *msg)
{
	log_error("%s", msg);
	fprintf(stderr, "%s: see '%s -help'\n", log_tool(), log_tool());
	exit(EXIT_USAGE);
}

/* A time option in seconds (fractions allowed, min to 1e7) into *ns; false when not given. */
static bool seconds_option(const struct options_result *r, const char *name, double min,
			   uint64_t *ns)
{
	const char *s = options_get_str(r, name);
	char what[64], err[512];
	double sec;

	if (!s)
		return false;
	snprintf(what, sizeof(what), "option '-%s'", name);
	if (options_parse_double(what, s, min, 1e7, &sec, err, sizeof(err)))
		usage_error(err);
	*ns = (uint64_t)(sec * 1e9 + 0.5);
	return true;
}

/*
 * True when word is an option that may take the next word as its value: any dash word
 * without "=" but pcollect's flags (pfinalize's and preport's options take values, but for
 * -quiet, which pcollect has too).
 */
static bool takes_value(const char *word)
{
	static const char *const flags[] = { "quiet",
					     "q",
					     "help",
					     "h",
					     "version",
					     "follow-child",
					     "no-follow-child",
					     "archive",
					     "finalize",
					     "trace-mpi",
					     "start-paused",
					     "target-loads-agent",
					     NULL };
	const char *const *f;

	if (!word || word[0] != '-' || !word[1] || strchr(word, '=') || !strcmp(word, "--"))
		return false;
	word += word[1] == '-' ? 2 : 1;
	for (f = flags; *f; f++)
		if (!strcmp(word, *f))
			return false;
	return true;
}

/* VTune's report names that preport spells otherwise (the others are its view names). */
static const struct {
	const char *vtune, *view;
} vtune_reports[] = {
	{ "gprof-cc", "caller-callee" },
};

/*
 * VTune's other actions: "pcollect -finalize ..." is pfinalize and "pcollect -report NAME
 * ..." is preport -view NAME, with their options, run as programs that speak as pcollect.
 * Only the words before the program (or "--") are looked at.
 * Returns -1 when argv asks for neither, else the exit status.
 */
static int other_action(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	int i, n = 1, mode = 0, code;
	const char *view = NULL;
	char *opt = NULL;
	size_t k;

	if (!args)
		return -1;
	args[0] = "pcollect";
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i] + (argv[i][0] == '-' && argv[i][1] == '-');

		/* The program's words begin at the first word that is no option's value. */
		if (a[0] != '-' && !takes_value(i > 1 ? argv[i - 1] : NULL))
			break;
		if (!strcmp(a, "-finalize")) {
			mode |= 1;
			continue;
		}
		if (!strcmp(a, "-report") || !strncmp(a, "-report=", 8)) {
			mode |= 2;
			view = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : "";
			continue;
		}
		args[n++] = argv[i];
	}
	if (!mode) {
		free(args);
		return -1;
	}
	for (; i < argc; i++)
		args[n++] = argv[i];
	/* pfinalize and preport take no program: a stray word is theirs to refuse. */
	if (mode == 3)
		usage_error("options '-finalize' and '-report' exclude each other: finalize first, "
			    "then report");
	if (mode == 2) {
		for (k = 0; k < sizeof(vtune_reports) / sizeof(vtune_reports[0]); k++)
			if (!strcmp(view, vtune_reports[k].vtune))
				view = vtune_reports[k].view;
		/* preport's -report is its -view; a name it does not know, it refuses (nearest). */
		if (asprintf(&opt, "-report=%s", view) < 0)
			usage_error(strerror(ENOMEM));
		memmove(args + 2, args + 1, (size_t)(n - 1) * sizeof(*args));
		args[1] = opt;
	}
	code = launcher_run_tool(mode == 1 ? "pfinalize" : "preport", args);
	free(opt);
	free(args);
	return code;
}

/* The value of knob name among choices (NULL-terminated): its index; a usage error if none. */
static int knob_choice(const char *name, const char *value, const char *const *choices)
{
	char err[512];
	char *all;
	size_t n;

	for (n = 0; choices[n]; n++)
		if (!strcmp(value, choices[n]))
			return (int)n;
	all = str_join((const char *const *)choices, n, ", ");
	err_set(err, sizeof(err), "knob '%s': '%s' is not one of: %s", name, value,
		all ? all : strerror(ENOMEM));
	usage_error(err);
}

/*
 * -knob NAME=VALUE, each in turn into o; *enable_wait (-knob enable-wait-time: 1 or 0) and
 * *threshold_given (-knob wait-threshold) for the checks that look at several options.
 */
static void knobs_apply(const struct option_value *v, struct collect_opts *o, int *enable_wait,
			bool *threshold_given)
{
	static const char *const clocks[] = { "timer", "task-clock", NULL };
	static const char *const truth[] = { "true", "false", NULL };
	/* The knobs that are a number in a unit: value x scale, in ns. */
	const struct {
		const char *name;
		double min, max, scale;
		uint64_t *ns;
	} numbers[] = {
		{ "sampling-interval", 1, 1000, 1e6, &o->interval_ns },
		{ "mpi-threshold", 0, 1e9, 1e3, &o->mpi_threshold_ns },
		{ "wait-threshold", 0, 1e6, 1e3, &o->wait_threshold_ns },
	};
	char err[4096], name[64], what[96];
	size_t i, k;

	for (i = 0; v && i < v->nvalues; i++) {
		const char *value;
		double d;
		long n;

		if (knob_parse(knobs, v->values[i], name, sizeof(name), &value, err, sizeof(err)))
			usage_error(err);
		snprintf(what, sizeof(what), "knob '%s'", name);
		for (k = 0; k < sizeof(numbers) / sizeof(numbers[0]); k++)
			if (!strcmp(name, numbers[k].name))
				break;
		if (k < sizeof(numbers) / sizeof(numbers[0])) {
			if (options_parse_double(what, value, numbers[k].min, numbers[k].max, &d,
						 err, sizeof(err)))
				usage_error(err);
			*numbers[k].ns = (uint64_t)(d * numbers[k].scale + 0.5);
			if (numbers[k].ns == &o->wait_threshold_ns)
				*threshold_given = true;
		} else if (!strcmp(name, "sampling-signal")) {
			if (options_parse_long(what, value, SIGRTMIN, SIGRTMAX, &n, err,
					       sizeof(err))) {
				err_set(err, sizeof(err),
					"knob 'sampling-signal': '%s' is not a real-time signal "
					"(%d to %d)",
					value, SIGRTMIN, SIGRTMAX);
				usage_error(err);
			}
			o->signo = (int)n;
		} else if (!strcmp(name, "stack-depth")) {
			if (options_parse_long(what, value, 1, 2048, &n, err, sizeof(err)))
				usage_error(err);
			o->stack_depth = (uint32_t)n;
		} else if (!strcmp(name, "sampling-clock")) {
			if (o->memory)
				usage_error("knob 'sampling-clock' is for -collect hotspots: "
					    "memory-consumption takes no CPU samples");
			o->task_clock = knob_choice(name, value, clocks) == 1;
		} else if (!strcmp(name, "enable-wait-time")) {
			*enable_wait = knob_choice(name, value, truth) == 0;
		} else if (!strcmp(name, "sampling")) {
			if (!o->memory)
				usage_error("knob 'sampling' is for -collect memory-consumption");
			if (!strcmp(value, "exact")) {
				o->mem_sample_bytes = 0;
				continue;
			}
			if (strncmp(value, "bytes:", 6)) {
				err_set(err, sizeof(err),
					"knob 'sampling': '%s' is not 'exact' or "
					"'bytes:N'",
					value);
				usage_error(err);
			}
			if (options_parse_long(what, value + 6, 1, 1l << 31, &n, err, sizeof(err)))
				usage_error(err);
			o->mem_sample_bytes = (uint64_t)n;
		}
	}
}

int main(int argc, char **argv)
{
	struct collect_opts o = {
		.analysis = NULL,
		.interval_ns = 10000000,
		.stack_depth = 256,
		.data_limit_mb = 1000,
		.follow_child = true,
		.finalization = COLLECT_FINALIZE_FULL,
		.mpi_threshold_ns = 100000,
		.wait_threshold_ns = COLLECT_WAIT_THRESHOLD_NS,
	};
	int enable_wait = -1; /* -knob enable-wait-time: -1 not given */
	bool threshold_given = false;
	struct options_result r;
	const struct option_value *v;
	char err[4096], *cmdline;
	const char **bins, **srcs;
	const char *s;
	size_t i;
	int code;

	log_set_tool("pcollect");
	if ((code = other_action(argc, argv)) >= 0)
		return code;
	if (options_parse(&r, specs, argc, argv, true))
		usage_error(r.error);
	if (options_help_or_version(&r, specs, knobs, synopsis, description)) {
		options_release(&r);
		return EXIT_OK;
	}
	if (options_has(&r, "quiet") && options_has(&r, "verbose"))
		usage_error("options '-quiet' and '-verbose' exclude each other");
	if (options_has(&r, "quiet")) {
		o.quiet = true;
		log_set_level(-1);
	} else if (options_has(&r, "verbose")) {
		log_set_level(1);
	}
	if ((s = options_get_str(&r, "command"))) {
		if (r.rest_argc > 0 || options_has(&r, "target-pid") || options_has(&r, "collect"))
			usage_error("option '-command' steers a collection that runs: pcollect -r "
				    "DIR -command pause|resume|stop|snapshot, nothing else");
		code = collect_command(options_get_str(&r, "result-dir"), s, o.quiet);
		options_release(&r);
		return code;
	}
	o.analysis = options_get_str(&r, "collect");
	/* cProfile and perf need no analysis named: a program alone means hotspots. */
	if (!o.analysis && (r.rest_argc > 0 || options_has(&r, "target-pid"))) {
		o.analysis = "hotspots";
		o.analysis_default = true;
	}
	if (!o.analysis)
		usage_error("give a program to profile, or -target-pid PID: pcollect [-collect "
			    "hotspots] -- program [args]");
	/* VTune's older name of the threading analysis. */
	if (!strcmp(o.analysis, "locksandwaits"))
		o.analysis = "threading";
	o.waits = !strcmp(o.analysis, "threading");
	o.memory = !strcmp(o.analysis, "memory-consumption");
	if ((s = options_get_str(&r, "target-pid"))) {
		long pid;

		if (options_parse_long("option '-target-pid'", s, 1, INT_MAX, &pid, err,
				       sizeof(err)))
			usage_error(err);
		if (r.rest_argc > 0)
			usage_error("option '-target-pid' attaches to a process that runs: give no "
				    "program with it");
		o.target_pid = (int)pid;
		o.target_loads_agent = options_has(&r, "target-loads-agent");
	}
	if (options_has(&r, "target-loads-agent") && !o.target_pid)
		usage_error("option '-target-loads-agent' goes with -target-pid PID (the pid of "
			    "pcollect's caller, which loads the agent)");
	o.start_paused = options_has(&r, "start-paused");
	if (seconds_option(&r, "resume-after", 0, &o.resume_after_ns))
		o.start_paused = true;
	o.result_dir = options_get_str(&r, "result-dir");
	knobs_apply(options_get(&r, "knob"), &o, &enable_wait, &threshold_given);
	if (enable_wait >= 0 && strcmp(o.analysis, "hotspots")) {
		err_set(err, sizeof(err),
			"knob 'enable-wait-time' is for -collect hotspots: "
			"-collect %s %s",
			o.analysis,
			o.memory ? "takes no CPU samples and records no waits"
				 : "always records waits");
		usage_error(err);
	}
	if (enable_wait > 0)
		o.waits = true;
	if (threshold_given && !o.waits)
		usage_error("knob 'wait-threshold' needs waits recorded: -collect threading, or "
			    "-collect hotspots -knob enable-wait-time=true");
	/*
	 * Waits are measured by interposing the waiting calls, which an agent loaded into a
	 * running process cannot do for the calls already bound: refused, not left out silently.
	 */
	if (o.waits && o.target_pid)
		usage_error("option '-target-pid' records CPU time only: waits cannot be measured "
			    "in a process attached to (docs/pcollect.md, Attaching); use -collect "
			    "hotspots, or start the program under pcollect");
	/* The allocator's wrappers are another agent, preloaded before the program allocates. */
	if (o.memory && o.target_pid)
		usage_error("option '-target-pid' records CPU time only: allocations cannot be "
			    "recorded in a process attached to (its blocks were allocated before "
			    "us); start the program under pcollect -collect memory-consumption");
	seconds_option(&r, "duration", 0.001, &o.duration_ns);
	if (seconds_option(&r, "ring-buffer", 0.1, &o.ring_ns)) {
		/* memory-consumption aggregates in place (raw/<pid>.pmem): no chunk to drop. */
		if (o.memory)
			usage_error(
				"option '-ring-buffer' keeps the last seconds of samples, waits "
				"and MPI calls: memory-consumption records no chunks of time "
				"(its allocations are summed in place per call site, the live "
				"heap at the end); run it without -ring-buffer");
		if (o.target_pid)
			usage_error(
				"option '-ring-buffer' is for a program started under pcollect, "
				"not with -target-pid");
		/* The window bounds the disk: no default limit on the bytes written in all. */
		o.data_limit_mb = 0;
	}
	if ((s = options_get_str(&r, "data-limit"))) {
		double mb;

		if (options_parse_double("option '-data-limit'", s, 0, 1e9, &mb, err, sizeof(err)))
			usage_error(err);
		/* Not silently no limit: a limit under one chunk would stop before any sample. */
		if (mb > 0 && mb * 1048576.0 < AGENT_DATA_LIMIT_MIN) {
			err_set(err, sizeof(err),
				"invalid value '%s' for option '-data-limit': "
				"the smallest limit is %g MB (%u KiB, one chunk of raw data); 0 "
				"means no limit",
				s, AGENT_DATA_LIMIT_MIN / 1048576.0, AGENT_DATA_LIMIT_MIN >> 10);
			usage_error(err);
		}
		o.data_limit_mb = mb;
	}
	if (options_has(&r, "follow-child") && options_has(&r, "no-follow-child"))
		usage_error("options '-follow-child' and '-no-follow-child' exclude each other");
	if (options_has(&r, "no-follow-child"))
		o.follow_child = false;
	if ((s = options_get_str(&r, "finalization-mode"))) {
		for (i = 0; finalization_modes[i]; i++)
			if (!strcmp(s, finalization_modes[i]))
				o.finalization = (enum collect_finalization)i;
	}
	o.archive = options_has(&r, "archive");
	o.trace_mpi = options_has(&r, "trace-mpi");
	/* The MPI shims are preloaded at the program's start: a running process has none. */
	if (o.trace_mpi && o.target_pid)
		usage_error(
			"options '-trace-mpi' and '-target-pid' exclude each other: MPI calls "
			"are traced by libraries loaded when the program starts; start it under "
			"pcollect");
	if ((s = options_get_str(&r, "result-mode")) && !strcmp(s, "group"))
		o.result_mode = RESULT_MODE_GROUP;
	v = options_get(&r, "search-dir");
	bins = calloc(v->nvalues + 1, sizeof(*bins));
	srcs = calloc(v->nvalues + 1, sizeof(*srcs));
	if (!bins || !srcs)
		usage_error(strerror(ENOMEM));
	for (i = 0; i < v->nvalues; i++) {
		const char *dir;
		unsigned kinds;

		/* "bin:= ./app": the directory was left out, the program taken for it. */
		if (options_search_dir("-search-dir", v->values[i],
				       r.rest_argc > 0 ? r.rest_argv[0] : NULL, &kinds, &dir, err,
				       sizeof(err)))
			usage_error(err);
		if (kinds & SEARCH_DIR_BINARIES)
			bins[o.nsearch_dirs++] = dir;
		if (kinds & SEARCH_DIR_SOURCES)
			srcs[o.nsource_dirs++] = dir;
	}
	o.search_dirs = bins;
	o.source_dirs = srcs;
	if (r.rest_argc < 1 && !o.target_pid)
		usage_error("no program to profile: pcollect -collect hotspots -- ./app args "
			    "(or -target-pid PID)");
	o.argc = r.rest_argc;
	o.argv = r.rest_argv;
	cmdline = str_join((const char *const *)argv, (size_t)argc, " ");
	o.command_line = cmdline;
	code = o.target_pid ? attach_run(&o) : collect_run(&o);
	free(cmdline);
	free(bins);
	free(srcs);
	options_release(&r);
	return code;
}
