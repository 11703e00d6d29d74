/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_session.c -- libFuzzer harness for rpmemd's request loop
 *
 * The input is one session: its first byte picks the client (bit 0: a
 * PMDK 1.12 client, protocol 0.1; otherwise ours) and the rest is the
 * byte stream the client sends on the out-of-band channel, ending in
 * EOF.  session_run serves it in this process against a real pool set
 * database (a scratch poolset-dir with a pool that opens, one with
 * headers and one that CREATE may make and CLOSE remove) and a real
 * fabric listener on 127.0.0.1, answering into /dev/null and logging
 * every level into /dev/null, so each message type meets each session
 * state, cut and mutated (FUZZ_SESSION_LOG=FILE keeps the log for a
 * look at what the sessions did).  Besides "never crash or hang", every
 * session must end: with the input closed, session_run has to return.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "log.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
	char dir[256];
	struct db *db;
	int null;		/* /dev/null for the answers */
} F;

/* cleanup -- remove the scratch poolset-dir */
static void
cleanup(void)
{
	char cmd[300];
	db_fini(F.db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", F.dir);
	if (system(cmd) != 0)
		fprintf(stdout, "cannot remove %s\n", F.dir);
}

/* write_set -- a pool set file of one 2 MiB part in the scratch dir */
static void
write_set(const char *name, const char *options)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", F.dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fprintf(f, "PMEMPOOLSET\n%s2M %s/%s.part0\n", options, F.dir, name);
	if (fclose(f))
		abort();
}

/* setup -- the scratch poolset-dir, its pools, the log and the sinks */
static void
setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(F.dir, sizeof(F.dir), "%s/fuzz_session.XXXXXX",
		tmp ? tmp : "/tmp");
	if (!mkdtemp(F.dir) || db_init(F.dir, &F.db))
		abort();
	atexit(cleanup);
	write_set("pool.set", "OPTION NOHDRS\n");
	write_set("new.set", "OPTION NOHDRS\n");
	write_set("hdr.set", "");
	struct db_pool *pool;
	if (db_pool_create(F.db, "pool.set", NULL, &pool) ||
			db_pool_close(pool, false))
		abort();
	/* every level formatted, kept only when FUZZ_SESSION_LOG says where */
	const char *log = getenv("FUZZ_SESSION_LOG");
	log_init("rpmemd", LOG_SINK_NONE, LOG_LVL_DEBUG);
	if (log_to_file(log ? log : "/dev/null"))
		abort();
	/*
	 * The causes rpmemd tells its client go to the stdio stream, not
	 * to fd 2, where a sanitizer's report must still reach run.sh.
	 */
	stderr = fopen("/dev/null", "w");
	F.null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (!stderr || F.null < 0)
		abort();
	/* lanes listen on loopback only */
	setenv("SSH_CONNECTION", "127.0.0.1 40000 127.0.0.1 22", 1);
	/*
	 * No lane ever connects and every byte is in the pipe at once: a
	 * request after CREATE or OPEN must not wait 10 s for lanes.
	 */
	setenv("RPMEMD_REQUEST_TIMEOUT_MS", "20", 1);
}

/* LLVMFuzzerTestOneInput -- serve one session from the input */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!F.db)
		setup();
	if (size == 0)
		return 0;
	struct config cfg = {
		.poolset_dir = F.dir,
		.log_level = LOG_LVL_DEBUG,
		.max_lanes = 4,
		.lane_security = CONFIG_LANE_SECURITY_DEFAULT,
		.allow_pmdk_clients = true,
		.protocol = !(data[0] & 1),
		.proto_major = 0,
		.proto_minor = 3,
	};
	int p[2];
	if (pipe(p))
		abort();
	/* at most the driver's 8 KiB: within the pipe's buffer */
	if (size > 1 && write(p[1], data + 1, size - 1) != (ssize_t)size - 1)
		abort();
	close(p[1]);
	(void) session_run(&cfg, F.db, p[0], F.null);
	close(p[0]);
	return 0;
}
