/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_range.c -- unit tests of the overflow-safe bounds checks
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "range.h"
#include "tu_check.h"

#define MAX UINT64_MAX

START_TEST(test_within_accepts_ranges_touching_the_end)
{
	ck_assert(range_within(0, 0, 0));
	ck_assert(range_within(0, 10, 10));
	ck_assert(range_within(10, 0, 10));
	ck_assert(range_within(9, 1, 10));
	ck_assert(range_within(0, MAX, MAX));
	ck_assert(range_within(MAX, 0, MAX));
	ck_assert(range_within(MAX - 1, 1, MAX));
	ck_assert(range_within(1, MAX - 1, MAX));
}
END_TEST

START_TEST(test_within_refuses_ranges_past_the_end)
{
	ck_assert(!range_within(0, 1, 0));
	ck_assert(!range_within(1, 0, 0));
	ck_assert(!range_within(0, 11, 10));
	ck_assert(!range_within(10, 1, 10));
	ck_assert(!range_within(11, 0, 10));
	ck_assert(!range_within(1, MAX, MAX));
	ck_assert(!range_within(MAX, 1, MAX));
	ck_assert(!range_within(0, MAX, MAX - 1));
}
END_TEST

START_TEST(test_within_refuses_ranges_whose_end_wraps)
{
	/* off + len wraps to a small number that a naive check accepts */
	ck_assert(!range_within(MAX, 2, 10));
	ck_assert(!range_within(2, MAX, 10));
	ck_assert(!range_within(MAX, MAX, MAX));
	ck_assert(!range_within(MAX - 7, 16, 4096));
	ck_assert(!range_within((uint64_t)1 << 63, (uint64_t)1 << 63, 4096));
}
END_TEST

START_TEST(test_add_ok_stores_sums_that_fit)
{
	uint64_t sum = 42;

	ck_assert(range_add_ok(0, 0, &sum));
	ck_assert_uint_eq(sum, 0);
	ck_assert(range_add_ok(MAX, 0, &sum));
	ck_assert(sum == MAX);
	ck_assert(range_add_ok(0, MAX, &sum));
	ck_assert(sum == MAX);
	ck_assert(range_add_ok(MAX - 1, 1, &sum));
	ck_assert(sum == MAX);
	ck_assert(range_add_ok((uint64_t)1 << 63, ((uint64_t)1 << 63) - 1,
			&sum));
	ck_assert(sum == MAX);
	ck_assert(range_add_ok(4096, 8192, &sum));
	ck_assert_uint_eq(sum, 12288);
}
END_TEST

START_TEST(test_add_ok_refuses_sums_that_wrap)
{
	uint64_t sum;

	ck_assert(!range_add_ok(MAX, 1, &sum));
	ck_assert(!range_add_ok(1, MAX, &sum));
	ck_assert(!range_add_ok(MAX, MAX, &sum));
	ck_assert(!range_add_ok((uint64_t)1 << 63, (uint64_t)1 << 63, &sum));
}
END_TEST

/* range_suite -- all bounds-check tests */
static Suite *
range_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("range", "bounds", NULL, NULL, &tc);

	tcase_add_test(tc, test_within_accepts_ranges_touching_the_end);
	tcase_add_test(tc, test_within_refuses_ranges_past_the_end);
	tcase_add_test(tc, test_within_refuses_ranges_whose_end_wraps);
	tcase_add_test(tc, test_add_ok_stores_sums_that_fit);
	tcase_add_test(tc, test_add_ok_refuses_sums_that_wrap);
	return tu_suite_add(s, tc);
}

/* main -- run range_suite() (tu_check.h) */
TU_MAIN(range_suite)
