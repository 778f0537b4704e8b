/* rxkad-kdf per draft-kaduk-afs3-rxkad-k5-kdf: NIST SP 800-108 counter mode with
 * HMAC-MD5 as the PRF, label "rxkad", no context, L = 64.  Built into cred-afs and its
 * unit test; all intermediate key material is cleansed. */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rxkad-kdf.h"

void rxkad_des_set_odd_parity(unsigned char key[8])
{
	for (int i = 0; i < 8; i++) {
		unsigned char b = key[i] & 0xfe;
		/* parity of the 7 key bits; the low bit makes the total odd */
		unsigned char p = b ^ (b >> 4);
		p ^= p >> 2;
		p ^= p >> 1;
		key[i] = b | (~p & 1);
	}
}

bool rxkad_des_is_weak_key(const unsigned char key[8])
{
	/* FIPS 74 / SP 800-67: 4 weak and 12 semi-weak keys, with odd parity. */
	static const unsigned char weak[16][8] = {
		{ 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01 },
		{ 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe },
		{ 0x1f, 0x1f, 0x1f, 0x1f, 0x0e, 0x0e, 0x0e, 0x0e },
		{ 0xe0, 0xe0, 0xe0, 0xe0, 0xf1, 0xf1, 0xf1, 0xf1 },
		{ 0x01, 0xfe, 0x01, 0xfe, 0x01, 0xfe, 0x01, 0xfe },
		{ 0xfe, 0x01, 0xfe, 0x01, 0xfe, 0x01, 0xfe, 0x01 },
		{ 0x1f, 0xe0, 0x1f, 0xe0, 0x0e, 0xf1, 0x0e, 0xf1 },
		{ 0xe0, 0x1f, 0xe0, 0x1f, 0xf1, 0x0e, 0xf1, 0x0e },
		{ 0x01, 0xe0, 0x01, 0xe0, 0x01, 0xf1, 0x01, 0xf1 },
		{ 0xe0, 0x01, 0xe0, 0x01, 0xf1, 0x01, 0xf1, 0x01 },
		{ 0x1f, 0xfe, 0x1f, 0xfe, 0x0e, 0xfe, 0x0e, 0xfe },
		{ 0xfe, 0x1f, 0xfe, 0x1f, 0xfe, 0x0e, 0xfe, 0x0e },
		{ 0x01, 0x1f, 0x01, 0x1f, 0x01, 0x0e, 0x01, 0x0e },
		{ 0x1f, 0x01, 0x1f, 0x01, 0x0e, 0x01, 0x0e, 0x01 },
		{ 0xe0, 0xfe, 0xe0, 0xfe, 0xf1, 0xfe, 0xf1, 0xfe },
		{ 0xfe, 0xe0, 0xfe, 0xe0, 0xfe, 0xf1, 0xfe, 0xf1 },
	};

	for (size_t i = 0; i < 16; i++)
		if (memcmp(key, weak[i], 8) == 0)
			return true;
	return false;
}

int rxkad_des3_compress_parity(const unsigned char *in, size_t len, unsigned char *out,
			       size_t *ret_len)
{
	size_t blocks = len / 8;

	if (len == 0 || len % 8 != 0 || !out || !ret_len)
		return -EINVAL;
	for (size_t b = 0; b < blocks; b++) {
		const unsigned char *s = in + 8 * b;
		unsigned char last = s[7], tmp[7];

		/* through a temporary: out may overlap in */
		for (int j = 0; j < 7; j++)
			tmp[j] = (unsigned char)((s[j] & 0xfe) | ((last >> (j + 1)) & 1));
		memcpy(out + 7 * b, tmp, 7);
		OPENSSL_cleanse(tmp, sizeof(tmp));
	}
	*ret_len = 7 * blocks;
	return 0;
}

int rxkad_kdf(const unsigned char *key, size_t len, unsigned char out[8])
{
	/* counter || "rxkad" || 0x00 || [L]_4 with L = 64 bits, big-endian */
	unsigned char msg[1 + 5 + 1 + 4] = { 0, 'r', 'x', 'k', 'a', 'd', 0, 0, 0, 0, 64 };
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;
	int r = -EKEYREJECTED;

	if (!key || len < 7 || len > INT32_MAX || !out)
		return -EINVAL;
	for (unsigned i = 1; i <= 255; i++) {
		msg[0] = (unsigned char)i;
		mdlen = sizeof(md);
		if (!HMAC(EVP_md5(), key, (int)len, msg, sizeof(msg), md, &mdlen) || mdlen < 8) {
			r = -EIO;
			break;
		}
		rxkad_des_set_odd_parity(md);
		if (!rxkad_des_is_weak_key(md)) {
			memcpy(out, md, 8);
			r = 0;
			break;
		}
	}
	OPENSSL_cleanse(md, sizeof(md));
	return r;
}

int rxkad_session_key(int32_t enctype, const unsigned char *key, size_t len,
		      unsigned char out[8])
{
	unsigned char buf[64];
	size_t n;
	int r;

	if (!key || !out)
		return -EINVAL;
	switch (enctype) {
	case 1: /* des-cbc-crc */
	case 2: /* des-cbc-md4 */
	case 3: /* des-cbc-md5 */
		if (len != 8)
			return -EINVAL;
		memcpy(out, key, 8);
		return 0;
	case 5:	 /* des3-cbc-md5 */
	case 7:	 /* des3-cbc-sha1 (old) */
	case 16: /* des3-cbc-sha1-kd */
		if (len > sizeof(buf))
			return -EINVAL;
		r = rxkad_des3_compress_parity(key, len, buf, &n);
		if (r == 0)
			r = rxkad_kdf(buf, n, out);
		OPENSSL_cleanse(buf, sizeof(buf));
		return r;
	case 0:
	case 4:
	case 6:
	case 8:
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
	case 14:
	case 15:
		/* null, reserved and CMS-only identifiers: the draft excludes them */
		return -EPROTONOSUPPORT;
	default:
		if (enctype < 0)
			return -EPROTONOSUPPORT;
		return rxkad_kdf(key, len, out);
	}
}
