/* Security identifiers: the text form the kernel writes ("S-1-5-21-...", authority in
 * 0x-hex from 2^32 up) and the binary struct cifs_sid form (BE authority, LE
 * sub-authorities) that cifs.idmap keys carry. */
#include <ctype.h>
#include <inttypes.h>

#include "libnfskeys-private.h"

/* The count of leading decimal digits in the 8 bytes at s (all readable) and, when there
 * are any, their value: SWAR, one pass for up to 8 digits instead of a dependent
 * multiply-add per character.  A byte is a digit when its high nibble is 3 both as it is
 * and plus 6; carries and borrows between bytes only start at a non-digit, so they can
 * only disturb bytes after the first non-digit, which are discarded. */
static inline unsigned digits8(const char *s, uint64_t *ret)
{
	const uint64_t hi = 0xf0f0f0f0f0f0f0f0ull, threes = 0x3030303030303030ull;
	uint64_t w, m, t;
	unsigned n;

	memcpy(&w, s, 8);
	m = ((w & hi) ^ threes) | (((w + 0x0606060606060606ull) & hi) ^ threes);
	n = m ? (unsigned)__builtin_ctzll(m) / 8 : 8;
	if (n == 0)
		return 0;
	/* the n digits into the top n bytes (zeros before them), then 8-digit conversion */
	t = (w - threes) << (8 * (8 - n));
	t = t * 10 + (t >> 8);
	t = ((t & 0x000000ff000000ffull) * (100 + (1000000ull << 32)) +
	     ((t >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32))) >> 32;
	*ret = t;
	return n;
}

/* Parse one unsigned decimal (or 0x-hex when hex_ok) component ending at '-' or NUL (end
 * is the NUL).  max is below 2^60, so checking after each digit cannot overflow (and needs
 * no division: this runs for every SID an upcall or a lookup sees).  Long decimal runs go
 * 8 digits at a time while 8 bytes remain, the rest one subtract-and-compare per
 * character.  Inlined: the call overhead was a quarter of a parse. */
static inline __attribute__((always_inline)) int
parse_component(const char **p, const char *end, uint64_t max, bool hex_ok, uint64_t *ret)
{
	const char *s = *p, *start;
	uint64_t v = 0;

	if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		for (start = s; *s && *s != '-'; s++) {
			unsigned d;

			if (*s >= '0' && *s <= '9')
				d = (unsigned)(*s - '0');
			else if (isxdigit((unsigned char)*s))
				d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
			else
				return -EINVAL;
			v = v * 16 + d;
			if (v > max)
				return -ERANGE;
		}
	} else {
		start = s;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* short components ("1", "5", "21") are cheaper byte by byte */
		if (end - s >= 8 && (unsigned)(unsigned char)s[3] - '0' <= 9) {
			unsigned n = digits8(s, &v);

			s += n;
			if (v > max)
				return -ERANGE;
			if (n < 8)
				goto done;
		}
#endif
		for (;; s++) {
			unsigned d = (unsigned)(unsigned char)*s - '0';

			if (d > 9)
				break;
			v = v * 10 + d;
			if (v > max)
				return -ERANGE;
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	done:
#endif
		if (*s && *s != '-')
			return -EINVAL;
	}
	if (s == start)
		return -EINVAL;
	*p = s;
	*ret = v;
	return 0;
}

_public_ int nfskeys_sid_from_string(const char *text, struct nfskeys_sid *ret_sid)
{
	struct nfskeys_sid sid = { 0 };
	const char *p = text, *end;
	uint64_t v;
	int r;

	if (!text || !ret_sid)
		return -EINVAL;
	if ((p[0] != 'S' && p[0] != 's') || p[1] != '-')
		return -EINVAL;
	end = p + strlen(p);
	p += 2;
	r = parse_component(&p, end, UINT8_MAX, false, &v);
	if (r < 0 || *p != '-')
		return -EINVAL;
	sid.revision = (uint8_t)v;
	p++;
	r = parse_component(&p, end, (UINT64_C(1) << 48) - 1, true, &v);
	if (r < 0)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		sid.authority[i] = (uint8_t)(v >> (8 * (5 - i)));
	while (*p == '-') {
		p++;
		if (sid.num_subauth >= NFSKEYS_SID_MAX_SUBAUTH)
			return -EINVAL;
		r = parse_component(&p, end, UINT32_MAX, false, &v);
		if (r < 0)
			return -EINVAL;
		sid.subauth[sid.num_subauth++] = (uint32_t)v;
	}
	if (*p != '\0')
		return -EINVAL;
	*ret_sid = sid;
	return 0;
}

_public_ int nfskeys_sid_to_string(const struct nfskeys_sid *sid, char *buf, size_t size)
{
	uint64_t auth = 0;
	size_t off;
	int n;

	if (!sid || !buf || sid->num_subauth > NFSKEYS_SID_MAX_SUBAUTH)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		auth = (auth << 8) | sid->authority[i];
	if (auth <= UINT32_MAX)
		n = snprintf(buf, size, "S-%u-%" PRIu64, sid->revision, auth);
	else
		n = snprintf(buf, size, "S-%u-0x%" PRIx64, sid->revision, auth);
	if (n < 0 || (size_t)n >= size)
		return -ENOBUFS;
	off = (size_t)n;
	for (unsigned i = 0; i < sid->num_subauth; i++) {
		n = snprintf(buf + off, size - off, "-%" PRIu32, sid->subauth[i]);
		if (n < 0 || (size_t)n >= size - off)
			return -ENOBUFS;
		off += (size_t)n;
	}
	return (int)off;
}

_public_ int nfskeys_sid_from_binary(const void *buf, size_t len, struct nfskeys_sid *ret_sid)
{
	const uint8_t *b = buf;
	struct nfskeys_sid sid = { 0 };

	if (!buf || !ret_sid || len < 8)
		return -EINVAL;
	sid.revision = b[0];
	sid.num_subauth = b[1];
	if (sid.num_subauth > NFSKEYS_SID_MAX_SUBAUTH || len < 8 + 4 * (size_t)sid.num_subauth)
		return -EINVAL;
	memcpy(sid.authority, b + 2, 6);
	for (unsigned i = 0; i < sid.num_subauth; i++) {
		const uint8_t *s = b + 8 + 4 * i;

		sid.subauth[i] = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
				 (uint32_t)s[3] << 24;
	}
	*ret_sid = sid;
	return 0;
}

_public_ int nfskeys_sid_to_binary(const struct nfskeys_sid *sid, void *buf, size_t size)
{
	uint8_t *b = buf;
	size_t need;

	if (!sid || !buf || sid->num_subauth > NFSKEYS_SID_MAX_SUBAUTH)
		return -EINVAL;
	need = 8 + 4 * (size_t)sid->num_subauth;
	if (size >= NFSKEYS_SID_BINARY_MAX)
		need = NFSKEYS_SID_BINARY_MAX;
	else if (size < need)
		return -ENOBUFS;
	memset(b, 0, need);
	b[0] = sid->revision;
	b[1] = sid->num_subauth;
	memcpy(b + 2, sid->authority, 6);
	for (unsigned i = 0; i < sid->num_subauth; i++) {
		uint8_t *s = b + 8 + 4 * i;

		s[0] = (uint8_t)sid->subauth[i];
		s[1] = (uint8_t)(sid->subauth[i] >> 8);
		s[2] = (uint8_t)(sid->subauth[i] >> 16);
		s[3] = (uint8_t)(sid->subauth[i] >> 24);
	}
	return (int)need;
}
