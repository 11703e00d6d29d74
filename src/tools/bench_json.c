/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_json.c -- rpmem bench: the report as one JSON object
 */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "fab.h"
#include "poolset.h"

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
json_ours(const struct bench *b, const struct run *r, FILE *f)
{
	const char *sep = "";
	fprintf(f, ",\"persist\":[");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NSIZES; i++, sep = ",") {
			const struct lat *l = &r->persist[m][i];
			fprintf(f, "%s{\"mode\":\"%s\",\"size\":%zu,", sep,
				Bench_modes[m], Bench_sizes[i]);
			json_lat(f, l);
			fprintf(f, ",\"raw_p50_us\":%.3f,\"ratio\":%.3f}",
				r->raw_rtt[i].p50,
				bench_ratio(l->p50, r->raw_rtt[i].p50));
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
					l, r->bw[m][i][l], r->raw_bw[i][l],
					bench_ratio(r->bw[m][i][l],
					r->raw_bw[i][l]));
	fprintf(f, "],\"flush_drain\":[");
	sep = "";
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NFD_SIZES; i++)
			for (int k = 0; k < NFD_K; k++, sep = ",") {
				const struct fd *d = &r->fd[m][i][k];
				double raw = bench_raw_rtt(r,
					Bench_fd_sizes[i]);
				fprintf(f, "%s{\"mode\":\"%s\",\"size\":%zu,"
					"\"k\":%u,\"n\":%u,\"flush_us\":%.3f,"
					"\"drain_us\":%.3f,\"round_us\":%.3f,"
					"\"raw_p50_us\":%.3f,\"ratio\":%.3f}",
					sep, Bench_modes[m], Bench_fd_sizes[i],
					Bench_fd_k[k], d->n, d->flush,
					d->drain, d->round, raw,
					bench_ratio(d->round, raw));
			}
	fprintf(f, "],\"read\":[");
	for (int i = 0; i < NREAD; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "",
			Bench_read_sizes[i]);
		json_lat(f, &r->read[i]);
		fprintf(f, ",\"mib_s\":%.1f,\"raw_p50_us\":%.3f,"
			"\"ratio\":%.3f}", r->read_mibs[i], r->raw_read[i].p50,
			bench_ratio(r->read[i].p50, r->raw_read[i].p50));
	}
	fprintf(f, "]");
}

/* json_raw -- the raw baseline measured in one session */
static void
json_raw(const struct bench *b, const struct run *r, FILE *f)
{
	fprintf(f, ",\"baseline\":{\"node\":\"%s\",\"loopback\":true,"
		"\"peer_pid\":%d,\"wait\":", RAWFAB_NODE,
		(int)rawfab_peer_pid(b->raw));
	json_str(f, RAWFAB_WAIT_STYLE);
	fprintf(f, ",\"window\":%u,\"rtt\":[", WINDOW);
	for (int i = 0; i < NSIZES; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "", Bench_sizes[i]);
		json_lat(f, &r->raw_rtt[i]);
		fprintf(f, "}");
	}
	fprintf(f, "],\"read\":[");
	for (int i = 0; i < NREAD; i++) {
		fprintf(f, "%s{\"size\":%zu,", i ? "," : "",
			Bench_read_sizes[i]);
		json_lat(f, &r->raw_read[i]);
		fprintf(f, "}");
	}
	fprintf(f, "],\"write\":[");
	const char *sep = "";
	for (int i = 0; i < NBW; i++)
		for (unsigned l = 1; l <= b->lanes; l++, sep = ",")
			fprintf(f, "%s{\"size\":%zu,\"endpoints\":%u,"
				"\"mib_s\":%.1f}", sep, Bench_bw_sizes[i], l,
				r->raw_bw[i][l]);
	fprintf(f, "]}");
}

/* json_checks -- the targets */
static void
json_checks(const struct bench *b, FILE *f)
{
	struct bench_check c[NCHECKS];
	bench_checks(b, c);
	fprintf(f, ",\"checks\":[");
	for (int i = 0; i < NCHECKS; i++) {
		fprintf(f, "%s{\"check\":", i ? "," : "");
		json_str(f, c[i].what);
		if (isnan(c[i].value))
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
		"\"buff_size_requested\":%d,\"lat_s\":%.3f,\"bw_s\":%.3f,"
		"\"region_bytes\":%zu,\"llc_bytes\":%ld,\"shared_cpus\":%ld",
		b->loopback ? "true" : "false",
		proto_provider_name(b->provider), b->size, b->lanes,
		b->lanes_req, LANE_BUFF_DEFAULT, (double)b->lat_ns / 1e9,
		(double)b->bw_ns / 1e9, b->region, bench_llc(),
		bench_shared_cpus(b));
	fprintf(f, ",\"runs\":[");
	for (int i = 0; i < NRUNS; i++) {
		const struct run *r = &b->runs[i];
		fprintf(f, "%s{\"lane_security_asked\":\"%s\","
			"\"lane_security\":", i ? "," : "", r->asked);
		json_str(f, r->policy ? r->policy : "");
		fprintf(f, ",\"cipher\":");
		json_str(f, r->cipher ? r->cipher : "");
		fprintf(f, ",\"measured\":%s", r->measured ? "true" : "false");
		if (r->measured)
			fprintf(f, ",\"cpu_s_per_gib\":{\"self\":%.3f,"
				"\"rpmemd\":%.3f,\"rest\":%.3f,"
				"\"raw_machine\":%.3f}", r->cpu_self,
				r->cpu_daemon, r->cpu_rest, r->raw_cpu);
		if (r->measured) {
			json_ours(b, r, f);
			json_raw(b, r, f);
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\"setup\":{\"rounds\":%u,\"ssh_s\":%.4f,"
		"\"fabric_s\":%.4f,\"open_s\":%.4f,\"close_s\":%.4f},"
		"\"first_pass\":{\"first_mib_s\":%.1f,"
		"\"steady_mib_s\":%.1f}",
		b->setup.rounds, b->setup.ssh, b->setup.fabric, b->setup.open,
		b->setup.close,
		b->first.first, b->first.steady);
	bench_obj_print_json(b, f);
	json_checks(b, f);
	fprintf(f, "}\n");
}
