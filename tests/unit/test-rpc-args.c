/* rpc_args_decode() (common/rpc-args.h), the daemons' strict argument decoding: exact
 * encodings pass; strings with NUL bytes inside (found by fuzz-idmapd-rpc and
 * fuzz-attrd-rpc: libtirpc hands back only the part before the NUL), booleans other than
 * 0/1, non-zero padding and short arguments are refused; nothing leaks on either path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rpc-args.h"
#include "attr.h"
#include "idmap.h"

static size_t put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

/* An XDR string of len bytes copied from s, padded. */
static size_t put_str(uint8_t *p, const char *s, size_t len)
{
	size_t n = put_u32(p, (uint32_t)len);

	memcpy(p + n, s, len);
	n += len;
	while (n % 4)
		p[n++] = 0;
	return n;
}

static bool decode_lookup(const uint8_t *buf, size_t len, idmapd_lookup_args *a)
{
	XDR x;
	bool ok;

	memset(a, 0, sizeof(*a));
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	ok = rpc_args_decode(&x, (xdrproc_t)xdr_idmapd_lookup_args, a);
	xdr_destroy(&x);
	return ok;
}

static void test_idmapd_lookup(void **state)
{
	uint8_t buf[128];
	idmapd_lookup_args a;
	size_t n;

	n = put_u32(buf, 1);
	n += put_u32(buf + n, 1);
	n += put_str(buf + n, "alice@example.org", 17);
	assert_true(decode_lookup(buf, n, &a));
	assert_int_equal(a.kind, 1);
	assert_string_equal(a.key, "alice@example.org");
	xdr_free((xdrproc_t)xdr_idmapd_lookup_args, (char *)&a);

	/* "alice\0@evil.org": libtirpc alone would give "alice" */
	n = put_u32(buf, 1);
	n += put_u32(buf + n, 1);
	n += put_str(buf + n, "alice\0@evil.org", 15);
	assert_false(decode_lookup(buf, n, &a));
	assert_null(a.key); /* freed */

	/* truncated */
	assert_false(decode_lookup(buf, n - 8, &a));
	/* an empty key is well-formed XDR (the daemon refuses it with -EINVAL) */
	n = put_u32(buf, 1);
	n += put_u32(buf + n, 0);
	n += put_str(buf + n, "", 0);
	assert_true(decode_lookup(buf, n, &a));
	assert_string_equal(a.key, "");
	xdr_free((xdrproc_t)xdr_idmapd_lookup_args, (char *)&a);
}

static void test_attrd_set(void **state)
{
	uint8_t buf[256];
	attrd_set_args a;
	size_t n;
	XDR x;

	n = put_u32(buf, 2);
	n += put_str(buf + n, "cache", 5);
	n += put_str(buf + n, "full", 4);
	n += put_str(buf + n, "user.x", 6);
	n += put_str(buf + n, "a\0\x01", 3); /* control byte hidden behind a NUL */
	memset(&a, 0, sizeof(a));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	assert_false(rpc_args_decode(&x, (xdrproc_t)xdr_attrd_set_args, &a));
	xdr_destroy(&x);
	assert_null(a.attrs.attrs_val);

	n = put_u32(buf, 1);
	n += put_str(buf + n, "cache", 5);
	n += put_str(buf + n, "full", 4);
	memset(&a, 0, sizeof(a));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	assert_true(rpc_args_decode(&x, (xdrproc_t)xdr_attrd_set_args, &a));
	assert_int_equal(xdr_getpos(&x), n);
	xdr_destroy(&x);
	assert_int_equal(a.attrs.attrs_len, 1);
	assert_string_equal(a.attrs.attrs_val[0].value, "full");
	xdr_free((xdrproc_t)xdr_attrd_set_args, (char *)&a);
}

/* Booleans other than 0/1 and non-zero padding are not the XDR encoding either. */
static void test_noncanonical(void **state)
{
	uint8_t buf[64];
	attrd_unset_args u;
	idmapd_lookup_args a;
	size_t n;
	XDR x;

	n = put_u32(buf, 2); /* all = 2 */
	n += put_u32(buf + n, 0);
	memset(&u, 0, sizeof(u));
	xdrmem_create(&x, (char *)buf, (u_int)n, XDR_DECODE);
	assert_false(rpc_args_decode(&x, (xdrproc_t)xdr_attrd_unset_args, &u));
	xdr_destroy(&x);

	n = put_u32(buf, 1);
	n += put_u32(buf + n, 0);
	n += put_str(buf + n, "abc", 3);
	assert_true(decode_lookup(buf, n, &a));
	xdr_free((xdrproc_t)xdr_idmapd_lookup_args, (char *)&a);
	buf[n - 1] = 0x55; /* the pad byte after "abc" */
	assert_false(decode_lookup(buf, n, &a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idmapd_lookup),
		cmocka_unit_test(test_attrd_set),
		cmocka_unit_test(test_noncanonical),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
