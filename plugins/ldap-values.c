/* Directory values (ldap-values.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "ldap-values.h"

int ldap_value_id(const char *v, size_t len, uint32_t *ret)
{
	bool neg = len > 0 && v[0] == '-';
	size_t i = neg ? 1 : 0;
	uint64_t n = 0;

	if (i == len)
		return -EINVAL;
	/* one zero alone, never a leading one ("-0" neither) */
	if (v[i] == '0' && (len - i > 1 || neg))
		return -EINVAL;
	for (; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		if (n <= UINT32_MAX) /* past that it is out of range however long */
			n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (neg) {
		if (n > (uint64_t)INT32_MAX + 1 || n == 1)
			return -ERANGE;
		*ret = (uint32_t)((uint64_t)UINT32_MAX + 1 - n);
		return 0;
	}
	if (n >= UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)n;
	return 0;
}

int ldap_id_filter(const char *attr, uint32_t id, char *buf, size_t size)
{
	int n;

	if (id <= INT32_MAX)
		n = snprintf(buf, size, "(%s=%" PRIu32 ")", attr, id);
	else
		n = snprintf(buf, size, "(|(%s=%" PRIu32 ")(%s=%" PRId64 "))", attr, id, attr,
			     (int64_t)id - ((int64_t)UINT32_MAX + 1));
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}
