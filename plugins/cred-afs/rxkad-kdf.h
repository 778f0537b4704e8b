/* rxkad-kdf (draft-kaduk-afs3-rxkad-k5-kdf): turning a Kerberos 5 session key of any
 * enctype into the 8-byte DES key rxkad uses, with OpenSSL's HMAC-MD5. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set odd parity in each byte of a DES key. */
void rxkad_des_set_odd_parity(unsigned char key[8]);
/* One of the 16 DES weak and semi-weak keys (with parity set)? */
bool rxkad_des_is_weak_key(const unsigned char key[8]);
/* RFC 3961 3DES keys carry parity bits; drop them: every 8 bytes become 7 (the 8th
 * byte's bits 1..7 become the low bits of the 7 before it).  -EINVAL unless len is a
 * multiple of 8; out may be in. */
int rxkad_des3_compress_parity(const unsigned char *in, size_t len, unsigned char *out,
			       size_t *ret_len);
/* The KDF: first 8 bytes of HMAC-MD5(key, i || "rxkad" || 0x00 || be32(64)) for counter i
 * = 1, 2, ..., with odd parity; a weak key moves on to the next counter.
 * -EINVAL for a key shorter than 7 bytes, -EKEYREJECTED when all 255 are weak. */
int rxkad_kdf(const unsigned char *key, size_t len, unsigned char out[8]);
/* The rxkad session key for a krb5 session key of enctype: single-DES keys as they are,
 * 3DES keys compressed then derived, others derived.  -EPROTONOSUPPORT for enctypes the
 * draft excludes, -EINVAL for a key of the wrong size. */
int rxkad_session_key(int32_t enctype, const unsigned char *key, size_t len,
		      unsigned char out[8]);
