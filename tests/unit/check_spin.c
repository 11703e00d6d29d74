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
#define FIXED { BOUND, BOUND }			/* RPMEM_SPIN_US=50 */
#define GROWS { BOUND, SPIN_GROW_US * US }	/* the default */

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
	struct spin_conf conf;
	uint64_t before_ns;	/* each wait of the history */
	unsigned before;	/* how many */
	uint64_t ns;		/* each counted wait */
	unsigned n;
	unsigned min_spun, max_spun;
} Cases[] = {
	{ "a bound of 0 never spins", { 0, 0 }, 0, 0, 10 * US, 1000, 0, 0 },
	{ "replies within the bound are always spun for", FIXED, 0, 0,
		10 * US, 1000, 1000, 1000 },
	{ "replies just within it too", FIXED, 0, 0, 49 * US, 1000, 1000,
		1000 },
	/* 1000 waits of a second: a probe at most every 64 */
	{ "an idle waiter spins only now and then", FIXED, 0, 0,
		1000000 * US, 1000, 1, 1000 / 64 + 8 },
	{ "replies past the bound stop the spinning", FIXED, 0, 0,
		200 * US, 1000, 1, 1000 / 64 + 8 },
	{ "quick replies after idling bring it back", FIXED, 1000000 * US,
		1000, 10 * US, 200, 200 - 64 - 4, 200 },
	{ "slow replies after quick ones stop it", FIXED, 10 * US, 1000,
		400 * US, 1000, 1, 1000 / 64 + 8 },
	/* the default bound grows to cover replies up to its cap */
	{ "a growing bound spins for quick replies", GROWS, 0, 0, 10 * US,
		1000, 1000, 1000 },
	{ "it grows to replies past its start", GROWS, 0, 0, 150 * US,
		1000, 990, 1000 },
	{ "and after idling it comes back to them", GROWS, 1000000 * US,
		1000, 150 * US, 200, 200 - 64 - 16, 200 },
	/* the probes, and the few waits it takes to reach the cap */
	{ "not past its cap", GROWS, 0, 0, 400 * US, 1000, 1,
		1000 / 64 + 12 },
	{ "an idle waiter of a growing bound spins only now and then",
		GROWS, 0, 0, 1000000 * US, 1000, 1, 1000 / 64 + 8 },
};

START_TEST(test_spins_as_the_waits_say)
{
	struct spin s;
	spin_init(&s, Cases[_i].conf);
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

#define DEFAULT { SPIN_DEFAULT_US * US, SPIN_DEFAULT_US * US }
#define DEF_GROWS { SPIN_DEFAULT_US * US, SPIN_GROW_US * US }

/* RPMEM_SPIN_US, for waits that are the peer's CPU (grow 0) or its I/O */
static const struct {
	const char *value;	/* NULL: unset */
	unsigned grow_us;
	struct spin_conf conf;
} Env[] = {
	{ NULL, 0, DEFAULT },
	{ NULL, SPIN_GROW_US, DEF_GROWS },
	{ "", 0, DEFAULT },
	{ "", SPIN_GROW_US, DEF_GROWS },
	{ "0", SPIN_GROW_US, { 0, 0 } },
	{ "20", SPIN_GROW_US, { 20 * US, 20 * US } },
	{ "10000", 0, { 10000 * US, 10000 * US } },
	{ "10001", 0, DEFAULT },
	{ "20us", SPIN_GROW_US, DEF_GROWS },
	{ "-1", 0, DEFAULT },
};

START_TEST(test_bound_from_the_environment)
{
	if (Env[_i].value)
		setenv("RPMEM_SPIN_US", Env[_i].value, 1);
	else
		unsetenv("RPMEM_SPIN_US");
	struct spin_conf c = spin_conf_env(Env[_i].grow_us);
	ck_assert_msg(c.bound_ns == Env[_i].conf.bound_ns &&
		c.cap_ns == Env[_i].conf.cap_ns, "RPMEM_SPIN_US=%s",
		Env[_i].value ? Env[_i].value : "(unset)");
}
END_TEST

/* main -- every spin test (tu_check.h) */
TU_CHECK_MAIN("spin", "spin", NULL, NULL,
	TU_EACH(test_spins_as_the_waits_say, Cases),
	TU_EACH(test_bound_from_the_environment, Env))
