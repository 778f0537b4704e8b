/* What the two files of the RPC server share (rpc-server.c: the server and its clients'
 * input; rpc-server-reply.c: answers, the output buffer, a connection's close): the
 * server and connection objects.  Included by those two files only, after rpc-server.h
 * (its types; including it from here would make the module rpc-server and this header
 * include each other). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "evloop.h"
#include "rpc-frame.h"

#define FD_QUEUE_MAX 8

struct rpc_server {
	struct evloop *loop;
	int listen_fd;
	struct evio *listen_io;
	uint32_t prog, vers;
	struct rpc_server_limits lim;
	rpc_dispatch_fn dispatch;
	void *userdata;
	struct rpc_conn *conns; /* doubly linked list of open connections */
	struct rpc_server_stats st;
	struct evtimer *resume;   /* accepting paused (out of descriptors) until it fires */
	bool accept_paused;
	int64_t refused_logged_at, emfile_logged_at, refused_uid_logged_at;
};

struct rpc_conn {
	struct rpc_server *srv; /* NULL once the server is gone */
	unsigned refs;          /* the connection itself + each request in flight */
	bool closed;
	int fd;
	struct evio *io;
	struct evtimer *idle;
	struct evtimer *kick;  /* dispatches buffered calls a reply made room for */
	struct ucred peer;
	struct rpc_framer in;
	uint8_t *out;
	size_t out_off, out_len, out_cap;
	unsigned inflight;
	bool reading;          /* in conn_read: replies are queued and written at its end */
	int64_t last_activity;
	int64_t partial_since; /* when unfinished input appeared, 0 when none */
	/* Passed descriptors (O_PATH directories only), each with the stretch of the byte
	 * stream that arrived with it: it belongs to a call overlapping that stretch. */
	struct {
		int fd;
		uint64_t start, end;
	} fds[FD_QUEUE_MAX];
	size_t nfds;
	uint64_t in_total;     /* bytes received */
	uint64_t consumed;     /* bytes of complete messages taken from the framer */
	/* Answered requests kept for the next calls (at most max_inflight of them, the most
	 * ever out at once), freed with the connection. */
	struct rpc_request *free_reqs;
	struct rpc_conn *prev, *next;
};

/* rpc-server-reply.c */
/* Drop a reference; the last one frees the connection. */
void rpc_conn_unref(struct rpc_conn *c);
/* A descriptor came free (or the pause is over): poll the listening socket again. */
void rpc_server_accept_resume(struct rpc_server *srv);
/* Close the connection (idempotent): unlinked from its server, freed with its last
 * reference. */
void rpc_conn_close(struct rpc_conn *c);
void rpc_conn_update_events(struct rpc_conn *c);
/* false when the connection was closed */
bool rpc_conn_flush(struct rpc_conn *c);
int rpc_conn_reply(struct rpc_conn *c, const struct rpc_reply *rep, xdrproc_t res_fn,
		   const void *res);
