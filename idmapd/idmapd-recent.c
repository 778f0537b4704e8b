/* The answers nfskeys-idmapd gave lately, on every path (socket, knfsd's channels, the
 * client pipes, of this network namespace or another's): a fixed ring, so `nfskeys idmap
 * explain` can say which path asked for a key, when, and what it was answered.  Root
 * only: the ring shows who looks up whom. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd.h"
#include "rpc-args.h"

static const char *const recent_path_names[_RP_MAX] = {
	[RP_SOCKET] = "socket",
	[RP_NFSD_IDTONAME] = "nfsd-idtoname",
	[RP_NFSD_NAMETOID] = "nfsd-nametoid",
	[RP_PIPE] = "client-pipe",
	[RP_NFSD_PRIME] = "nfsd-prime",
	[RP_NAME_SEARCH] = "name-search",
	[RP_PREFETCH] = "prefetch",
	[RP_ID_SEARCH] = "id-search",
};

enum recent_path idmapd_recent_path_of(const struct kquery *kq)
{
	if (kquery_is_prime(kq))
		return RP_NFSD_PRIME;
	switch (kquery_source(kq)) {
	case KPATH_NFSD_IDTONAME:
		return RP_NFSD_IDTONAME;
	case KPATH_NFSD_NAMETOID:
		return RP_NFSD_NAMETOID;
	default:
		return RP_PIPE;
	}
}

void idmapd_recent_free(struct idmapd *d)
{
	free(d->recent);
	d->recent = NULL;
}

/* Called for every answer: a copy of at most two short strings into the ring, no
 * allocation after the first. */
void idmapd_recent_note(struct idmapd *d, const struct idmapd_entry *e, enum recent_path path,
			const struct rpc_request *req, const struct kquery *kq, int status,
			enum lres result)
{
	struct recent *r;
	size_t n;

	if (!d->recent && !(d->recent = calloc(RECENT_RING, sizeof(*d->recent))))
		return; /* out of memory: the history is a help, not a duty */
	r = &d->recent[d->recent_next];
	d->recent_next = (d->recent_next + 1) % RECENT_RING;
	if (d->recent_count < RECENT_RING)
		d->recent_count++;
	r->when = evloop_now(d->loop);
	r->kind = IDMAPD_KIND_BASE(e->kind); /* a namespace configuration's number off */
	r->path = (uint8_t)path;
	r->result = (uint8_t)result;
	r->pid = req ? (uint32_t)req->peer.pid : 0;
	r->uid = req ? (uint32_t)req->peer.uid : 0;
	r->status = status;
	/* a container's NFS client asks through its own namespace's pipe (the answer went
	 * through its user namespace's maps): which one, for explain */
	r->netns = kq ? kquery_netns(kq) : 0;
	n = strnlen(e->key, sizeof(r->key) - 1);
	memcpy(r->key, e->key, n);
	r->key[n] = '\0';
	r->id = e->ans.id;
	r->has_name = status == 0 && e->ans.name[0];
	if (r->has_name) {
		n = strnlen(e->ans.name, sizeof(r->name) - 1);
		memcpy(r->name, e->ans.name, n);
		r->name[n] = '\0';
	}
}

void idmapd_handle_recent(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	_cleanup_free_ char *keybuf = malloc(IDMAPD_KEY_MAX + 1);
	idmapd_recent_args a = { .key = keybuf };
	idmapd_recent_res res = {};
	idmapd_recent_entry out[IDMAPD_RECENT_MAX];
	char answers[IDMAPD_RECENT_MAX][16];
	int64_t now = evloop_now(d->loop);
	unsigned n = 0;

	if (!keybuf) {
		rpc_request_error(req, RPC_STATUS_SYSTEM_ERR);
		return;
	}
	if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_recent_args, &a)) {
		keybuf = NULL; /* freed by the failed decode */
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	if (!idmapd_allowed(d, IDMAPD_OP_RECENT, req)) {
		res.status = -EPERM;
		idmapd_reply(d, IDMAPD_OP_RECENT, req, (xdrproc_t)xdr_idmapd_recent_res, &res);
		return;
	}
	/* newest first */
	for (unsigned i = 0; i < d->recent_count && n < IDMAPD_RECENT_MAX; i++) {
		struct recent *r = &d->recent[(d->recent_next + RECENT_RING - 1 - i) % RECENT_RING];
		idmapd_recent_entry *o = &out[n];

		if (*a.key && (r->kind != a.kind || !streq(r->key, a.key)))
			continue;
		o->path = (char *)recent_path_names[r->path];
		o->pid = r->pid;
		o->uid = r->uid;
		o->kind = r->kind;
		o->key = r->key;
		o->status = r->status;
		o->result = (char *)lres_names[r->result];
		if (r->status < 0)
			o->answer = (char *)"";
		else if (r->has_name)
			o->answer = r->name;
		else {
			snprintf(answers[n], sizeof(answers[n]), "%" PRIu32, r->id);
			o->answer = answers[n];
		}
		o->age_ms = now > r->when ? (uint64_t)(now - r->when) / 1000 : 0;
		o->netns = r->netns;
		n++;
	}
	res.entries.entries_len = n;
	res.entries.entries_val = out;
	idmapd_reply(d, IDMAPD_OP_RECENT, req, (xdrproc_t)xdr_idmapd_recent_res, &res);
}
