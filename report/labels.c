/* SPDX-License-Identifier: MIT */
/* The labels rows carry: sync objects, nodes, wait kinds, regions, modules, group nodes. */
#include <stdio.h>
#include <string.h>

#include "report/model.h"

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

const char *model_wait_kind_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nwait_kinds ? m->wait_kinds[i] : "[no wait]";
}

const char *model_region_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nregions ? m->regions[i] : "[no region]";
}
