/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_client.c -- a stand-in for PMDK 1.12's librpmem client (0.1), for
 * what the real one never sends
 *
 *   pmdk_client [--provider sockets|verbs] --cmd COMMAND --desc NAME
 *       --size BYTES [--lanes N] [--create] [--timeout SECONDS]
 *       [--minor N] [--provider-id N] [--bad-persist lane|range]
 *
 * The real PMDK 1.12.1 meets our rpmemd in real_peer.sh; this stand-in,
 * written from pmdk-interop.md, stays for hostile.sh: --minor and
 * --provider-id put values in CREATE that PMDK's client never sends;
 * --bad-persist sends, after the session's checks, a persist message
 * with a lane number or a range outside the pool, which must go
 * unanswered; and its persists include the inline mode (2) that PMDK's
 * client sends only over verbs.  Runs COMMAND with sh -c, its stdin,
 * stdout and stderr on socket pairs as PMDK's client runs ssh (pmdk-interop
 * 3.1), then: start-up status, CREATE, lanes, persists of every mode,
 * reads, SET_ATTR, CLOSE.  Failures are printed as PMDK's client words
 * them; exit 0 only when the session went through and every byte read
 * back was right, 1 otherwise, 2 on a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdk_client.h"

#define ERR_LINE 4096
#define NODE "127.0.0.1"	/* where the daemon's lanes listen */

struct opts {
	const char *cmd;
	const char *desc;
	uint32_t provider;
	uint32_t provider_id;	/* on the wire; PMDK's is the provider's */
	uint16_t minor;
	uint64_t size;
	unsigned lanes;
	int timeout_ms;
	int bad;		/* 0, BAD_LANE or BAD_RANGE */
};

enum { BAD_LANE = 1, BAD_RANGE };

/* pc_say -- one line on stdout */
void
pc_say(const char *fmt, ...)
{
	va_list ap;

	fputs("pmdk_client: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* failed -- the closing line of a failed session; returns exit status 1 */
static int
failed(const char *stage, int err)
{
	pc_say("FAIL %s: errno %s (%d)", stage, w01_errno_name(err), err);
	return 1;
}

/* usage -- the command line, on stderr */
static void
usage(void)
{
	fprintf(stderr, "usage: pmdk_client [--provider sockets|verbs] "
		"--cmd COMMAND --desc NAME --size BYTES\n"
		"         [--lanes N] [--create] [--timeout SECONDS] "
		"[--minor N]\n"
		"         [--provider-id N] [--bad-persist lane|range]\n");
}

/* number -- a whole decimal number, or exit 2 */
static uint64_t
number(const char *opt, const char *s)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0' || s[0] == '-') {
		fprintf(stderr, "pmdk_client: %s: '%s' is not a number\n",
			opt, s);
		exit(2);
	}
	return v;
}

/* choose -- 1 or 2 when s is the first or second word, else 0 */
static int
choose(const char *s, const char *first, const char *second)
{
	if (strcmp(s, first) == 0)
		return 1;
	return strcmp(s, second) == 0 ? 2 : 0;
}

/* parse_args -- the command line, with PMDK's argument checks */
static void
parse_args(int argc, char *argv[], struct opts *o)
{
	static const struct option lopts[] = {
		{"provider", required_argument, NULL, 'p'},
		{"cmd", required_argument, NULL, 'c'},
		{"desc", required_argument, NULL, 'd'},
		{"size", required_argument, NULL, 's'},
		{"lanes", required_argument, NULL, 'l'},
		{"create", no_argument, NULL, 'C'},
		{"timeout", required_argument, NULL, 't'},
		{"minor", required_argument, NULL, 'm'},
		{"provider-id", required_argument, NULL, 'i'},
		{"bad-persist", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	*o = (struct opts){.lanes = 4, .provider = W01_PROV_SOCKETS,
		.timeout_ms = 30000, .minor = W01_MINOR};
	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			/* the wire ids: verbs 1, sockets 2 */
			o->provider = (uint32_t)choose(optarg, "verbs",
				"sockets");
			if (o->provider == 0)
				goto bad;
			break;
		case 'c': o->cmd = optarg; break;
		case 'd': o->desc = optarg; break;
		case 's': o->size = number("--size", optarg); break;
		case 'l':
			o->lanes = (unsigned)number("--lanes", optarg);
			break;
		case 'C': break;	/* the only request there is */
		case 't':
			o->timeout_ms = 1000 * (int)number("--timeout", optarg);
			break;
		case 'm':
			o->minor = (uint16_t)number("--minor", optarg);
			break;
		case 'i':
			o->provider_id = (uint32_t)number("--provider-id",
				optarg);
			break;
		case 'b':
			o->bad = choose(optarg, "lane", "range");
			if (o->bad == 0)
				goto bad;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			goto bad;
		}
	}
	if (o->provider_id == 0)
		o->provider_id = o->provider;
	if (optind != argc || o->cmd == NULL || o->desc == NULL ||
			o->size == 0)
		goto bad;
	/* PMDK's own refusals, before anything runs (pmdk-interop 2.1) */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (o->size % page != 0 || o->size <= W01_HDR_SIZE ||
			o->lanes == 0 || o->timeout_ms <= 0) {
		fprintf(stderr, "pmdk_client: the size must be a multiple of "
			"the page size above %u, lanes and timeout "
			"positive\n", W01_HDR_SIZE);
		exit(2);
	}
	return;
bad:
	usage();
	exit(2);
}

/* attr_pattern -- the attributes of CREATE (which 'A') or SET_ATTR ('B') */
static void
attr_pattern(struct w01_attr *a, char which)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->signature, "PMDK01\0", 8);
	a->signature[7] = which;
	a->major = 1;
	for (unsigned i = 0; i < 16; i++) {
		unsigned char b = (unsigned char)(i * 7 + which);
		a->poolset_uuid[i] = b;
		a->uuid[i] = (unsigned char)(b ^ 0x11);
		a->next_uuid[i] = (unsigned char)(b ^ 0x22);
		a->prev_uuid[i] = (unsigned char)(b ^ 0x33);
	}
	/* raw bytes a careless text path would mangle (pmdk-interop 6.5) */
	memcpy(a->user_flags, "\0\n~.\r\t\xff\x01", 8);
	a->user_flags[15] = (unsigned char)which;
}

/* send_req -- a whole request; 0 or the errno PMDK's client would set */
static int
send_req(struct pc_remote *r, const char *what, const void *buf, size_t len)
{
	if (w01_write_full(r->in, buf, len) == 0)
		return 0;
	int err = errno == EPIPE ? ECONNRESET : errno;
	pc_say("sending %s request message failed: %s", what, strerror(err));
	return err;
}

/*
 * recv_resp -- read exactly the size PMDK expects and check it as PMDK
 * does (pmdk-interop 3.5): type, size, status; a status prints its text
 */
static int
recv_resp(const struct opts *o, struct pc_remote *r, const char *what,
		uint32_t type, unsigned char *buf, size_t size)
{
	uint32_t status, rtype;
	uint64_t rsize;

	int ret = w01_read_full(r->out, buf, size, o->timeout_ms);
	if (ret != 0) {
		int err = ret == 1 ? ECONNRESET : errno;
		pc_say("receiving %s request response failed: %s", what,
			strerror(err));
		return err;
	}
	w01_get_hdr_resp(buf, &status, &rtype, &rsize);
	if (rtype != type) {
		pc_say("invalid message type received -- %u", rtype);
		return EPROTO;
	}
	if (rsize != size) {
		pc_say("invalid message size received -- %llu",
			(unsigned long long)rsize);
		return EPROTO;
	}
	if (status >= W01_ERR_MAX) {
		pc_say("invalid status received -- %u", status);
		return EPROTO;
	}
	if (status != W01_OK) {
		pc_say("%s", w01_status_str(status));
		return w01_status_errno(status);
	}
	return 0;
}

/* create -- CREATE with attributes 'A', and the response */
static int
create(const struct opts *o, struct pc_remote *r, struct w01_ibc *ibc)
{
	const char *what = "create";
	size_t dlen = strlen(o->desc) + 1;
	size_t fixed = W01_CREATE_SIZE;
	unsigned char resp[W01_CREATE_RESP_SIZE];
	struct w01_attr attr;
	struct w01_common c = {
		.major = W01_MAJOR, .minor = o->minor,
		.pool_size = o->size, .nlanes = o->lanes,
		.provider = o->provider_id, .buff_size = W01_BUFF_SIZE,
	};

	unsigned char *buf = calloc(1, fixed + dlen);
	if (buf == NULL)
		return ENOMEM;
	w01_put_hdr(buf, W01_CREATE, fixed + dlen);
	w01_put_common(buf + W01_REQ_COMMON, &c);
	attr_pattern(&attr, 'A');
	w01_put_attr(buf + W01_CREATE_ATTR, &attr);
	w01_put32(buf, fixed - 4, (uint32_t)dlen);
	memcpy(buf + fixed, o->desc, dlen);
	int err = send_req(r, what, buf, fixed + dlen);
	free(buf);
	if (err)
		return err;

	err = recv_resp(o, r, what, W01_CREATE_RESP, resp, sizeof(resp));
	if (err)
		return err;
	w01_get_ibc(resp + W01_RESP_IBC, ibc);
	if (ibc->port == 0 || ibc->port > UINT16_MAX) {
		pc_say("invalid port number received -- %u", ibc->port);
		return EPROTO;
	}
	if (ibc->persist_method != W01_PM_GPSPM &&
			ibc->persist_method != W01_PM_APM) {
		pc_say("invalid persistency method received -- %u",
			ibc->persist_method);
		return EPROTO;
	}
	return 0;
}

/* set_attr -- SET_ATTR with attributes 'B' */
static int
set_attr(const struct opts *o, struct pc_remote *r)
{
	unsigned char buf[W01_SET_ATTR_SIZE], resp[W01_SET_ATTR_RESP_SIZE];
	struct w01_attr attr;

	memset(buf, 0, sizeof(buf));
	attr_pattern(&attr, 'B');
	w01_put_hdr(buf, W01_SET_ATTR, sizeof(buf));
	w01_put_attr(buf + W01_SET_ATTR_ATTR, &attr);
	int err = send_req(r, "set attributes", buf, sizeof(buf));
	if (err == 0)
		err = recv_resp(o, r, "set attributes", W01_SET_ATTR_RESP,
			resp, sizeof(resp));
	return err;
}

/* close_req -- CLOSE with flags in host order, and its response */
static int
close_req(const struct opts *o, struct pc_remote *r, uint32_t flags)
{
	unsigned char buf[W01_CLOSE_SIZE], resp[W01_CLOSE_RESP_SIZE];

	w01_put_hdr(buf, W01_CLOSE, sizeof(buf));
	w01_put32h(buf, W01_CLOSE_FLAGS, flags);
	int err = send_req(r, "close", buf, sizeof(buf));
	if (err == 0)
		err = recv_resp(o, r, "close", W01_CLOSE_RESP, resp,
			sizeof(resp));
	if (err)
		pc_say("close request failed: %s", strerror(err));
	return err;
}

/*
 * bad_persist -- a message PMDK's daemon must not answer on lane 0, then
 * whether another lane still works (PMDK's does; only printed)
 */
static int
bad_persist(const struct opts *o, struct pc_fip *fip, unsigned char *pool,
		unsigned nlanes)
{
	const char *what = o->bad == BAD_LANE ? "a lane number past the "
		"last lane" : "a range past the pool";

	int err = pc_fip_bad(fip, 0, o->bad == BAD_RANGE);
	if (err) {
		pc_say("%s", pc_fip_errmsg(fip));
		return err;
	}
	pc_say("a persist of %s went unanswered on lane 0", what);
	if (nlanes < 2)
		return 0;
	memset(pool + W01_HDR_SIZE, 0x5a, 64);
	err = pc_fip_persist(fip, W01_HDR_SIZE, 64, 1, W01_FLUSH_WRITE);
	pc_say("lane 1 after it: %s", err ? pc_fip_errmsg(fip) :
		"persist answered");
	return 0;
}

/* session -- everything after the response: lanes, data, SET_ATTR */
static int
session(const struct opts *o, struct pc_remote *r, const struct w01_ibc *ibc,
		unsigned char *pool, const char **stage, struct pc_stats *st,
		unsigned *nlanes)
{
	struct pc_fip_attr fa = {
		.node = NODE, .port = ibc->port, .provider = o->provider,
		.nlanes = o->lanes < ibc->nlanes ? o->lanes : ibc->nlanes,
		.raddr = ibc->raddr, .rkey = ibc->rkey, .laddr = pool,
		.size = o->size, .buff_size = W01_BUFF_SIZE,
		.timeout_ms = o->timeout_ms,
	};
	char msg[ERR_LINE];
	int err;

	*stage = "lanes";
	if (ibc->persist_method != W01_PM_GPSPM) {
		pc_say("persist method APM: this stand-in speaks GPSPM only");
		err = EPROTO;
		goto close;
	}
	struct pc_fip *fip = pc_fip_init(&fa, nlanes, msg, sizeof(msg));
	if (fip == NULL) {
		err = errno;
		pc_say("in-band connection failed: %s", msg);
		/* as PMDK: a pool created for nothing is removed */
		close_req(o, r, W01_CLOSE_REMOVE);
		return err;
	}
	pc_say("%u lanes connected", *nlanes);

	struct pc_ops_cfg cfg = {o->size, *nlanes, 1};
	*stage = "persist";
	err = pc_ops_run(fip, pool, &cfg, st);
	if (err == 0) {
		*stage = "read back";
		err = pc_ops_verify(fip, pool, &cfg, st);
	}
	if (err == 0 && o->bad) {
		*stage = "bad persist";
		err = bad_persist(o, fip, pool, *nlanes);
	}
	if (err == 0) {
		*stage = "set_attr";
		err = set_attr(o, r);
	}
	err = err < 0 ? -err : err;
	pc_fip_shutdown(fip);
	int cerr = close_req(o, r, 0);
	pc_fip_fini(fip);
	if (err == 0 && cerr != 0)
		*stage = "close";
	return err ? err : cerr;

close:
	close_req(o, r, 0);
	return err;
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct pc_remote r;
	struct w01_ibc ibc;
	struct pc_stats st;
	unsigned nlanes = 0;

	parse_args(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	memset(&st, 0, sizeof(st));
	const char *what = "create";
	const char *stage = what;
	int err = pc_fip_probe(NODE, o.provider);
	if (err) {
		pc_say("cannot find provider");
		return failed(what, -err);
	}
	err = pc_spawn(o.cmd, &r);
	if (err)
		return failed("spawn", -err);
	err = pc_startup_status(NODE, o.timeout_ms, &r);
	if (err == 0)
		err = create(&o, &r, &ibc);
	if (err) {
		pc_finish(&r, o.timeout_ms);
		return failed(what, err);
	}
	pc_say("%s '%s': port %u, rkey 0x%llx, raddr 0x%llx, %u lanes, %s",
		what, o.desc, ibc.port, (unsigned long long)ibc.rkey,
		(unsigned long long)ibc.raddr, ibc.nlanes,
		ibc.persist_method == W01_PM_GPSPM ? "GPSPM" : "APM");

	unsigned char *pool = aligned_alloc((size_t)sysconf(_SC_PAGESIZE),
		o.size);
	if (pool)
		memset(pool, 0, o.size);
	err = pool ? session(&o, &r, &ibc, pool, &stage, &st, &nlanes) :
		ENOMEM;
	pc_finish(&r, o.timeout_ms);
	free(pool);
	if (err)
		return failed(stage, err);

	pc_say("OK %s '%s', %llu bytes, %u lanes: %u RMA-write persists "
		"(%llu bytes), %u inline (%llu), %u deep (%llu), %u reads "
		"(%llu), %llu bytes compared equal", what, o.desc,
		(unsigned long long)o.size, nlanes, st.n_write,
		(unsigned long long)st.b_write, st.n_inline,
		(unsigned long long)st.b_inline, st.n_deep,
		(unsigned long long)st.b_deep, st.n_read,
		(unsigned long long)st.b_read,
		(unsigned long long)st.b_checked);
	return 0;
}
