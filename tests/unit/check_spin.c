/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_spin.c -- unit tests of the bounded, adaptive spin (spin.c)
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "spin.h"
#include "tu_check.h"

#define US 1000ULL
#define BOUND (50 * US)

/*
 * wait_one -- a wait that lasts `ns`: it ends while spinning when its
 * budget covers it; true when it was given a budget
 */
static bool
wait_one(struct spin *s, uint64_t ns)
{
	uint64_t budget = spin_budget(s);
	spin_account(s, ns, budget && ns <= budget);
	return budget != 0;
}

/* a history of waits, then waits whose spins are counted */
static const struct {
	const char *name;
	uint64_t bound;
	uint64_t before_ns;	/* each wait of the history */
	unsigned before;	/* how many */
	uint64_t ns;		/* each counted wait */
	unsigned n;
	unsigned min_spun, max_spun;
} Cases[] = {
	{ "a bound of 0 never spins", 0, 0, 0, 10 * US, 1000, 0, 0 },
	{ "replies within the bound are always spun for", BOUND, 0, 0,
		10 * US, 1000, 1000, 1000 },
	{ "replies just within it too", BOUND, 0, 0, 49 * US, 1000, 1000,
		1000 },
	/* 1000 waits of a second: a probe at most every 64 */
	{ "an idle waiter spins only now and then", BOUND, 0, 0,
		1000000 * US, 1000, 1, 1000 / 64 + 8 },
	{ "replies past the bound stop the spinning", BOUND, 0, 0,
		200 * US, 1000, 1, 1000 / 64 + 8 },
	{ "quick replies after idling bring it back", BOUND, 1000000 * US,
		1000, 10 * US, 200, 200 - 64 - 4, 200 },
	{ "slow replies after quick ones stop it", BOUND, 10 * US, 1000,
		400 * US, 1000, 1, 1000 / 64 + 8 },
};

START_TEST(test_spins_as_the_waits_say)
{
	struct spin s;
	spin_init(&s, Cases[_i].bound);
	for (unsigned i = 0; i < Cases[_i].before; i++)
		(void) wait_one(&s, Cases[_i].before_ns);
	unsigned spun = 0;
	for (unsigned i = 0; i < Cases[_i].n; i++)
		spun += wait_one(&s, Cases[_i].ns);
	ck_assert_msg(spun >= Cases[_i].min_spun &&
		spun <= Cases[_i].max_spun, "%s: %u of %u waits spun",
		Cases[_i].name, spun, Cases[_i].n);
}
END_TEST

static const struct {
	const char *value;	/* NULL: unset */
	uint64_t ns;
} Env[] = {
	{ NULL, SPIN_DEFAULT_US * US },
	{ "", SPIN_DEFAULT_US * US },
	{ "0", 0 },
	{ "20", 20 * US },
	{ "10000", 10000 * US },
	{ "10001", SPIN_DEFAULT_US * US },
	{ "20us", SPIN_DEFAULT_US * US },
	{ "-1", SPIN_DEFAULT_US * US },
};

START_TEST(test_bound_from_the_environment)
{
	if (Env[_i].value)
		setenv("RPMEM_SPIN_US", Env[_i].value, 1);
	else
		unsetenv("RPMEM_SPIN_US");
	ck_assert_msg(spin_bound_env() == Env[_i].ns, "RPMEM_SPIN_US=%s",
		Env[_i].value ? Env[_i].value : "(unset)");
}
END_TEST

/* spin_suite -- every spin test */
static Suite *
spin_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("spin", "spin", NULL, NULL, &tc);
	TU_LOOP(tc, test_spins_as_the_waits_say, Cases);
	TU_LOOP(tc, test_bound_from_the_environment, Env);
	return tu_suite_add(s, tc);
}

TU_MAIN(spin_suite)
