/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_out.c -- rpmem bench: the report, as text or as one JSON object
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "fab.h"
#include "poolset.h"

#define NCHECKS 3
#define RTT_FACTOR 2.0		/* strict 64 B p50 <= 2x raw RTT p50 */
#define BW_SHARE 0.7		/* strict 1 MiB >= 70% of raw bandwidth */
#define IDX_64 1		/* Bench_sizes[1] == 64 */
#define IDX_1M 1		/* Bench_bw_sizes[1] == 1 MiB */

struct check {
	const char *what;
	double value;		/* < 0: not measured */
	double limit;		/* pass: value <= limit (le) or >= limit */
	bool le;
	bool pass;
	const char *unit;
};

/* ratio -- ours / baseline; 0 when there is no baseline */
static double
ratio(double ours, double base)
{
	return base > 0 ? ours / base : 0;
}

/* raw_rtt -- raw round trip p50 of a size measured in section a */
static double
raw_rtt(const struct bench *b, size_t size)
{
	for (int i = 0; i < NSIZES; i++)
		if (Bench_sizes[i] == size)
			return b->raw_rtt[i].p50;
	return 0;
}

/* size_str -- "8 B", "4 KiB", "1 MiB" */
static const char *
size_str(size_t size, char *buf, size_t len)
{
	if (size >= (1 << 20) && size % (1 << 20) == 0)
		snprintf(buf, len, "%zu MiB", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%zu KiB", size >> 10);
	else
		snprintf(buf, len, "%zu B", size);
	return buf;
}

/* checks -- the three targets */
static void
checks(const struct bench *b, struct check c[NCHECKS])
{
	c[0] = (struct check){
		.what = "strict 64 B persist p50 <= 2x raw round trip p50",
		.value = b->persist[STRICT][IDX_64].p50,
		.limit = RTT_FACTOR * b->raw_rtt[IDX_64].p50,
		.le = true, .unit = "us",
	};
	c[1] = (struct check){
		.what = "strict 1 MiB persist throughput, 1 lane >= 70% of "
			"raw 1 MiB RMA write bandwidth, 1 endpoint",
		.value = b->bw[STRICT][IDX_1M][1],
		.limit = BW_SHARE * b->raw_bw[IDX_1M][1],
		.unit = "MiB/s",
	};
	c[2] = (struct check){
		.what = "strict 1 MiB persist throughput, 2 lanes >= 1 lane",
		.value = b->lanes >= 2 ? b->bw[STRICT][IDX_1M][2] : -1,
		.limit = b->bw[STRICT][IDX_1M][1],
		.unit = "MiB/s",
	};
	for (int i = 0; i < NCHECKS; i++)
		c[i].pass = c[i].value >= 0 && (c[i].le ?
			c[i].value <= c[i].limit : c[i].value >= c[i].limit);
}

/* text_header -- what was measured against what */
static void
text_header(const struct bench *b, FILE *f)
{
	const char *prov = proto_provider_name(b->provider);
	fprintf(f, "rpmem bench %s%s\n", b->path, b->quick ? " --quick" : "");
	fprintf(f, "target %s (replica %u, %s), provider %s, pool %zu bytes "
		"(%.1f MiB), lanes %u (asked %u), buff size %d (requested)\n",
		b->rep->target, b->rep_idx, b->rep->desc, prov, b->size,
		(double)b->size / MIB, b->lanes, b->lanes_req,
		LANE_BUFF_DEFAULT);
	fprintf(f, "baseline: raw libfabric %s, FI_EP_MSG with fab_getinfo "
		"hints, to a peer forked by this process (pid %d), measured "
		"on loopback %s\n", prov, (int)rawfab_peer_pid(b->raw),
		RAWFAB_NODE);
	if (!b->loopback)
		fprintf(f, "note: the replica's host in '%s' is not a "
			"loopback address; the baseline was measured on "
			"loopback all the same\n", b->rep->target);
	fprintf(f, "baseline waits: %s; RMA writes: %u in flight per "
		"endpoint\n", RAWFAB_WAIT_STYLE, WINDOW);
	fprintf(f, "each point: %.2f s (latency) or %.2f s (throughput), "
		"at least 20 iterations\n", (double)b->lat_ns / 1e9,
		(double)b->bw_ns / 1e9);
}

/* text_ours -- sections a to d */
static void
text_ours(const struct bench *b, FILE *f)
{
	char s[32];
	fprintf(f, "\na) persist latency, lane 0, us; ratio = p50 / raw "
		"round trip p50 of the same size\n"
		"   size     mode          n      p50      p99     mean"
		"  raw p50   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NSIZES; i++) {
			const struct lat *l = &b->persist[m][i];
			fprintf(f, "   %-8s %-8s %6u %8.2f %8.2f %8.2f %8.2f "
				"%6.2fx\n", size_str(Bench_sizes[i], s,
				sizeof(s)), Bench_modes[m], l->n, l->p50,
				l->p99, l->mean, b->raw_rtt[i].p50,
				ratio(l->p50, b->raw_rtt[i].p50));
		}
	fprintf(f, "\nb) persist throughput, one thread per lane, MiB/s; "
		"ratio = ours / raw RMA write bandwidth, as many endpoints\n"
		"   size     mode     lanes     MiB/s  raw MiB/s   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NBW; i++)
			for (unsigned l = 1; l <= b->lanes; l++)
				fprintf(f, "   %-8s %-8s %5u %9.1f %10.1f "
					"%6.2fx\n", size_str(Bench_bw_sizes[i],
					s, sizeof(s)), Bench_modes[m], l,
					b->bw[m][i][l], b->raw_bw[i][l],
					ratio(b->bw[m][i][l],
					b->raw_bw[i][l]));
	fprintf(f, "\nc) k x rpmem_flush + rpmem_drain, lane 0, us (p50 per "
		"round); ratio = round / raw round trip p50 of one size\n"
		"   size     mode      k   flush(each)    drain    round"
		"  raw p50   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NFD_SIZES; i++)
			for (int k = 0; k < NFD_K; k++) {
				const struct fd *d = &b->fd[m][i][k];
				double raw = raw_rtt(b, Bench_fd_sizes[i]);
				fprintf(f, "   %-8s %-8s %2u %13.2f %8.2f "
					"%8.2f %8.2f %6.2fx\n",
					size_str(Bench_fd_sizes[i], s,
					sizeof(s)), Bench_modes[m],
					Bench_fd_k[k], d->flush, d->drain,
					d->round, raw, ratio(d->round, raw));
			}
	fprintf(f, "\nd) rpmem_read, lane 0, us; ratio = p50 / raw RMA read "
		"p50\n   size          n      p50      p99     mean     MiB/s"
		"  raw p50   ratio\n");
	for (int i = 0; i < NREAD; i++) {
		const struct lat *l = &b->read[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f %9.1f %8.2f %6.2fx\n",
			size_str(Bench_read_sizes[i], s, sizeof(s)), l->n,
			l->p50, l->p99, l->mean, b->read_mibs[i],
			b->raw_read[i].p50, ratio(l->p50, b->raw_read[i].p50));
	}
}

/* text_raw -- section e and the checks */
static void
text_raw(const struct bench *b, FILE *f)
{
	char s[32];
	fprintf(f, "\ne) raw libfabric baseline on loopback %s\n"
		"   round trip: SEND of size bytes, 8-byte answer, us\n"
		"   size          n      p50      p99     mean\n", RAWFAB_NODE);
	for (int i = 0; i < NSIZES; i++) {
		const struct lat *l = &b->raw_rtt[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f\n",
			size_str(Bench_sizes[i], s, sizeof(s)), l->n, l->p50,
			l->p99, l->mean);
	}
	fprintf(f, "   RMA read, us\n");
	for (int i = 0; i < NREAD; i++) {
		const struct lat *l = &b->raw_read[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f\n",
			size_str(Bench_read_sizes[i], s, sizeof(s)), l->n,
			l->p50, l->p99, l->mean);
	}
	fprintf(f, "   RMA write bandwidth, %u in flight per endpoint, MiB/s\n"
		"   size     endpoints     MiB/s\n", WINDOW);
	for (int i = 0; i < NBW; i++)
		for (unsigned l = 1; l <= b->lanes; l++)
			fprintf(f, "   %-8s %9u %9.1f\n",
				size_str(Bench_bw_sizes[i], s, sizeof(s)), l,
				b->raw_bw[i][l]);

	struct check c[NCHECKS];
	checks(b, c);
	fprintf(f, "\n");
	for (int i = 0; i < NCHECKS; i++) {
		fprintf(f, "%s: %s: ", c[i].pass ? "PASS" : "MISS", c[i].what);
		if (c[i].value < 0)
			fprintf(f, "not measured, only 1 lane\n");
		else
			fprintf(f, "%.2f %s (%s %.2f %s)\n", c[i].value,
				c[i].unit, c[i].le ? "limit" : "needed",
				c[i].limit, c[i].unit);
	}
}

/* bench_print_text -- the report for people */
void
bench_print_text(const struct bench *b, FILE *f)
{
	text_header(b, f);
	text_ours(b, f);
	text_raw(b, f);
}

/* json_str -- a JSON string literal */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* json_lat -- the members of a latency point */
static void
json_lat(FILE *f, const struct lat *l)
{
	fprintf(f, "\"n\":%u,\"p50_us\":%.3f,\"p99_us\":%.3f,\"mean_us\":%.3f",
		l->n, l->p50, l->p99, l->mean);
}

/* json_ours -- persist, throughput, flush_drain, read */
static void
json_ours(const struct bench *b, FILE *f)
{
	const char *sep = "";
	fprintf(f, ",\"persist\":[");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NSIZES; i++, sep = ",") {
			const struct lat *l = &b->persist[m][i];
			fprintf(f, "%s{\"mode\":\"%s\",\"size\":%zu,", sep,
				Bench_modes[m], Bench_sizes[i]);
			json_lat(f, l);
			fprintf(f, ",\"raw_p50_us\":%.3f,\"ratio\":%.3f}",
				b->raw_rtt[i].p50,
				ratio(l->p50, b->raw_rtt[i].p50));
		}
	fprintf(f, "],\"throughput\":[");
	sep = "";
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NBW; i++)
			for (unsigned l = 1; l <= b->lanes; l++, sep = ",")
				fprintf(f, "%s{\"mode\":\"%s\",\"size\":%zu,"
					"\"lanes\":%u,\"mib_s\":%.1f,"
					"\"raw_mib_s\":%.1f,\"ratio\":%.3f}",
					sep, Bench_modes[m], Bench_bw_sizes[i],
					l, b->bw[m][i][l], b->raw_bw[i][l],
					ratio(b->bw[m][i][l],
					b->raw_bw[i][l]));
	fprintf(f, "],\"flush_drain\":[");
	sep = "";
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NFD_SIZES; i++)
			for (int k = 0; k < NFD_K; k++, sep = ",") {
				const struct fd *d = &b->fd[m][i][k];
				double raw = raw_rtt(b, Bench_fd_sizes[i]);
				fprintf(f, "%s{\"mode\":\"%s\",\"size\":%zu,"
					"\"k\":%u,\"n\":%u,\"flush_us\":%.3f,"
					"\"drain_us\":%.3f,\"round_us\":%.3f,"
					"\"raw_p50_us\":%.3f,\"ratio\":%.3f}",
					sep, Bench_modes[m], Bench_fd_sizes[i],
					Bench_fd_k[k], d->n, d->flush,
					d->drain, d->round, raw,
					ratio(d->round, raw));
			}
	fprintf(f, "],\"read\":[");
	for (int i = 0; i < NREAD; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "",
			Bench_read_sizes[i]);
		json_lat(f, &b->read[i]);
		fprintf(f, ",\"mib_s\":%.1f,\"raw_p50_us\":%.3f,"
			"\"ratio\":%.3f}", b->read_mibs[i], b->raw_read[i].p50,
			ratio(b->read[i].p50, b->raw_read[i].p50));
	}
	fprintf(f, "]");
}

/* json_raw -- the baseline and the checks */
static void
json_raw(const struct bench *b, FILE *f)
{
	fprintf(f, ",\"baseline\":{\"node\":\"%s\",\"loopback\":true,"
		"\"peer_pid\":%d,\"wait\":", RAWFAB_NODE,
		(int)rawfab_peer_pid(b->raw));
	json_str(f, RAWFAB_WAIT_STYLE);
	fprintf(f, ",\"window\":%u,\"rtt\":[", WINDOW);
	for (int i = 0; i < NSIZES; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "", Bench_sizes[i]);
		json_lat(f, &b->raw_rtt[i]);
		fprintf(f, "}");
	}
	fprintf(f, "],\"read\":[");
	for (int i = 0; i < NREAD; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "",
			Bench_read_sizes[i]);
		json_lat(f, &b->raw_read[i]);
		fprintf(f, "}");
	}
	fprintf(f, "],\"write\":[");
	const char *sep = "";
	for (int i = 0; i < NBW; i++)
		for (unsigned l = 1; l <= b->lanes; l++, sep = ",")
			fprintf(f, "%s{\"size\":%zu,\"endpoints\":%u,"
				"\"mib_s\":%.1f}", sep, Bench_bw_sizes[i], l,
				b->raw_bw[i][l]);
	fprintf(f, "]},\"checks\":[");
	struct check c[NCHECKS];
	checks(b, c);
	for (int i = 0; i < NCHECKS; i++) {
		fprintf(f, "%s{\"check\":", i ? "," : "");
		json_str(f, c[i].what);
		if (c[i].value < 0)
			fprintf(f, ",\"value\":null");
		else
			fprintf(f, ",\"value\":%.3f", c[i].value);
		fprintf(f, ",\"limit\":%.3f,\"unit\":\"%s\",\"result\":\"%s\"}",
			c[i].limit, c[i].unit, c[i].pass ? "PASS" : "MISS");
	}
	fprintf(f, "]");
}

/* bench_print_json -- the same report as one JSON object */
void
bench_print_json(const struct bench *b, FILE *f)
{
	fprintf(f, "{\"poolset\":");
	json_str(f, b->path);
	fprintf(f, ",\"quick\":%s,\"target\":", b->quick ? "true" : "false");
	json_str(f, b->rep->target);
	fprintf(f, ",\"replica\":%u,\"desc\":", b->rep_idx);
	json_str(f, b->rep->desc);
	fprintf(f, ",\"target_loopback\":%s,\"provider\":\"%s\","
		"\"pool_size\":%zu,\"lanes\":%u,\"lanes_asked\":%u,"
		"\"buff_size_requested\":%d,\"lat_s\":%.3f,\"bw_s\":%.3f",
		b->loopback ? "true" : "false",
		proto_provider_name(b->provider), b->size, b->lanes,
		b->lanes_req, LANE_BUFF_DEFAULT, (double)b->lat_ns / 1e9,
		(double)b->bw_ns / 1e9);
	json_ours(b, f);
	json_raw(b, f);
	fprintf(f, "}\n");
}
