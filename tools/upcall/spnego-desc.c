/* cifs.spnego key descriptions (tools/upcall/spnego-desc.h): a pure parser, no I/O, shared by
 * nfskeys-upcall-full, the unit test and the fuzz target.  The kernel writes
 * ver=0x%x;host=%s;ip4=%pI4|ip6=%pI6;sec=...;uid=0x%x;creduid=0x%x[;user=%s];pid=0x%x
 * and, since 2024, ;upcall_target=mount|app (fs/smb/client/cifs_spnego.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "spnego-desc.h"

enum {
	F_VER = 1u << 0,
	F_HOST = 1u << 1,
	F_IP = 1u << 2,
	F_SEC = 1u << 3,
	F_UID = 1u << 4,
	F_CREDUID = 1u << 5,
	F_USER = 1u << 6,
	F_PID = 1u << 7,
	F_TARGET = 1u << 8,
	F_REQUIRED = F_VER | F_HOST | F_IP | F_SEC | F_UID | F_CREDUID | F_PID,
};

const char *spnego_sec_name(enum spnego_sec sec)
{
	switch (sec) {
	case SPNEGO_SEC_KRB5:
		return "krb5";
	case SPNEGO_SEC_MSKRB5:
		return "mskrb5";
	case SPNEGO_SEC_IAKERB:
		return "iakerb";
	}
	return "?";
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "0x" and 1 to 8 hex digits, as the kernel's %x after a literal 0x. */
static int parse_hex32(const char *v, size_t len, uint32_t *ret)
{
	uint32_t x = 0;

	if (len < 3 || len > 10 || v[0] != '0' || v[1] != 'x')
		return -EINVAL;
	for (size_t i = 2; i < len; i++) {
		char c = v[i];

		if (!is_hex(c))
			return -EINVAL;
		x = x << 4 | (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	*ret = x;
	return 0;
}

static bool eq(const char *v, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(v, lit, len) == 0;
}

/* A host the kernel takes from the UNC: a DNS or NetBIOS name or an address literal.
 * Nothing that could change the principal built from it (no '@', '/', blanks). */
static bool valid_host(const char *v, size_t len)
{
	if (len == 0 || len > SPNEGO_HOST_MAX || v[0] == '.' || v[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = v[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_' || c == ':'))
			return false;
	}
	return true;
}

/* A user name: printable bytes (UTF-8 allowed), no blanks at the ends, no controls. */
static bool valid_user(const char *v, size_t len)
{
	if (len == 0 || len > SPNEGO_USER_MAX || v[0] == ' ' || v[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	return true;
}

static bool valid_name(const char *n, size_t len)
{
	if (len == 0 || len > 32)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '_'))
			return false;
	return true;
}

static int fail(const char **reason, const char *why)
{
	if (reason)
		*reason = why;
	return -EINVAL;
}

int spnego_desc_parse(const char *desc, struct spnego_desc *ret, const char **reason)
{
	struct spnego_desc d = { 0 };
	unsigned have = 0;
	const char *p, *end;
	size_t total;

	if (!desc || !ret)
		return fail(reason, "no description");
	total = strnlen(desc, SPNEGO_DESC_MAX + 1);
	if (total == 0)
		return fail(reason, "empty description");
	if (total > SPNEGO_DESC_MAX)
		return fail(reason, "description longer than the kernel writes");

	for (p = desc, end = desc + total; p <= end; p++) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *fe = semi ? semi : end, *eqs, *v;
		size_t nlen, vlen;
		unsigned bit = 0;
		char ip[INET6_ADDRSTRLEN + 1];

		if (fe == p)
			return fail(reason, "empty field");
		eqs = memchr(p, '=', (size_t)(fe - p));
		if (!eqs)
			return fail(reason, "field without '='");
		nlen = (size_t)(eqs - p);
		v = eqs + 1;
		vlen = (size_t)(fe - v);
		if (!valid_name(p, nlen))
			return fail(reason, "bad field name");

		if (eq(p, nlen, "ver")) {
			uint32_t x;

			bit = F_VER;
			if (parse_hex32(v, vlen, &x) < 0)
				return fail(reason, "ver= is not 0x<hex>");
			if (x != SPNEGO_DESC_VERSION)
				return fail(reason, "unsupported upcall version (not 0x2)");
			d.version = x;
		} else if (eq(p, nlen, "host")) {
			bit = F_HOST;
			if (!valid_host(v, vlen))
				return fail(reason, "bad host=");
			memcpy(d.host, v, vlen);
			d.host[vlen] = 0;
		} else if (eq(p, nlen, "ip4") || eq(p, nlen, "ip6")) {
			bool v6 = p[2] == '6';

			bit = F_IP;
			if (vlen == 0 || vlen > INET6_ADDRSTRLEN)
				return fail(reason, "bad ip4=/ip6=");
			memcpy(ip, v, vlen);
			ip[vlen] = 0;
			if (have & bit)
				return fail(reason, "more than one address field");
			if (inet_pton(v6 ? AF_INET6 : AF_INET, ip, v6 ? (void *)&d.addr.v6 :
								    (void *)&d.addr.v4) != 1)
				return fail(reason, v6 ? "bad ip6= address" : "bad ip4= address");
			d.family = v6 ? AF_INET6 : AF_INET;
		} else if (eq(p, nlen, "sec")) {
			bit = F_SEC;
			if (eq(v, vlen, "krb5"))
				d.sec = SPNEGO_SEC_KRB5;
			else if (eq(v, vlen, "mskrb5"))
				d.sec = SPNEGO_SEC_MSKRB5;
			else if (eq(v, vlen, "iakerb"))
				d.sec = SPNEGO_SEC_IAKERB;
			else
				return fail(reason, "sec= is not krb5, mskrb5 or iakerb");
		} else if (eq(p, nlen, "uid")) {
			bit = F_UID;
			if (parse_hex32(v, vlen, &d.uid) < 0)
				return fail(reason, "uid= is not 0x<hex>");
		} else if (eq(p, nlen, "creduid")) {
			bit = F_CREDUID;
			if (parse_hex32(v, vlen, &d.creduid) < 0)
				return fail(reason, "creduid= is not 0x<hex>");
		} else if (eq(p, nlen, "pid")) {
			bit = F_PID;
			if (parse_hex32(v, vlen, &d.pid) < 0)
				return fail(reason, "pid= is not 0x<hex>");
		} else if (eq(p, nlen, "user")) {
			bit = F_USER;
			if (!valid_user(v, vlen))
				return fail(reason, "bad user=");
			memcpy(d.user, v, vlen);
			d.user[vlen] = 0;
			d.have_user = true;
		} else if (eq(p, nlen, "upcall_target")) {
			bit = F_TARGET;
			if (eq(v, vlen, "mount"))
				d.target = SPNEGO_TARGET_MOUNT;
			else if (eq(v, vlen, "app"))
				d.target = SPNEGO_TARGET_APP;
			else
				return fail(reason, "upcall_target= is not mount or app");
		} else {
			/* a field of a later kernel: skipped, but bounded */
			if (++d.unknown > SPNEGO_UNKNOWN_MAX)
				return fail(reason, "too many unknown fields");
			if (vlen > SPNEGO_UNKNOWN_VALUE_MAX)
				return fail(reason, "unknown field too long");
			for (size_t i = 0; i < vlen; i++)
				if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
					return fail(reason, "control character in a field");
		}
		if (bit) {
			if (have & bit)
				return fail(reason, "field given twice");
			have |= bit;
		}
		if (!semi)
			break;
		p = semi;
		if (semi + 1 == end)
			return fail(reason, "empty field");
	}
	if ((have & F_REQUIRED) != F_REQUIRED) {
		if (!(have & F_VER))
			return fail(reason, "no ver=");
		if (!(have & F_HOST))
			return fail(reason, "no host=");
		if (!(have & F_IP))
			return fail(reason, "no ip4= or ip6=");
		if (!(have & F_SEC))
			return fail(reason, "no sec=");
		if (!(have & F_UID))
			return fail(reason, "no uid=");
		if (!(have & F_CREDUID))
			return fail(reason, "no creduid=");
		return fail(reason, "no pid=");
	}
	*ret = d;
	return 0;
}
