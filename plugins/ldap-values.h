/* Values read from a directory, parsed without libldap (so that unit tests reach them):
 * the uidNumber/gidNumber of an entry.  RFC 2307 servers store them as unsigned
 * decimal; Active Directory keeps them in a 32-bit signed INTEGER, so an id of 2^31 or
 * more comes back negative (3000000000 as -1294967296) and is taken modulo 2^32. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The id of the len bytes at v (not NUL-terminated): decimal 0 to 4294967294, or
 * -2147483648 to -2 (AD's signed form of 2147483648 to 4294967294).  0, or -EINVAL when
 * it is not a decimal number (empty, sign alone, spaces, '+', leading zeros, a NUL) and
 * -ERANGE when it is one but no id: above 4294967294, below -2147483648, or -1 /
 * 4294967295, which is (uid_t)-1, "no id" to the kernel. */
int ldap_value_id(const char *v, size_t len, uint32_t *ret);

/* The value of id as a filter assertion for an attribute that may hold it either way:
 * "=ID" for ids below 2^31, "(|(ATTR=ID)(ATTR=SIGNED))" otherwise, so that both an RFC
 * 2307 server and AD's signed INTEGER match.  Writes "(ATTR=ID)" or the disjunction into
 * buf; -ENOSPC when it does not fit. */
int ldap_id_filter(const char *attr, uint32_t id, char *buf, size_t size);
