/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_sup.h -- the soak's supervisor: clients, figures, and the steps
 * every fault is made of
 */
#ifndef RPMEM_SOAK_SUP_H
#define RPMEM_SOAK_SUP_H 1

#include <limits.h>
#include <stdio.h>

#include "soak.h"

/* one client as the supervisor sees it */
struct client {
	unsigned id;
	pid_t pid;			/* the worker, 0: none */
	int cmd_fd;			/* commands to it */
	int msg_fd;			/* its reports */
	struct soak_state st;
	char state_path[PATH_MAX];
	char set_path[PATH_MAX];
	char part[PATH_MAX];
	char desc[64];
	bool ready;			/* a session is up */
	bool lost;			/* could not be brought back */
	unsigned nlanes;
	int fds_base;			/* after its first close, or -1 */
	struct soak_msg inbox;		/* a report not yet taken */
	bool has_msg;
};

/* faults, in the order of the figures */
enum fault_id {
	FAULT_RPMEMD_KILL,
	FAULT_RPMEMD_STOP,
	FAULT_SSH_KILL,
	FAULT_CLIENT_KILL,
	FAULT_LINK_CUT,
	FAULT_FS_FULL,
	FAULT_STRAY,
	FAULT_MAX,
};

struct figures {
	uint64_t ops, bytes, bad_reads;
	unsigned faults[FAULT_MAX];
	unsigned reopens;
	uint64_t lost, torn, corrupt, inflight;
	long long err_max_ms;		/* fault to the client's error */
	unsigned hangs;			/* no error within the bound */
	unsigned unexpected;		/* errors no fault explains */
	unsigned open_failed;
	unsigned slow_starts;		/* logins past RPMEM_TIMEOUT, retried */
	unsigned leaked_rpmemd;
	unsigned leaked_fds;
	unsigned leaked_procs;
	unsigned leftovers;		/* part files that should be gone */
	unsigned stray_in;		/* strangers let in */
	unsigned verified, checks;
	unsigned paused, verified_paused;
	unsigned long hwm_max_kib, anon_max_kib;
	/* the target's processes and descriptors */
	unsigned tree_base[2], tree_peak[2], tree_end[2];
};

struct soak {
	/* options */
	const char *label;
	unsigned seconds;
	unsigned nclients;
	unsigned lanes;
	size_t pool_size;
	const char *target;
	const char *poolset_dir;
	const char *part_dir;
	const char *state_dir;
	const char *log_dir;
	const char *gate_dir;		/* NULL: no stray faults */
	const char *rpmemd_cmd;		/* "@W@" becomes the worker id */
	const char *cut_cmd, *heal_cmd;	/* NULL: no link faults */
	const char *fill_path;		/* NULL: no fs-full faults */
	const char *ssh_exe;		/* the ssh binary, to find it */
	unsigned fault_mask;
	unsigned per_round;
	pid_t sshd_pid;			/* 0: no target tree figures */
	unsigned long mem_cap_kib;	/* 0: not checked */
	uint64_t seed;
	unsigned steady;		/* seconds without faults, a pause */
	unsigned think_us;		/* mean pause between two calls */
	int timeout_ms;			/* RPMEM_TIMEOUT */

	char self[PATH_MAX];
	uint64_t rng;
	long long t0;
	struct client clients[SOAK_MAX_CLIENTS];
	struct figures fig;
};

/* sup_log -- one progress line on stdout, with the run's time */
void sup_log(struct soak *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* sup_send -- a command to a worker */
int sup_send(struct client *c, enum soak_cmd cmd);

/*
 * sup_wait -- the next report of c within ms, meanwhile keeping the
 * others' reports; -ETIMEDOUT, or -EPIPE when the worker is gone
 */
int sup_wait(struct soak *s, struct client *c, struct soak_msg *m, int ms);

/* sup_spawn -- start c's worker process */
int sup_spawn(struct soak *s, struct client *c);

/* sup_reap -- collect exited children; true once c's worker is gone */
bool sup_reap(struct soak *s, struct client *c, int ms);

/* sup_rpmemd -- the pid of c's one running rpmemd, 0 if none */
pid_t sup_rpmemd(struct soak *s, struct client *c);

/* sup_gone -- wait until no rpmemd of c runs; counts and ends leaks */
bool sup_gone(struct soak *s, struct client *c, int ms);

/* sup_check -- the oracle on c's replica; false on any loss */
bool sup_check(struct soak *s, struct client *c, const char *why);

/*
 * sup_open_failed -- count and log a CREATE or OPEN that did not end
 * READY (m: the report, NULL when none came)
 */
void sup_open_failed(struct soak *s, struct client *c, const char *why,
		const struct soak_msg *m);

/* sup_open -- CREATE or OPEN until READY; false once it gave up */
bool sup_open(struct soak *s, struct client *c, enum soak_cmd cmd);

/* sup_close -- a clean CLOSE; false (and counted) if it was not */
bool sup_close(struct soak *s, struct client *c);

/*
 * sup_broken -- wait for c's report of the error a fault at t_fault
 * caused; its latency goes into the figures; false: no such report
 */
bool sup_broken(struct soak *s, struct client *c, long long t_fault,
		const char *fault);

/*
 * sup_open_all -- CREATE or OPEN on every client at once, then until
 * READY one by one; returns how many are ready
 */
unsigned sup_open_all(struct soak *s, struct client **cs, unsigned n,
		enum soak_cmd cmd, const char *why);

/*
 * sup_recover -- after broken sessions: each rpmemd gone, the oracle,
 * then every client reopened at once
 */
void sup_recover(struct soak *s, struct client **cs, unsigned n,
		const char *fault);

/* sup_bound_ms -- how long a client may take to notice a fault */
int sup_bound_ms(const struct soak *s);

/* ----------------------------------------------------------- faults */

/* fault_name -- the figures' name of a fault */
const char *fault_name(enum fault_id f);

/* fault_parse -- a comma-separated list of names, "all" or "none" */
int fault_parse(const char *list, unsigned *mask);

/* fault_usable -- faults this run's set-up allows */
unsigned fault_usable(const struct soak *s);

/* fault_round -- pick a fault among `mask` and targets, inject, recover */
void fault_round(struct soak *s, unsigned mask);

#endif /* RPMEM_SOAK_SUP_H */
