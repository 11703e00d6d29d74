/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_lanesec.c -- unit tests of lane security: key derivation,
 * admission tokens, and sealing/opening lane messages (scenarios S6-S8)
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanesec.h"
#include "proto.h"
#include "tu_check.h"

/* every sealing policy with every cipher: the loop tests run over these */
static const struct {
	enum lanesec_policy policy;
	enum lanesec_cipher cipher;
} Modes[] = {
	{ LANESEC_ENCRYPT, LANESEC_AES_256_GCM },
	{ LANESEC_ENCRYPT, LANESEC_CHACHA20_POLY1305 },
	{ LANESEC_AUTHENTICATE, LANESEC_AES_256_GCM },
	{ LANESEC_AUTHENTICATE, LANESEC_CHACHA20_POLY1305 },
};
#define NMODES ((int)(TU_NELEMS(Modes)))

#define LANE 5
#define HDR 24
#define DATA 3000

/* a session's two ends: the client seals c2s, rpmemd opens it */
struct pair {
	struct lanesec_keys keys;
	struct lanesec_stream tx;
	struct lanesec_stream rx;
};

/* pair_init -- keys from fixed random bytes, streams for one direction */
static void
pair_init(struct pair *p, int mode, enum lanesec_dir dir)
{
	uint8_t cr[LANESEC_RANDOM_LEN], dr[LANESEC_RANDOM_LEN];
	memset(cr, 0xc1, sizeof(cr));
	memset(dr, 0xd2, sizeof(dr));
	ck_assert_int_eq(lanesec_derive(&p->keys, Modes[mode].policy,
		Modes[mode].cipher, cr, dr), 0);
	ck_assert_int_eq(lanesec_stream_init(&p->tx, &p->keys, dir, LANE,
		true), 0);
	ck_assert_int_eq(lanesec_stream_init(&p->rx, &p->keys, dir, LANE,
		false), 0);
}

/* pair_fini -- free both streams */
static void
pair_fini(struct pair *p)
{
	lanesec_stream_fini(&p->tx);
	lanesec_stream_fini(&p->rx);
}

/* a message: header and data in separate buffers, as on the lanes */
struct msg {
	unsigned char hdr[HDR];
	unsigned char data[DATA];
	unsigned char wire_hdr[HDR];
	unsigned char wire_data[DATA];
	uint8_t tag[LANESEC_TAG_LEN];
};

/* msg_fill -- recognisable contents, different for each `seed` */
static void
msg_fill(struct msg *m, unsigned seed)
{
	for (size_t i = 0; i < HDR; i++)
		m->hdr[i] = (unsigned char)(seed + i);
	for (size_t i = 0; i < DATA; i++)
		m->data[i] = (unsigned char)(seed * 7 + i * 13);
}

/* seal -- seal m as two pieces into its wire buffers */
static int
seal(struct lanesec_stream *st, struct msg *m)
{
	memcpy(m->wire_hdr, m->hdr, HDR);
	memcpy(m->wire_data, m->data, DATA);
	struct lanesec_piece p[] = {
		{ m->wire_hdr, m->wire_hdr, HDR },	/* in place */
		{ m->data, m->wire_data, DATA },	/* copied out */
	};
	return lanesec_seal(st, p, 2, m->tag);
}

/* sealed_pair -- a client-to-server pair, m (of `seed`) sealed by its tx */
static void
sealed_pair(struct pair *p, int mode, struct msg *m, unsigned seed)
{
	pair_init(p, mode, LANESEC_C2S);
	msg_fill(m, seed);
	ck_assert_int_eq(seal(&p->tx, m), 0);
}

/* open -- open m's wire buffers in place */
static int
open_msg(struct lanesec_stream *st, struct msg *m)
{
	struct lanesec_piece p[] = {
		{ m->wire_hdr, m->wire_hdr, HDR },
		{ m->wire_data, m->wire_data, DATA },
	};
	return lanesec_open(st, p, 2, m->tag);
}

START_TEST(sealed_messages_open_in_order_with_their_contents)
{
	struct pair p;
	pair_init(&p, _i, LANESEC_C2S);
	for (unsigned k = 0; k < 3; k++) {
		struct msg m;
		msg_fill(&m, k);
		ck_assert_int_eq(seal(&p.tx, &m), 0);
		bool enc = Modes[_i].policy == LANESEC_ENCRYPT;
		/* encrypt hides the bytes; authenticate leaves them be */
		ck_assert_int_eq(memcmp(m.wire_data, m.data, DATA) != 0, enc);
		ck_assert_int_eq(memcmp(m.wire_hdr, m.hdr, HDR) != 0, enc);
		ck_assert_int_eq(open_msg(&p.rx, &m), 0);
		ck_assert_mem_eq(m.wire_hdr, m.hdr, HDR);
		ck_assert_mem_eq(m.wire_data, m.data, DATA);
	}
	pair_fini(&p);
}
END_TEST

START_TEST(any_flipped_bit_of_body_or_tag_fails_to_open)
{
	/* header, first and last data byte, and the tag */
	static const size_t spots[] = { 0, HDR - 1, HDR, HDR + DATA - 1,
		HDR + DATA, HDR + DATA + LANESEC_TAG_LEN - 1 };
	for (size_t s = 0; s < TU_NELEMS(spots); s++) {
		struct pair p;
		struct msg m;
		sealed_pair(&p, _i, &m, 1);
		size_t at = spots[s];
		unsigned char *b = at < HDR ? &m.wire_hdr[at] :
			at < HDR + DATA ? &m.wire_data[at - HDR] :
			&m.tag[at - HDR - DATA];
		*b ^= 0x10;
		ck_assert_int_eq(open_msg(&p.rx, &m), -EBADMSG);
		pair_fini(&p);
	}
}
END_TEST

/* replayed, reordered, dropped: each as a sequence of message numbers */
static const struct {
	const char *what;
	unsigned order[3];
	unsigned n;
	unsigned good;		/* how many open before the failure */
} Attacks[] = {
	{ "replayed", { 0, 0 }, 2, 1 },
	{ "reordered", { 1, 0 }, 2, 0 },
	{ "dropped", { 0, 2 }, 2, 1 },
};

START_TEST(replayed_reordered_or_dropped_messages_fail_to_open)
{
	for (size_t a = 0; a < TU_NELEMS(Attacks); a++) {
		struct pair p;
		pair_init(&p, _i, LANESEC_S2C);
		struct msg m[3];
		for (unsigned k = 0; k < 3; k++) {
			msg_fill(&m[k], k);
			ck_assert_int_eq(seal(&p.tx, &m[k]), 0);
		}
		for (unsigned k = 0; k < Attacks[a].n; k++) {
			int want = k < Attacks[a].good ? 0 : -EBADMSG;
			struct msg x = m[Attacks[a].order[k]];
			ck_assert_msg(open_msg(&p.rx, &x) == want,
				"%s message, step %u", Attacks[a].what, k);
		}
		pair_fini(&p);
	}
}
END_TEST

START_TEST(other_direction_lane_or_session_keys_fail_to_open)
{
	struct pair p;
	struct msg m;
	sealed_pair(&p, _i, &m, 3);
	struct msg saved = m;

	/* the reverse direction of the same lane */
	struct lanesec_stream rx;
	ck_assert_int_eq(lanesec_stream_init(&rx, &p.keys, LANESEC_S2C, LANE,
		false), 0);
	ck_assert_int_eq(open_msg(&rx, &m), -EBADMSG);
	lanesec_stream_fini(&rx);

	/* the same direction of another lane */
	m = saved;
	ck_assert_int_eq(lanesec_stream_init(&rx, &p.keys, LANESEC_C2S,
		LANE + 1, false), 0);
	ck_assert_int_eq(open_msg(&rx, &m), -EBADMSG);
	lanesec_stream_fini(&rx);

	/* another session: one random byte differs */
	uint8_t cr[LANESEC_RANDOM_LEN], dr[LANESEC_RANDOM_LEN];
	memset(cr, 0xc1, sizeof(cr));
	memset(dr, 0xd2, sizeof(dr));
	dr[7] ^= 1;
	struct lanesec_keys other;
	ck_assert_int_eq(lanesec_derive(&other, Modes[_i].policy,
		Modes[_i].cipher, cr, dr), 0);
	m = saved;
	ck_assert_int_eq(lanesec_stream_init(&rx, &other, LANESEC_C2S, LANE,
		false), 0);
	ck_assert_int_eq(open_msg(&rx, &m), -EBADMSG);
	lanesec_stream_fini(&rx);

	/* the right stream still opens the untouched message */
	m = saved;
	ck_assert_int_eq(open_msg(&p.rx, &m), 0);
	pair_fini(&p);
}
END_TEST

START_TEST(keys_depend_on_policy_cipher_and_both_randoms)
{
	uint8_t cr[LANESEC_RANDOM_LEN], dr[LANESEC_RANDOM_LEN];
	memset(cr, 1, sizeof(cr));
	memset(dr, 2, sizeof(dr));
	struct lanesec_keys k[5];
	ck_assert_int_eq(lanesec_derive(&k[0], LANESEC_ENCRYPT,
		LANESEC_AES_256_GCM, cr, dr), 0);
	ck_assert_int_eq(lanesec_derive(&k[1], LANESEC_AUTHENTICATE,
		LANESEC_AES_256_GCM, cr, dr), 0);
	ck_assert_int_eq(lanesec_derive(&k[2], LANESEC_ENCRYPT,
		LANESEC_CHACHA20_POLY1305, cr, dr), 0);
	cr[0] ^= 1;
	ck_assert_int_eq(lanesec_derive(&k[3], LANESEC_ENCRYPT,
		LANESEC_AES_256_GCM, cr, dr), 0);
	cr[0] ^= 1;
	dr[31] ^= 1;
	ck_assert_int_eq(lanesec_derive(&k[4], LANESEC_ENCRYPT,
		LANESEC_AES_256_GCM, cr, dr), 0);
	for (int i = 0; i < 5; i++) {
		ck_assert(memcmp(k[i].key[LANESEC_C2S], k[i].key[LANESEC_S2C],
			LANESEC_KEY_LEN) != 0);
		for (int j = 0; j < i; j++)
			ck_assert(memcmp(k[i].key, k[j].key,
				sizeof(k[i].key)) != 0);
	}
	ck_assert_int_eq(lanesec_derive(&k[0], LANESEC_POLICY_MAX,
		LANESEC_AES_256_GCM, cr, dr), -EINVAL);
}
END_TEST

START_TEST(derivation_is_pinned_so_versions_interoperate)
{
	/* a change here breaks the wire: bump the protocol minor with it */
	uint8_t cr[LANESEC_RANDOM_LEN], dr[LANESEC_RANDOM_LEN];
	for (int i = 0; i < LANESEC_RANDOM_LEN; i++) {
		cr[i] = (uint8_t)i;
		dr[i] = (uint8_t)(0x80 + i);
	}
	struct lanesec_keys k;
	ck_assert_int_eq(lanesec_derive(&k, LANESEC_ENCRYPT,
		LANESEC_AES_256_GCM, cr, dr), 0);
	uint8_t token[LANESEC_TOKEN_LEN];
	ck_assert_int_eq(lanesec_token(&k, 3, token), 0);
	char hex[2 * LANESEC_TOKEN_LEN + 1];
	for (int i = 0; i < LANESEC_TOKEN_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", token[i]);
	ck_assert_str_eq(hex, "659e958cd8d7142bd22d41a64385c331");
}
END_TEST

START_TEST(tokens_differ_per_lane_and_check_in_constant_time)
{
	uint8_t cr[LANESEC_RANDOM_LEN] = { 9 }, dr[LANESEC_RANDOM_LEN] = { 8 };
	struct lanesec_keys k;
	ck_assert_int_eq(lanesec_derive(&k, LANESEC_NONE,
		LANESEC_CIPHER_NONE, cr, dr), 0);
	uint8_t t0[LANESEC_TOKEN_LEN], t1[LANESEC_TOKEN_LEN];
	ck_assert_int_eq(lanesec_token(&k, 0, t0), 0);
	ck_assert_int_eq(lanesec_token(&k, 1, t1), 0);
	ck_assert(memcmp(t0, t1, sizeof(t0)) != 0);
	ck_assert(lanesec_token_ok(&k, 0, t0));
	ck_assert(lanesec_token_ok(&k, 1, t1));
	ck_assert(!lanesec_token_ok(&k, 1, t0));
	t0[15] ^= 1;
	ck_assert(!lanesec_token_ok(&k, 0, t0));
	/* a token is not any of the keys */
	ck_assert(memcmp(t1, k.key[LANESEC_C2S], sizeof(t1)) != 0);
	ck_assert(memcmp(t1, k.admit, sizeof(t1)) != 0);
}
END_TEST

START_TEST(streams_refuse_the_wrong_role_and_an_exhausted_counter)
{
	struct pair p;
	pair_init(&p, _i, LANESEC_C2S);
	struct msg m;
	msg_fill(&m, 4);
	ck_assert_int_eq(seal(&p.rx, &m), -EINVAL);
	ck_assert_int_eq(open_msg(&p.tx, &m), -EINVAL);
	p.tx.seq = UINT64_MAX;
	ck_assert_int_eq(seal(&p.tx, &m), -EOVERFLOW);
	pair_fini(&p);
	/* fini is idempotent, and a none stream holds no cipher */
	lanesec_stream_fini(&p.tx);
	struct lanesec_keys none = { .policy = LANESEC_NONE };
	struct lanesec_stream st;
	ck_assert_int_eq(lanesec_stream_init(&st, &none, LANESEC_C2S, 0,
		true), 0);
	ck_assert_int_eq(seal(&st, &m), -EINVAL);
	lanesec_stream_fini(&st);
}
END_TEST

START_TEST(policy_and_cipher_names_round_trip)
{
	for (unsigned i = 0; i < LANESEC_POLICY_MAX; i++) {
		enum lanesec_policy p;
		ck_assert_int_eq(lanesec_policy_parse(
			lanesec_policy_name(i), &p), 0);
		ck_assert_uint_eq(p, i);
	}
	for (unsigned i = LANESEC_AES_256_GCM; i < LANESEC_CIPHER_MAX; i++) {
		enum lanesec_cipher c;
		ck_assert_int_eq(lanesec_cipher_parse(
			lanesec_cipher_name(i), &c), 0);
		ck_assert_uint_eq(c, i);
	}
	enum lanesec_policy p;
	enum lanesec_cipher c;
	static const char *const bad[] = { "", "Encrypt", "encrypt ", "aes",
		"none2", NULL };
	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		ck_assert_int_eq(lanesec_policy_parse(bad[i], &p), -EINVAL);
		ck_assert_int_eq(lanesec_cipher_parse(bad[i], &c), -EINVAL);
	}
	ck_assert_int_eq(lanesec_cipher_parse("none", &c), -EINVAL);
	ck_assert_str_eq(lanesec_policy_name(7), "unknown");
	ck_assert_str_eq(lanesec_cipher_name(7), "unknown");
}
END_TEST

START_TEST(defaults_encrypt_except_on_rdma_and_chacha_without_aes)
{
	ck_assert_uint_eq(lanesec_policy_default(PROTO_PROV_TCP),
		LANESEC_ENCRYPT);
	ck_assert_uint_eq(lanesec_policy_default(PROTO_PROV_SOCKETS),
		LANESEC_ENCRYPT);
	ck_assert_uint_eq(lanesec_policy_default(PROTO_PROV_VERBS),
		LANESEC_NONE);
	/* a client without AES gets ChaCha, whatever this host has */
	ck_assert_uint_eq(lanesec_cipher_choose(LANESEC_CHACHA20_POLY1305),
		LANESEC_CHACHA20_POLY1305);
	ck_assert_uint_eq(lanesec_cipher_choose(99),
		LANESEC_CHACHA20_POLY1305);
	ck_assert_uint_eq(lanesec_cipher_choose(LANESEC_AES_256_GCM),
		lanesec_cpu_cipher());
}
END_TEST

/* lanesec_suite -- every test above, in one case */
static Suite *
lanesec_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("lanesec", "lanesec", NULL, NULL, &tc);
	tcase_add_loop_test(tc,
		sealed_messages_open_in_order_with_their_contents, 0, NMODES);
	tcase_add_loop_test(tc, any_flipped_bit_of_body_or_tag_fails_to_open,
		0, NMODES);
	tcase_add_loop_test(tc,
		replayed_reordered_or_dropped_messages_fail_to_open, 0, NMODES);
	tcase_add_loop_test(tc,
		other_direction_lane_or_session_keys_fail_to_open, 0, NMODES);
	tcase_add_loop_test(tc,
		streams_refuse_the_wrong_role_and_an_exhausted_counter, 0,
		NMODES);
	tcase_add_test(tc, keys_depend_on_policy_cipher_and_both_randoms);
	tcase_add_test(tc, derivation_is_pinned_so_versions_interoperate);
	tcase_add_test(tc, tokens_differ_per_lane_and_check_in_constant_time);
	tcase_add_test(tc, policy_and_cipher_names_round_trip);
	tcase_add_test(tc,
		defaults_encrypt_except_on_rdma_and_chacha_without_aes);
	return tu_suite_add(s, tc);
}

/* main -- run lanesec_suite() (tu_check.h) */
TU_MAIN(lanesec_suite)
