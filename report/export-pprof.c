/* SPDX-License-Identifier: MIT */
/* -format pprof: gzipped profile.proto, read by go tool pprof, Pyroscope, Parca, Grafana. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/grow.h"
#include "report/export-private.h"

/*
 * The messages of github.com/google/pprof/proto/profile.proto written here, by field number:
 * Profile { 1 sample_type: ValueType, 2 sample: Sample, 4 location: Location, 5 function:
 * Function, 6 string_table, 11 period_type: ValueType, 12 period, 14 default_sample_type };
 * ValueType { 1 type, 2 unit } (string table indexes); Sample { 1 location_id (packed, leaf
 * first), 2 value (packed, one per sample type), 3 label: Label { 1 key, 2 str } };
 * Location { 1 id, 4 line: Line { 1 function_id, 2 line } }; Function { 1 id, 2 name,
 * 3 system_name, 4 filename, 5 start_line }. A varint of 0 is left out, as proto3 does.
 */
enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* A message being written; err sticks at the first failure. */
struct pb {
	unsigned char *p;
	size_t n, cap;
	int err;
};

static void pb_bytes(struct pb *b, const void *data, size_t n)
{
	if (b->err || (b->err = GROW(b->p, b->n + n + 1, b->cap)))
		return;
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char buf[10];
	size_t n = 0;

	do {
		buf[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		buf[n++] |= v ? 0x80 : 0;
	} while (v);
	pb_bytes(b, buf, n);
}

static void pb_uint(struct pb *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_len(struct pb *b, int field, const void *data, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(b, n);
	pb_bytes(b, data, n);
}

/* Message m as field of b; m is emptied for the next one. */
static void pb_msg(struct pb *b, int field, struct pb *m)
{
	if (m->err)
		b->err = m->err;
	pb_len(b, field, m->p, m->n);
	m->n = 0;
}

struct pprof {
	struct report *r;
	struct export_job *x;
	struct export_names strs; /* the string table: 0 is "" */
	struct export_ids locs;   /* (function id, line, 0) -> location id - 1 */
	int *fid;                 /* per model function: its Function id, 0 when not yet */
	int nfuncs;
	struct pb out, m, sub;
};

static int str_id(struct pprof *p, const char *s)
{
	int id = export_names_get(&p->strs, s ? s : "");

	if (id < 0)
		p->out.err = id;
	return id < 0 ? 0 : id;
}

/* "CPU Time" as pprof's sample types are spelled: "cpu_time". */
static int type_id(struct pprof *p, const char *name)
{
	char buf[128];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(buf); i++)
		buf[i] = name[i] == ' '
				 ? '_'
				 : (char)(name[i] | (name[i] >= 'A' && name[i] <= 'Z' ? 0x20 : 0));
	buf[i] = '\0';
	return str_id(p, model_strdup(&p->r->m, buf));
}

static int unit_id(struct pprof *p, const struct model_metric *mt)
{
	return str_id(p, mt->unit == MODEL_UNIT_NS      ? "nanoseconds"
			 : mt->unit == MODEL_UNIT_BYTES ? "bytes"
							: "count");
}

static void value_type(struct pprof *p, int field, const struct model_metric *mt)
{
	pb_uint(&p->sub, 1, (uint64_t)type_id(p, mt->name));
	pb_uint(&p->sub, 2, (uint64_t)unit_id(p, mt));
	pb_msg(&p->out, field, &p->sub);
}

/* The Function of model function f, written when first met. */
static int function_id(struct pprof *p, int f)
{
	const struct model *m = &p->r->m;
	const struct model_function *fn = &m->functions[f];
	const char *file = fn->file >= 0     ? m->files[fn->file]
			   : fn->module >= 0 ? m->modules[fn->module].name
					     : "";
	const char *name = report_function_name(p->r, f);

	if (p->fid[f])
		return p->fid[f];
	p->fid[f] = ++p->nfuncs;
	pb_uint(&p->m, 1, (uint64_t)p->fid[f]);
	pb_uint(&p->m, 2, (uint64_t)str_id(p, name));
	pb_uint(&p->m, 3, (uint64_t)str_id(p, fn->name));
	pb_uint(&p->m, 4, (uint64_t)str_id(p, file));
	pb_uint(&p->m, 5, (uint64_t)(fn->line > 0 ? fn->line : 0));
	pb_msg(&p->out, 5, &p->m);
	return p->fid[f];
}

/* The Location of a tree node: its function at its line (the frame's, else the definition's). */
static int location_id(struct pprof *p, const struct cct *t, int node)
{
	const struct cct_node *n = &t->nodes[node];
	int fid = function_id(p, n->func);
	int line = n->loc >= 0 ? t->locs[n->loc].line : p->r->m.functions[n->func].line;
	size_t before = p->locs.n;
	int id = export_ids_get(&p->locs, fid, line > 0 ? line : 0, 0);

	if (id < 0) {
		p->out.err = id;
		return 0;
	}
	if (p->locs.n > before) {
		pb_uint(&p->sub, 1, (uint64_t)fid);
		pb_uint(&p->sub, 2, (uint64_t)(line > 0 ? line : 0));
		pb_uint(&p->m, 1, (uint64_t)id + 1);
		pb_msg(&p->m, 4, &p->sub);
		pb_msg(&p->out, 4, &p->m);
	}
	return id + 1;
}

static const char *const group_keys[] = {
	[CCT_GROUP_PROCESS] = "process",     [CCT_GROUP_THREAD] = "thread",
	[CCT_GROUP_MODULE] = "module",       [CCT_GROUP_RANK] = "rank",
	[CCT_GROUP_WAIT_KIND] = "wait-kind", [CCT_GROUP_SYNC_OBJECT] = "sync-object",
	[CCT_GROUP_NODE] = "node",           [CCT_GROUP_REGION] = "region",
	[CCT_GROUP_TASK] = "task",           [CCT_GROUP_RUN] = "run",
};

/* A group's label value: its name without the brackets and kind ("[thread w (TID 5)]"). */
static const char *label_value(struct pprof *p, int node, char *buf, size_t size)
{
	char name[1024];
	size_t n;
	const char *sp;

	snprintf(name, sizeof(name), "%s", export_node_name(p->r, &p->r->tree, node, buf, size));
	n = strlen(name);
	sp = strchr(name, ' ');
	if (n > 2 && name[0] == '[' && name[n - 1] == ']' && sp) {
		name[n - 1] = '\0';
		return model_strdup(&p->r->m, sp + 1);
	}
	return model_strdup(&p->r->m, name);
}

/* One Sample per node with a value: its stack leaf first, the -group-by levels as labels. */
static int samples(struct pprof *p)
{
	const struct cct *t = &p->r->tree;
	struct pb ids = { 0 }, vals = { 0 };
	size_t i, k;
	int *path = malloc((t->n + 1) * sizeof(*path)), depth, d;
	char buf[1024];

	if (!path)
		return -ENOMEM;
	for (i = 1; i < t->n && !p->out.err; i++) {
		bool any = false;

		for (k = 0; k < p->x->nmetrics; k++)
			any |= t->self[i * t->nm + (size_t)p->x->metrics[k]] != 0;
		if (!any)
			continue;
		depth = export_path(t, (int)i, path, (int)t->n);
		ids.n = vals.n = 0;
		for (d = depth - 1; d >= 0; d--)
			if (t->nodes[path[d]].func >= 0)
				pb_varint(&ids, (uint64_t)location_id(p, t, path[d]));
		if (!ids.n)
			continue; /* a group's own time, no frame: nothing for pprof to show */
		for (k = 0; k < p->x->nmetrics; k++)
			pb_varint(&vals, (uint64_t)t->self[i * t->nm + (size_t)p->x->metrics[k]]);
		pb_msg(&p->m, 1, &ids);
		pb_msg(&p->m, 2, &vals);
		for (d = 0; d < depth; d++) {
			int g = cct_group_of(&t->nodes[path[d]]);

			if (g < 0)
				continue;
			pb_uint(&p->sub, 1, (uint64_t)str_id(p, group_keys[t->groups[g].kind]));
			pb_uint(&p->sub, 2,
				(uint64_t)str_id(p, label_value(p, path[d], buf, sizeof(buf))));
			pb_msg(&p->m, 3, &p->sub);
		}
		pb_msg(&p->out, 2, &p->m);
	}
	free(path);
	free(ids.p);
	free(vals.p);
	return ids.err ? ids.err : vals.err;
}

static int gzip_out(struct outbuf *b, const unsigned char *data, size_t n)
{
	unsigned char chunk[65536];
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)n;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = deflate(&z, Z_FINISH);
		outbuf_put(b, (const char *)chunk, sizeof(chunk) - z.avail_out);
		outbuf_spill(b);
	} while (rc == Z_OK);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

int export_pprof(struct export_job *x)
{
	struct pprof p = { .r = &x->r[0], .x = x };
	const struct model *m = &p.r->m;
	const struct model_metric *first = &m->metrics[x->metrics[0]];
	size_t k;
	int rc;

	p.fid = calloc(m->nfunctions + 1, sizeof(*p.fid));
	if (!p.fid)
		return -ENOMEM;
	str_id(&p, ""); /* index 0 */
	for (k = 0; k < x->nmetrics; k++)
		value_type(&p, 1, &m->metrics[x->metrics[k]]);
	if ((rc = samples(&p)))
		p.out.err = rc;
	value_type(&p, 11, first);
	if (first->unit == MODEL_UNIT_NS && m->interval_ns > 0)
		pb_uint(&p.out, 12, (uint64_t)m->interval_ns);
	pb_uint(&p.out, 14, (uint64_t)type_id(&p, first->name));
	for (k = 0; k < p.strs.n; k++)
		pb_len(&p.out, 6, p.strs.s[k], strlen(p.strs.s[k]));
	rc = p.out.err ? p.out.err : p.m.err ? p.m.err : p.sub.err;
	if (!rc)
		rc = gzip_out(x->b, p.out.p, p.out.n);
	free(p.out.p);
	free(p.m.p);
	free(p.sub.p);
	free(p.fid);
	export_ids_release(&p.locs);
	export_names_release(&p.strs);
	return rc;
}
