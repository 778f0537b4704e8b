/* The RPC server's answers (rpc-server.c is the rest): a request's reply or error, the
 * descriptor passed with it, the output buffer of a connection with its writes, and the
 * connection's close and last reference. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macros.h"
#include "rpc-frame.h"
#include "rpc-server.h"
#include "rpc-server-private.h"

#define REPLY_INLINE 512 /* room needed at the end of the output buffer to encode there */

void rpc_conn_unref(struct rpc_conn *c)
{
	if (--c->refs > 0)
		return;
	for (size_t i = 0; i < c->nfds; i++)
		close(c->fds[i].fd); /* O_PATH: close() runs no file system code */
	while (c->free_reqs) {
		struct rpc_request *req = c->free_reqs;

		c->free_reqs = req->next_free;
		free(req);
	}
	rpc_framer_done(&c->in);
	free(c->out);
	free(c);
}

void rpc_server_accept_resume(struct rpc_server *srv)
{
	srv->accept_paused = false;
	evloop_timer_cancel(srv->resume);
	(void)evloop_io_set_events(srv->listen_io, EPOLLIN);
}

void rpc_conn_close(struct rpc_conn *c)
{
	struct rpc_server *srv = c->srv;

	if (c->closed)
		return;
	c->closed = true;
	evloop_io_free(c->io);
	c->io = NULL;
	evloop_timer_free(c->idle);
	c->idle = NULL;
	evloop_timer_free(c->kick);
	c->kick = NULL;
	close(c->fd);
	c->fd = -1;
	if (srv) {
		if (c->prev)
			c->prev->next = c->next;
		else
			srv->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		srv->st.current--;
		if (srv->accept_paused) /* a descriptor came free */
			rpc_server_accept_resume(srv);
		if (c->inflight && srv->lim.conn_closed)
			srv->lim.conn_closed(srv->userdata, c->peer.uid, c->inflight);
	}
	c->srv = NULL;
	c->prev = c->next = NULL;
	rpc_conn_unref(c);
}

void rpc_conn_update_events(struct rpc_conn *c)
{
	uint32_t ev = 0;

	/* Inside conn_read the replies are still to be written: it updates at its end. */
	if (c->closed || c->reading)
		return;
	if (c->inflight < c->srv->lim.max_inflight)
		ev |= EPOLLIN;
	if (c->out_len > c->out_off)
		ev |= EPOLLOUT;
	if (evloop_io_set_events(c->io, ev) < 0)
		rpc_conn_close(c);
}

/* Write what we can; returns false when the connection was closed. */
bool rpc_conn_flush(struct rpc_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			rpc_conn_close(c);
			return false;
		}
		c->out_off += n;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	return true;
}

static int conn_queue(struct rpc_conn *c, const uint8_t *buf, size_t len)
{
	if (c->out_len - c->out_off + len > c->srv->lim.max_outbuf) {
		c->srv->st.overflow_closed++;
		rpc_conn_close(c);
		return -ENOBUFS;
	}
	if (c->out_off > 0 && c->out_len + len > c->out_cap) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + len > c->out_cap) {
		size_t ncap = MAX(c->out_cap * 2, c->out_len + len);
		uint8_t *nb = realloc(c->out, ncap);

		if (!nb) {
			rpc_conn_close(c);
			return -ENOMEM;
		}
		c->out = nb;
		c->out_cap = ncap;
	}
	memcpy(c->out + c->out_len, buf, len);
	c->out_len += len;
	return 0;
}

/* Encode and queue a reply; used for both dispatcher answers and our own errors. */
int rpc_conn_reply(struct rpc_conn *c, const struct rpc_reply *rep, xdrproc_t res_fn,
		   const void *res)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;
	int r;

	if (c->closed)
		return -ENOTCONN;
	/* Usually: encode straight into the output buffer (no allocation, no copy). */
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_cap - c->out_len >= REPLY_INLINE &&
	    rpc_encode_reply(rep, res_fn, res, c->out + c->out_len, c->out_cap - c->out_len,
			     &len) == 0 &&
	    c->out_len - c->out_off + len <= c->srv->lim.max_outbuf) {
		c->out_len += len;
		c->srv->st.replies++;
		c->last_activity = evloop_now(c->srv->loop);
		if (c->reading)
			return 0;
		return rpc_conn_flush(c) ? 0 : -ENOTCONN;
	}
	r = rpc_build_reply(rep, res_fn, res, c->srv->lim.max_outbuf, &buf, &len);
	if (r < 0 && res_fn) {
		struct rpc_reply err = { .xid = rep->xid, .status = RPC_STATUS_SYSTEM_ERR };

		r = rpc_build_reply(&err, NULL, NULL, c->srv->lim.max_outbuf, &buf, &len);
	}
	if (r < 0)
		return r;
	c->srv->st.replies++;
	c->last_activity = evloop_now(c->srv->loop);
	r = conn_queue(c, buf, len);
	if (r < 0)
		return r;
	/* Replies to the calls of one read go out together, in one send(), at its end. */
	if (c->reading)
		return 0;
	if (!rpc_conn_flush(c))
		return -ENOTCONN;
	return 0;
}

static int request_finish(struct rpc_request *req, const struct rpc_reply *rep, xdrproc_t res_fn,
			  const void *res)
{
	struct rpc_conn *c = req->conn;
	int r = -ENOTCONN;

	/* back to the pool: c outlives it (the request holds a reference until below) */
	req->next_free = c->free_reqs;
	c->free_reqs = req;
	if (!c->closed && c->srv) {
		bool was_full = c->inflight >= c->srv->lim.max_inflight;

		c->inflight--;
		r = rpc_conn_reply(c, rep, res_fn, res);
		if (!c->closed) {
			/* Messages may be waiting in the buffer for the in-flight slot: they are
			 * dispatched from the loop (conn_kick), never from inside a reply, whose
			 * caller may be walking its own state (a cache entry's waiters). */
			if (was_full)
				evloop_timer_set(c->kick, 0);
			rpc_conn_update_events(c);
		}
	} else {
		c->inflight--;
	}
	rpc_conn_unref(c);
	return r;
}

int rpc_request_reply(struct rpc_request *req, xdrproc_t res_fn, const void *res)
{
	struct rpc_reply rep = { .xid = req->call.xid, .status = RPC_STATUS_SUCCESS };

	return request_finish(req, &rep, res_fn, res);
}

int rpc_request_error(struct rpc_request *req, enum rpc_status status)
{
	struct rpc_reply rep = { .xid = req->call.xid, .status = status };

	if (status == RPC_STATUS_SUCCESS)
		return -EINVAL;
	if (status == RPC_STATUS_AUTH_ERROR)
		rep.auth_stat = RPC_AUTH_TOOWEAK;
	if (status == RPC_STATUS_PROG_MISMATCH || status == RPC_STATUS_RPC_MISMATCH)
		rep.low = rep.high = req->call.vers;
	return request_finish(req, &rep, NULL, NULL);
}

int rpc_request_take_fd(struct rpc_request *req, int *ret_fd)
{
	struct rpc_conn *c = req->conn;

	for (size_t i = 0; i < c->nfds; i++) {
		if (c->fds[i].start >= req->msg_end || c->fds[i].end <= req->msg_start)
			continue;
		*ret_fd = c->fds[i].fd;
		memmove(c->fds + i, c->fds + i + 1, (c->nfds - i - 1) * sizeof(c->fds[0]));
		c->nfds--;
		return 0;
	}
	return -ENOENT;
}

bool rpc_request_connected(const struct rpc_request *req)
{
	return !req->conn->closed && req->conn->srv;
}
