/* nfskeys-idmapd flushes: drop cached answers and the kernel's mapping keys (all of
 * them, or one mapping's), so a changed configuration or mapping applies at once. */
#include <keyutils.h>
#include <syslog.h>

#include "idmapd.h"
#include "rpc-args.h"

/* ---------------------------------------------------------------- kernel keyrings */

/* Clear the kernel's cached mapping keys so a changed configuration applies at once.
 * Returns the number of keyrings cleared. */
unsigned idmapd_clear_kernel_keyrings(struct idmapd *d)
{
	char buf[sizeof(d->set.keyrings)], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", d->set.keyrings);
	for (char *name = strtok_r(buf, " \t,", &save); name; name = strtok_r(NULL, " \t,", &save)) {
		int32_t serial;
		int r = nfskeys_key_possess_keyring(name, &serial);

		if (r < 0) {
			daemon_log(LOG_DEBUG, "keyring %s: %s", name, strerror(-r));
			continue;
		}
		if (keyctl_clear(serial) < 0) {
			daemon_log(LOG_WARNING, "cannot clear keyring %s: %m", name);
			continue;
		}
		daemon_log(LOG_INFO, "cleared kernel keyring %s", name);
		n++;
	}
	d->st.keyrings_cleared += n;
	return n;
}

/* The description the kernel gives a mapping key of this kind ("uid:alice@dom", "os:S-1-..."). */
static const char *kernel_prefix(unsigned kind)
{
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID: return "uid:";
	case NFSKEYS_IDMAP_GROUP_TO_GID: return "gid:";
	case NFSKEYS_IDMAP_UID_TO_NAME: return "user:";
	case NFSKEYS_IDMAP_GID_TO_GROUP: return "group:";
	case NFSKEYS_IDMAP_SID_TO_UID: return "os:";
	case NFSKEYS_IDMAP_SID_TO_GID: return "gs:";
	case NFSKEYS_IDMAP_UID_TO_SID: return "oi:";
	case NFSKEYS_IDMAP_GID_TO_SID: return "gi:";
	}
	return NULL;
}

/* A single-key flush: invalidate only the kernel's key(s) for this mapping in the
 * configured keyrings (those whose description is the kernel's for kind and key),
 * leaving every other cached mapping alone.  Returns the number of keyrings in which a
 * key was invalidated. */
static unsigned invalidate_kernel_key(struct idmapd *d, unsigned kind, const char *key)
{
	char buf[sizeof(d->set.keyrings)], want[512], *save = NULL;
	const char *prefix = kernel_prefix(kind);
	unsigned n = 0;

	if (!prefix || snprintf(want, sizeof(want), "%s%s", prefix, key) >= (int)sizeof(want))
		return 0;
	snprintf(buf, sizeof(buf), "%s", d->set.keyrings);
	for (char *name = strtok_r(buf, " \t,", &save); name; name = strtok_r(NULL, " \t,", &save)) {
		void *list = NULL;
		int32_t ring;
		long len;
		unsigned hit = 0;

		if (nfskeys_key_possess_keyring(name, &ring) < 0)
			continue;
		len = keyctl_read_alloc(ring, &list);
		for (long i = 0; len > 0 && i < len / (long)sizeof(key_serial_t); i++) {
			key_serial_t k = ((key_serial_t *)list)[i];
			char *desc = NULL, *p;

			if (keyctl_describe_alloc(k, &desc) < 0)
				continue;
			/* "type;uid;gid;perm;description" */
			p = desc;
			for (int f = 0; f < 4 && p; f++)
				p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL;
			if (p && streq(p, want) && keyctl_invalidate(k) == 0)
				hit++;
			free(desc);
		}
		free(list);
		if (hit) {
			daemon_log(LOG_INFO, "invalidated %s in kernel keyring %s", want, name);
			n++;
		}
	}
	d->st.keyrings_cleared += n;
	return n;
}
/* ---------------------------------------------------------------- the daemon's cache */

/* Drop every cached answer; fetches running are orphaned (their callers still get their
 * result, which is not cached).  Returns how many keys went: answers, and the keys being
 * fetched for the first time. */
size_t idmapd_flush_cache(struct idmapd *d)
{
	size_t first;

	idmapd_fetch_orphan_all(d->fetches, &first);
	return idmap_cache_clear(d->cache) + first;
}

/* Drop one key's answer and orphan its fetch; whether there was either. */
static bool flush_key(struct idmapd *d, uint32_t kind, const char *key)
{
	struct idmapd_fetch *f = idmapd_fetch_find(d->fetches, kind, key);

	if (f)
		idmapd_fetch_orphan(d->fetches, f);
	return (idmap_cache_drop(d->cache, kind, key) == 0) | (f != NULL);
}

void idmapd_handle_flush(struct idmapd *d, struct rpc_request *req, XDR *args)
{
	idmapd_flush_args a = {};
	idmapd_flush_res res = {};

	if (!rpc_args_decode(args, (xdrproc_t)xdr_idmapd_flush_args, &a)) {
		rpc_request_error(req, RPC_STATUS_GARBAGE_ARGS);
		return;
	}
	if (!idmapd_allowed(d, IDMAPD_OP_FLUSH, req)) {
		res.status = -EPERM;
	} else if (a.all) {
		res.dropped = idmapd_flush_cache(d);
		res.kernel_keyrings_cleared = idmapd_clear_kernel_keyrings(d);
		d->st.flushes++;
		daemon_log(LOG_INFO, "cache flushed by uid %u: %u entries", (unsigned)req->peer.uid,
			res.dropped);
	} else {
		if (a.kind > 0 && a.kind < _NFSKEYS_IDMAP_KIND_MAX && a.key && flush_key(d, a.kind, a.key))
			res.dropped = 1;
		/* Only this mapping's kernel key, even when we had no entry for it (the
		 * fallback helper may have answered it in-process). */
		if (a.kind > 0 && a.kind < _NFSKEYS_IDMAP_KIND_MAX && a.key)
			res.kernel_keyrings_cleared = invalidate_kernel_key(d, a.kind, a.key);
		if (res.dropped || res.kernel_keyrings_cleared)
			d->st.flushes++;
		else
			res.status = -ENOENT;
	}
	idmapd_reply(d, IDMAPD_OP_FLUSH, req, (xdrproc_t)xdr_idmapd_flush_res, &res);
	xdr_free((xdrproc_t)xdr_idmapd_flush_args, (char *)&a);
}
