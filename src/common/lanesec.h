/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lanesec.h -- lane security: session keys agreed over ssh, AEAD of
 * every lane message (OpenSSL 3 EVP)
 *
 * Each side contributes LANESEC_RANDOM_LEN random bytes through the
 * out-of-band exchange, which runs inside ssh; HKDF-SHA256 turns both
 * into one key per direction and a key for lane admission tokens.  The
 * policy and the cipher go into the derivation, so the two sides share
 * keys only when they agree on both.
 *
 * A stream is one direction of one lane.  Its nonce is the lane number
 * and a message counter, so with fresh keys per session and one key per
 * direction no (key, nonce) pair is ever used twice, and a replayed,
 * reordered, dropped or injected message fails to open.
 *
 * Messages are sealed as pieces (the lane header, then bytes straight
 * from the pool), encrypted from `in` to `out` (equal for in place) under
 * LANESEC_ENCRYPT, only authenticated under LANESEC_AUTHENTICATE.
 */
#ifndef RPMEM_LANESEC_H
#define RPMEM_LANESEC_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ordered: a stronger policy has a larger value */
enum lanesec_policy {
	LANESEC_NONE = 0,
	LANESEC_AUTHENTICATE = 1,
	LANESEC_ENCRYPT = 2,
	LANESEC_POLICY_MAX = 3,
};

enum lanesec_cipher {
	LANESEC_CIPHER_NONE = 0,
	LANESEC_AES_256_GCM = 1,
	LANESEC_CHACHA20_POLY1305 = 2,
	LANESEC_CIPHER_MAX = 3,
};

enum lanesec_dir {
	LANESEC_C2S = 0,	/* client to rpmemd */
	LANESEC_S2C = 1,	/* rpmemd to client */
};

#define LANESEC_TAG_LEN 16
#define LANESEC_RANDOM_LEN 32
#define LANESEC_KEY_LEN 32
#define LANESEC_TOKEN_LEN 16

/* the keys of one session */
struct lanesec_keys {
	enum lanesec_policy policy;
	enum lanesec_cipher cipher;
	uint8_t key[2][LANESEC_KEY_LEN];	/* by enum lanesec_dir */
	uint8_t admit[LANESEC_KEY_LEN];		/* lane admission tokens */
};

/* one direction of one lane; used by one thread at a time */
struct lanesec_stream {
	void *ctx;		/* EVP_CIPHER_CTX */
	enum lanesec_policy policy;
	bool seal;		/* true: this end sends */
	uint32_t lane;
	uint64_t seq;		/* messages sealed or opened so far */
};

/* a piece of a message: `len` bytes from `in` (encrypted into `out`) */
struct lanesec_piece {
	const void *in;
	void *out;
	size_t len;
};

/* lanesec_policy_name -- "none", "authenticate", "encrypt" */
const char *lanesec_policy_name(unsigned policy);

/* lanesec_policy_parse -- the reverse; -EINVAL for anything else */
int lanesec_policy_parse(const char *name, enum lanesec_policy *policy);

/*
 * lanesec_policy_default -- what a side asks for when not told: encrypt
 * over tcp and sockets (networks nobody fully trusts), none over verbs
 * (an RDMA fabric, where relaxed persists are RDMA writes)
 */
enum lanesec_policy lanesec_policy_default(uint32_t provider);

/* lanesec_cipher_name -- "aes-256-gcm", "chacha20-poly1305", "none" */
const char *lanesec_cipher_name(unsigned cipher);

/* lanesec_cipher_parse -- the reverse (not "none"); -EINVAL otherwise */
int lanesec_cipher_parse(const char *name, enum lanesec_cipher *cipher);

/* lanesec_cpu_cipher -- AES-256-GCM where the CPU has AES instructions */
enum lanesec_cipher lanesec_cpu_cipher(void);

/*
 * lanesec_cipher_choose -- rpmemd's choice from the client's preference:
 * AES-256-GCM only when both ends have AES instructions
 */
enum lanesec_cipher lanesec_cipher_choose(unsigned client_pref);

/*
 * lanesec_random -- fill buf from the system's CSPRNG; 0, -ENOMEM when
 * OpenSSL ran out of memory, or -EIO
 */
int lanesec_random(uint8_t *buf, size_t len);

/*
 * lanesec_derive -- the session's keys from both sides' random bytes,
 * bound to the policy and the cipher.  0 or -EINVAL / -ENOMEM / -EIO.
 */
int lanesec_derive(struct lanesec_keys *keys, enum lanesec_policy policy,
		enum lanesec_cipher cipher,
		const uint8_t client_random[LANESEC_RANDOM_LEN],
		const uint8_t daemon_random[LANESEC_RANDOM_LEN]);

/* lanesec_wipe -- clear key material */
void lanesec_wipe(void *buf, size_t len);

/*
 * lanesec_token -- what a connection request for `lane` carries: a
 * one-use proof that the client holds the session's keys, which
 * reveals nothing of them
 */
int lanesec_token(const struct lanesec_keys *keys, uint32_t lane,
		uint8_t token[LANESEC_TOKEN_LEN]);

/* lanesec_token_ok -- compare a received token in constant time */
bool lanesec_token_ok(const struct lanesec_keys *keys, uint32_t lane,
		const uint8_t token[LANESEC_TOKEN_LEN]);

/*
 * lanesec_stream_init -- a stream for `dir` of `lane`: it seals when
 * `seal`, opens otherwise.  Under LANESEC_NONE it holds no cipher and
 * must not be used.  0 or -ENOMEM / -EIO.
 */
int lanesec_stream_init(struct lanesec_stream *st,
		const struct lanesec_keys *keys, enum lanesec_dir dir,
		uint32_t lane, bool seal);

/* lanesec_stream_fini -- free the cipher context (idempotent) */
void lanesec_stream_fini(struct lanesec_stream *st);

/*
 * lanesec_seal -- seal the next message of the stream: its pieces, in
 * order, make the message body; writes the tag.  0, -EINVAL (a piece
 * over INT_MAX bytes), -EOVERFLOW (counter exhausted) or -EIO.
 */
int lanesec_seal(struct lanesec_stream *st, const struct lanesec_piece *p,
		size_t n, uint8_t tag[LANESEC_TAG_LEN]);

/*
 * lanesec_open -- verify the next message of the stream against `tag`
 * and, when encrypted, decrypt its pieces.  -EBADMSG when the message
 * is not the next one this stream's peer sealed, unaltered; the output
 * must then be discarded and the stream is not used again.
 */
int lanesec_open(struct lanesec_stream *st, const struct lanesec_piece *p,
		size_t n, const uint8_t tag[LANESEC_TAG_LEN]);

#endif /* RPMEM_LANESEC_H */
