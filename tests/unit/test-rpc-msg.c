/* ONC RPC v2 headers: ours must agree with libtirpc's own xdr_callmsg / xdr_replymsg in
 * both directions, and bad headers must be refused with the documented errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <rpc/rpc.h>
/* <rpc/rpc.h> brings sys/param.h's MIN/MAX; ours replace them. */
#undef MIN
#undef MAX

#include "macros.h"
#include "rpc-frame.h"
#include "rpc-msg.h"

static void test_call_vs_tirpc(void **state)
{
	char buf[256];
	struct rpc_call c = { .xid = 0xdeadbeef, .prog = 0x20000123, .vers = 3, .proc = 7 };
	struct rpc_call back;
	struct rpc_msg m;
	uint32_t arg = 42, arg2 = 0;
	XDR x;

	/* ours → tirpc */
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_int_equal(rpc_call_encode(&x, &c), 0);
	assert_true(xdr_uint32_t(&x, &arg));
	assert_int_equal(xdr_getpos(&x), 44);
	xdr_destroy(&x);
	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_true(xdr_callmsg(&x, &m));
	assert_int_equal(m.rm_xid, 0xdeadbeef);
	assert_int_equal(m.rm_direction, CALL);
	assert_int_equal(m.rm_call.cb_rpcvers, 2);
	assert_int_equal(m.rm_call.cb_prog, 0x20000123);
	assert_int_equal(m.rm_call.cb_vers, 3);
	assert_int_equal(m.rm_call.cb_proc, 7);
	assert_int_equal(m.rm_call.cb_cred.oa_flavor, AUTH_NONE);
	assert_true(xdr_uint32_t(&x, &arg2));
	assert_int_equal(arg2, 42);
	xdr_destroy(&x);

	/* tirpc (with an AUTH_SYS credential) → ours: the credential is skipped */
	{
		char cred[] = "\0\0\0\x01" "\0\0\0\x04" "host" "\0\0\0\0" "\0\0\0\0" "\0\0\0\0";
		struct rpc_msg t = { .rm_xid = 99, .rm_direction = CALL };

		t.rm_call.cb_rpcvers = 2;
		t.rm_call.cb_prog = 5;
		t.rm_call.cb_vers = 6;
		t.rm_call.cb_proc = 1;
		t.rm_call.cb_cred.oa_flavor = AUTH_SYS;
		t.rm_call.cb_cred.oa_base = cred;
		t.rm_call.cb_cred.oa_length = sizeof(cred) - 1;
		t.rm_call.cb_verf.oa_flavor = AUTH_NONE;
		xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
		assert_true(xdr_callmsg(&x, &t));
		arg = 7;
		assert_true(xdr_uint32_t(&x, &arg));
		xdr_destroy(&x);
		xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
		assert_int_equal(rpc_call_decode(&x, &back), 0);
		assert_int_equal(back.xid, 99);
		assert_int_equal(back.prog, 5);
		assert_int_equal(back.vers, 6);
		assert_int_equal(back.proc, 1);
		assert_true(xdr_uint32_t(&x, &arg2));
		assert_int_equal(arg2, 7);
		xdr_destroy(&x);
	}
}

static bool_t no_results(XDR *x, void *p)
{
	return TRUE;
}

static void check_reply_vs_tirpc(const struct rpc_reply *r, enum reply_stat rs, int stat)
{
	char buf[256];
	struct rpc_msg m;
	XDR x;

	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_int_equal(rpc_reply_encode(&x, r), 0);
	xdr_destroy(&x);
	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_results.proc = (xdrproc_t)no_results;
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_true(xdr_replymsg(&x, &m));
	xdr_destroy(&x);
	assert_int_equal(m.rm_xid, r->xid);
	assert_int_equal(m.rm_direction, REPLY);
	assert_int_equal(m.rm_reply.rp_stat, rs);
	if (rs == MSG_ACCEPTED) {
		assert_int_equal(m.acpted_rply.ar_stat, stat);
		if (stat == PROG_MISMATCH) {
			assert_int_equal(m.acpted_rply.ar_vers.low, r->low);
			assert_int_equal(m.acpted_rply.ar_vers.high, r->high);
		}
	} else {
		assert_int_equal(m.rjcted_rply.rj_stat, stat);
		if (stat == AUTH_ERROR)
			assert_int_equal(m.rjcted_rply.rj_why, r->auth_stat);
		else {
			assert_int_equal(m.rjcted_rply.rj_vers.low, r->low);
			assert_int_equal(m.rjcted_rply.rj_vers.high, r->high);
		}
	}
}

static void test_reply_vs_tirpc(void **state)
{
	struct rpc_reply r = { .xid = 1, .status = RPC_STATUS_SUCCESS };

	check_reply_vs_tirpc(&r, MSG_ACCEPTED, SUCCESS);
	r = (struct rpc_reply){ .xid = 2, .status = RPC_STATUS_PROG_MISMATCH, .low = 1, .high = 3 };
	check_reply_vs_tirpc(&r, MSG_ACCEPTED, PROG_MISMATCH);
	r = (struct rpc_reply){ .xid = 3, .status = RPC_STATUS_GARBAGE_ARGS };
	check_reply_vs_tirpc(&r, MSG_ACCEPTED, GARBAGE_ARGS);
	r = (struct rpc_reply){ .xid = 4, .status = RPC_STATUS_AUTH_ERROR, .auth_stat = 5 };
	check_reply_vs_tirpc(&r, MSG_DENIED, AUTH_ERROR);
	r = (struct rpc_reply){ .xid = 5, .status = RPC_STATUS_RPC_MISMATCH, .low = 2, .high = 2 };
	check_reply_vs_tirpc(&r, MSG_DENIED, RPC_MISMATCH);
}

static void test_reply_roundtrip(void **state)
{
	const enum rpc_status all[] = {
		RPC_STATUS_SUCCESS,	  RPC_STATUS_PROG_UNAVAIL, RPC_STATUS_PROG_MISMATCH,
		RPC_STATUS_PROC_UNAVAIL,  RPC_STATUS_GARBAGE_ARGS, RPC_STATUS_SYSTEM_ERR,
		RPC_STATUS_RPC_MISMATCH, RPC_STATUS_AUTH_ERROR,
	};

	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		struct rpc_reply r = { .xid = 77 + i, .status = all[i], .low = 1, .high = 2,
				       .auth_stat = 5 };
		struct rpc_reply back;
		char buf[64];
		XDR x;

		xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
		assert_int_equal(rpc_reply_encode(&x, &r), 0);
		xdr_destroy(&x);
		xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
		assert_int_equal(rpc_reply_decode(&x, &back), 0);
		xdr_destroy(&x);
		assert_int_equal(back.xid, r.xid);
		assert_int_equal(back.status, r.status);
		assert_string_not_equal(rpc_status_to_string(back.status), "unknown");
		if (all[i] == RPC_STATUS_SUCCESS)
			assert_int_equal(rpc_status_to_errno(all[i]), 0);
		else
			assert_true(rpc_status_to_errno(all[i]) < 0);
	}
	assert_int_equal(rpc_status_to_errno(RPC_STATUS_AUTH_ERROR), -EACCES);
	assert_int_equal(rpc_status_to_errno(RPC_STATUS_PROC_UNAVAIL), -EOPNOTSUPP);
}

static int decode_words(const uint32_t *w, size_t n, struct rpc_call *c)
{
	char buf[512];
	XDR x;
	int r;

	for (size_t i = 0; i < n; i++) {
		uint32_t be = htonl(w[i]);

		memcpy(buf + 4 * i, &be, 4);
	}
	xdrmem_create(&x, buf, 4 * n, XDR_DECODE);
	r = rpc_call_decode(&x, c);
	xdr_destroy(&x);
	return r;
}

static void test_call_bad(void **state)
{
	struct rpc_call c;
	const uint32_t good[] = { 9, 0, 2, 100, 1, 0, 0, 0, 0, 0 };
	const uint32_t v3[] = { 9, 0, 3, 100, 1, 0, 0, 0, 0, 0 };
	const uint32_t reply[] = { 9, 1, 2, 100, 1, 0, 0, 0, 0, 0 };
	const uint32_t bigauth[] = { 9, 0, 2, 100, 1, 0, 1, 401 };

	assert_int_equal(decode_words(good, ARRAY_SIZE(good), &c), 0);
	assert_int_equal(decode_words(v3, ARRAY_SIZE(v3), &c), -EPROTONOSUPPORT);
	assert_int_equal(c.xid, 9);
	assert_int_equal(decode_words(reply, ARRAY_SIZE(reply), &c), -EBADMSG);
	assert_int_equal(decode_words(bigauth, ARRAY_SIZE(bigauth), &c), -EMSGSIZE);
	/* truncated at every length */
	for (size_t n = 0; n < ARRAY_SIZE(good); n++) {
		assert_int_equal(decode_words(good, n, &c), -EBADMSG);
		if (n >= 1)
			assert_int_equal(c.xid, 9);
	}
}

static void test_build(void **state)
{
	struct rpc_call c = { .xid = 5, .prog = 1, .vers = 1, .proc = 1 };
	struct rpc_reply r = { .xid = 5, .status = RPC_STATUS_SUCCESS };
	uint8_t *buf = NULL;
	size_t len = 0;
	uint32_t v = 0x01020304, flen;
	char *s = "hello";

	assert_int_equal(rpc_build_call(&c, (xdrproc_t)xdr_uint32_t, &v, 1000, &buf, &len), 0);
	assert_int_equal(len, 4 + 40 + 4);
	assert_int_equal(rpc_frame_get_header(buf, 1000, &flen), 0);
	assert_int_equal(flen, 44);
	assert_memory_equal(buf + 44, "\x01\x02\x03\x04", 4);
	free(buf);
	assert_int_equal(rpc_build_reply(&r, (xdrproc_t)xdr_wrapstring, &s, 1000, &buf, &len), 0);
	assert_int_equal(len, 4 + 24 + 4 + 8);
	free(buf);
	/* the cap covers header and body */
	assert_int_equal(rpc_build_call(&c, (xdrproc_t)xdr_uint32_t, &v, 43, &buf, &len),
			 -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_vs_tirpc),
		cmocka_unit_test(test_reply_vs_tirpc),
		cmocka_unit_test(test_reply_roundtrip),
		cmocka_unit_test(test_call_bad),
		cmocka_unit_test(test_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
