/* Blocking ONC RPC client: lazy connect, random first xid, per-call deadline, xid and
 * status checks, one reconnect when a reused connection is found broken; one send() and
 * usually one recv() per call, no allocation per call; pipelined batches of calls. */
#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>

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
	int applied_timeout_ms; /* SO_RCVTIMEO/SO_SNDTIMEO of the open connection */
	/* Kept across calls, so a call allocates nothing: the encoded request(s), and
	 * received bytes (replies are consumed record by record from in_off). */
	uint8_t *out;
	size_t out_cap;
	uint8_t *in;
	size_t in_cap, in_off, in_len;
};

#define BUF_INITIAL 2048
#define BATCH_WINDOW 64 /* calls in flight at once in rpc_client_call_batch() */

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
	c->out_cap = c->in_cap = BUF_INITIAL;
	c->out = malloc(c->out_cap);
	c->in = malloc(c->in_cap);
	if (!c->out || !c->in) {
		free(c->out);
		free(c->in);
		free(c->path);
		free(c);
		return -ENOMEM;
	}
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
	if (client)
		client->in_off = client->in_len = 0; /* never match a late reply */
}

struct rpc_client *rpc_client_free(struct rpc_client *client)
{
	if (!client)
		return NULL;
	rpc_client_disconnect(client);
	free(client->path);
	free(client->out);
	free(client->in);
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

/* Connect when not connected.  The socket is made blocking with SO_RCVTIMEO/SO_SNDTIMEO
 * set to the call timeout, so that a call is one send() and (usually) one recv(): no
 * poll() and no peek.  Each recv() is bounded by the timeout and the deadline is checked
 * between partial reads, so a call never waits much beyond its deadline. */
static int ensure_connected(struct rpc_client *c, int64_t deadline, bool *reused)
{
	struct timeval tv;
	int r;

	*reused = c->fd >= 0;
	if (c->fd >= 0 && c->applied_timeout_ms == c->timeout_ms)
		return 0;
	if (c->fd < 0) {
		r = unix_connect(c->path, deadline, &c->fd);
		if (r < 0)
			return r;
		c->in_off = c->in_len = 0;
		if (fcntl(c->fd, F_SETFL, 0) < 0) /* O_NONBLOCK off (it was the only flag) */
			goto fail;
	}
	tv.tv_sec = c->timeout_ms > 0 ? c->timeout_ms / 1000 : 0;
	tv.tv_usec = c->timeout_ms > 0 ? (c->timeout_ms % 1000) * 1000 : 0;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		goto fail;
	c->applied_timeout_ms = c->timeout_ms;
	return 0;
fail:
	r = negerrno();
	rpc_client_disconnect(c);
	return r;
}

static int send_all(struct rpc_client *c, const uint8_t *buf, size_t len, int pass_fd,
		    int64_t deadline)
{
	size_t done = 0;

	if (pass_fd >= 0) /* the descriptor travels with the first bytes */
		return rpc_frame_send(c->fd, buf + RPC_FRAME_HDR_LEN, len - RPC_FRAME_HDR_LEN,
				      pass_fd, deadline);
	while (done < len) {
		ssize_t n = send(c->fd, buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -ETIMEDOUT;
		if (n < 0)
			return negerrno();
		done += n;
		if (done < len && deadline >= 0 && mono_usec() >= deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

/* The next complete record in the receive buffer, reading as needed (all that is
 * available, in one recv() usually).  *ret_msg points into the buffer and stays valid
 * until consume().  -EPIPE when the peer closed before any byte of it (first: nothing
 * of this call was received yet), -ECONNRESET when it closed mid-record. */
static int recv_record(struct rpc_client *c, int64_t deadline, bool first,
		       const uint8_t **ret_msg, size_t *ret_len)
{
	for (;;) {
		size_t have = c->in_len - c->in_off, need = RPC_FRAME_HDR_LEN + 4096;
		uint32_t len = 0;
		ssize_t n;
		int r;

		if (have >= RPC_FRAME_HDR_LEN) {
			r = rpc_frame_get_header(c->in + c->in_off, c->max_msg, &len);
			if (r < 0)
				return r;
			if (have >= RPC_FRAME_HDR_LEN + (size_t)len) {
				*ret_msg = c->in + c->in_off + RPC_FRAME_HDR_LEN;
				*ret_len = len;
				return 0;
			}
			need = MAX(need, RPC_FRAME_HDR_LEN + (size_t)len);
		}
		if (c->in_off > 0) {
			memmove(c->in, c->in + c->in_off, have);
			c->in_off = 0;
			c->in_len = have;
		}
		if (c->in_cap < need) {
			uint8_t *nb = realloc(c->in, need);

			if (!nb)
				return -ENOMEM;
			c->in = nb;
			c->in_cap = need;
		}
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -ETIMEDOUT;
		if (n < 0)
			return negerrno();
		if (n == 0)
			return first && have == 0 ? -EPIPE : -ECONNRESET;
		c->in_len += n;
		first = false;
		if (deadline >= 0 && mono_usec() >= deadline &&
		    c->in_len < RPC_FRAME_HDR_LEN + (size_t)len)
			return -ETIMEDOUT;
	}
}

static void consume(struct rpc_client *c, size_t len)
{
	c->in_off += RPC_FRAME_HDR_LEN + len;
	if (c->in_off >= c->in_len)
		c->in_off = c->in_len = 0;
}

/* Encode one call at c->out + off, growing the buffer as needed. */
static int encode_at(struct rpc_client *c, size_t off, const struct rpc_call *call,
		     xdrproc_t args_fn, const void *args, size_t *ret_len)
{
	for (;;) {
		size_t room = c->out_cap - off;
		uint8_t *nb;
		int r = rpc_encode_call(call, args_fn, args, c->out + off, room, ret_len);

		if (r == 0 && *ret_len - RPC_FRAME_HDR_LEN > c->max_msg)
			return -EMSGSIZE;
		if (r != -EMSGSIZE)
			return r;
		if (room >= c->max_msg + RPC_FRAME_HDR_LEN) {
			/* Too big, or the encoder failed: let the sizing path say which. */
			_cleanup_free_ uint8_t *tmp = NULL;
			size_t l;

			r = rpc_build_call(call, args_fn, args, c->max_msg, &tmp, &l);
			return r < 0 ? r : -EMSGSIZE;
		}
		nb = realloc(c->out, MAX(c->out_cap * 2, off + c->max_msg + RPC_FRAME_HDR_LEN));
		if (!nb)
			return -ENOMEM;
		c->out_cap = MAX(c->out_cap * 2, off + c->max_msg + RPC_FRAME_HDR_LEN);
		c->out = nb;
	}
}

/* Decode one reply record to one of k calls with xids base..base+k-1 not yet answered
 * (bit set in seen): *ret_idx gets which, *ret_status its mapped status, and on SUCCESS
 * the results go to res + idx * stride.  -EPROTO for anything else. */
static int decode_reply(const uint8_t *msg, size_t len, uint32_t base, size_t k, uint64_t seen,
			xdrproc_t res_fn, void *res, size_t stride, uint32_t *ret_idx,
			int *ret_status)
{
	struct rpc_reply reply;
	uint32_t idx;
	XDR x;
	int r;

	xdrmem_create(&x, (char *)msg, len, XDR_DECODE);
	r = rpc_reply_decode(&x, &reply);
	idx = reply.xid - base;
	if (r < 0 || idx >= k || (seen & (UINT64_C(1) << idx))) {
		xdr_destroy(&x);
		return -EPROTO;
	}
	if (reply.status == RPC_STATUS_SUCCESS && res_fn) {
		void *dst = (uint8_t *)res + idx * stride;

		if (!res_fn(&x, dst)) {
			xdr_free(res_fn, dst);
			xdr_destroy(&x);
			return -EPROTO;
		}
	}
	xdr_destroy(&x);
	*ret_idx = idx;
	*ret_status = rpc_status_to_errno(reply.status);
	return 0;
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
	const uint8_t *msg;
	size_t len, rlen;
	uint32_t idx;
	bool reused;
	int r, status;

	r = encode_at(client, 0, &call, args_fn, args, &len);
	if (r < 0)
		return r;
	for (int tries = 0;; tries++) {
		r = ensure_connected(client, deadline, &reused);
		if (r == 0)
			r = send_all(client, client->out, len, pass_fd, deadline);
		if (r == 0)
			r = recv_record(client, deadline, true, &msg, &rlen);
		/* A kept connection the daemon closed (restart, idle timeout): retry once on
		 * a new one.  -EPIPE from recv means closed before any reply byte. */
		if (tries == 0 && reused && (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)) {
			rpc_client_disconnect(client);
			continue;
		}
		break;
	}
	if (r == -EPIPE)
		r = -ECONNRESET;
	if (r < 0) {
		rpc_client_disconnect(client);
		return r;
	}
	r = decode_reply(msg, rlen, call.xid, 1, 0, res_fn, res, 0, &idx, &status);
	if (r < 0) {
		rpc_client_disconnect(client);
		return r;
	}
	consume(client, rlen);
	return status;
}

int rpc_client_call_batch(struct rpc_client *client, uint32_t proc, xdrproc_t args_fn,
			  const void *args, size_t args_stride, size_t n, xdrproc_t res_fn,
			  void *res, size_t res_stride, int *ret_status)
{
	size_t done = 0;
	int r = 0;

	if (n > 0 && (!ret_status || (args_fn && !args) || (res_fn && !res)))
		return -EINVAL;
	while (done < n) {
		size_t k = MIN(n - done, (size_t)BATCH_WINDOW), len = 0, got = 0;
		uint32_t base = client->xid;
		int64_t deadline = client->timeout_ms > 0 ?
					   mono_usec() + client->timeout_ms * USEC_PER_MSEC :
					   -1;
		uint64_t seen = 0;
		bool reused;

		for (size_t i = 0; i < k; i++) {
			struct rpc_call call = { .xid = base + (uint32_t)i, .prog = client->prog,
						 .vers = client->vers, .proc = proc };
			size_t l;

			r = encode_at(client, len, &call, args_fn,
				      args_fn ? (const uint8_t *)args + (done + i) * args_stride :
						NULL,
				      &l);
			if (r < 0)
				goto fail;
			len += l;
		}
		client->xid += (uint32_t)k;
		for (int tries = 0;; tries++) {
			r = ensure_connected(client, deadline, &reused);
			if (r == 0)
				r = send_all(client, client->out, len, -1, deadline);
			while (r == 0 && got < k) {
				const uint8_t *msg;
				size_t rlen;
				uint32_t idx;
				int st;

				r = recv_record(client, deadline, got == 0, &msg, &rlen);
				if (r < 0)
					break;
				r = decode_reply(msg, rlen, base, k, seen, res_fn,
						 res_fn ? (uint8_t *)res + done * res_stride : NULL,
						 res_stride, &idx, &st);
				if (r < 0)
					break;
				consume(client, rlen);
				seen |= UINT64_C(1) << idx;
				ret_status[done + idx] = st;
				got++;
			}
			if (tries == 0 && reused && got == 0 &&
			    (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)) {
				rpc_client_disconnect(client);
				continue;
			}
			break;
		}
		if (r < 0) {
			/* Results decoded so far in this window are released below. */
			for (size_t i = 0; i < k; i++)
				if ((seen & (UINT64_C(1) << i)) && ret_status[done + i] == 0 && res_fn)
					xdr_free(res_fn, (uint8_t *)res + (done + i) * res_stride);
			goto fail;
		}
		done += k;
	}
	return 0;
fail:
	if (r == -EPIPE)
		r = -ECONNRESET;
	rpc_client_disconnect(client);
	for (size_t i = 0; i < done; i++)
		if (ret_status[i] == 0 && res_fn)
			xdr_free(res_fn, (uint8_t *)res + i * res_stride);
	return r;
}

/* ---- PING and RELOAD, the same in both daemons' protocols */

#define TEXT_MAX 4096 /* longer than any daemon's release or message */

struct ping_head {
	char *release;
	uint32_t pid;
	uint64_t generation, extra;
};

static bool_t xdr_ping_head(XDR *x, struct ping_head *p)
{
	return xdr_string(x, &p->release, TEXT_MAX) && xdr_uint32_t(x, &p->pid) &&
	       xdr_uint64_t(x, &p->generation) && xdr_uint64_t(x, &p->extra);
}

struct reload_res {
	int status;
	char *message;
	uint64_t generation;
};

static bool_t xdr_reload_res(XDR *x, struct reload_res *r)
{
	return xdr_int(x, &r->status) && xdr_string(x, &r->message, TEXT_MAX) &&
	       xdr_uint64_t(x, &r->generation);
}

static void copy_text(char *dst, size_t size, const char *src)
{
	if (dst && size)
		snprintf(dst, size, "%s", src ? src : "");
}

int rpc_client_ping(struct rpc_client *client, uint32_t proc, char *release,
		    size_t release_size, uint32_t *ret_pid, uint64_t *ret_generation,
		    uint64_t *ret_extra)
{
	struct ping_head res = {};
	int r;

	r = rpc_client_call(client, proc, NULL, NULL, (xdrproc_t)xdr_ping_head, &res);
	if (r < 0)
		return r;
	copy_text(release, release_size, res.release);
	if (ret_pid)
		*ret_pid = res.pid;
	if (ret_generation)
		*ret_generation = res.generation;
	if (ret_extra)
		*ret_extra = res.extra;
	xdr_free((xdrproc_t)xdr_ping_head, (char *)&res);
	return 0;
}

int rpc_client_reload(struct rpc_client *client, uint32_t proc, char *message,
		      size_t message_size, uint64_t *ret_generation)
{
	struct reload_res res = {};
	int r;

	r = rpc_client_call(client, proc, NULL, NULL, (xdrproc_t)xdr_reload_res, &res);
	if (r < 0)
		return r;
	copy_text(message, message_size, res.message);
	r = res.status < 0 ? res.status : 0;
	if (r == 0 && ret_generation)
		*ret_generation = res.generation;
	xdr_free((xdrproc_t)xdr_reload_res, (char *)&res);
	return r;
}
