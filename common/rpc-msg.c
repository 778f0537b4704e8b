/* ONC RPC v2 call and reply headers over libtirpc's xdrmem streams, hand-written to the
 * RFC 5531 layout so that the header is all we parse before handing the stream to the
 * rpcgen-generated argument decoder. */
#include "macros.h"
#include "rpc-frame.h"
#include "rpc-msg.h"

enum { MSG_ACCEPTED_ = 0, MSG_DENIED_ = 1 };
enum { RPC_MISMATCH_ = 0, AUTH_ERROR_ = 1 };
enum { AUTH_NONE_ = 0 };

static bool put_u32(XDR *x, uint32_t v)
{
	return xdr_uint32_t(x, &v);
}

static bool get_u32(XDR *x, uint32_t *v)
{
	return xdr_uint32_t(x, v);
}

static bool put_auth_none(XDR *x)
{
	return put_u32(x, AUTH_NONE_) && put_u32(x, 0);
}

/* Skip an opaque_auth: flavor, then a body of at most 400 bytes. */
static int skip_auth(XDR *x)
{
	char body[RPC_AUTH_MAX];
	uint32_t flavor, len;

	if (!get_u32(x, &flavor) || !get_u32(x, &len))
		return -EBADMSG;
	if (len > RPC_AUTH_MAX)
		return -EMSGSIZE;
	if (len && !xdr_opaque(x, body, len))
		return -EBADMSG;
	return 0;
}

int rpc_call_encode(XDR *xdrs, const struct rpc_call *call)
{
	if (!put_u32(xdrs, call->xid) || !put_u32(xdrs, RPC_MSG_CALL) ||
	    !put_u32(xdrs, RPC_VERSION) || !put_u32(xdrs, call->prog) ||
	    !put_u32(xdrs, call->vers) || !put_u32(xdrs, call->proc) || !put_auth_none(xdrs) ||
	    !put_auth_none(xdrs))
		return -EMSGSIZE;
	return 0;
}

int rpc_call_decode(XDR *xdrs, struct rpc_call *call)
{
	uint32_t mtype, rpcvers;
	int r;

	memset(call, 0, sizeof(*call));
	if (!get_u32(xdrs, &call->xid))
		return -EBADMSG;
	if (!get_u32(xdrs, &mtype) || mtype != RPC_MSG_CALL)
		return -EBADMSG;
	if (!get_u32(xdrs, &rpcvers))
		return -EBADMSG;
	if (!get_u32(xdrs, &call->prog) || !get_u32(xdrs, &call->vers) ||
	    !get_u32(xdrs, &call->proc))
		return -EBADMSG;
	r = skip_auth(xdrs);
	if (r < 0)
		return r;
	r = skip_auth(xdrs);
	if (r < 0)
		return r;
	if (rpcvers != RPC_VERSION)
		return -EPROTONOSUPPORT;
	return 0;
}

int rpc_reply_encode(XDR *xdrs, const struct rpc_reply *reply)
{
	bool ok = put_u32(xdrs, reply->xid) && put_u32(xdrs, RPC_MSG_REPLY);

	switch (reply->status) {
	case RPC_STATUS_RPC_MISMATCH:
		ok = ok && put_u32(xdrs, MSG_DENIED_) && put_u32(xdrs, RPC_MISMATCH_) &&
		     put_u32(xdrs, reply->low) && put_u32(xdrs, reply->high);
		break;
	case RPC_STATUS_AUTH_ERROR:
		ok = ok && put_u32(xdrs, MSG_DENIED_) && put_u32(xdrs, AUTH_ERROR_) &&
		     put_u32(xdrs, reply->auth_stat);
		break;
	case RPC_STATUS_SUCCESS:
	case RPC_STATUS_PROG_UNAVAIL:
	case RPC_STATUS_PROC_UNAVAIL:
	case RPC_STATUS_GARBAGE_ARGS:
	case RPC_STATUS_SYSTEM_ERR:
		ok = ok && put_u32(xdrs, MSG_ACCEPTED_) && put_auth_none(xdrs) &&
		     put_u32(xdrs, reply->status);
		break;
	case RPC_STATUS_PROG_MISMATCH:
		ok = ok && put_u32(xdrs, MSG_ACCEPTED_) && put_auth_none(xdrs) &&
		     put_u32(xdrs, reply->status) && put_u32(xdrs, reply->low) &&
		     put_u32(xdrs, reply->high);
		break;
	default:
		return -EINVAL;
	}
	return ok ? 0 : -EMSGSIZE;
}

int rpc_reply_decode(XDR *xdrs, struct rpc_reply *reply)
{
	uint32_t mtype, rstat, v;
	int r;

	memset(reply, 0, sizeof(*reply));
	if (!get_u32(xdrs, &reply->xid) || !get_u32(xdrs, &mtype) || mtype != RPC_MSG_REPLY ||
	    !get_u32(xdrs, &rstat))
		return -EBADMSG;
	if (rstat == MSG_DENIED_) {
		if (!get_u32(xdrs, &v))
			return -EBADMSG;
		if (v == RPC_MISMATCH_) {
			reply->status = RPC_STATUS_RPC_MISMATCH;
			if (!get_u32(xdrs, &reply->low) || !get_u32(xdrs, &reply->high))
				return -EBADMSG;
			return 0;
		}
		if (v == AUTH_ERROR_) {
			reply->status = RPC_STATUS_AUTH_ERROR;
			return get_u32(xdrs, &reply->auth_stat) ? 0 : -EBADMSG;
		}
		return -EBADMSG;
	}
	if (rstat != MSG_ACCEPTED_)
		return -EBADMSG;
	r = skip_auth(xdrs);
	if (r < 0)
		return -EBADMSG;
	if (!get_u32(xdrs, &v) || v > RPC_STATUS_SYSTEM_ERR)
		return -EBADMSG;
	reply->status = v;
	if (v == RPC_STATUS_PROG_MISMATCH &&
	    (!get_u32(xdrs, &reply->low) || !get_u32(xdrs, &reply->high)))
		return -EBADMSG;
	return 0;
}

int rpc_status_to_errno(enum rpc_status status)
{
	switch (status) {
	case RPC_STATUS_SUCCESS:
		return 0;
	case RPC_STATUS_PROG_UNAVAIL:
	case RPC_STATUS_PROG_MISMATCH:
	case RPC_STATUS_RPC_MISMATCH:
		return -EPROTONOSUPPORT;
	case RPC_STATUS_PROC_UNAVAIL:
		return -EOPNOTSUPP;
	case RPC_STATUS_GARBAGE_ARGS:
		return -EINVAL;
	case RPC_STATUS_AUTH_ERROR:
		return -EACCES;
	case RPC_STATUS_SYSTEM_ERR:
	default:
		return -EIO;
	}
}

const char *rpc_status_to_string(enum rpc_status status)
{
	switch (status) {
	case RPC_STATUS_SUCCESS:
		return "success";
	case RPC_STATUS_PROG_UNAVAIL:
		return "program-unavailable";
	case RPC_STATUS_PROG_MISMATCH:
		return "program-version-mismatch";
	case RPC_STATUS_PROC_UNAVAIL:
		return "procedure-unavailable";
	case RPC_STATUS_GARBAGE_ARGS:
		return "garbage-arguments";
	case RPC_STATUS_SYSTEM_ERR:
		return "system-error";
	case RPC_STATUS_RPC_MISMATCH:
		return "rpc-version-mismatch";
	case RPC_STATUS_AUTH_ERROR:
		return "auth-error";
	}
	return "unknown";
}

/* Header sizes with AUTH_NONE: call 40 bytes, reply at most 32. */
#define CALL_HDR_MAX 40
#define REPLY_HDR_MAX 32

static int finish(uint8_t *buf, size_t len, size_t max, uint8_t **ret, size_t *ret_len)
{
	if (len > max)
		return -EMSGSIZE;
	rpc_frame_put_header(buf, len);
	*ret = buf;
	*ret_len = len + RPC_FRAME_HDR_LEN;
	return 0;
}

static int encode(XDR *x, bool is_call, const void *hdr, xdrproc_t body_fn, const void *body)
{
	int r = is_call ? rpc_call_encode(x, hdr) : rpc_reply_encode(x, hdr);

	if (r == 0 && body_fn && !body_fn(x, (void *)body))
		r = -EINVAL;
	return r;
}

static int build(bool is_call, const void *hdr, xdrproc_t body_fn, const void *body, size_t max,
		 uint8_t **ret, size_t *ret_len)
{
	_cleanup_free_ uint8_t *buf = NULL;
	uint8_t small[2048];
	unsigned long bsize = 0;
	size_t cap, len;
	XDR x;
	int r;

	/* Most messages are small: encode once on the stack and copy, instead of a sizing
	 * pass (xdr_sizeof) and then the real one. */
	xdrmem_create(&x, (char *)small + RPC_FRAME_HDR_LEN, sizeof(small) - RPC_FRAME_HDR_LEN,
		      XDR_ENCODE);
	r = encode(&x, is_call, hdr, body_fn, body);
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (r == 0) {
		if (len > max)
			return -EMSGSIZE;
		buf = malloc(len + RPC_FRAME_HDR_LEN);
		if (!buf)
			return -ENOMEM;
		memcpy(buf, small, len + RPC_FRAME_HDR_LEN);
		r = finish(buf, len, max, ret, ret_len);
		TAKE_PTR(buf);
		return r;
	}
	if (r != -EINVAL && r != -EMSGSIZE)
		return r;
	/* Too big for the stack buffer (or a body error, which the sized pass reports too). */
	if (body_fn) {
		bsize = xdr_sizeof(body_fn, (void *)body);
		if (bsize == 0)
			return -EINVAL;
	}
	cap = RPC_FRAME_HDR_LEN + (is_call ? CALL_HDR_MAX : REPLY_HDR_MAX) + bsize;
	if (bsize > max || cap > 0x7fffffffu)
		return -EMSGSIZE;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	xdrmem_create(&x, (char *)buf + RPC_FRAME_HDR_LEN, cap - RPC_FRAME_HDR_LEN, XDR_ENCODE);
	r = encode(&x, is_call, hdr, body_fn, body);
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (r < 0)
		return r;
	r = finish(buf, len, max, ret, ret_len);
	if (r == 0)
		TAKE_PTR(buf);
	return r;
}

int rpc_build_call(const struct rpc_call *call, xdrproc_t body_fn, const void *body, size_t max,
		   uint8_t **ret, size_t *ret_len)
{
	return build(true, call, body_fn, body, max, ret, ret_len);
}

static int encode_into(bool is_call, const void *hdr, xdrproc_t body_fn, const void *body,
		       uint8_t *buf, size_t cap, size_t *ret_len)
{
	size_t len;
	XDR x;
	int r;

	if (cap <= RPC_FRAME_HDR_LEN || cap - RPC_FRAME_HDR_LEN > 0x7fffffffu)
		return -EMSGSIZE;
	xdrmem_create(&x, (char *)buf + RPC_FRAME_HDR_LEN, cap - RPC_FRAME_HDR_LEN, XDR_ENCODE);
	r = encode(&x, is_call, hdr, body_fn, body);
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (r < 0)
		return r == -EINVAL ? -EMSGSIZE : r; /* a full buffer fails the body encoder */
	rpc_frame_put_header(buf, len);
	*ret_len = len + RPC_FRAME_HDR_LEN;
	return 0;
}

int rpc_encode_call(const struct rpc_call *call, xdrproc_t body_fn, const void *body,
		    uint8_t *buf, size_t cap, size_t *ret_len)
{
	return encode_into(true, call, body_fn, body, buf, cap, ret_len);
}

int rpc_encode_reply(const struct rpc_reply *reply, xdrproc_t body_fn, const void *body,
		     uint8_t *buf, size_t cap, size_t *ret_len)
{
	return encode_into(false, reply, body_fn, body, buf, cap, ret_len);
}

int rpc_build_reply(const struct rpc_reply *reply, xdrproc_t body_fn, const void *body,
		    size_t max, uint8_t **ret, size_t *ret_len)
{
	return build(false, reply, body_fn, body, max, ret, ret_len);
}
