/* SPDX-License-Identifier: MIT */
/* The labels rows carry: sync objects, nodes, wait kinds, regions, modules, group nodes. */
#include <stdio.h>
#include <string.h>

#include "report/report-private.h"

/* Address-like object types read in hex; fds and pids in decimal. */
static bool object_is_address(const char *type)
{
	return strcmp(type, "fd") && strcmp(type, "pid");
}

const char *model_sync_object_label(const struct model *m, int i, char *buf, size_t size)
{
	const struct model_context *c;

	if (i < 0 || (size_t)i >= m->nsync_objects)
		return "[no wait]";
	c = &m->contexts[m->sync_objects[i].context];
	if (!c->object_type)
		snprintf(buf, size, "[%s]", c->wait_kind ? c->wait_kind : "none");
	else if (c->object_name && object_is_address(c->object_type))
		snprintf(buf, size, "%s", c->object_name);
	else if (c->object_name)
		snprintf(buf, size, "%s (%s %lld)", c->object_name, c->object_type,
			 (long long)c->object);
	else if (object_is_address(c->object_type))
		snprintf(buf, size, "%s 0x%llx", c->object_type, (unsigned long long)c->object);
	else
		snprintf(buf, size, "%s %lld", c->object_type, (long long)c->object);
	return buf;
}

const char *model_node_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nnodes ? m->nodes[i] : "[unknown node]";
}

const char *model_run_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nruns ? m->runs[i] : "[no run]";
}

const char *model_wait_kind_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nwait_kinds ? m->wait_kinds[i] : "[no wait]";
}

const char *model_region_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nregions ? m->regions[i] : "[no region]";
}

const char *model_task_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nfunctions ? m->functions[i].name : "[no task]";
}

const char *report_basename(const char *path)
{
	const char *slash;

	if (!path)
		return "";
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

const char *report_module_name(const struct report *r, int func)
{
	int mod = func >= 0 ? r->m.functions[func].module : -1;

	if (mod >= 0)
		return r->m.modules[mod].name;
	if (func < 0)
		return "";
	return r->m.functions[func].python ? "[python]" : "[unknown]";
}

const char *report_file_path(const struct report *r, int file)
{
	return file >= 0 && (size_t)file < r->m.nfiles ? r->m.files[file] : NULL;
}

const char *report_group_kind(const struct cct *tree, int node)
{
	static const char *const kinds[] = { "process",     "thread", "module", "rank", "wait-kind",
					     "sync-object", "node",   "region", "task", "run" };
	int g = cct_group_of(&tree->nodes[node]);

	return g >= 0 ? kinds[tree->groups[g].kind] : "";
}

const char *report_thread_name(const struct model_thread *th, char *buf, size_t size)
{
	if (!th || !*th->name)
		snprintf(buf, size, "[thread]");
	else if (th->os_name && *th->os_name)
		snprintf(buf, size, "%s [%s]", th->name, th->os_name);
	else
		snprintf(buf, size, "%s", th->name);
	return buf;
}

const char *report_thread_label(const struct model_thread *th, char *buf, size_t size)
{
	char name[512];

	snprintf(buf, size, "%s (TID %lld)", report_thread_name(th, name, sizeof(name)),
		 (long long)(th ? th->tid : 0));
	return buf;
}

const char *report_group_label(const struct report *r, const struct cct *tree, int node, char *buf,
			       size_t size)
{
	int g = cct_group_of(&tree->nodes[node]), item;

	if (g < 0)
		return "";
	item = tree->groups[g].item;
	switch (tree->groups[g].kind) {
	case CCT_GROUP_THREAD:
		if (item < 0)
			return "[unknown thread]";
		return report_thread_label(&r->m.threads[item], buf, size);
	case CCT_GROUP_PROCESS:
		if (item < 0)
			return "[unknown process]";
		snprintf(buf, size, "%s (PID %lld)", report_basename(r->m.processes[item].exe),
			 (long long)r->m.processes[item].pid);
		return buf;
	case CCT_GROUP_MODULE:
		return item >= 0 ? r->m.modules[item].name : item == -2 ? "[python]" : "[unknown]";
	case CCT_GROUP_RANK:
		if (item < 0)
			return "[no rank]";
		snprintf(buf, size, "rank %d", item);
		return buf;
	case CCT_GROUP_NODE:
		return model_node_label(&r->m, item);
	case CCT_GROUP_WAIT_KIND:
		return model_wait_kind_label(&r->m, item);
	case CCT_GROUP_SYNC_OBJECT:
		return model_sync_object_label(&r->m, item, buf, size);
	case CCT_GROUP_REGION:
		return model_region_label(&r->m, item);
	case CCT_GROUP_TASK:
		return model_task_label(&r->m, item);
	case CCT_GROUP_RUN:
		return model_run_label(&r->m, item);
	}
	return "";
}
