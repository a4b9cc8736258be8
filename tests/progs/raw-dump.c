/* SPDX-License-Identifier: MIT */
/* raw-dump: print every record of raw streams as one JSON object per line (test tool). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/raw-mpi.h"
#include "common/raw-python.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"

static void put_str(const char *s, size_t len)
{
	size_t i;

	putchar('"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void put_cstr(const char *s)
{
	put_str(s, strlen(s));
}

/* The MPI records (64-79): true when printed. */
static bool dump_mpi(const struct raw_record *r)
{
	struct raw_mpi_call c;
	struct raw_mpi_rank k;
	const char *name;

	if ((r->type == RAW_REC_MPI_CALL || r->type == RAW_REC_MPI_SUM) &&
	    !raw_mpi_read_call(r, &c)) {
		name = raw_mpi_function_name(c.function);
		printf("{\"type\":\"%s\",\"time\":%" PRId64 ",\"stack\":%" PRIu64
		       ",\"function\":%u,\"name\":\"%s\",\"comm_size\":%u,\"count\":%" PRIu64
		       ",\"total_ns\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"received\":%" PRIu64 "}\n",
		       c.summed ? "mpi_sum" : "mpi_call", c.time_ns, c.stack, c.function,
		       name ? name : "", c.comm_size, c.count, c.total_ns, c.sent, c.received);
		return true;
	}
	if (r->type == RAW_REC_MPI_RANK && !raw_mpi_read_rank(r, &k)) {
		printf("{\"type\":\"mpi_rank\",\"time\":%" PRId64 ",\"rank\":%u,\"size\":%u}\n",
		       k.time_ns, k.rank, k.size);
		return true;
	}
	return false;
}

/* Python records (docs/raw-format-python.md): code objects and mixed stacks. */
static bool dump_python(const struct raw_record *r)
{
	static uint64_t ips[RAW_MAX_DEPTH];
	static struct raw_py_frame py[RAW_PY_MAX_FRAMES];
	struct raw_py_stack st;
	struct raw_py_code c;
	uint32_t i;

	if (r->type == RAW_REC_PY_CODE && !raw_py_read_code(r->payload, r->payload_len, &c)) {
		printf("{\"type\":\"py_code\",\"id\":%" PRIu64 ",\"firstlineno\":%d,\"filename\":",
		       c.id, c.firstlineno);
		put_str(c.filename.s, c.filename.len);
		printf(",\"name\":");
		put_str(c.name.s, c.name.len);
		printf("}\n");
		return true;
	}
	if (r->type == RAW_REC_PY_STACK &&
	    !raw_py_read_stack(r->payload, r->payload_len, &st, ips, py)) {
		/* Read by the tests as a stack whose Python frames come with it. */
		printf("{\"type\":\"stack\",\"id\":%" PRIu64 ",\"flags\":%u,\"ips\":[", st.id,
		       st.flags);
		for (i = 0; i < st.n; i++)
			printf("%s%" PRIu64, i ? "," : "", ips[i]);
		printf("],\"py\":[");
		for (i = 0; i < st.npy; i++)
			printf("%s[%" PRIu64 ",%u,%u]", i ? "," : "", py[i].code_id, py[i].offset,
			       py[i].flags);
		printf("]}\n");
		return true;
	}
	return false;
}

static void dump_record(const struct raw_record *r)
{
	uint32_t i;

	if (dump_mpi(r))
		return;
	if (!r->decoded && dump_python(r))
		return;

	switch (r->decoded ? r->type : 0) {
	case RAW_REC_SAMPLE:
		printf("{\"type\":\"sample\",\"time\":%" PRId64 ",\"stack\":%" PRIu64
		       ",\"weight\":%" PRIu64 "}\n",
		       r->time_ns, r->u.sample.stack_id, r->u.sample.weight);
		break;
	case RAW_REC_STACK:
		printf("{\"type\":\"stack\",\"id\":%" PRIu64 ",\"flags\":%u,\"ips\":[",
		       r->u.stack.id, r->u.stack.flags);
		for (i = 0; i < r->u.stack.depth; i++)
			printf("%s%" PRIu64, i ? "," : "", r->u.stack.ips[i]);
		printf("]}\n");
		break;
	case RAW_REC_THREAD_START:
	case RAW_REC_THREAD_NAME:
		printf("{\"type\":\"%s\",\"tid\":%u,\"time\":%" PRId64 ",\"name\":",
		       r->type == RAW_REC_THREAD_START ? "thread_start" : "thread_name",
		       r->u.thread.tid, r->time_ns);
		put_str(r->u.thread.name.s, r->u.thread.name.len);
		printf("}\n");
		break;
	case RAW_REC_THREAD_END:
	case RAW_REC_THREAD_CPU:
		printf("{\"type\":\"%s\",\"tid\":%u,\"time\":%" PRId64 ",\"cpu_ns\":%" PRIu64 "}\n",
		       r->type == RAW_REC_THREAD_END ? "thread_end" : "thread_cpu",
		       r->u.thread_end.tid, r->time_ns, r->u.thread_end.cpu_ns);
		break;
	case RAW_REC_PROCESS: {
		const struct raw_process *p = &r->u.process;

		printf("{\"type\":\"process\",\"pid\":%d,\"ppid\":%d,\"time\":%" PRId64
		       ",\"origin\":%u,\"parent_pid\":%d,\"generation\":%u,\"exe\":",
		       p->pid, p->ppid, p->time_ns, p->origin, p->parent_pid, p->generation);
		put_str(p->exe, p->exe_len);
		printf(",\"argv\":[");
		for (i = 0; i < p->argc; i++) {
			if (i)
				putchar(',');
			put_str(p->args[i].s, p->args[i].len);
		}
		printf("]}\n");
		break;
	}
	case RAW_REC_MODULE_LOAD: {
		const struct raw_module *m = &r->u.module;

		printf("{\"type\":\"module_load\",\"time\":%" PRId64
		       ",\"kind\":%u,\"base\":%" PRIu64 ",\"path\":",
		       m->time_ns, m->kind, m->base);
		put_str(m->path, m->path_len);
		printf(",\"build_id\":\"");
		for (i = 0; i < m->build_id_len; i++)
			printf("%02x", m->build_id[i]);
		printf("\",\"segs\":[");
		for (i = 0; i < m->nsegs; i++)
			printf("%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u]", i ? "," : "",
			       m->segs[i].start, m->segs[i].size, m->segs[i].file_offset,
			       m->segs[i].prot);
		printf("]}\n");
		break;
	}
	case RAW_REC_MODULE_UNLOAD:
		printf("{\"type\":\"module_unload\",\"time\":%" PRId64 ",\"base\":%" PRIu64
		       ",\"path\":",
		       r->time_ns, r->u.unload.base);
		put_str(r->u.unload.path.s, r->u.unload.path.len);
		printf("}\n");
		break;
	case RAW_REC_NOTE:
		printf("{\"type\":\"note\",\"time\":%" PRId64 ",\"tid\":%u,\"kind\":%u,"
		       "\"detail\":",
		       r->time_ns, r->u.note.tid, r->u.note.kind);
		put_str(r->u.note.detail.s, r->u.note.detail.len);
		printf("}\n");
		break;
	case RAW_REC_REGION_BEGIN:
		printf("{\"type\":\"region_begin\",\"time\":%" PRId64 ",\"depth\":%u,\"name\":",
		       r->time_ns, r->u.region.depth);
		put_str(r->u.region.name.s, r->u.region.name.len);
		printf("}\n");
		break;
	case RAW_REC_REGION_END:
		printf("{\"type\":\"region_end\",\"time\":%" PRId64 ",\"depth\":%u}\n", r->time_ns,
		       r->u.region.depth);
		break;
	case RAW_REC_METRIC:
		printf("{\"type\":\"metric\",\"id\":%" PRIu64 ",\"name\":", r->u.metric.id);
		put_str(r->u.metric.name.s, r->u.metric.name.len);
		printf(",\"unit\":%u,\"aggregation\":%u,\"kind\":%u}\n", r->u.metric.unit,
		       r->u.metric.aggregation, r->u.metric.kind);
		break;
	case RAW_REC_VALUE:
		printf("{\"type\":\"value\",\"time\":%" PRId64 ",\"stack\":%" PRIu64
		       ",\"metric\":%" PRIu64 ",\"value\":%" PRId64 "}\n",
		       r->time_ns, r->u.value.stack_id, r->u.value.metric, r->u.value.value);
		break;
	case RAW_REC_LOST:
		printf("{\"type\":\"lost\",\"time\":%" PRId64 ",\"reason\":%u,\"count\":%" PRIu64
		       ",\"weight\":%" PRIu64 "}\n",
		       r->time_ns, r->u.lost.reason, r->u.lost.count, r->u.lost.weight);
		break;
	case RAW_REC_WAIT:
		printf("{\"type\":\"wait\",\"time\":%" PRId64 ",\"stack\":%" PRIu64
		       ",\"duration\":%" PRIu64 ",\"kind\":\"%s\",\"object\":%" PRIu64 "}\n",
		       r->time_ns, r->u.wait.stack_id, r->u.wait.duration_ns,
		       raw_wait_kind_name(r->u.wait.kind), r->u.wait.object);
		break;
	case RAW_REC_WAIT_SUM:
		printf("{\"type\":\"wait_sum\",\"time\":%" PRId64 ",\"stack\":%" PRIu64
		       ",\"kind\":\"%s\",\"object\":%" PRIu64 ",\"count\":%" PRIu64
		       ",\"total\":%" PRIu64 "}\n",
		       r->time_ns, r->u.wait_sum.stack_id, raw_wait_kind_name(r->u.wait_sum.kind),
		       r->u.wait_sum.object, r->u.wait_sum.count, r->u.wait_sum.total_ns);
		break;
	case RAW_REC_OBJECT:
		printf("{\"type\":\"object\",\"kind\":\"%s\",\"object\":%" PRIu64 ",\"name\":",
		       raw_wait_kind_name(r->u.object.kind), r->u.object.object);
		put_str(r->u.object.name.s, r->u.object.name.len);
		printf("}\n");
		break;
	case RAW_REC_OMP_REGION:
		printf("{\"type\":\"omp_region\",\"time\":%" PRId64 ",\"duration\":%" PRIu64
		       ",\"object\":%" PRIu64 ",\"threads\":%u}\n",
		       r->time_ns, r->u.omp_region.duration_ns, r->u.omp_region.object,
		       r->u.omp_region.threads);
		break;
	default:
		printf("{\"type\":\"unknown\",\"record_type\":%u,\"payload_len\":%zu}\n", r->type,
		       r->payload_len);
		break;
	}
}

static int dump(const char *path)
{
	const struct raw_file_header *h;
	const struct raw_reader_stats *st;
	struct raw_reader *r;
	struct raw_record rec;
	int err;

	r = raw_reader_open(path, &err);
	if (!r) {
		fprintf(stderr, "raw-dump: cannot read '%s': %s\n", path, result_strerror(-err));
		return 1;
	}
	h = raw_reader_header(r);
	printf("{\"type\":\"header\",\"file\":");
	put_cstr(path);
	printf(",\"version\":%u,\"kind\":\"%s\",\"stream_id\":\"%016" PRIx64 "\""
	       ",\"pid\":%d,\"tid\":%d,\"rank\":%d,\"generation\":%u,\"interval_ns\":%" PRIu64
	       ",\"sample_clock\":%u,\"origin_ns\":%" PRIu64 ",\"origin_realtime_ns\":%" PRIu64
	       ",\"host\":",
	       h->version, h->kind == RAW_STREAM_PROCESS ? "process" : "thread", h->stream_id,
	       h->pid, h->tid, h->rank, h->generation, h->interval_ns, h->sample_clock,
	       h->origin_ns, h->origin_realtime_ns);
	put_str(h->host, strnlen(h->host, sizeof(h->host)));
	printf("}\n");
	while (raw_reader_next(r, &rec) > 0)
		dump_record(&rec);
	st = raw_reader_stats(r);
	printf("{\"type\":\"stats\",\"bytes_total\":%" PRIu64 ",\"bytes_skipped\":%" PRIu64
	       ",\"bytes_padding\":%" PRIu64 ",\"chunks\":%" PRIu64 ",\"chunks_open\":%" PRIu64
	       ",\"chunks_bad_magic\":%" PRIu64 ",\"chunks_bad_crc\":%" PRIu64
	       ",\"chunks_truncated\":%" PRIu64 ",\"chunks_duplicate\":%" PRIu64
	       ",\"records\":%" PRIu64 ",\"records_malformed\":%" PRIu64
	       ",\"header_crc_bad\":%s,\"first_problem\":",
	       st->bytes_total, st->bytes_skipped, st->bytes_padding, st->chunks, st->chunks_open,
	       st->chunks_bad_magic, st->chunks_bad_crc, st->chunks_truncated, st->chunks_duplicate,
	       st->records, st->records_malformed, st->header_crc_bad ? "true" : "false");
	put_cstr(st->first_problem);
	printf("}\n");
	raw_reader_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: raw-dump STREAM.praw...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		ret |= dump(argv[i]);
	return ret;
}
