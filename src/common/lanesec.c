/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lanesec.c -- lane security: session keys and AEAD of lane messages
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "lanesec.h"
#include "names.h"
#include "proto.h"

#define NONCE_LEN 12
#define SALT "rpmem lane keys v1"

static const char *const policy_names[LANESEC_POLICY_MAX] = {
	[LANESEC_NONE] = "none",
	[LANESEC_AUTHENTICATE] = "authenticate",
	[LANESEC_ENCRYPT] = "encrypt",
};

static const char *const cipher_names[LANESEC_CIPHER_MAX] = {
	[LANESEC_CIPHER_NONE] = "none",
	[LANESEC_AES_256_GCM] = "aes-256-gcm",
	[LANESEC_CHACHA20_POLY1305] = "chacha20-poly1305",
};

/* lanesec_policy_name -- printable policy */
const char *
lanesec_policy_name(unsigned policy)
{
	return policy < LANESEC_POLICY_MAX ? policy_names[policy] : "unknown";
}

/* lanesec_policy_parse -- a policy from its name */
int
lanesec_policy_parse(const char *name, enum lanesec_policy *policy)
{
	int i = names_find(policy_names, 0, LANESEC_POLICY_MAX, name);
	if (i >= 0)
		*policy = (enum lanesec_policy)i;
	return i < 0 ? i : 0;
}

/* lanesec_policy_default -- encrypt unless on an RDMA fabric */
enum lanesec_policy
lanesec_policy_default(uint32_t provider)
{
	return provider == PROTO_PROV_VERBS ? LANESEC_NONE : LANESEC_ENCRYPT;
}

/* lanesec_cipher_name -- printable cipher */
const char *
lanesec_cipher_name(unsigned cipher)
{
	return cipher < LANESEC_CIPHER_MAX ? cipher_names[cipher] : "unknown";
}

/* lanesec_cipher_parse -- a cipher from its name */
int
lanesec_cipher_parse(const char *name, enum lanesec_cipher *cipher)
{
	/* "none" is no cipher to ask for */
	int i = names_find(cipher_names, LANESEC_AES_256_GCM,
		LANESEC_CIPHER_MAX, name);
	if (i >= 0)
		*cipher = (enum lanesec_cipher)i;
	return i < 0 ? i : 0;
}

/* cpu_has_aes -- AES and carry-less multiply instructions (GCM's GHASH) */
static bool
cpu_has_aes(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_cpu_supports("aes") &&
		__builtin_cpu_supports("pclmul");
#elif defined(__aarch64__)
	unsigned long hw = getauxval(AT_HWCAP);
	return (hw & HWCAP_AES) && (hw & HWCAP_PMULL);
#else
	return false;
#endif
}

/* lanesec_cpu_cipher -- the cipher this CPU runs fastest */
enum lanesec_cipher
lanesec_cpu_cipher(void)
{
	return cpu_has_aes() ? LANESEC_AES_256_GCM : LANESEC_CHACHA20_POLY1305;
}

/* lanesec_cipher_choose -- AES only when both ends have it in hardware */
enum lanesec_cipher
lanesec_cipher_choose(unsigned client_pref)
{
	if (client_pref == LANESEC_AES_256_GCM && cpu_has_aes())
		return LANESEC_AES_256_GCM;
	return LANESEC_CHACHA20_POLY1305;
}

/*
 * ossl_fail -- the errno of an OpenSSL call that failed: -ENOMEM when
 * OpenSSL ran out of memory on the way (scenario R17), else -EIO.
 * Empties OpenSSL's error queue of this thread.
 */
static int
ossl_fail(void)
{
	int r = -EIO;
	unsigned long e;
	while ((e = ERR_get_error()) != 0)
		if (ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE)
			r = -ENOMEM;
	return r;
}

/* lanesec_random -- bytes from OpenSSL's CSPRNG (seeded by the kernel) */
int
lanesec_random(uint8_t *buf, size_t len)
{
	if (len > INT_MAX)
		return -EINVAL;
	return RAND_bytes(buf, (int)len) == 1 ? 0 : ossl_fail();
}

/* lanesec_wipe -- clear key material the compiler may not elide */
void
lanesec_wipe(void *buf, size_t len)
{
	OPENSSL_cleanse(buf, len);
}

/* hkdf -- HKDF-SHA256 of `key` with our salt and `info` into `out` */
static int
hkdf(const uint8_t *key, size_t klen, const uint8_t *info, size_t ilen,
		uint8_t *out, size_t olen)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (!kdf)
		return ossl_fail();
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (!ctx)
		return -ENOMEM;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
			(char *)"SHA256", 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
			(void *)key, klen),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
			(void *)SALT, sizeof(SALT) - 1),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
			(void *)info, ilen),
		OSSL_PARAM_construct_end(),
	};
	int r = EVP_KDF_derive(ctx, out, olen, params) == 1 ? 0 :
		ossl_fail();
	EVP_KDF_CTX_free(ctx);
	return r;
}

/* lanesec_derive -- both sides' random bytes into the session's keys */
int
lanesec_derive(struct lanesec_keys *keys, enum lanesec_policy policy,
		enum lanesec_cipher cipher,
		const uint8_t client_random[LANESEC_RANDOM_LEN],
		const uint8_t daemon_random[LANESEC_RANDOM_LEN])
{
	if ((unsigned)policy >= LANESEC_POLICY_MAX ||
			(unsigned)cipher >= LANESEC_CIPHER_MAX)
		return -EINVAL;
	uint8_t ikm[2 * LANESEC_RANDOM_LEN];
	memcpy(ikm, client_random, LANESEC_RANDOM_LEN);
	memcpy(ikm + LANESEC_RANDOM_LEN, daemon_random, LANESEC_RANDOM_LEN);
	static const char label[] = "session";
	uint8_t info[sizeof(label) + 2];
	memcpy(info, label, sizeof(label));
	info[sizeof(label)] = (uint8_t)policy;
	info[sizeof(label) + 1] = (uint8_t)cipher;

	uint8_t okm[3 * LANESEC_KEY_LEN];
	int r = hkdf(ikm, sizeof(ikm), info, sizeof(info), okm, sizeof(okm));
	if (!r) {
		keys->policy = policy;
		keys->cipher = cipher;
		memcpy(keys->key[LANESEC_C2S], okm, LANESEC_KEY_LEN);
		memcpy(keys->key[LANESEC_S2C], okm + LANESEC_KEY_LEN,
			LANESEC_KEY_LEN);
		memcpy(keys->admit, okm + 2 * LANESEC_KEY_LEN,
			LANESEC_KEY_LEN);
	}
	lanesec_wipe(ikm, sizeof(ikm));
	lanesec_wipe(okm, sizeof(okm));
	return r;
}

/* lanesec_token -- the admission token of one lane */
int
lanesec_token(const struct lanesec_keys *keys, uint32_t lane,
		uint8_t token[LANESEC_TOKEN_LEN])
{
	static const char label[] = "admit lane";
	uint8_t info[sizeof(label) + sizeof(uint32_t)];
	uint32_t be = htobe32(lane);
	memcpy(info, label, sizeof(label));
	memcpy(info + sizeof(label), &be, sizeof(be));
	return hkdf(keys->admit, sizeof(keys->admit), info, sizeof(info),
		token, LANESEC_TOKEN_LEN);
}

/* lanesec_token_ok -- a received token, compared in constant time */
bool
lanesec_token_ok(const struct lanesec_keys *keys, uint32_t lane,
		const uint8_t token[LANESEC_TOKEN_LEN])
{
	uint8_t want[LANESEC_TOKEN_LEN];
	bool ok = lanesec_token(keys, lane, want) == 0 &&
		CRYPTO_memcmp(want, token, LANESEC_TOKEN_LEN) == 0;
	lanesec_wipe(want, sizeof(want));
	return ok;
}

/* evp_cipher -- the OpenSSL cipher of ours */
static const EVP_CIPHER *
evp_cipher(enum lanesec_cipher cipher)
{
	switch (cipher) {
	case LANESEC_AES_256_GCM:
		return EVP_aes_256_gcm();
	case LANESEC_CHACHA20_POLY1305:
		return EVP_chacha20_poly1305();
	default:
		return NULL;
	}
}

/* lanesec_stream_init -- a keyed cipher context for one direction */
int
lanesec_stream_init(struct lanesec_stream *st,
		const struct lanesec_keys *keys, enum lanesec_dir dir,
		uint32_t lane, bool seal)
{
	memset(st, 0, sizeof(*st));
	st->policy = keys->policy;
	st->seal = seal;
	st->lane = lane;
	if (keys->policy == LANESEC_NONE)
		return 0;
	const EVP_CIPHER *c = evp_cipher(keys->cipher);
	if (!c)
		return -EINVAL;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_CipherInit_ex(ctx, c, NULL, keys->key[dir], NULL,
			seal ? 1 : 0) != 1 ||
			EVP_CIPHER_CTX_get_iv_length(ctx) != NONCE_LEN) {
		EVP_CIPHER_CTX_free(ctx);
		return ossl_fail();
	}
	st->ctx = ctx;
	return 0;
}

/* lanesec_stream_fini -- free the context */
void
lanesec_stream_fini(struct lanesec_stream *st)
{
	EVP_CIPHER_CTX_free(st->ctx);
	st->ctx = NULL;
}

/* start -- key the next message: nonce = lane (BE 32) || counter (BE 64) */
static int
start(struct lanesec_stream *st)
{
	if (!st->ctx)
		return -EINVAL;
	if (st->seq == UINT64_MAX)
		return -EOVERFLOW;
	uint8_t nonce[NONCE_LEN];
	uint32_t lane = htobe32(st->lane);
	uint64_t seq = htobe64(st->seq);
	memcpy(nonce, &lane, sizeof(lane));
	memcpy(nonce + sizeof(lane), &seq, sizeof(seq));
	st->seq++;
	return EVP_CipherInit_ex(st->ctx, NULL, NULL, NULL, nonce, -1) == 1 ?
		0 : -EIO;
}

/*
 * pieces -- run every piece through the cipher: encrypted (or
 * decrypted) from in to out, or fed as associated data when the policy
 * only authenticates
 */
static int
pieces(struct lanesec_stream *st, const struct lanesec_piece *p, size_t n)
{
	bool encrypt = st->policy == LANESEC_ENCRYPT;
	for (size_t i = 0; i < n; i++) {
		if (p[i].len == 0)
			continue;
		if (p[i].len > INT_MAX)
			return -EINVAL;
		int outl;
		if (EVP_CipherUpdate(st->ctx, encrypt ? p[i].out : NULL, &outl,
				p[i].in, (int)p[i].len) != 1 ||
				(encrypt && (size_t)outl != p[i].len))
			return -EIO;
	}
	return 0;
}

/* begin -- a stream of role `seal`: key its next message, feed it `p` */
static int
begin(struct lanesec_stream *st, bool seal, const struct lanesec_piece *p,
		size_t n)
{
	if (st->seal != seal)
		return -EINVAL;
	int r = start(st);
	return r ? r : pieces(st, p, n);
}

/* lanesec_seal -- seal the stream's next message, write its tag */
int
lanesec_seal(struct lanesec_stream *st, const struct lanesec_piece *p,
		size_t n, uint8_t tag[LANESEC_TAG_LEN])
{
	int r = begin(st, true, p, n);
	if (r)
		return r;
	uint8_t end[32];
	int outl;
	if (EVP_CipherFinal_ex(st->ctx, end, &outl) != 1 || outl != 0 ||
			EVP_CIPHER_CTX_ctrl(st->ctx, EVP_CTRL_AEAD_GET_TAG,
			LANESEC_TAG_LEN, tag) != 1)
		return -EIO;
	return 0;
}

/* lanesec_open -- verify (and decrypt) the stream's next message */
int
lanesec_open(struct lanesec_stream *st, const struct lanesec_piece *p,
		size_t n, const uint8_t tag[LANESEC_TAG_LEN])
{
	int r = begin(st, false, p, n);
	if (r)
		return r;
	uint8_t end[32];
	int outl;
	if (EVP_CIPHER_CTX_ctrl(st->ctx, EVP_CTRL_AEAD_SET_TAG,
			LANESEC_TAG_LEN, (void *)tag) != 1)
		return -EIO;
	if (EVP_CipherFinal_ex(st->ctx, end, &outl) != 1 || outl != 0)
		return -EBADMSG;
	return 0;
}
