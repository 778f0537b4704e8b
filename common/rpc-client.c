/* Blocking ONC RPC client: lazy connect, random first xid, per-call deadline, xid and
 * status checks, one reconnect when a reused connection is found broken. */
#include <sys/random.h>

#include "macros.h"
#include "rpc-client.h"
#include "rpc-frame.h"
#include "rpc-msg.h"
#include "time-util.h"
#include "unix-socket.h"

struct rpc_client {
	char *path;
	uint32_t prog, vers;
	int timeout_ms;
	size_t max_msg;
	int fd;
	uint32_t xid;
};

int rpc_client_new(const char *socket_path, uint32_t prog, uint32_t vers, int timeout_ms,
		   size_t max_msg, struct rpc_client **ret_client)
{
	struct rpc_client *c;

	if (!socket_path || !ret_client || timeout_ms < 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->path = strdup(socket_path);
	if (!c->path) {
		free(c);
		return -ENOMEM;
	}
	c->prog = prog;
	c->vers = vers;
	c->timeout_ms = timeout_ms;
	c->max_msg = max_msg ? max_msg : RPC_FRAME_MAX_DEFAULT;
	c->fd = -1;
	if (getrandom(&c->xid, sizeof(c->xid), GRND_NONBLOCK) != sizeof(c->xid))
		c->xid = (uint32_t)(mono_nsec() ^ ((uint64_t)getpid() << 16));
	*ret_client = c;
	return 0;
}

void rpc_client_disconnect(struct rpc_client *client)
{
	if (client && client->fd >= 0) {
		close(client->fd);
		client->fd = -1;
	}
}

struct rpc_client *rpc_client_free(struct rpc_client *client)
{
	if (!client)
		return NULL;
	rpc_client_disconnect(client);
	free(client->path);
	free(client);
	return NULL;
}

void rpc_client_set_timeout(struct rpc_client *client, int timeout_ms)
{
	client->timeout_ms = timeout_ms;
}

uint32_t rpc_client_next_xid(const struct rpc_client *client)
{
	return client->xid;
}

/* One attempt on the current (or a new) connection.  *reused tells whether the
 * connection existed before this attempt. */
static int attempt(struct rpc_client *c, const uint8_t *msg, size_t len, int pass_fd,
		   uint32_t xid, int64_t deadline, bool *reused, uint8_t **ret_reply,
		   size_t *ret_rlen)
{
	int r;

	*reused = c->fd >= 0;
	if (c->fd < 0) {
		r = unix_connect(c->path, deadline, &c->fd);
		if (r < 0)
			return r;
	}
	/* rpc_frame_send takes the payload without the record mark. */
	r = rpc_frame_send(c->fd, msg + RPC_FRAME_HDR_LEN, len - RPC_FRAME_HDR_LEN, pass_fd,
			   deadline);
	if (r < 0)
		return r;
	return rpc_frame_recv(c->fd, c->max_msg, deadline, ret_reply, ret_rlen);
}

int rpc_client_call_fd(struct rpc_client *client, uint32_t proc, xdrproc_t args_fn,
		       const void *args, int pass_fd, xdrproc_t res_fn, void *res)
{
	struct rpc_call call = {
		.xid = client->xid++, .prog = client->prog, .vers = client->vers, .proc = proc
	};
	int64_t deadline = client->timeout_ms > 0 ?
				   mono_usec() + client->timeout_ms * USEC_PER_MSEC :
				   -1;
	_cleanup_free_ uint8_t *msg = NULL;
	_cleanup_free_ uint8_t *reply_buf = NULL;
	struct rpc_reply reply;
	size_t len, rlen;
	bool reused;
	XDR x;
	int r;

	r = rpc_build_call(&call, args_fn, args, client->max_msg, &msg, &len);
	if (r < 0)
		return r;
	r = attempt(client, msg, len, pass_fd, call.xid, deadline, &reused, &reply_buf, &rlen);
	/* A kept connection the daemon closed (restart, idle timeout): retry once on a new
	 * one.  -EPIPE from recv means closed before any reply byte. */
	if (reused && (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)) {
		rpc_client_disconnect(client);
		r = attempt(client, msg, len, pass_fd, call.xid, deadline, &reused, &reply_buf,
			    &rlen);
	}
	if (r == -EPIPE)
		r = -ECONNRESET;
	if (r < 0) {
		rpc_client_disconnect(client);
		return r;
	}

	xdrmem_create(&x, (char *)reply_buf, rlen, XDR_DECODE);
	r = rpc_reply_decode(&x, &reply);
	if (r < 0 || reply.xid != call.xid) {
		r = -EPROTO;
		goto fail;
	}
	if (reply.status != RPC_STATUS_SUCCESS) {
		r = rpc_status_to_errno(reply.status);
		xdr_destroy(&x);
		return r;
	}
	if (res_fn && !res_fn(&x, res)) {
		xdr_free(res_fn, res);
		r = -EPROTO;
		goto fail;
	}
	xdr_destroy(&x);
	return 0;
fail:
	xdr_destroy(&x);
	rpc_client_disconnect(client);
	return r;
}
