/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tamper.c -- scenarios S6, S7: a man in the middle of the lanes
 * (relay.c, on the link to a target in a network namespace) flips,
 * drops, duplicates, reorders or injects one lane message, or just
 * records every lane byte
 *
 * Attacks, each under encrypt and under authenticate, each on the
 * client's messages (c2s) or on rpmemd's answers (s2c): the session
 * ends with an error from the client's call, never an acknowledgement;
 * the replica holds no byte of a tampered or later message; rpmemd
 * names the failure in its log and its last words reach rpmem_close's
 * message.  Capture: under encrypt no byte pattern persisted and read
 * back appears in the lane traffic; under authenticate and none it does
 * (which shows the tap sees the bytes).
 *
 * tamper.sh runs it with these variables (and RPMEM_SSH = the relay,
 * RELAY_SSH, RELAY_HOST): TAMPER_TARGET (the relay's side of the link
 * and the ssh port), TAMPER_POOLSET_DIR, TAMPER_PART_DIR,
 * TAMPER_LOG_DIR (one rpmemd log per session), TAMPER_DIR (scratch).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "librpmem.h"
#include "tu.h"

#define POOL_SIZE ((size_t)4 << 20)
#define W_OFF 8192		/* a persist acknowledged before the attack */
#define W_LEN 4096
#define A_OFF 65536		/* the attacked message (c2s frame 2) */
#define B_OFF 131072		/* the one after it (frame 3) */
#define AB_LEN 8192		/* above the batching limit: a message each */

/* the program, in its messages */
static const char PROG[] = "tamper";

/* what one attack case does and expects */
struct attack {
	const char *attack;	/* RELAY_ATTACK */
	const char *dir;	/* RELAY_DIR */
	unsigned at;		/* RELAY_AT */
	bool read;		/* attack the answer to a read, not to A */
	bool a_applied;		/* A is authentic and reaches the replica */
};

static const struct attack Attacks[] = {
	{ "flip", "c2s", 2, false, false },
	{ "drop", "c2s", 2, false, false },
	{ "dup", "c2s", 2, false, true },
	{ "reorder", "c2s", 2, false, false },
	{ "inject", "c2s", 2, false, false },
	{ "flip", "s2c", 2, false, true },
	{ "drop", "s2c", 2, false, true },
	{ "dup", "s2c", 2, false, true },
	{ "reorder", "s2c", 2, false, true },
	{ "inject", "s2c", 2, false, true },
	{ "flip", "s2c", 2, true, true },
};

static const char *const Sealed[] = { "encrypt", "authenticate" };

static struct {
	struct tu_target t;	/* TAMPER_TARGET, _POOLSET_DIR, _PART_DIR */
	const char *log_dir;
	const char *dir;
} Env;

/* slurp -- a whole file, NUL-ended (len without it); NULL if absent */
static char *
slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t n = read(fd, buf, (size_t)st.st_size);
		*len = n > 0 ? (size_t)n : 0;
		buf[*len] = '\0';
	}
	close(fd);
	return buf;
}

/* has -- does the file hold `needle` (`n` bytes)? -1: no file */
static int
has(const char *path, const void *needle, size_t n)
{
	size_t len;
	char *buf = slurp(path, &len);
	if (!buf)
		return -1;
	int r = memmem(buf, len, needle, n) != NULL;
	free(buf);
	return r;
}

/* logs_have -- does any rpmemd log of this run mention `what`? */
static bool
logs_have(const char *what)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "grep -qsF -- '%s' %s/rpmemd.*.log", what,
		Env.log_dir);
	return system(cmd) == 0;
}

/* fill -- a pattern no other range of this run has */
static void
fill(char *p, size_t len, unsigned seed)
{
	unsigned x = seed * 2654435761U + 1;
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245U + 12345U;
		p[i] = (char)(x >> 16);
	}
}

/* a pool set of its own for each case; its part is the replica */
struct pool {
	char set[64];
	char part[512];
	char *mem;
	RPMEMpool *rpp;
};

/* pool_create -- write the set file, create the pool, one lane */
static bool
pool_create(struct pool *p, const char *name)
{
	snprintf(p->set, sizeof(p->set), "%s.set", name);
	snprintf(p->part, sizeof(p->part), "%s/%s.part", Env.t.part_dir, name);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", Env.t.poolset_dir, p->set);
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f, "PMEMPOOLSET\n%zuM %s\n", POOL_SIZE >> 20, p->part);
	fclose(f);
	p->mem = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->mem == MAP_FAILED)
		return false;
	struct rpmem_pool_attr attr;
	memset(&attr, 0, sizeof(attr));
	memcpy(attr.signature, "TAMPER", 7);
	attr.major = 1;
	unsigned nlanes = 1;
	p->rpp = rpmem_create(Env.t.target, p->set, p->mem, POOL_SIZE, &nlanes,
		&attr);
	TU_EXPECT(p->rpp != NULL, "create %s: %s", p->set, rpmem_errormsg());
	return p->rpp != NULL;
}

/* pool_drop -- unmap, remove the set file and the replica */
static void
pool_drop(struct pool *p)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", Env.t.poolset_dir, p->set);
	unlink(path);
	unlink(p->part);
	munmap(p->mem, POOL_SIZE);
}

/* relay -- what the relay does to the next session */
static void
relay(const char *attack, const char *dir, unsigned at, const char *capture)
{
	char n[16];
	snprintf(n, sizeof(n), "%u", at);
	setenv("RELAY_ATTACK", attack, 1);
	setenv("RELAY_DIR", dir, 1);
	setenv("RELAY_AT", n, 1);
	if (capture)
		setenv("RELAY_CAPTURE", capture, 1);
	else
		unsetenv("RELAY_CAPTURE");
}

/* failed_call -- one failed call of the attacked sequence: errno ok? */
static void
failed_call(const char *what, const char *label, int err)
{
	printf("tamper: %s: %s failed: %s (%s)\n", label, what,
		strerrorname_np(err), rpmem_errormsg());
	TU_EXPECT(err == ECONNRESET || err == EBADMSG, "%s: %s failed with %s, "
		"not ECONNRESET or EBADMSG", label, what, strerrorname_np(err));
}

/*
 * run_attack -- W is acknowledged, then A and B are flushed and drained
 * (or W read back) while the relay attacks; nothing after the attack is
 * acknowledged and nothing tampered reaches the replica
 */
static void
run_attack(const struct attack *a, const char *policy, unsigned id)
{
	char label[96], name[32], rlog[512];
	snprintf(label, sizeof(label), "%s %s %s%s frame %u", policy,
		a->attack, a->dir, a->read ? " (read)" : "", a->at);
	snprintf(name, sizeof(name), "t%u", id);
	snprintf(rlog, sizeof(rlog), "%s/relay.%u.log", Env.dir, id);
	setenv("RELAY_LOG", rlog, 1);
	setenv("RPMEM_LANE_SECURITY", policy, 1);
	relay(a->attack, a->dir, a->at, NULL);

	struct pool p;
	if (!pool_create(&p, name))
		return;
	fill(p.mem + W_OFF, W_LEN, 3 * id);
	fill(p.mem + A_OFF, AB_LEN, 3 * id + 1);
	fill(p.mem + B_OFF, AB_LEN, 3 * id + 2);
	TU_EXPECT(rpmem_persist(p.rpp, W_OFF, W_LEN, 0, 0) == 0,
		"%s: persist before the attack: %s", label, rpmem_errormsg());
	bool acked = true;
	if (a->read) {
		static char back[W_LEN];
		if (rpmem_read(p.rpp, back, W_OFF, W_LEN, 0) != 0) {
			acked = false;
			failed_call("read", label, errno);
		}
	} else {
		static const char *const steps[] = { "flush A", "flush B",
			"drain" };
		for (int s = 0; s < 3 && acked; s++) {
			int r = s == 2 ? rpmem_drain(p.rpp, 0, 0) :
				rpmem_flush(p.rpp, s ? B_OFF : A_OFF, AB_LEN,
				0, 0);
			if (r) {
				acked = false;
				failed_call(steps[s], label, errno);
			}
		}
	}
	TU_EXPECT(!acked, "%s: every call after the attack was acknowledged",
		label);
	int closed = rpmem_close(p.rpp);
	const char *msg = rpmem_errormsg();
	TU_EXPECT(closed == -1, "%s: close of a broken session returned 0",
		label);
	bool c2s = strcmp(a->dir, "c2s") == 0;
	if (c2s)
		TU_EXPECT(strstr(msg, "failed authentication") != NULL,
			"%s: close does not pass on rpmemd's reason: \"%s\"",
			label, msg);

	/* what reached the replica, once rpmemd let go of it */
	TU_EXPECT(has(p.part, p.mem + W_OFF, W_LEN) == 1,
		"%s: the acknowledged persist is not in the replica", label);
	if (!a->a_applied)
		TU_EXPECT(has(p.part, p.mem + A_OFF, 64) == 0,
			"%s: the replica holds bytes of the tampered message",
			label);
	if (c2s)
		TU_EXPECT(has(p.part, p.mem + B_OFF, 64) == 0,
			"%s: the replica holds bytes sent after the attack",
			label);
	char said[64];
	snprintf(said, sizeof(said), "attacked %s frame %u on lane 0: %s",
		a->dir, a->at, a->attack);
	TU_EXPECT(has(rlog, said, strlen(said)) == 1, "%s: the relay did not "
		"attack (see %s)", label, rlog);
	pool_drop(&p);
}

/*
 * run_capture -- persist a pattern and read it back through a session
 * of `policy`: the lane traffic shows it unless the lanes are encrypted
 */
static void
run_capture(const char *policy, unsigned id)
{
	char name[32], cap[512];
	snprintf(name, sizeof(name), "c%u", id);
	snprintf(cap, sizeof(cap), "%s/capture.%s", Env.dir, policy);
	setenv("RPMEM_LANE_SECURITY", policy, 1);
	relay("none", "c2s", 0, cap);
	struct pool p;
	if (!pool_create(&p, name))
		return;
	fill(p.mem + A_OFF, AB_LEN, 1000 + id);
	static char back[AB_LEN];
	TU_EXPECT(rpmem_persist(p.rpp, A_OFF, AB_LEN, 0, 0) == 0 &&
		rpmem_read(p.rpp, back, A_OFF, AB_LEN, 0) == 0 &&
		memcmp(back, p.mem + A_OFF, AB_LEN) == 0,
		"%s: persist and read back: %s", policy, rpmem_errormsg());
	TU_EXPECT(rpmem_close(p.rpp) == 0, "%s: close: %s", policy,
		rpmem_errormsg());
	bool clear = strcmp(policy, "encrypt") != 0;
	int seen = has(cap, p.mem + A_OFF + 1000, 32);
	printf("tamper: capture under %s: the pattern %s in the lane "
		"traffic\n", policy, seen == 1 ? "appears" : "does not appear");
	TU_EXPECT(seen == clear, "%s: the pattern %s in the lane traffic",
		policy, seen == 1 ? "appears" : seen ? "(no capture)" :
		"does not appear");
	pool_drop(&p);
}

int
main(void)
{
	bool missing = false;
	tu_target_load(PROG, "TAMPER", &Env.t, &missing);
	if (missing)
		exit(2);
	Env.log_dir = tu_need_or_exit(PROG, "TAMPER_LOG_DIR");
	Env.dir = tu_need_or_exit(PROG, "TAMPER_DIR");

	unsigned id = 0;
	static const char *const all[] = { "encrypt", "authenticate", "none" };
	for (unsigned i = 0; i < 3; i++)
		run_capture(all[i], id++);
	for (unsigned s = 0; s < 2; s++)
		for (size_t i = 0; i < TU_NELEMS(Attacks);
				i++)
			run_attack(&Attacks[i], Sealed[s], id++);
	TU_EXPECT(logs_have("failed authentication"),
		"no rpmemd logged a failed authentication");
	printf("tamper: %s\n", tu_failures ? "FAILED" : "passed");
	return tu_failures ? 1 : 0;
}
