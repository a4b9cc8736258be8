/* SPDX-License-Identifier: MIT */
/* -format firefox: the profile written as the JSON of the pinned processed format version. */
#include <stdlib.h>
#include <string.h>

#include "report/export-firefox.h"

/* ns as ms, exactly (six decimals, trailing zeros dropped). */
static void put_ms(struct outbuf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	unsigned long long frac = (unsigned long long)(a % 1000000);
	char buf[16];
	int n;

	outbuf_printf(b, "%s%llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000));
	if (!frac)
		return;
	n = snprintf(buf, sizeof(buf), ".%06llu", frac);
	while (n > 1 && buf[n - 1] == '0')
		n--;
	outbuf_put(b, buf, (size_t)n);
}

static void put_str(struct outbuf *b, const char *s)
{
	outbuf_json(b, s, strlen(s), 0);
}

/* A column of n values: each written by put(f, i). */
static void put_column(struct firefox *f, const char *key, size_t n,
		       void (*put)(struct firefox *f, size_t i))
{
	size_t i;

	outbuf_printf(f->b, "\"%s\": [", key);
	for (i = 0; i < n; i++) {
		if (i)
			outbuf_putc(f->b, ',');
		put(f, i);
		if (!(i & 1023))
			outbuf_spill(f->b);
	}
	outbuf_puts(f->b, "],\n");
}

/* A column whose every value is the same literal. */
static void put_same(struct firefox *f, const char *key, size_t n, const char *v)
{
	size_t i;

	outbuf_printf(f->b, "\"%s\": [", key);
	for (i = 0; i < n; i++) {
		outbuf_puts(f->b, i ? "," : "");
		outbuf_puts(f->b, v);
		if (!(i & 1023))
			outbuf_spill(f->b);
	}
	outbuf_puts(f->b, "],\n");
}

static void put_int_or_null(struct outbuf *b, int64_t v, bool null)
{
	if (null)
		outbuf_puts(b, "null");
	else
		outbuf_int(b, v);
}

static const struct model_function *frame_func(const struct firefox *f, size_t i)
{
	return &f->r->m.functions[f->frames.tuple[i][0]];
}

static void col_stack_frame(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->frame_of[f->stack_node[i]]);
}

static void col_stack_prefix(struct firefox *f, size_t i)
{
	int parent = f->r->tree.nodes[f->stack_node[i]].parent;

	outbuf_int(f->b, parent > 0 ? (int64_t)i - f->stack_of[parent] : 0);
}

static void col_frame_lib(struct firefox *f, size_t i)
{
	const struct model_function *fn = frame_func(f, i);

	outbuf_int(f->b, !fn->python && fn->module >= 0
				 ? export_ids_get(&f->libs, fn->module, 0, 0) /* numbered already */
				 : -1);
}

static void col_frame_category(struct firefox *f, size_t i)
{
	const struct model_function *fn = frame_func(f, i);

	outbuf_int(f->b, fn->python ? CAT_PYTHON : fn->module >= 0 ? CAT_NATIVE : CAT_OTHER);
}

static void col_frame_func(struct firefox *f, size_t i)
{
	outbuf_int(f->b, export_ids_get(&f->funcs, f->frames.tuple[i][0], 0, 0));
}

static void col_frame_line(struct firefox *f, size_t i)
{
	put_int_or_null(f->b, f->frames.tuple[i][1], f->frames.tuple[i][1] <= 0);
}

static const struct model_function *func_of(const struct firefox *f, size_t i)
{
	return &f->r->m.functions[f->funcs.tuple[i][0]];
}

static void col_func_name(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->func_name[i]);
}

static void col_func_js(struct firefox *f, size_t i)
{
	outbuf_puts(f->b, func_of(f, i)->python ? "true" : "false");
}

static void col_func_resource(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->func_res[i]);
}

static void col_func_source(struct firefox *f, size_t i)
{
	put_int_or_null(f->b, f->func_src[i], f->func_src[i] < 0);
}

static void col_func_line(struct firefox *f, size_t i)
{
	put_int_or_null(f->b, func_of(f, i)->line, func_of(f, i)->line <= 0);
}

static void col_res_name(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->res_name[i]);
}

/* ResourceType: 1 Library for a native module, 5 Url for a Python file. */
static void col_res_type(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->resources.tuple[i][0] ? 5 : 1);
}

static void col_src_name(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->src_name[i]);
}

static void col_string(struct firefox *f, size_t i)
{
	put_str(f->b, f->strs.s[i]);
}

static void put_shared(struct firefox *f)
{
	size_t nfr = f->frames.n, nfn = f->funcs.n, nres = f->resources.n, nsrc = f->sources.n;

	outbuf_puts(f->b, "\"shared\": {\n\"stackTable\": {");
	put_column(f, "frame", f->nstacks, col_stack_frame);
	put_column(f, "prefixOffset", f->nstacks, col_stack_prefix);
	outbuf_printf(f->b, "\"length\": %zu},\n\"frameTable\": {", f->nstacks);
	put_same(f, "address", nfr, "-1");
	put_column(f, "lib", nfr, col_frame_lib);
	put_same(f, "inlineDepth", nfr, "0");
	put_column(f, "category", nfr, col_frame_category);
	put_same(f, "subcategory", nfr, "0");
	put_column(f, "func", nfr, col_frame_func);
	put_same(f, "nativeSymbol", nfr, "null");
	put_same(f, "innerWindowID", nfr, "0");
	put_column(f, "line", nfr, col_frame_line);
	put_same(f, "column", nfr, "null");
	put_same(f, "originalLocation", nfr, "null");
	outbuf_printf(f->b, "\"length\": %zu},\n\"funcTable\": {", nfr);
	put_column(f, "name", nfn, col_func_name);
	put_column(f, "isJS", nfn, col_func_js);
	put_same(f, "relevantForJS", nfn, "false");
	put_column(f, "resource", nfn, col_func_resource);
	put_column(f, "source", nfn, col_func_source);
	put_column(f, "lineNumber", nfn, col_func_line);
	put_same(f, "columnNumber", nfn, "null");
	put_same(f, "originalLocation", nfn, "null");
	outbuf_printf(f->b, "\"length\": %zu},\n\"resourceTable\": {", nfn);
	put_column(f, "name", nres, col_res_name);
	put_same(f, "host", nres, "null");
	put_column(f, "type", nres, col_res_type);
	outbuf_printf(f->b, "\"length\": %zu},\n", nres);
	outbuf_puts(f->b, "\"nativeSymbols\": {\"libIndex\": [], \"address\": [], \"name\": [], "
			  "\"functionSize\": [], \"length\": 0},\n\"sources\": {");
	put_same(f, "id", nsrc, "null");
	put_column(f, "filename", nsrc, col_src_name);
	put_same(f, "startLine", nsrc, "1");
	put_same(f, "startColumn", nsrc, "1");
	put_same(f, "sourceMapURL", nsrc, "null");
	put_same(f, "content", nsrc, "null");
	outbuf_printf(f->b, "\"length\": %zu},\n", nsrc);
	outbuf_puts(f->b, "\"sourceLocationTable\": {\"source\": [], \"line\": [], \"column\": [], "
			  "\"length\": 0},\n");
	put_column(f, "stringArray", f->strs.n, col_string);
	/* put_column ends with a comma: the last member closes without one. */
	f->b->len -= 2;
	outbuf_puts(f->b, "\n},\n");
}

static const char *arch_name(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#elif defined(__i386__)
	return "x86";
#else
	return "";
#endif
}

/* libs: the native modules, as the profiler's Lib; no breakpad id (symbolicated already). */
static void put_libs(struct firefox *f)
{
	const struct model *m = &f->r->m;
	size_t i;

	outbuf_puts(f->b, "\"libs\": [");
	for (i = 0; i < f->libs.n; i++) {
		const struct model_module *mod = &m->modules[f->libs.tuple[i][0]];
		const char *path = mod->path ? mod->path : mod->name;

		outbuf_printf(f->b, "%s\n{\"arch\": \"%s\", \"name\": ", i ? "," : "", arch_name());
		put_str(f->b, mod->name);
		outbuf_puts(f->b, ", \"path\": ");
		put_str(f->b, path);
		outbuf_puts(f->b, ", \"debugName\": ");
		put_str(f->b, mod->name);
		outbuf_puts(f->b, ", \"debugPath\": ");
		put_str(f->b, path);
		outbuf_puts(f->b, ", \"breakpadId\": \"\", \"codeId\": null}");
		outbuf_spill(f->b);
	}
	outbuf_puts(f->b, "],\n");
}

/* The pid as a string, unique: "1234", "1234.5" (process 5) where two processes written share
   it (an exec's images, a job's nodes). */
static void put_pid(struct firefox *f, int process)
{
	if (process < 0) {
		outbuf_puts(f->b, "\"0\"");
		return;
	}
	outbuf_printf(f->b, "\"%lld", (long long)f->r->m.processes[process].pid);
	if (f->pid_shared[process])
		outbuf_printf(f->b, ".%d", process);
	outbuf_putc(f->b, '"');
}

/* The stack of a tree node; null for the root (a sample without a frame). */
static void put_stack(struct firefox *f, int node)
{
	if (node > 0 && f->stack_of[node] >= 0)
		outbuf_int(f->b, f->stack_of[node]);
	else
		outbuf_puts(f->b, "null");
}

static void put_cause(struct firefox *f, const struct firefox_track *tr,
		      const struct firefox_marker *mk)
{
	const struct model *m = &f->r->m;

	outbuf_printf(f->b, ", \"cause\": {\"tid\": %lld, \"time\": ",
		      (long long)(tr->thread >= 0 ? m->threads[tr->thread].tid : 0));
	put_ms(f->b, mk->start);
	outbuf_puts(f->b, ", \"stack\": ");
	put_stack(f, mk->node);
	outbuf_putc(f->b, '}');
}

/* A marker's payload: its type (a schema of meta.markerSchema) and fields. */
static void put_marker_data(struct firefox *f, const struct firefox_track *tr,
			    const struct firefox_marker *mk)
{
	const struct model *m = &f->r->m;
	const struct model_context *c = mk->context >= 0 ? &m->contexts[mk->context] : NULL;
	char buf[1024];

	switch (mk->kind) {
	case MK_REGION:
		outbuf_puts(f->b, "{\"type\": \"Region\", \"path\": ");
		put_str(f->b, f->strs.s[mk->name]);
		break;
	case MK_WAIT:
		outbuf_puts(f->b, "{\"type\": \"Wait\", \"kind\": ");
		put_str(f->b, c && c->wait_kind ? c->wait_kind : "");
		outbuf_puts(f->b, ", \"object\": ");
		put_str(f->b,
			model_sync_object_label(m, c ? c->sync_object : -1, buf, sizeof(buf)));
		outbuf_puts(f->b, ", \"function\": ");
		put_str(f->b, mk->node > 0
				      ? report_function_name(f->r, f->r->tree.nodes[mk->node].func)
				      : "");
		put_cause(f, tr, mk);
		break;
	case MK_MPI:
		outbuf_puts(f->b, "{\"type\": \"MPI\", \"function\": ");
		put_str(f->b, f->strs.s[mk->name]);
		if (c && c->comm_size > 0)
			outbuf_printf(f->b, ", \"communicatorSize\": %lld",
				      (long long)c->comm_size);
		outbuf_printf(f->b, ", \"sent\": %lld, \"received\": %lld", (long long)mk->sent,
			      (long long)mk->received);
		put_cause(f, tr, mk);
		break;
	}
	outbuf_putc(f->b, '}');
}

static const int marker_category[] = {
	[MK_WAIT] = CAT_WAIT, [MK_MPI] = CAT_MPI, [MK_REGION] = CAT_REGION
};

static void col_sample_stack(struct firefox *f, size_t i)
{
	put_stack(f, f->cur->s[i].node);
}

static void col_sample_time(struct firefox *f, size_t i)
{
	put_ms(f->b, f->cur->s[i].time);
}

static void col_sample_weight(struct firefox *f, size_t i)
{
	put_ms(f->b, f->cur->s[i].value);
}

static void col_sample_cpu(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->cur->s[i].value);
}

static void col_marker_name(struct firefox *f, size_t i)
{
	outbuf_int(f->b, f->cur->mk[i].name);
}

static void col_marker_start(struct firefox *f, size_t i)
{
	put_ms(f->b, f->cur->mk[i].start);
}

static void col_marker_end(struct firefox *f, size_t i)
{
	put_ms(f->b, f->cur->mk[i].end);
}

static void col_marker_category(struct firefox *f, size_t i)
{
	outbuf_int(f->b, marker_category[f->cur->mk[i].kind]);
}

static void put_samples(struct firefox *f, const struct firefox_track *tr)
{
	f->cur = tr;
	outbuf_puts(f->b, "\"samples\": {\"weightType\": \"tracing-ms\",\n");
	put_column(f, "stack", tr->ns, col_sample_stack);
	put_column(f, "time", tr->ns, col_sample_time);
	put_column(f, "weight", tr->ns, col_sample_weight);
	/* meta.sampleUnits: ns; the activity graph draws the CPU use from it. */
	put_column(f, "threadCPUDelta", tr->ns, col_sample_cpu);
	outbuf_printf(f->b, "\"length\": %zu},\n", tr->ns);
}

static void put_markers(struct firefox *f, const struct firefox_track *tr)
{
	size_t i;

	f->cur = tr;
	outbuf_puts(f->b, "\"markers\": {\"data\": [");
	for (i = 0; i < tr->nm; i++) {
		outbuf_puts(f->b, i ? ",\n" : "\n");
		put_marker_data(f, tr, &tr->mk[i]);
		outbuf_spill(f->b);
	}
	outbuf_puts(f->b, "],\n");
	put_column(f, "name", tr->nm, col_marker_name);
	put_column(f, "startTime", tr->nm, col_marker_start);
	put_column(f, "endTime", tr->nm, col_marker_end);
	put_same(f, "phase", tr->nm, "1"); /* an interval: start and end */
	put_column(f, "category", tr->nm, col_marker_category);
	outbuf_printf(f->b, "\"length\": %zu}", tr->nm);
}

static void put_thread(struct firefox *f, const struct firefox_track *tr)
{
	const struct model *m = &f->r->m;
	const struct model_thread *th = tr->thread >= 0 ? &m->threads[tr->thread] : NULL;
	int process = th ? th->process : -1;
	const struct model_process *p = process >= 0 ? &m->processes[process] : NULL;
	int64_t pstart = process >= 0 ? f->proc_start[process] : -1;
	int64_t pend = process >= 0 ? f->proc_end[process] : -1;
	char buf[1024];

	outbuf_puts(f->b, "{\"processType\": \"default\", \"processStartupTime\": ");
	put_ms(f->b, pstart > 0 ? pstart : 0);
	outbuf_puts(f->b, ", \"processShutdownTime\": ");
	if (pend >= 0 && pend != INT64_MAX)
		put_ms(f->b, pend);
	else
		outbuf_puts(f->b, "null");
	outbuf_puts(f->b, ", \"registerTime\": ");
	put_ms(f->b, th && th->start_ns > 0 ? th->start_ns : 0);
	outbuf_puts(f->b, ", \"unregisterTime\": ");
	if (th && th->end_ns >= 0)
		put_ms(f->b, th->end_ns);
	else
		outbuf_puts(f->b, "null");
	outbuf_puts(f->b, ", \"pausedRanges\": [], \"showMarkersInTimeline\": true,\n\"name\": ");
	put_str(f->b, report_thread_name(th, buf, sizeof(buf)));
	outbuf_printf(f->b, ", \"isMainThread\": %s, \"processName\": ",
		      p && th->tid == p->pid ? "true" : "false");
	put_str(f->b, p ? export_process_label(p, buf, sizeof(buf)) : "[unknown process]");
	outbuf_puts(f->b, ", \"pid\": ");
	put_pid(f, process);
	outbuf_printf(f->b, ", \"tid\": %lld,\n", (long long)(th ? th->tid : 0));
	put_samples(f, tr);
	put_markers(f, tr);
	outbuf_puts(f->b, "}");
}

/* meta.categories (by the CAT_ indexes) and the markers' schemas (fields: docs/preport.md). */
static const char meta_tables[] =
	"\"categories\": [{\"name\": \"Other\", \"color\": \"grey\", \"subcategories\": "
	"[\"Other\"]},\n{\"name\": \"Native\", \"color\": \"blue\", \"subcategories\": "
	"[\"Other\"]},\n{\"name\": \"Python\", \"color\": \"yellow\", \"subcategories\": "
	"[\"Other\"]},\n{\"name\": \"Wait\", \"color\": \"lightblue\", \"subcategories\": "
	"[\"Other\"]},\n{\"name\": \"MPI\", \"color\": \"purple\", \"subcategories\": "
	"[\"Other\"]},\n{\"name\": \"Region\", \"color\": \"green\", \"subcategories\": "
	"[\"Other\"]}],\n"
	"\"markerSchema\": [{\"name\": \"Wait\", \"tooltipLabel\": \"{marker.name} on "
	"{marker.data.object}\", \"tableLabel\": \"{marker.data.object} in "
	"{marker.data.function}\", \"chartLabel\": \"{marker.data.object}\", \"display\": "
	"[\"marker-chart\", \"marker-table\", \"timeline-overview\"], \"description\": \"a "
	"blocking call, timed by pcollect -collect threading\", \"fields\": [{\"key\": \"kind\", "
	"\"label\": \"Wait kind\", \"format\": \"string\"}, {\"key\": \"object\", \"label\": "
	"\"Object\", \"format\": \"string\"}, {\"key\": \"function\", \"label\": \"Function\", "
	"\"format\": \"string\"}]},\n"
	"{\"name\": \"MPI\", \"tableLabel\": \"{marker.data.function}\", \"chartLabel\": "
	"\"{marker.data.function}\", \"display\": [\"marker-chart\", \"marker-table\", "
	"\"timeline-overview\"], \"description\": \"an MPI call, timed by pcollect "
	"-trace-mpi\", \"fields\": [{\"key\": \"function\", \"label\": \"Function\", \"format\": "
	"\"string\"}, {\"key\": \"communicatorSize\", \"label\": \"Communicator size\", "
	"\"format\": \"integer\"}, {\"key\": \"sent\", \"label\": \"Sent\", \"format\": "
	"\"bytes\"}, {\"key\": \"received\", \"label\": \"Received\", \"format\": \"bytes\"}]},\n"
	"{\"name\": \"Region\", \"chartLabel\": \"{marker.data.path}\", \"tableLabel\": "
	"\"{marker.data.path}\", \"display\": [\"marker-chart\", \"marker-table\", "
	"\"timeline-overview\"], \"description\": \"a region the program named "
	"(pcollect_region_begin): from its first sample to its last\", \"fields\": [{\"key\": "
	"\"path\", \"label\": \"Region\", \"format\": \"string\"}]}],\n"
	"\"sampleUnits\": {\"time\": \"ms\", \"eventDelay\": \"ms\", \"threadCPUDelta\": \"ns\"}";

static void put_meta(struct firefox *f)
{
	const struct model *m = &f->r->m;
	const char *cmd = model_meta_get(m, "command_line");
	int64_t elapsed = model_meta_int(m, "elapsed_ns", -1);
	char name[256];
	size_t i;

	outbuf_puts(f->b, "{\"meta\": {\"interval\": ");
	put_ms(f->b, m->interval_ns > 0 ? m->interval_ns : 1000000);
	outbuf_puts(f->b, ", \"startTime\": ");
	put_ms(f->b, model_meta_int(m, "start_realtime_ns", 0));
	outbuf_puts(f->b, ", \"profilingStartTime\": 0");
	if (elapsed >= 0) {
		outbuf_puts(f->b, ", \"profilingEndTime\": ");
		put_ms(f->b, elapsed);
	}
	/* The program's name, as the command line gave it: "python3", not its interpreter's. */
	snprintf(name, sizeof(name), "%s", cmd && *cmd ? cmd : "pcollect");
	name[strcspn(name, " ")] = '\0';
	outbuf_puts(f->b, ",\n\"processType\": 0, \"product\": ");
	put_str(f->b, report_basename(name));
	outbuf_printf(f->b,
		      ", \"stackwalk\": 1, \"version\": %d, \"preprocessedProfileVersion\": %d,\n"
		      "\"importedFrom\": \"preport (pcollect " PCOLLECT_VERSION ")\", "
		      "\"arguments\": ",
		      FF_GECKO_VERSION, FF_PROCESSED_VERSION);
	put_str(f->b, cmd ? cmd : "");
	outbuf_printf(f->b,
		      ", \"logicalCPUs\": %lld, \"symbolicated\": true, "
		      "\"symbolicationNotSupported\": true, \"sourceCodeIsNotOnSearchfox\": "
		      "true, \"keepProfileThreadOrder\": true,\n",
		      (long long)model_meta_int(m, "cpu_count", 0));
	/* Every thread shown, where there are few enough to read (the profiler hides the idle). */
	if (f->ntracks <= 64) {
		outbuf_puts(f->b, "\"initialVisibleThreads\": [");
		for (i = 0; i < f->ntracks; i++)
			outbuf_printf(f->b, "%s%zu", i ? "," : "", i);
		outbuf_puts(f->b, "],\n");
	}
	outbuf_puts(f->b, meta_tables);
	outbuf_puts(f->b, "},\n");
}

void firefox_write_profile(struct firefox *f)
{
	size_t i;

	put_meta(f);
	put_libs(f);
	put_shared(f);
	outbuf_puts(f->b, "\"threads\": [");
	for (i = 0; i < f->ntracks; i++) {
		outbuf_puts(f->b, i ? ",\n" : "\n");
		put_thread(f, &f->tracks[i]);
	}
	outbuf_puts(f->b, "]}\n");
}
