/* The keyring layer: thin wrappers over libkeyutils with negative-errno results, plus
 * parsing of the kernel's describe strings and the /proc/keys expiry column. */
#include <ctype.h>
#include <inttypes.h>
#include <keyutils.h>
#include <time.h>

#include "libnfskeys-private.h"

#define RET_KEYCTL(expr)                     \
	do {                                 \
		if ((expr) < 0)              \
			return negerrno();   \
		return 0;                    \
	} while (0)

_public_ int nfskeys_key_add(const char *type, const char *description, const void *payload,
			     size_t plen, int32_t keyring, int32_t *ret_serial)
{
	key_serial_t k;

	if (!type || !description || (!payload && plen > 0))
		return -EINVAL;
	k = add_key(type, description, payload, plen, keyring);
	if (k < 0)
		return negerrno();
	if (ret_serial)
		*ret_serial = k;
	return 0;
}

_public_ int nfskeys_key_search(int32_t keyring, const char *type, const char *description,
				int32_t dest_keyring, int32_t *ret_serial)
{
	long k;

	if (!type || !description)
		return -EINVAL;
	k = keyctl_search(keyring, type, description, dest_keyring);
	if (k < 0)
		return negerrno();
	if (ret_serial)
		*ret_serial = (int32_t)k;
	return 0;
}

_public_ int nfskeys_key_request(const char *type, const char *description, const char *callout,
				 int32_t dest_keyring, int32_t *ret_serial)
{
	key_serial_t k;

	if (!type || !description)
		return -EINVAL;
	k = request_key(type, description, callout, dest_keyring);
	if (k < 0)
		return negerrno();
	if (ret_serial)
		*ret_serial = k;
	return 0;
}

_public_ int nfskeys_key_instantiate(int32_t key, const void *payload, size_t plen,
				     int32_t keyring)
{
	if (!payload && plen > 0)
		return -EINVAL;
	RET_KEYCTL(keyctl_instantiate(key, payload, plen, keyring));
}

_public_ int nfskeys_key_reject(int32_t key, unsigned timeout, unsigned error, int32_t keyring)
{
	RET_KEYCTL(keyctl_reject(key, timeout, error, keyring));
}

_public_ int nfskeys_key_set_timeout(int32_t key, unsigned timeout)
{
	RET_KEYCTL(keyctl_set_timeout(key, timeout));
}

_public_ int nfskeys_key_link(int32_t key, int32_t keyring)
{
	RET_KEYCTL(keyctl_link(key, keyring));
}

_public_ int nfskeys_key_unlink(int32_t key, int32_t keyring)
{
	RET_KEYCTL(keyctl_unlink(key, keyring));
}

_public_ int nfskeys_key_revoke(int32_t key)
{
	RET_KEYCTL(keyctl_revoke(key));
}

_public_ int nfskeys_key_invalidate(int32_t key)
{
	RET_KEYCTL(keyctl_invalidate(key));
}

_public_ int nfskeys_key_read(int32_t key, void **ret, size_t *ret_len)
{
	void *buf = NULL;
	long n;

	if (!ret || !ret_len)
		return -EINVAL;
	n = keyctl_read_alloc(key, &buf);
	if (n < 0)
		return negerrno();
	*ret = buf;
	*ret_len = (size_t)n;
	return 0;
}

_public_ int nfskeys_key_possess_keyring(const char *description, int32_t *ret_serial)
{
	long k;

	if (!description || !*description)
		return -EINVAL;
	k = keyctl_search(KEY_SPEC_USER_KEYRING, "keyring", description, KEY_SPEC_THREAD_KEYRING);
	if (k < 0)
		return negerrno();
	if (ret_serial)
		*ret_serial = (int32_t)k;
	return 0;
}

_public_ int nfskeys_key_parse_description(const char *text, struct nfskeys_key_info *ret_info)
{
	struct nfskeys_key_info info = { 0 };
	const char *p = text, *semi;
	unsigned long long v[3];
	char *end;
	size_t len;

	if (!text || !ret_info)
		return -EINVAL;
	semi = strchr(p, ';');
	if (!semi || semi == p || (size_t)(semi - p) >= sizeof(info.type))
		return -EINVAL;
	memcpy(info.type, p, (size_t)(semi - p));
	p = semi + 1;
	for (int i = 0; i < 3; i++) {
		int base = i == 2 ? 16 : 10;
		/* Digits only: strtoull() alone would also take blanks, signs and "0x". */
		if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)) ||
		    (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p, &end, base);
		if (errno || *end != ';' || v[i] > UINT32_MAX)
			return -EINVAL;
		p = end + 1;
	}
	len = strlen(p);
	if (len >= sizeof(info.description))
		return -ENAMETOOLONG;
	memcpy(info.description, p, len + 1);
	info.uid = (uid_t)v[0];
	info.gid = (gid_t)v[1];
	info.perm = (uint32_t)v[2];
	*ret_info = info;
	return 0;
}

/* /proc/keys lists "SERIAL FLAGS USAGE EXPIRY ..." with EXPIRY "perm", "expd" or a
 * remaining time such as "59s", "10m", "3h", "2d", "4w". */
static int64_t key_expiry_from_proc(int32_t key)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/keys", "re");
	char line[512];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long serial;
		char flags[16], expiry[16];
		int usage;
		if (sscanf(line, "%lx %15s %d %15s", &serial, flags, &usage, expiry) != 4)
			continue;
		if ((int32_t)serial != key)
			continue;
		if (streq(expiry, "perm"))
			return 0;
		if (streq(expiry, "expd"))
			return (int64_t)time(NULL);
		char *end;
		long long n = strtoll(expiry, &end, 10);
		int64_t mult = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 :
			       *end == 'd' ? 86400 : *end == 'w' ? 604800 : 0;
		return mult ? (int64_t)time(NULL) + n * mult : 0;
	}
	return 0;
}

_public_ int nfskeys_key_describe(int32_t key, struct nfskeys_key_info *ret_info)
{
	_cleanup_free_ char *desc = NULL;
	struct nfskeys_key_info info;
	int r;

	if (!ret_info)
		return -EINVAL;
	if (keyctl_describe_alloc(key, &desc) < 0)
		return negerrno();
	r = nfskeys_key_parse_description(desc, &info);
	if (r < 0)
		return r;
	info.serial = key;
	info.expiry = key_expiry_from_proc(key);
	*ret_info = info;
	return 0;
}

_public_ int nfskeys_keyring_list(int32_t keyring, int32_t **ret, size_t *ret_count)
{
	void *buf = NULL;
	long n;

	if (!ret || !ret_count)
		return -EINVAL;
	n = keyctl_read_alloc(keyring, &buf);
	if (n < 0)
		return negerrno();
	*ret = buf;
	*ret_count = (size_t)n / sizeof(key_serial_t);
	return 0;
}
