/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_refusals.c -- rpmemd and hostile requests, spoken to directly
 *
 * Each refusal of CREATE and OPEN carries the status PMDK 1.12 defines
 * for its cause and says the cause on stderr, which the client shows
 * (R9, S1); descriptors with control and high bytes forge no line in
 * the log or on stderr; a malformed or oversized header is answered
 * FATAL; a request, or the rest of one, that never comes times out
 * (R9); HASH stays within the size the session asked for.
 *
 * Environment: top_builddir (where rpmemd is); a scratch directory is
 * made under TMPDIR (dtest.h).
 */
#include <check.h>
#include <endian.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"
#include "proto.h"
#include "tu_check.h"

/* timeout of a stalled request for these tests, in ms */
#define STALL_MS 300

/*
 * arg -- `f` with the scratch dir in place of its "%s", in a buffer the
 * next call reuses
 */
static const char *
arg(const char *f)
{
	static char buf[1024];
	const char *at = strstr(f, "%s");
	if (!at)
		return f;
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - f), f, Dtest_dir,
		at + 2);
	return buf;
}

/* slurp -- a whole file into a malloc'ed string, "" when absent */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ck_assert_ptr_nonnull(buf);
	if (f) {
		size_t r;
		while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
			n += r;
			if (n == cap) {
				cap *= 2;
				buf = realloc(buf, cap + 1);
				ck_assert_ptr_nonnull(buf);
			}
		}
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/*
 * stderr_last_line -- rpmemd's last stderr line, what a client shows, in
 * a buffer the next call reuses
 */
static const char *
stderr_last_line(void)
{
	static char line[4096];
	char path[300];
	snprintf(path, sizeof(path), "%s/stderr.txt", Dtest_dir);
	char *s = slurp(path);
	size_t n = strlen(s);
	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	char *nl = strrchr(s, '\n');
	snprintf(line, sizeof(line), "%s", nl ? nl + 1 : s);
	free(s);
	return line;
}

/* write_file -- `text` into Dtest_dir/name */
static void
write_file(const char *name, const char *text)
{
	char path[sizeof(Dtest_dir) + 64];
	snprintf(path, sizeof(path), "%s/%s", Dtest_dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* a refused request: what it asks and how rpmemd must answer */
struct refusal {
	uint32_t type;
	const char *desc;	/* NULL: pool.set */
	uint32_t nlanes;
	uint64_t size;
	uint32_t status;
	const char *says;	/* in the last stderr line; %s: the dir */
};

#define M (1ULL << 20)

static const struct refusal Refusals[] = {
	/* the descriptor's own faults: BADNAME */
	{ PROTO_MSG_OPEN, "/etc/x.set", 1, 4 * M, PROTO_ERR_BADNAME,
		"pool set descriptor '/etc/x.set' is an absolute path" },
	{ PROTO_MSG_CREATE, "a\033[2Jb.set", 1, 4 * M, PROTO_ERR_BADNAME,
		"'a\\x1b[2Jb.set' contains control character 0x1b" },
	/* two faults: the descriptor is checked before the lanes */
	{ PROTO_MSG_OPEN, "x\nrpmemd: FORGED", 0, 4 * M,
		PROTO_ERR_BADNAME, "contains control character 0x0a" },
	{ PROTO_MSG_OPEN, "sub/", 1, 4 * M, PROTO_ERR_BADNAME,
		"'sub/' names a directory" },
	{ PROTO_MSG_OPEN, "n255", 1, 4 * M, PROTO_ERR_BADNAME,
		"File name too long" },
	/* escapes: NOACCESS (S1) */
	{ PROTO_MSG_CREATE, "../x.set", 1, 4 * M, PROTO_ERR_NOACCESS,
		"pool set descriptor '../x.set' contains '..'" },
	/* no pool set there: NOEXIST */
	{ PROTO_MSG_OPEN, "absent.set", 1, 4 * M, PROTO_ERR_NOEXIST,
		"pool set 'absent.set' in poolset-dir %s: No such file" },
	{ PROTO_MSG_OPEN, "loop.set", 1, 4 * M, PROTO_ERR_NOEXIST,
		"pool set 'loop.set' in poolset-dir %s: Too many levels of "
		"symbolic links" },
	{ PROTO_MSG_CREATE, "afile/x.set", 1, 4 * M, PROTO_ERR_NOEXIST,
		"pool set 'afile/x.set' in poolset-dir %s: Not a directory" },
	/* lanes and sizes */
	{ PROTO_MSG_OPEN, NULL, 0, 4 * M, PROTO_ERR_BADNLANES,
		"invalid number of lanes: 0" },
	{ PROTO_MSG_OPEN, NULL, 1, 0, PROTO_ERR_BADSIZE,
		"invalid pool size 0: below the minimum 8192" },
	{ PROTO_MSG_CREATE, "new.set", 1, 1, PROTO_ERR_BADSIZE,
		"invalid pool size 1: below the minimum 8192" },
	{ PROTO_MSG_OPEN, NULL, 1, 8191, PROTO_ERR_BADSIZE,
		"invalid pool size 8191: below the minimum 8192" },
	{ PROTO_MSG_OPEN, NULL, 1, 8 * M, PROTO_ERR_BADSIZE,
		"pool 'pool.set' is 4194304 bytes, 8388608 requested" },
};

/*
 * each refusal: the status of its cause, the cause on stderr's last
 * line, a session that ends cleanly and creates nothing (R9, S1)
 */
START_TEST(refusal_has_the_status_of_its_cause_and_says_it)
{
	const struct refusal *c = &Refusals[_i];
	char path[sizeof(Dtest_dir) + 64];
	snprintf(path, sizeof(path), "%s/loop.set", Dtest_dir);
	ck_assert_int_eq(symlink("loop.set", path), 0);
	write_file("afile", "");
	write_file("new.set",
		arg("PMEMPOOLSET\nOPTION NOHDRS\n4M %s/new0\n"));
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.type = c->type;
	r.common.nlanes = c->nlanes;
	r.common.pool_size = c->size;
	if (c->desc && strcmp(c->desc, "n255") == 0)
		snprintf(r.desc, sizeof(r.desc), "%0300d.set", 0);
	else if (c->desc)
		snprintf(r.desc, sizeof(r.desc), "%s", c->desc);
	struct daemon d;
	dtest_start(&d);
	dtest_send_req(&d, &r);
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, proto_resp_type(r.type), &resp));
	ck_assert_uint_eq(resp.status, c->status);
	dtest_finish(&d, 0);
	const char *says = arg(c->says);
	const char *last = stderr_last_line();
	ck_assert_msg(strncmp(last, "rpmemd: ", 8) == 0 &&
		strstr(last, says), "stderr's last line \"%s\" does not say "
		"\"%s\"", last, says);
	snprintf(path, sizeof(path), "%s/new0", Dtest_dir);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/*
 * unstamped -- a line of rpmemd's log file past the time that begins it
 * ("2026-11-28T14:05:01.123Z "), or NULL when it does not begin so
 */
static const char *
unstamped(const char *line)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd.dddZ ";
	for (size_t i = 0; form[i]; i++) {
		bool digit = line[i] >= '0' && line[i] <= '9';
		if (form[i] == 'd' ? !digit : line[i] != form[i])
			return NULL;
	}
	return line + strlen(form);
}

/*
 * clean -- only printable ASCII, and each line from rpmemd; a line of
 * the log file (`stamped`) after the time it was written
 */
static void
assert_clean(const char *what, const char *text, bool stamped)
{
	for (const char *p = text; *p; p++) {
		unsigned char c = (unsigned char)*p;
		ck_assert_msg(c == '\n' || (c >= 0x20 && c < 0x7f),
			"%s holds byte 0x%02x at %zu", what, c,
			(size_t)(p - text));
		if (p != text && p[-1] != '\n')
			continue;
		const char *l = stamped ? unstamped(p) : p;
		ck_assert_msg(l != NULL, "%s has a line without the time "
			"it was written: %.40s", what, p);
		ck_assert_msg(strncmp(l, "rpmemd: ", 8) == 0 &&
			strncmp(l, "rpmemd: FORGED", 14) != 0,
			"%s has a line not from rpmemd: %.40s", what, p);
	}
}

/*
 * hostile descriptors at every log level: no forged line, no raw
 * control or high byte in the log file or on stderr
 */
START_TEST(hostile_descriptors_forge_no_log_line)
{
	static const char *const descs[] = {
		"x\nrpmemd: FORGED LINE",
		"x\rrpmemd: FORGED LINE",
		"\033[1A\033[2Krpmemd: FORGED LINE",
		"a\x7f\x01\x1f.set",
		"caf\xc3\xa9\xe2\x80\xa8\x9b" "31m.set",
		"sub/\xff\xfe.set",
	};
	static const uint32_t types[] = { PROTO_MSG_OPEN, PROTO_MSG_CREATE };
	for (size_t i = 0; i < TU_NELEMS(descs); i++) {
		struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
		r.type = types[i % 2];
		snprintf(r.desc, sizeof(r.desc), "%s", descs[i]);
		struct daemon d;
		dtest_start(&d);
		dtest_send_req(&d, &r);
		static struct proto_resp resp;
		ck_assert(dtest_recv_resp(&d, proto_resp_type(r.type), &resp));
		ck_assert_uint_ne(resp.status, 0);
		dtest_finish(&d, 0);
		char path[300];
		snprintf(path, sizeof(path), "%s/stderr.txt", Dtest_dir);
		char *err = slurp(path);
		assert_clean("stderr", err, false);
		free(err);
	}
	char *log = slurp(Dtest_log);
	assert_clean(Dtest_log, log, true);
	ck_assert_ptr_nonnull(strstr(log,
		"desc 'x\\nrpmemd: FORGED LINE' size "));
	ck_assert_ptr_nonnull(strstr(log, "'caf\\xc3\\xa9\\xe2\\x80\\xa8"
		"\\x9b31m.set'"));
	free(log);
}
END_TEST

/* a malformed or oversized header, answered */
struct bad_header {
	uint32_t type;
	uint64_t size;
	const char *says;
};

static const struct bad_header Bad_headers[] = {
	/* the longest descriptor and one byte more, in either request */
	{ PROTO_MSG_CREATE, PROTO_CREATE_SIZE + PROTO_DESC_MAX + 1 +
		PROTO_REQ_EXT_SIZE, "over the limit of its type" },
	{ PROTO_MSG_OPEN, PROTO_OPEN_SIZE + PROTO_DESC_MAX + 1 +
		PROTO_REQ_EXT_SIZE, "over the limit of its type" },
	{ PROTO_MSG_OPEN, UINT64_MAX, "over the limit of its type" },
	{ PROTO_MSG_CLOSE, PROTO_CLOSE_SIZE + 1, "wrong for its type" },
	{ PROTO_MSG_CREATE, PROTO_HDR_SIZE, "wrong for its type" },
};

/* R8, R9: FATAL in the response of the header's type, with the cause */
START_TEST(malformed_header_is_answered_fatal_with_the_cause)
{
	const struct bad_header *c = &Bad_headers[_i];
	unsigned char msg[PROTO_HDR_SIZE + 64] = { 0 };
	uint32_t type = htobe32(c->type);
	uint64_t size = htobe64(c->size);
	memcpy(msg, &type, 4);
	memcpy(msg + 4, &size, 8);
	struct daemon d;
	dtest_start(&d);
	dtest_send_raw(&d, msg, sizeof(msg));
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, proto_resp_type(c->type), &resp));
	ck_assert_uint_eq(resp.status, PROTO_ERR_FATAL);
	dtest_finish(&d, 1);
	const char *last = stderr_last_line();
	ck_assert_msg(strstr(last, c->says), "stderr: \"%s\"", last);
}
END_TEST

/* a request that stalls: how much of it is sent, what rpmemd says */
struct stall {
	size_t bytes;		/* of an OPEN; 0: nothing at all */
	bool answered;		/* an OPEN_RESP with FATAL comes */
	const char *says;
};

static const struct stall Stalls[] = {
	{ 0, false, "no request within 300 ms" },
	{ 5, false, "request header incomplete: the rest of its 12 bytes "
		"did not arrive within 300 ms" },
	{ PROTO_HDR_SIZE + 10, true, "did not arrive in time" },
};

/*
 * R9: a first request that never comes, a half header or a half body on
 * a channel left open: the session ends within the request timeout
 * (RPMEMD_REQUEST_TIMEOUT_MS) instead of waiting for EOF
 */
START_TEST(stalled_request_times_out_on_an_open_channel)
{
	const struct stall *c = &Stalls[_i];
	ck_assert_int_eq(setenv("RPMEMD_REQUEST_TIMEOUT_MS", "300", 1), 0);
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	unsigned char buf[PROTO_REQ_MAX];
	ck_assert_int_gt(proto_req_encode(&r, buf, sizeof(buf)),
		(ssize_t)c->bytes);
	if (c->bytes)
		dtest_send_raw(&d, buf, c->bytes);
	static struct proto_resp resp;
	if (c->answered) {
		ck_assert(dtest_recv_resp(&d, PROTO_MSG_OPEN_RESP, &resp));
		ck_assert_uint_eq(resp.status, PROTO_ERR_FATAL);
	}
	/* stdin stays open: rpmemd's exit closes its stdout */
	struct pollfd p = { .fd = d.out, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, DTEST_WAIT_MS), 1);
	ck_assert_int_eq(read(d.out, buf, 1), 0);
	dtest_finish(&d, 1);
	ck_assert_msg(dtest_log_has(c->says), "log lacks \"%s\"", c->says);
	const char *last = stderr_last_line();
	ck_assert_msg(strstr(last, c->says), "stderr: \"%s\"", last);
}
END_TEST

/*
 * HASH honours the size the session asked for, not the pool set's: a
 * range past it is refused, the session goes on
 */
START_TEST(hash_stays_within_the_session_size)
{
	struct daemon d;
	dtest_start(&d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.common.pool_size = 1 * M;
	dtest_send_req(&d, &r);
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, PROTO_MSG_OPEN_RESP, &resp));
	ck_assert_uint_eq(resp.status, 0);
	static const struct {
		uint64_t off;
		uint32_t status;
	} cases[] = {
		{ 1 * M - 8192, 0 },
		{ 1 * M - 4096, PROTO_ERR_POOL_CFG },
		{ 2 * M, PROTO_ERR_POOL_CFG },
	};
	for (size_t i = 0; i < TU_NELEMS(cases); i++) {
		struct proto_req h = { .type = PROTO_MSG_HASH,
			.hash_off = cases[i].off, .hash_len = 8192,
			.hash_chunk = 4096 };
		dtest_send_req(&d, &h);
		ck_assert(dtest_recv_resp(&d, PROTO_MSG_HASH_RESP, &resp));
		ck_assert_uint_eq(resp.status, cases[i].status);
	}
	dtest_done(&d);
	ck_assert(dtest_log_has("HASH range offset 1044480 length 8192 "
		"outside the 1048576-byte pool"));
}
END_TEST

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* refusals_suite -- every refusal above, each with its own rpmemd tree */
static Suite *
refusals_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("rpmemd-refusals", "refusals", dtest_setup,
		dtest_teardown, &tc);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, refusal_has_the_status_of_its_cause_and_says_it,
		0, NELEMS(Refusals));
	tcase_add_test(tc, hostile_descriptors_forge_no_log_line);
	tcase_add_loop_test(tc,
		malformed_header_is_answered_fatal_with_the_cause, 0,
		NELEMS(Bad_headers));
	tcase_add_loop_test(tc, stalled_request_times_out_on_an_open_channel,
		0, NELEMS(Stalls));
	tcase_add_test(tc, hash_stays_within_the_session_size);
	return tu_suite_add(s, tc);
}

TU_MAIN(refusals_suite)
