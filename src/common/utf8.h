/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * utf8.h -- what is valid UTF-8, the one place it is decided: the JSON
 * of the tools and the label values of rpmem status --prometheus both
 * pass valid sequences on and replace the rest
 */
#ifndef RPMEM_UTF8_H
#define RPMEM_UTF8_H 1

#include <stddef.h>

/*
 * utf8_len -- the length of the valid UTF-8 sequence of 2 to 4 bytes at
 * p, 0 when it is not one (ASCII included); stops at a NUL, so that a
 * NUL-terminated string is never read past its end
 */
static inline size_t
utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 :
		p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : 0;
	if (p[0] >= 0xf5)
		n = 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates and code points past U+10FFFF */
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
			(n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
			(n == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
			(n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

#endif /* RPMEM_UTF8_H */
