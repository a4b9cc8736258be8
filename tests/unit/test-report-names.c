/* SPDX-License-Identifier: MIT */
/* Unit tests of function names as people type them (report/names.c). */
#include <string.h>

#include "report/names.h"
#include "tests/unit/unit.h"

/* name -> its short form (parameter list and qualifiers dropped) and its last component. */
static const struct {
	const char *name, *short_form, *last;
} forms[] = {
	{ "physics::Grid<double>::relax(int)", "physics::Grid<double>::relax", "relax" },
	{ "physics::Solver::step() const", "physics::Solver::step", "step" },
	{ "ns::S::operator()(int)", "ns::S::operator()", "operator()" },
	{ "std::vector<int, std::allocator<int> >::operator[](unsigned long) &&",
	  "std::vector<int, std::allocator<int> >::operator[]", "operator[]" },
	{ "f(void (*)(int))", "f", "f" },
	{ "Simulation.step", "Simulation.step", "step" },
	{ "outer.<locals>.inner", "outer.<locals>.inner", "inner" },
	{ "func@0x1a2b", "func@0x1a2b", "func@0x1a2b" },
	{ "[unknown]", "[unknown]", "[unknown]" },
	{ "(anonymous namespace)::g", "(anonymous namespace)::g", "g" },
	{ "main", "main", "main" },
};

static void test_report_names_short_forms(void)
{
	size_t i, len;
	const char *last;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		CU_ASSERT_EQUAL(names_short_len(forms[i].name), strlen(forms[i].short_form));
		CU_ASSERT_NSTRING_EQUAL(forms[i].name, forms[i].short_form,
					strlen(forms[i].short_form));
		last = names_last(forms[i].name, &len);
		CU_ASSERT_EQUAL(len, strlen(forms[i].last));
		CU_ASSERT_NSTRING_EQUAL(last, forms[i].last, len);
	}
}

/* What a typed name names: a suffix of the name at a component boundary, in one of its forms. */
static const struct {
	const char *full, *typed;
	bool match;
} matches[] = {
	{ "physics::Grid<double>::relax(int)", "relax", true },
	{ "physics::Grid<double>::relax(int)", "relax(int)", true },
	{ "physics::Grid<double>::relax(int)", "Grid<double>::relax", true },
	{ "physics::Grid<double>::relax(int)", "Grid::relax", true },
	{ "physics::Grid<double>::relax(int)", "physics::Grid::relax", true },
	{ "physics::Grid<double>::relax(int)", "lax", false },
	{ "physics::Grid<double>::relax(int)", "Grid<float>::relax", false },
	{ "physics::Grid<double>::relax(int)", "relax(double)", false },
	{ "Simulation.step", "step", true },
	{ "Simulation.step", "Simulation.step", true },
	{ "Simulation.step", "tep", false },
	{ "physics::Solver::step() const", "step", true },
	{ "ns::S::operator()(int)", "operator()", true },
	{ "std::operator<<(std::ostream&, int)", "operator<<", true },
	{ "main", "main", true },
	{ "main", "", false },
	{ "domain", "main", false },
};

static void test_report_names_match(void)
{
	size_t i;

	for (i = 0; i < sizeof(matches) / sizeof(matches[0]); i++) {
		bool got = names_match(matches[i].full, matches[i].typed);

		if (got != matches[i].match)
			fprintf(stderr, "names_match('%s', '%s') = %d\n", matches[i].full,
				matches[i].typed, got);
		CU_ASSERT_EQUAL(got, matches[i].match);
	}
}

UNIT_MAIN("report-names", UNIT_TEST("short_forms", test_report_names_short_forms),
	  UNIT_TEST("match", test_report_names_match))
