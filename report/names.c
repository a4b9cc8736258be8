/* SPDX-License-Identifier: MIT */
/* Function names as people type them: short forms, suffixes, and the candidates of a name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "report/names.h"
#include "report/report-private.h"

/* Trailing qualifiers of a member function, after its parameter list. */
static size_t strip_qualifiers(const char *s, size_t n)
{
	static const char *const quals[] = { " const",    " volatile", " &&", " &",
					     " noexcept", "&&",        "&",   NULL };
	bool again = true;

	while (again) {
		again = false;
		while (n && s[n - 1] == ' ')
			n--;
		for (const char *const *q = quals; *q; q++) {
			size_t ql = strlen(*q);

			if (n > ql && !strncmp(s + n - ql, *q, ql)) {
				n -= ql;
				again = true;
				break;
			}
		}
	}
	return n;
}

size_t names_short_len(const char *name)
{
	size_t len = strlen(name), n = strip_qualifiers(name, len), i;
	int depth = 0;

	if (!n || name[n - 1] != ')')
		return len;
	/* Back to the '(' that opens the last parameter list. */
	for (i = n; i-- > 0;) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || i == (size_t)-1)
		return len; /* unbalanced, or "(anonymous namespace)"-like: keep it whole */
	return i;
}

/* Copy s[0..n) without template arguments ("Grid<double>::relax" -> "Grid::relax"). */
static char *strip_templates(const char *s, size_t n)
{
	char *out = malloc(n + 1);
	size_t i, k = 0;
	int depth = 0;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		/* "operator<" and "operator<<" are names, not template arguments. */
		if (s[i] == '<' && !(i >= 8 && !strncmp(s + i - 8, "operator", 8)))
			depth++;
		else if (s[i] == '>' && depth > 0)
			depth--;
		else if (!depth)
			out[k++] = s[i];
	}
	out[k] = '\0';
	return out;
}

/* typed is s[0..n)'s end, starting at a component boundary. */
static bool suffix_at_boundary(const char *s, size_t n, const char *typed)
{
	size_t tl = strlen(typed);
	const char *start;

	if (!tl || tl > n || strncmp(s + n - tl, typed, tl))
		return false;
	start = s + n - tl;
	return start == s || start[-1] == '.' ||
	       (start - s >= 2 && start[-1] == ':' && start[-2] == ':');
}

bool names_match(const char *full, const char *typed)
{
	size_t n = names_short_len(full);
	bool hit;
	char *plain;

	if (suffix_at_boundary(full, strlen(full), typed) || suffix_at_boundary(full, n, typed))
		return true;
	if (!memchr(full, '<', n))
		return false;
	plain = strip_templates(full, n);
	hit = plain && suffix_at_boundary(plain, strlen(plain), typed);
	free(plain);
	return hit;
}

const char *names_last(const char *full, size_t *len)
{
	size_t n = names_short_len(full), i;
	int depth = 0;

	/* The last "::" or "." outside template arguments and parentheses. */
	for (i = n; i-- > 0;) {
		char c = full[i];

		if (c == '>' || c == ')')
			depth++;
		else if ((c == '<' || c == '(') && depth)
			depth--;
		else if (!depth && (c == '.' || (c == ':' && i && full[i - 1] == ':')))
			break;
	}
	i = i == (size_t)-1 ? 0 : i + 1;
	*len = n - i;
	return full + i;
}

/* No function matched: a usage error naming the nearest of the names and last components. */
static int no_match(const struct report *r, const char *name, const char *what)
{
	const struct model *m = &r->m;
	const char **names = malloc((2 * m->nfunctions + 1) * sizeof(*names));
	char **lasts = calloc(m->nfunctions + 1, sizeof(*lasts));
	const char *near = NULL;
	size_t i, n = 0;
	int rc;

	for (i = 0; names && lasts && i < m->nfunctions; i++) {
		size_t len;
		const char *last = names_last(m->functions[i].name, &len);

		names[n++] = m->functions[i].name;
		if (len != strlen(m->functions[i].name) && (lasts[i] = strndup(last, len)))
			names[n++] = lasts[i];
	}
	if (names && lasts)
		near = options_nearest(name, names, n);
	if (near)
		rc = report_usage_error("no function '%s' in result '%s' for %s (did you mean "
					"'%s'?)",
					name, r->dir, what, near);
	else
		rc = report_usage_error("no function '%s' in result '%s' for %s", name, r->dir,
					what);
	for (i = 0; lasts && i < m->nfunctions; i++)
		free(lasts[i]);
	free(lasts);
	free(names);
	return rc;
}

/* Several functions of different names match: a usage error listing them (at most 10). */
static int ambiguous(const struct report *r, const char *name, const char *what, const int *funcs,
		     size_t n)
{
	char list[2048];
	size_t i, len = 0, shown = 0;

	list[0] = '\0';
	for (i = 0; i < n && shown < 10; i++) {
		const char *f = r->m.functions[funcs[i]].name;
		size_t j;

		for (j = 0; j < i && strcmp(r->m.functions[funcs[j]].name, f); j++)
			;
		if (j < i)
			continue; /* the same name in another module: one candidate */
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
					"\n  %s", f);
		shown++;
	}
	return report_usage_error("function name '%s' for %s is ambiguous in result '%s': give "
				  "more of the name of one of these%s%s",
				  name, what, r->dir, list, i < n ? "\n  ..." : "");
}

int report_find_functions(const struct report *r, const char *name, bool single, const char *what,
			  int **out, size_t *n)
{
	const struct model *m = &r->m;
	size_t i, k;
	bool several = false;

	*n = 0;
	*out = malloc((m->nfunctions + 1) * sizeof(int));
	if (!*out)
		return -ENOMEM;
	/* The whole name first: a function called exactly so is the one meant. */
	for (i = 0; i < m->nfunctions; i++)
		if (!strcmp(m->functions[i].name, name))
			(*out)[(*n)++] = (int)i;
	if (*n)
		return 0;
	for (i = 0; i < m->nfunctions; i++)
		if (names_match(m->functions[i].name, name))
			(*out)[(*n)++] = (int)i;
	for (k = 1; k < *n && !several; k++)
		several = strcmp(m->functions[(*out)[k]].name, m->functions[(*out)[0]].name) != 0;
	if (*n && !(single && several))
		return 0;
	if (*n) {
		int rc = ambiguous(r, name, what, *out, *n);

		free(*out);
		*out = NULL;
		return rc;
	}
	free(*out);
	*out = NULL;
	return no_match(r, name, what);
}

bool report_has_function(const struct report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->m.nfunctions; i++)
		if (!strcmp(r->m.functions[i].name, name) ||
		    names_match(r->m.functions[i].name, name))
			return true;
	return false;
}
