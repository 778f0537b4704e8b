/* ONC RPC server transport over evloop: accept, per-client record reassembly and limits,
 * call-header checks, asynchronous replies with an output buffer per client.  Here: the
 * server and its clients' input (accept and the limits on clients, reading and record
 * reassembly, passed descriptors, call checks and dispatch, idle clients); a request's
 * answer, the output buffer and a connection's close are in rpc-server-reply.c, which
 * calls nothing here. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <syslog.h>

#include "fd-closer.h"
#include "macros.h"
#include "rpc-frame.h"
#include "rpc-server.h"
#include "rpc-server-private.h"
#include "time-util.h"
#include "unix-socket.h"

#define READ_CHUNK 16384
#define LOG_INTERVAL_US (10 * USEC_PER_SEC)
#define ACCEPT_PAUSE_US (100 * USEC_PER_MSEC)

static void server_log(struct rpc_server *srv, int priority, const char *fmt, ...)
	_printf_(3, 4);
static void server_log(struct rpc_server *srv, int priority, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!srv->lim.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv->lim.log(srv->userdata, priority, msg);
}

static void on_resume(struct evloop *loop, struct evtimer *t, void *ud)
{
	rpc_server_accept_resume(ud);
}

/* Drop the descriptors that came entirely with calls already dispatched (not taken by
 * them: passed with a call that takes none, or one too many). */
static void conn_drop_fds(struct rpc_conn *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nfds; i++) {
		if (c->fds[i].end <= c->consumed) {
			close(c->fds[i].fd); /* O_PATH */
			if (c->srv)
				c->srv->st.fds_refused++;
		} else {
			c->fds[k++] = c->fds[i];
		}
	}
	c->nfds = k;
}

/* Handle one complete message; returns false when the connection was closed. */
static bool conn_handle(struct rpc_conn *c, const uint8_t *msg, size_t len)
{
	struct rpc_server *srv = c->srv;
	struct rpc_reply rep = {};
	struct rpc_request *req;
	struct rpc_call call;
	XDR x;
	int r;

	xdrmem_create(&x, (char *)msg, len, XDR_DECODE);
	r = rpc_call_decode(&x, &call);
	rep.xid = call.xid;
	if (r == -EPROTONOSUPPORT) {
		rep.status = RPC_STATUS_RPC_MISMATCH;
		rep.low = rep.high = RPC_VERSION;
	} else if (r < 0) {
		/* Not a call we can answer (no xid, a reply, garbage): drop the client. */
		srv->st.bad_headers++;
		xdr_destroy(&x);
		rpc_conn_close(c);
		return false;
	} else if (call.prog != srv->prog) {
		rep.status = RPC_STATUS_PROG_UNAVAIL;
	} else if (call.vers != srv->vers) {
		rep.status = RPC_STATUS_PROG_MISMATCH;
		rep.low = rep.high = srv->vers;
	} else {
		req = c->free_reqs;
		if (req)
			c->free_reqs = req->next_free;
		else if (!(req = malloc(sizeof(*req)))) {
			rep.status = RPC_STATUS_SYSTEM_ERR;
			goto answer;
		}
		*req = (struct rpc_request){
			.call = call,
			.peer = c->peer,
			.start_ns = mono_nsec(),
			.conn = c,
			.msg_start = c->consumed - len - RPC_FRAME_HDR_LEN,
			.msg_end = c->consumed,
		};
		c->refs++;
		c->inflight++;
		srv->st.requests++;
		srv->dispatch(srv, req, &x, srv->userdata);
		xdr_destroy(&x);
		return !c->closed;
	}
	srv->st.bad_headers += rep.status == RPC_STATUS_RPC_MISMATCH;
answer:
	xdr_destroy(&x);
	rpc_conn_reply(c, &rep, NULL, NULL);
	return !c->closed;
}

/* Dispatch buffered complete messages while in-flight slots are free. */
static void conn_process(struct rpc_conn *c)
{
	c->refs++; /* the dispatcher may close the connection under us */
	while (!c->closed && c->inflight < c->srv->lim.max_inflight) {
		const uint8_t *msg;
		size_t len;
		int r = rpc_framer_next(&c->in, &msg, &len);

		if (r == 0)
			break;
		if (r < 0) {
			c->srv->st.bad_frames++;
			rpc_conn_close(c);
			break;
		}
		c->consumed += RPC_FRAME_HDR_LEN + len;
		if (!conn_handle(c, msg, len))
			break;
		if (c->nfds)
			conn_drop_fds(c);
	}
	if (!c->closed) {
		if (rpc_framer_pending(&c->in) == 0)
			c->partial_since = 0;
		else if (!c->partial_since)
			c->partial_since = evloop_now(c->srv->loop);
	}
	rpc_conn_unref(c);
}

static void conn_read(struct rpc_conn *c)
{
	int fds[UNIX_MAX_FDS];
	size_t nfds = 0, avail;
	uint8_t *p;
	ssize_t n;
	int r;

	r = rpc_framer_reserve(&c->in, READ_CHUNK, &p, &avail);
	if (r < 0) {
		rpc_conn_close(c);
		return;
	}
	/* Descriptors only where the daemon takes them, and only while the closer has room
	 * for those we refuse; otherwise the kernel discards them without opening. */
	if (c->srv->lim.accept_fds && !fd_closer_full())
		n = unix_recv_fds(c->fd, p, avail, fds, ARRAY_SIZE(fds), &nfds);
	else
		n = unix_recv_fds(c->fd, p, avail, NULL, 0, NULL);
	if (n == -EAGAIN)
		return;
	for (size_t i = 0; i < nfds; i++) {
		/* The type from the open file's flags: fcntl() runs no file system code (a
		 * stat could wait for ever on a FUSE server).  O_PATH: closing it cannot
		 * block either; O_DIRECTORY: the opener's open() checked it is a directory. */
		int fl = fcntl(fds[i], F_GETFL);

		if (fl >= 0 && (fl & O_PATH) && (fl & O_DIRECTORY) && c->nfds < FD_QUEUE_MAX &&
		    n > 0) {
			c->fds[c->nfds].fd = fds[i];
			c->fds[c->nfds].start = c->in_total;
			c->fds[c->nfds].end = c->in_total + n;
			c->nfds++;
		} else if (fl >= 0 && (fl & O_PATH)) {
			close(fds[i]);
			c->srv->st.fds_refused++;
		} else {
			fd_closer_close(fds[i]); /* its close() may wait for FLUSH */
			c->srv->st.fds_refused++;
		}
	}
	if (n <= 0) {
		rpc_conn_close(c);
		return;
	}
	c->in_total += n;
	rpc_framer_commit(&c->in, n);
	c->last_activity = evloop_now(c->srv->loop);
	c->reading = true;
	conn_process(c);
	c->reading = false;
	if (!c->closed && rpc_conn_flush(c))
		rpc_conn_update_events(c);
}

/* The calls that waited for an in-flight slot, on the loop thread (request_finish). */
static void conn_kick(struct evloop *loop, struct evtimer *t, void *ud)
{
	struct rpc_conn *c = ud;

	if (c->closed)
		return;
	c->refs++;
	c->reading = true;
	conn_process(c);
	c->reading = false;
	if (!c->closed && rpc_conn_flush(c))
		rpc_conn_update_events(c);
	rpc_conn_unref(c);
}

static void conn_event(struct evloop *loop, struct evio *io, int fd, uint32_t events, void *ud)
{
	struct rpc_conn *c = ud;

	c->refs++;
	if (events & EPOLLOUT) {
		if (rpc_conn_flush(c))
			rpc_conn_update_events(c);
	}
	if (!c->closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_read(c);
	rpc_conn_unref(c);
}

static void conn_idle(struct evloop *loop, struct evtimer *t, void *ud)
{
	struct rpc_conn *c = ud;
	int64_t now = evloop_now(loop), limit = c->srv->lim.idle_timeout_ms * USEC_PER_MSEC;
	int64_t due = c->last_activity + limit;

	if (c->partial_since && c->partial_since + limit <= now) {
		c->srv->st.idle_closed++;
		rpc_conn_close(c);
		return;
	}
	if (c->partial_since)
		due = MIN(due, c->partial_since + limit);
	if (due <= now) {
		if (c->inflight == 0) {
			c->srv->st.idle_closed++;
			rpc_conn_close(c);
			return;
		}
		due = now + limit;
	}
	evloop_timer_set(t, due);
}

static void server_accept(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			  void *ud)
{
	struct rpc_server *srv = ud;

	for (int i = 0; i < 64; i++) {
		struct rpc_conn *c;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int64_t now = evloop_now(loop);

		int err = cfd < 0 ? errno : 0;

		if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
			/* The client stays in the backlog and the socket stays readable: stop
			 * polling it (a busy loop otherwise) until a client leaves or 100 ms. */
			if (!srv->emfile_logged_at || now - srv->emfile_logged_at >= LOG_INTERVAL_US) {
				server_log(srv, LOG_WARNING,
					   "cannot accept a client: %s (%" PRIu64 " open); "
					   "pausing accepts", strerror(err), srv->st.current);
				srv->emfile_logged_at = now;
			}
			if (evloop_io_set_events(srv->listen_io, 0) == 0) {
				srv->accept_paused = true;
				evloop_timer_set(srv->resume, now + ACCEPT_PAUSE_US);
			}
			return;
		}
		if (cfd < 0)
			return;
		if (srv->st.current >= srv->lim.max_clients) {
			srv->st.refused++;
			close(cfd);
			if (!srv->refused_logged_at || now - srv->refused_logged_at >= LOG_INTERVAL_US) {
				server_log(srv, LOG_WARNING,
					   "Max-Clients (%u) reached: refusing new clients (%" PRIu64
					   " refused in all)", srv->lim.max_clients, srv->st.refused);
				srv->refused_logged_at = now;
			}
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(cfd);
			return;
		}
		c->srv = srv;
		c->refs = 1;
		c->fd = cfd;
		rpc_framer_init(&c->in, srv->lim.max_msg);
		c->out = malloc(4096); /* replies are encoded in place (rpc_conn_reply) */
		c->out_cap = c->out ? 4096 : 0;
		c->last_activity = evloop_now(loop);
		if (unix_peer_cred(cfd, &c->peer) < 0 ||
		    evloop_add_io(loop, cfd, EPOLLIN, conn_event, c, &c->io) < 0 ||
		    evloop_add_timer(loop, c->last_activity +
						   srv->lim.idle_timeout_ms * USEC_PER_MSEC,
				     conn_idle, c, &c->idle) < 0 ||
		    evloop_add_timer(loop, 0, conn_kick, c, &c->kick) < 0) {
			evloop_io_free(c->io);
			evloop_timer_free(c->idle);
			close(cfd);
			free(c->out);
			free(c);
			continue;
		}
		evloop_timer_cancel(c->kick);
		if (srv->lim.max_clients_per_uid && c->peer.uid != 0) {
			unsigned same = 0;

			for (struct rpc_conn *o = srv->conns; o; o = o->next)
				same += o->peer.uid == c->peer.uid;
			if (same >= srv->lim.max_clients_per_uid) {
				srv->st.refused_uid++;
				if (!srv->refused_uid_logged_at ||
				    now - srv->refused_uid_logged_at >= LOG_INTERVAL_US) {
					server_log(srv, LOG_WARNING,
						   "uid %u has %u connections (the limit per user): "
						   "refusing more (%" PRIu64 " refused in all)",
						   (unsigned)c->peer.uid, same, srv->st.refused_uid);
					srv->refused_uid_logged_at = now;
				}
				evloop_io_free(c->io);
				evloop_timer_free(c->idle);
				evloop_timer_free(c->kick);
				close(cfd);
				free(c->out);
				rpc_framer_done(&c->in);
				free(c);
				continue;
			}
		}
		c->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = c;
		srv->conns = c;
		srv->st.accepted++;
		srv->st.current++;
	}
}

/* Descriptors the daemon needs besides its clients' (listening socket, epoll, timers,
 * signalfd, logs, store or backends, descriptors waiting for the closer). */
#define NOFILE_RESERVE 64

/* Max-Clients is a promise only when the process may open that many descriptors: say so
 * at start when RLIMIT_NOFILE is lower (a unit's LimitNOFILE not raised with it). */
static void check_nofile(struct rpc_server *srv)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= (rlim_t)srv->lim.max_clients + NOFILE_RESERVE)
		return;
	server_log(srv, LOG_WARNING,
		   "RLIMIT_NOFILE is %llu, below Max-Clients (%u) + %d: clients past %llu will "
		   "wait for descriptors (raise LimitNOFILE or lower Max-Clients)",
		   (unsigned long long)rl.rlim_cur, srv->lim.max_clients, NOFILE_RESERVE,
		   rl.rlim_cur > NOFILE_RESERVE ? (unsigned long long)(rl.rlim_cur - NOFILE_RESERVE)
						: 0ULL);
}

int rpc_server_new(struct evloop *loop, int listen_fd, uint32_t prog, uint32_t vers,
		   const struct rpc_server_limits *limits, rpc_dispatch_fn dispatch,
		   void *userdata, struct rpc_server **ret_server)
{
	struct rpc_server *srv;
	int r;

	if (!loop || listen_fd < 0 || !dispatch || !ret_server)
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->loop = loop;
	srv->listen_fd = listen_fd;
	srv->prog = prog;
	srv->vers = vers;
	srv->dispatch = dispatch;
	srv->userdata = userdata;
	if (limits)
		srv->lim = *limits;
	if (!srv->lim.max_msg)
		srv->lim.max_msg = RPC_FRAME_MAX_DEFAULT;
	if (!srv->lim.max_inflight)
		srv->lim.max_inflight = 16;
	if (!srv->lim.idle_timeout_ms)
		srv->lim.idle_timeout_ms = 30000;
	if (!srv->lim.max_clients)
		srv->lim.max_clients = 1024;
	if (!srv->lim.max_outbuf)
		srv->lim.max_outbuf = 1024 * 1024;
	check_nofile(srv);
	r = evloop_add_timer(loop, 0, on_resume, srv, &srv->resume);
	if (r < 0) {
		free(srv);
		return r;
	}
	evloop_timer_cancel(srv->resume);
	r = evloop_add_io(loop, listen_fd, EPOLLIN, server_accept, srv, &srv->listen_io);
	if (r < 0) {
		evloop_timer_free(srv->resume);
		free(srv);
		return r;
	}
	*ret_server = srv;
	return 0;
}

struct rpc_server *rpc_server_free(struct rpc_server *srv)
{
	if (!srv)
		return NULL;
	while (srv->conns) {
		struct rpc_conn *c = srv->conns;

		rpc_conn_close(c); /* unlinks c */
	}
	evloop_io_free(srv->listen_io);
	evloop_timer_free(srv->resume);
	close(srv->listen_fd);
	free(srv);
	return NULL;
}

void rpc_server_get_stats(const struct rpc_server *srv, struct rpc_server_stats *ret_stats)
{
	*ret_stats = srv->st;
}
