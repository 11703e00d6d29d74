/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon.c -- rpmemd spoken to directly on its stdin/stdout, no ssh
 *
 * The requests a correct librpmem never sends: other protocol versions
 * (scenario R19), messages illegal in the session's state, malformed
 * and oversized headers, truncated bodies (R8, R9).  Each must get a
 * specific answer or a clean exit with a log line naming the field; never
 * a crash or a hang.
 *
 * Environment: top_builddir (where rpmemd is); a scratch directory is
 * made under TMPDIR (dtest.h).  Start-up failures and refused requests
 * of other kinds are daemon_errors.c's.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "lanesec.h"
#include "proto.h"
#include "tu_check.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* proc_status -- the value of `key` in /proc/<pid>/status */
static void
proc_status(pid_t pid, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	val[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		size_t k = strlen(key);
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			snprintf(val, len, "%s", line + k + 1);
			break;
		}
	}
	fclose(f);
	char *p = val;
	while (*p == ' ' || *p == '\t')
		p++;
	memmove(val, p, strlen(p) + 1);
	val[strcspn(val, "\n")] = '\0';
}

/* S5: no inherited descriptors, umask 077, no new privileges */
START_TEST(rpmemd_hardens_itself)
{
	struct daemon d;
	dtest_start(&d);
	char val[64];
	proc_status(d.pid, "NoNewPrivs", val, sizeof(val));
	ck_assert_str_eq(val, "1");
	proc_status(d.pid, "Umask", val, sizeof(val));
	ck_assert_str_eq(val, "0077");
	char path[64], link[256];
	snprintf(path, sizeof(path), "/proc/%d/fd/9", (int)d.pid);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	ck_assert_msg(n < 0, "rpmemd kept an inherited descriptor 9");
	/* hung up without a CLOSE: an interrupted session, exit 1 */
	dtest_finish(&d, 1);
}
END_TEST

/*
 * R20: persist-apm on a pool that claims to be pmem, over tcp: APM would
 * leave RMA-written bytes in the target's caches, so rpmemd answers
 * GPSPM and says why
 */
START_TEST(apm_over_tcp_downgrades_to_gpspm_with_a_notice)
{
	/* unsealed lanes, then sealed ones (no RMA at all) */
	static const char *const why[] = { "the provider is not verbs",
		"the lanes are sealed (no RMA)" };
	Dtest_args[0] = "--persist-apm";
	Dtest_args[1] = _i ? NULL : "--lane-security=none";
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	ck_assert_uint_eq(resp.ibc.persist_method, PROTO_PM_GPSPM);
	dtest_done(&d);
	char line[160];
	snprintf(line, sizeof(line), "persist-apm requested, but %s: using "
		"GPSPM", why[_i]);
	ck_assert_msg(dtest_log_has(line), "no \"%s\" in %s", line, Dtest_log);
	ck_assert(dtest_log_has("persist flush: pmem_persist"));
}
END_TEST

/*
 * S8: the session's lane security is the stronger of the two minimums,
 * whichever side asks for more; the cipher and the daemon's key material
 * come with it, and both settings are named in the log
 */
static const struct {
	const char *daemon;	/* rpmemd's option, or NULL: default */
	unsigned client;
	unsigned want;
	const char *log;
} Policies[] = {
	{ "--lane-security=none", LANESEC_NONE, LANESEC_NONE,
		"lane security: none (client asks at least none, "
		"rpmemd at least none)" },
	{ "--lane-security=none", LANESEC_AUTHENTICATE,
		LANESEC_AUTHENTICATE, "lane security: authenticate, " },
	{ "--lane-security=authenticate", LANESEC_NONE,
		LANESEC_AUTHENTICATE, "rpmemd at least authenticate)" },
	{ "--lane-security=authenticate", LANESEC_ENCRYPT,
		LANESEC_ENCRYPT, "client asks at least encrypt" },
	{ NULL, LANESEC_NONE, LANESEC_ENCRYPT, "rpmemd at least "
		"encrypt, its default for the provider)" },
};

START_TEST(lane_security_is_the_stronger_minimum)
{
	struct daemon d;
	Dtest_args[0] = Policies[_i].daemon;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.ext.security = (uint16_t)Policies[_i].client;
	r.ext.cipher = LANESEC_CHACHA20_POLY1305;
	const struct proto_resp *resp = dtest_answer(&d, &r);
	ck_assert_uint_eq(resp->status, 0);
	ck_assert_uint_eq(resp->ext.security, Policies[_i].want);
	/* a client without AES gets ChaCha20-Poly1305 */
	ck_assert_uint_eq(resp->ext.cipher, Policies[_i].want == LANESEC_NONE ?
		LANESEC_CIPHER_NONE : LANESEC_CHACHA20_POLY1305);
	static const uint8_t zero[PROTO_RANDOM_LEN];
	ck_assert(memcmp(resp->ext.random, zero, sizeof(zero)) != 0);
	/* sealed sessions open the pool to no RMA at all */
	ck_assert(Policies[_i].want == LANESEC_NONE ? resp->ibc.rkey != 0 :
		resp->ibc.rkey == 0 && resp->ibc.raddr == 0);
	dtest_done(&d);
	ck_assert_msg(dtest_log_has(Policies[_i].log), "no \"%s\" in %s",
		Policies[_i].log, Dtest_log);
}
END_TEST

/* S8: a policy this daemon does not know is refused, naming both */
START_TEST(unknown_lane_security_is_refused_naming_both)
{
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.ext.security = 7;
	ck_assert_uint_ne(dtest_answer(&d, &r)->status, 0);
	dtest_finish(&d, 0);
	ck_assert(dtest_log_has("the client asks for lane security 7, unknown "
		"here; rpmemd has lane-security encrypt"));
}
END_TEST

/* R19: another major is refused with BADPROTO naming both versions */
START_TEST(other_major_is_refused_naming_both_versions)
{
	struct proto_req r = dtest_open_req(1, 2);
	dtest_refused_once(&r, PROTO_ERR_BADPROTO, 1,
		"client 1.2, rpmemd 0." STR(PROTO_MINOR));
}
END_TEST

/* R19: a newer minor works at ours; the answer says which */
START_TEST(newer_minor_works_at_the_daemons_minor)
{
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, 9);
	const struct proto_resp *resp = dtest_answer(&d, &r);
	ck_assert_uint_eq(resp->status, 0);
	ck_assert(resp->has_ext);
	ck_assert_uint_eq(resp->ext.minor, PROTO_MINOR);
	ck_assert_uint_ne(resp->ext.version, 0);
	dtest_done(&d);
}
END_TEST

/*
 * the answer says a persist waits for write-back where the pool is on a
 * file system (not tmpfs, not pmem), to a client of minor 7 on only:
 * an older one refuses anything but zero in that word
 */
static const uint16_t Flag_minors[] = { PROTO_MINOR_FLAGS,
	PROTO_MINOR_FLAGS - 1 };

START_TEST(open_says_whether_persists_wait_for_write_back)
{
	struct statfs st;
	ck_assert_int_eq(statfs(Dtest_dir, &st), 0);
	const char *force = getenv("PMEM_IS_PMEM_FORCE");
	bool writes_back = st.f_type != TMPFS_MAGIC &&
		!(force && atoi(force) > 0);
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, Flag_minors[_i]);
	const struct proto_resp *resp = dtest_answer(&d, &r);
	ck_assert_uint_eq(resp->status, 0);
	ck_assert_uint_eq(resp->ext.flags, writes_back &&
		Flag_minors[_i] >= PROTO_MINOR_FLAGS ?
		PROTO_EXT_WRITES_BACK : 0);
	dtest_done(&d);
}
END_TEST

/*
 * a plain PMDK 0.1 client gets a clear, PMDK-shaped answer (no
 * extension it would not understand): BADPROTO
 */
START_TEST(our_older_minor_gets_a_plain_badproto)
{
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR,
		PROTO_MINOR_EXT - 1);
	const struct proto_resp *resp = dtest_answer(&d, &r);
	ck_assert_uint_eq(resp->status, PROTO_ERR_BADPROTO);
	ck_assert(!resp->has_ext);
	dtest_finish(&d, 0);
}
END_TEST

/* pmdk_open_req -- an OPEN as PMDK 1.12's librpmem sends it */
static struct proto_req
pmdk_open_req(void)
{
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR_PMDK);
	r.common.provider = PROTO_PROV_SOCKETS;
	r.common.buff_size = PROTO_DEF_BUFF_SIZE;
	return r;
}

/*
 * a client of ours refused at start-up gets no status word, and rpmemd's
 * reason on stderr, which it prints; PMDK 1.12's client never shows
 * stderr but does show a CREATE or OPEN answer's status string: it is
 * let through the start and answered BADPROTO, the reason on stderr and
 * in the log for the operator (pmdk01/real_peer.sh: what PMDK prints)
 */
static const struct {
	bool pmdk;		/* started without --protocol */
	const char *arg[2];
	const char *why;	/* on stderr */
} Refused_clients[] = {
	{ true, { NULL }, "this client is PMDK 1.12's librpmem "
		"(protocol 0.1); rpmemd " SRCVERSION " needs this "
		"project's librpmem (protocol 0." STR(PROTO_MINOR) ") on the "
		"client host, "
		"or allow-pmdk-clients = yes in rpmemd.conf" },
	{ true, { "--allow-pmdk-clients", "--lane-security=encrypt" },
		"(protocol 0.1), which has no lane security, and "
		"rpmemd.conf asks lane-security = encrypt" },
	{ false, { "--protocol=1.0" }, "the client speaks protocol "
		"1.0, rpmemd " SRCVERSION " speaks 0." STR(PROTO_MINOR) },
};

START_TEST(refused_clients_hear_why)
{
	Dtest_pmdk_client = Refused_clients[_i].pmdk;
	Dtest_args[0] = Refused_clients[_i].arg[0];
	Dtest_args[1] = Refused_clients[_i].arg[1];
	struct daemon d;
	dtest_spawn(&d);
	uint32_t status;
	if (Refused_clients[_i].pmdk) {
		ck_assert_int_eq(read(d.out, &status, sizeof(status)), 4);
		ck_assert_uint_eq(status, 0);
		struct proto_req r = pmdk_open_req();
		const struct proto_resp *resp = dtest_answer(&d, &r);
		ck_assert_uint_eq(resp->status, PROTO_ERR_BADPROTO);
		ck_assert(!resp->has_ext);
	}
	ck_assert_int_eq(read(d.out, &status, sizeof(status)), 0);
	dtest_finish(&d, 1);
	ck_assert_msg(dtest_said(Refused_clients[_i].why),
		"rpmemd did not say \"%s\"",
		Refused_clients[_i].why);
}
END_TEST

/*
 * with allow-pmdk-clients, a PMDK 1.12 client is served protocol 0.1:
 * PMDK's answer layout, no extension, and a warning in the log
 */
START_TEST(pmdk_client_is_served_0_1_when_allowed)
{
	Dtest_pmdk_client = true;
	Dtest_args[0] = "--allow-pmdk-clients";
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = pmdk_open_req();
	const struct proto_resp *resp = dtest_answer(&d, &r);
	ck_assert_uint_eq(resp->status, 0);
	ck_assert(!resp->has_ext);
	ck_assert_uint_eq(resp->ibc.persist_method, PROTO_PM_GPSPM);
	ck_assert(resp->ibc.rkey != 0);
	dtest_done(&d);
	ck_assert(dtest_log_has("serving a PMDK 1.12 client (protocol 0.1"));
	/* our protocol is not served that way, nor is tcp */
	static const struct {
		uint16_t minor;
		uint32_t status;
	} other[] = {
		{ PROTO_MINOR, PROTO_ERR_BADPROTO },
		{ PROTO_MINOR_PMDK, PROTO_ERR_PROVNOSUP },
	};
	for (size_t i = 0; i < 2; i++) {
		r = dtest_open_req(PROTO_MAJOR, other[i].minor);
		dtest_refused_once(&r, other[i].status, 0, NULL);
	}
}
END_TEST

/* R9: requests illegal in the current state get FATAL and end it */
START_TEST(set_attr_or_close_before_open_is_refused)
{
	static const enum proto_msg_type types[] = { PROTO_MSG_SET_ATTR,
		PROTO_MSG_CLOSE, PROTO_MSG_HASH, PROTO_MSG_STAT };
	for (size_t i = 0; i < TU_NELEMS(types); i++) {
		struct proto_req r = { .type = types[i], .hash_len = 4096,
			.hash_chunk = 4096 };
		dtest_refused_once(&r, PROTO_ERR_FATAL, 1,
			"is not allowed in state INIT");
	}
}
END_TEST

/* R9: a second OPEN in an open session is refused the same way */
START_TEST(second_open_in_a_session_is_refused)
{
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	dtest_request(&d, &r, 0);
	dtest_request(&d, &r, PROTO_ERR_FATAL);
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("request OPEN is not allowed in state OPEN"));
}
END_TEST

/* STAT in an open session: the CPU time rpmemd spent, which grows */
START_TEST(stat_reports_the_daemons_cpu_time)
{
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	uint64_t total[2];
	for (int i = 0; i < 2; i++) {
		struct proto_req st = { .type = PROTO_MSG_STAT };
		const struct proto_resp *r = dtest_answer(&d, &st);
		ck_assert_uint_eq(r->status, 0);
		total[i] = r->cpu_user_us + r->cpu_sys_us;
		/* at least the pool's open; less than a minute */
		ck_assert(total[i] > 0 && total[i] < 60000000);
	}
	ck_assert(total[1] >= total[0]);
	dtest_done(&d);
}
END_TEST

/*
 * D5, D6: OUTDATE in an open session of minor 4 marks the set served
 * (pool.set.outdated appears, naming the master's host), clears it
 * again; a 0.3 client's session knows no OUTDATE: FATAL, the end
 */
START_TEST(outdate_marks_and_clears_the_set_served_from_minor_4)
{
	struct daemon d;
	static struct proto_resp resp;
	char marker[320];
	snprintf(marker, sizeof(marker), "%s/pool.set.outdated", Dtest_dir);
	dtest_start_open(&d, &resp);
	struct proto_req o = { .type = PROTO_MSG_OUTDATE, .outdate_mark = 1,
		.outdate_time = 1795667870 };
	strcpy(o.outdate_host, "primary-a");
	dtest_request(&d, &o, 0);
	ck_assert_int_eq(access(marker, F_OK), 0);
	ck_assert(dtest_log_has("marked outdated since 2026-11-26T"));
	ck_assert(dtest_log_has("master primary-a"));
	o.outdate_mark = 0;
	dtest_request(&d, &o, 0);
	ck_assert_int_eq(access(marker, F_OK), -1);
	ck_assert(dtest_log_has("outdated mark cleared"));
	dtest_done(&d);

	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR_EXT);
	const struct proto_resp *a = dtest_answer(&d, &r);
	ck_assert_uint_eq(a->status, 0);
	ck_assert_uint_eq(a->ext.minor, PROTO_MINOR_EXT);
	o.outdate_mark = 1;
	dtest_request(&d, &o, PROTO_ERR_FATAL);
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("request OUTDATE is not allowed in state "
		"OPEN"));
	ck_assert_int_eq(access(marker, F_OK), -1);
}
END_TEST

/* R8: a header announcing 2^64-1 bytes: FATAL and the end, nothing read */
START_TEST(huge_size_in_header_is_refused_before_reading)
{
	struct daemon d;
	dtest_start(&d);
	dtest_send_hdr(&d, PROTO_MSG_OPEN, UINT64_MAX, 12);
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, PROTO_MSG_OPEN_RESP, &resp));
	ck_assert_uint_eq(resp.status, PROTO_ERR_FATAL);
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("invalid request header: type 3 size "
		"18446744073709551615"));
}
END_TEST

/* R9: a response sent as a request, an unknown type: refused */
START_TEST(response_or_unknown_type_as_request_is_refused)
{
	static const uint32_t types[] = { PROTO_MSG_OPEN_RESP, 0, 15,
		0xffffffff };
	for (size_t i = 0; i < 4; i++) {
		struct daemon d;
		dtest_start(&d);
		dtest_send_hdr(&d, types[i], 16, 16);
		dtest_finish(&d, 1);
		ck_assert(dtest_log_has("invalid request header"));
	}
}
END_TEST

/* encoded_open -- an OPEN of ours encoded into buf; its length */
static size_t
encoded_open(unsigned char buf[PROTO_REQ_MAX])
{
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	ssize_t n = proto_req_encode(&r, buf, PROTO_REQ_MAX);
	ck_assert_int_gt(n, PROTO_REQ_EXT_SIZE);
	return (size_t)n;
}

/* R9: a descriptor without its NUL is refused with a specific status */
START_TEST(descriptor_without_nul_is_refused)
{
	struct daemon d;
	dtest_start(&d);
	unsigned char buf[PROTO_REQ_MAX];
	size_t n = encoded_open(buf);
	buf[n - PROTO_REQ_EXT_SIZE - 1] = 'x';
	dtest_send_raw(&d, buf, n);
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, PROTO_MSG_OPEN_RESP, &resp));
	ck_assert_uint_ne(resp.status, 0);
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("invalid request of type 3"));
}
END_TEST

/* R9: a body cut short by EOF ends the session cleanly */
START_TEST(truncated_body_then_eof_exits_cleanly)
{
	struct daemon d;
	dtest_start(&d);
	unsigned char buf[PROTO_REQ_MAX];
	dtest_send_raw(&d, buf, encoded_open(buf) - 10);
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("cut short"));
}
END_TEST

/* daemon_suite -- rpmemd spoken to directly: versions, illegal and malformed requests */
static Suite *
daemon_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("rpmemd-protocol", "protocol", dtest_setup,
		dtest_teardown, &tc);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rpmemd_hardens_itself);
	tcase_add_loop_test(tc, apm_over_tcp_downgrades_to_gpspm_with_a_notice,
		0, 2);
	TU_LOOP(tc, lane_security_is_the_stronger_minimum, Policies);
	tcase_add_test(tc, unknown_lane_security_is_refused_naming_both);
	tcase_add_test(tc, other_major_is_refused_naming_both_versions);
	tcase_add_test(tc, newer_minor_works_at_the_daemons_minor);
	TU_LOOP(tc, open_says_whether_persists_wait_for_write_back,
		Flag_minors);
	tcase_add_test(tc, our_older_minor_gets_a_plain_badproto);
	TU_LOOP(tc, refused_clients_hear_why, Refused_clients);
	tcase_add_test(tc, pmdk_client_is_served_0_1_when_allowed);
	tcase_add_test(tc, set_attr_or_close_before_open_is_refused);
	tcase_add_test(tc, second_open_in_a_session_is_refused);
	tcase_add_test(tc, stat_reports_the_daemons_cpu_time);
	tcase_add_test(tc, outdate_marks_and_clears_the_set_served_from_minor_4);
	tcase_add_test(tc, huge_size_in_header_is_refused_before_reading);
	tcase_add_test(tc, response_or_unknown_type_as_request_is_refused);
	tcase_add_test(tc, descriptor_without_nul_is_refused);
	tcase_add_test(tc, truncated_body_then_eof_exits_cleanly);
	return tu_suite_add(s, tc);
}

/* main -- run daemon_suite() (tu_check.h) */
TU_MAIN(daemon_suite)
