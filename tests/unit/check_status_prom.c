/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_status_prom.c -- unit tests of rpmem status --prometheus
 * (prom.c, status_prom.c): label values escaped as the text exposition
 * format wants, one table row a case; a rendering whose families are
 * each whole after their HELP and TYPE, with one state at 1 per handle
 * and the refusal, record and markers where they belong.  The same
 * output read by a real node-exporter: tests/integration/metrics.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "status.h"
#include "tu_check.h"

/* a label value and how it must be written */
static const struct tu_io Labels[] = {
	{ "", "" },
	{ "app.set", "app.set" },
	{ "a\"b", "a\\\"b" },				/* quote */
	{ "a\\b", "a\\\\b" },				/* backslash */
	{ "a\nb", "a\\nb" },				/* newline */
	{ "\"\\\n", "\\\"\\\\\\n" },			/* all three */
	{ "\\n", "\\\\n" },		/* a backslash and an n stay two */
	{ "tab\there\r", "tab\there\r" },	/* other bytes as they are */
	{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
	{ "x\xff", "x\xef\xbf\xbd" },		/* not UTF-8: U+FFFD */
	{ "\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd" },	/* cut short */
	{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },	/* overlong '/' */
	{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
};

/* render -- what `write` puts in a FILE, malloc'ed */
static char *
render(void (*write)(FILE *o, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(o);
	write(o, arg);
	ck_assert_int_eq(fclose(o), 0);
	return buf;
}

/* write_label -- prom_label for render */
static void
write_label(FILE *o, const void *arg)
{
	prom_label(o, arg);
}

START_TEST(test_label_values_are_escaped_as_the_text_format_wants)
{
	char *got = render(write_label, Labels[_i].in);
	ck_assert_str_eq(got, Labels[_i].out);
	free(got);
}
END_TEST

/* write_status -- status_prom for render */
static void
write_status(FILE *o, const void *arg)
{
	status_prom(o, arg);
}

/*
 * well_formed -- each family's HELP, TYPE and samples are together, in
 * that order, and no family comes twice; no sample has a timestamp
 */
static void
well_formed(const char *text)
{
	char seen[64][96], fam[96] = "";
	size_t nseen = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		size_t len = strcspn(l, "\n");
		ck_assert_msg(l[len] == '\n', "a line without its newline");
		char name[96];
		if (sscanf(l, "# HELP %95s ", name) == 1) {
			for (size_t i = 0; i < nseen; i++)
				ck_assert_msg(strcmp(seen[i], name), "%s twice",
					name);
			ck_assert_uint_lt(nseen, 64);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
			snprintf(fam, sizeof(fam), "%s", name);
			continue;
		}
		if (sscanf(l, "# TYPE %95s ", name) == 1) {
			ck_assert_str_eq(name, fam);
			continue;
		}
		size_t n = strcspn(l, "{ ");
		ck_assert_msg(n == strlen(fam) && !strncmp(l, fam, n),
			"a sample of '%.*s' under '%s'", (int)n, l, fam);
		/* one space, then the value: no timestamp after it */
		const char *close = memrchr(l, '}', len);
		const char *v = close ? close + 1 : l + n;
		ck_assert_msg(v[0] == ' ' && !memchr(v + 1, ' ',
			(size_t)(l + len - v - 1)), "not one value: %.*s",
			(int)len, l);
	}
}

/* count -- lines of `text` that hold `what` and end with `end` */
static int
count(const char *text, const char *what, const char *end)
{
	int n = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		char line[512];
		int len = (int)strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", len, l);
		n += strstr(line, what) && (int)strlen(end) <= len &&
			!strcmp(line + len - strlen(end), end);
	}
	return n;
}

/* has -- `text` holds the whole line `line` */
static void
has(const char *text, const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	ck_assert_msg(strstr(text, want), "missing: %s", line);
}

#define H "pool_set=\"q\\\"s\",target=\"alice@backup\",pid=\"42\"," \
	"handle=\"1\""

START_TEST(test_a_rendering_is_whole_families_with_one_state_at_one)
{
	struct rstate_status h[2];
	memset(h, 0, sizeof(h));
	for (int i = 0; i < 2; i++) {
		h[i].pid = 42;
		h[i].seq = (unsigned)i;
		snprintf(h[i].target, sizeof(h[i].target), "alice@backup");
		snprintf(h[i].pool_set, sizeof(h[i].pool_set), "q\"s");
		snprintf(h[i].policy, sizeof(h[i].policy), "continue");
	}
	h[0].state = RSTATE_CONNECTED;
	h[1].state = RSTATE_SPLIT_BRAIN;
	h[1].out_of_sync = 8192;
	h[1].reconnects = 3;
	h[1].since = 1795667870;
	h[1].updated_ms = 1795667870042;
	snprintf(h[1].generation, sizeof(h[1].generation), "00000000000000aa");
	snprintf(h[1].replica_generation, sizeof(h[1].replica_generation),
		"00000000000000bb");
	snprintf(h[1].refusal, sizeof(h[1].refusal), "split-brain");
	struct status_closed r;
	memset(&r, 0, sizeof(r));
	snprintf(r.r.target, sizeof(r.r.target), "bob@backup");
	snprintf(r.r.pool_set, sizeof(r.r.pool_set), "closed.set");
	snprintf(r.r.reason, sizeof(r.r.reason), "crash");
	struct status_set s;
	memset(&s, 0, sizeof(s));
	s.path = "/pools/r.set";
	s.gen.g.id = 0x11;
	s.gen.g.current = 0x22;
	s.gen.g.discarded = true;
	snprintf(s.gen.refused, sizeof(s.gen.refused), "replica-newer");
	s.gen.refused_time = 1795667000;
	s.marks[0] = (struct status_mark){ "promoted", 0, 1795660000, "", "" };
	s.marks[1] = (struct status_mark){ "outdated", -ENOENT, 0, "", "" };
	struct status_found f;
	memset(&f, 0, sizeof(f));
	f.h = h;
	f.nh = 2;
	f.r = &r;
	f.nr = 1;
	f.s = &s;
	f.ns = 1;
	f.worst = SEV_BROKEN;

	char *t = render(write_status, &f);
	well_formed(t);
	ck_assert_int_eq(count(t, "rpmem_handle_state{", ""), 2 * RSTATE_MAX);
	ck_assert_int_eq(count(t, "rpmem_handle_state{", "} 1"), 2);
	ck_assert_int_eq(count(t, "rpmem_handle_state{" H, "} 1"), 1);
	has(t, "rpmem_status_severity 3");
	has(t, "rpmem_handle_state{" H ",state=\"split-brain\"} 1");
	has(t, "rpmem_handle_state{" H ",state=\"connected\"} 0");
	has(t, "rpmem_handle_refused{" H ",reason=\"split-brain\"} 1");
	has(t, "rpmem_handle_refused{" H ",reason=\"unrelated\"} 0");
	has(t, "rpmem_handle_generation_mismatch{" H "} 1");
	has(t, "rpmem_handle_out_of_sync_bytes{" H "} 8192");
	has(t, "rpmem_handle_reconnects_total{" H "} 3");
	has(t, "rpmem_handle_state_since_timestamp_seconds{" H "} 1795667870");
	has(t, "rpmem_handle_updated_timestamp_seconds{" H "} "
		"1795667870.042");
	has(t, "# TYPE rpmem_handle_reconnects_total counter");
	has(t, "rpmem_replica_out_of_sync{pool_set=\"closed.set\","
		"target=\"bob@backup\",reason=\"crash\"} 1");
	has(t, "rpmem_replica_ranges_known{pool_set=\"closed.set\","
		"target=\"bob@backup\"} 0");
	ck_assert_int_eq(count(t, "rpmem_replica_out_of_sync_bytes", ""), 0);
	has(t, "rpmem_set_promoted{set=\"/pools/r.set\"} 1");
	has(t, "rpmem_set_promoted_timestamp_seconds{set=\"/pools/r.set\"} "
		"1795660000");
	has(t, "rpmem_set_outdated{set=\"/pools/r.set\"} 0");
	ck_assert_int_eq(count(t, "rpmem_set_outdated_timestamp", ""), 0);
	has(t, "rpmem_set_discarded{set=\"/pools/r.set\"} 1");
	has(t, "rpmem_set_resync_target{set=\"/pools/r.set\"} 0");
	has(t, "rpmem_set_refused{set=\"/pools/r.set\","
		"reason=\"replica-newer\"} 1");
	has(t, "rpmem_set_generation_info{set=\"/pools/r.set\","
		"copy=\"0000000000000011\",generation=\"0000000000000022\"} 1");
	free(t);
}
END_TEST

START_TEST(test_nothing_found_is_the_verdict_alone)
{
	struct status_found f;
	memset(&f, 0, sizeof(f));
	char *t = render(write_status, &f);
	well_formed(t);
	ck_assert_str_eq(t, "# HELP rpmem_status_severity What rpmem status "
		"exits with: 0 all connected and in sync, 1 something needs "
		"attention, 3 split brain, refused, broken or unreadable.\n"
		"# TYPE rpmem_status_severity gauge\nrpmem_status_severity 0\n");
	free(t);
}
END_TEST

/* status_prom_suite -- every case above */
static Suite *
status_prom_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("status_prom", "core", NULL, NULL, &tc);
	TU_LOOP(tc, test_label_values_are_escaped_as_the_text_format_wants,
		Labels);
	tcase_add_test(tc,
		test_a_rendering_is_whole_families_with_one_state_at_one);
	tcase_add_test(tc, test_nothing_found_is_the_verdict_alone);
	return tu_suite_add(s, tc);
}

TU_MAIN(status_prom_suite)
