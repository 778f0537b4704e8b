/* `nfskeys idmap explain`: one lookup walked with a trace of every backend's verdict,
 * then the cause and the configuration change that fixes it. */
#include <inttypes.h>

#include "idmap-engine.h"

/* Is this method in the chain, or one the engine could not find at all? */
static bool chain_has(const struct idmap_state *st, const char *method)
{
	for (size_t i = 0; i < st->n_chain; i++)
		if (strcaseeq(st->chain[i]->method, method))
			return true;
	return false;
}

static bool backend_unknown(const struct idmap_state *st, const char *method)
{
	for (size_t i = 0; i < st->n_backends; i++)
		if (strcaseeq(st->backends[i].method, method))
			return !st->backends[i].ops && st->backends[i].load_error == -ENOENT;
	return false;
}

/* The configuration advice for a cause. */
static void explain_advice(struct idmap_state *st, struct nfskeys_idmap_request *req,
			   struct trace *t)
{
	const char *what = kind_is_group(req->kind) ? "group" : "user";
	bool gss = req->kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS;
	const char *chain = gss ? st->gss_method_text : st->method_text;
	const char *chain_key = gss ? "GSS-Methods" : "Method";

	switch (t->worst_cause) {
	case IDMAP_CAUSE_BACKEND_DOWN:
		if (backend_unknown(st, t->down_backend)) {
			char installed[256];

			idmap_installed_backends(installed, sizeof(installed));
			idmap_trace_add(t,
					"cause: backend down: '%s' is not an installed backend "
					"(installed: %s)\n"
					"fix:   correct the name in [Translation] %s = %s\n",
					t->down_backend, installed[0] ? installed : "none",
					chain_key, chain);
			break;
		}
		idmap_trace_add(t,
			  "cause: backend down: '%s' could not be asked (%s)\n"
			  "fix:   bring its server back, or change the chain in\n"
			  "       [Translation] %s = %s\n",
			  t->down_backend, t->reason[0] ? t->reason : "failure", chain_key, chain);
		break;
	case IDMAP_CAUSE_REALM:
		idmap_trace_add(t,
			  "cause: realm not in Local-Realms: %s\n"
			  "fix:   add the realm to [General] Local-Realms = %s%s%s\n",
			  t->reason, req->domain ? req->domain : "",
			  req->domain ? " (plus your existing realms)" : "", "");
		break;
	case IDMAP_CAUSE_DOMAIN_MISMATCH:
		if (!req->domain) { /* a bare name */
			idmap_trace_add(t,
				  "cause: '%s' has no @domain, so it is not known to be in the "
				  "NFSv4 domain '%s'\n"
				  "fix:   set [Translation] No-Strip = both to look bare names up "
				  "as they are,\n"
				  "       or map it explicitly in [Static] %s = <local %s>\n",
				  req->key, st->domain, req->key, what);
			break;
		}
		idmap_trace_add(t,
			  "cause: domain mismatch: '%s' is not the NFSv4 domain '%s' (from %s)\n"
			  "fix:   set [General] Domain = %s on this host (it must match the "
			  "server's),\n"
			  "       or map the name explicitly in [Static] %s@%s = <local %s>\n",
			  req->domain ? req->domain : "", st->domain, st->domain_source,
			  req->domain ? req->domain : "", req->name ? req->name : req->key,
			  req->domain ? req->domain : "", what);
		break;
	case IDMAP_CAUSE_NO_ID:
		/* the backend found the name: the attribute it lacks is in the reason */
		idmap_trace_add(t,
				"cause: the %s is known but has no usable id: %s\n"
				"fix:   give the entry the attribute named (in Active Directory the "
				"RFC 2307 attributes:\n"
				"       uidNumber and gidNumber for users, gidNumber for groups),\n"
				"       or map it in [Static] %s = <local %s>\n",
				what, t->reason, req->key, what);
		break;
	case IDMAP_CAUSE_NO_SUCH:
	case IDMAP_CAUSE_NOT_HANDLED:
	default:
		if (kind_is_sid(req->kind) || req->kind == NFSKEYS_IDMAP_UID_TO_SID ||
		    req->kind == NFSKEYS_IDMAP_GID_TO_SID) {
			/* [Static] maps no SIDs: the algorithmic backend is the fix */
			if (!chain_has(st, "sid")) {
				idmap_trace_add(t,
						"cause: no backend in the chain maps SIDs (%s)\n"
						"fix:   add the algorithmic SID backend: "
						"[Translation] %s = %s,sid\n",
						chain, chain_key, chain);
			} else {
				idmap_trace_add(t,
						"cause: no backend maps this SID or id (%s); the sid "
						"backend maps domain SIDs (S-1-5-21-...) and the ids of "
						"their slices ([SID] Range-Min, Range-Max, Range-Size)\n"
						"fix:   check [SID] or add a backend that knows it to "
						"[Translation] %s = %s\n",
						chain, chain_key, chain);
			}
			break;
		}
		idmap_trace_add(t,
			  "cause: no such %s in any backend (%s)\n"
			  "fix:   create the %s locally, add a mapping in [Static] %s = <local %s>,\n"
			  "       or add a backend that knows it to [Translation] %s = %s\n",
			  what, chain, what, req->key, what, chain_key, chain);
		break;
	}
}

_public_ int nfskeys_idmap_explain(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind,
				   const char *key, char **ret_text)
{
	struct nfskeys_idmap_request req = { 0 };
	struct nfskeys_idmap_answer a;
	struct nfskeys_sid sid;
	struct idmap_state *st;
	struct trace t = { .size = 4096 };
	char buf[KEY_MAX];
	int r;

	if (!ctx || !key || !ret_text || !kind_valid(kind))
		return -EINVAL;
	r = idmap_state_get(ctx, &st);
	if (r < 0)
		return r;
	t.buf = calloc(1, t.size);
	if (!t.buf)
		return -ENOMEM;
	idmap_trace_add(&t, "%s %s\n", nfskeys_idmap_kind_to_string(kind), key);
	idmap_trace_add(&t, "NFSv4 domain: %s (from %s)\n", st->domain, st->domain_source);
	idmap_trace_add(&t, "chain: %s\n",
		  kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS ? st->gss_method_text : st->method_text);
	r = idmap_request_prepare(st, kind, key, buf, sizeof(buf), &sid, &req);
	if (r < 0) {
		idmap_trace_add(&t, "result: malformed key (%s)\n",
			  kind_is_sid(kind)	 ? "not a SID such as S-1-5-21-1-2-3-1000" :
			  kind_is_id(kind) ? "not a decimal id" :
					     "empty name or domain, or too long");
		*ret_text = t.buf;
		return 0;
	}
	r = idmap_chain_run(ctx, st, &req, &a, NULL, &t, NULL);
	if (r == 0) {
		if (kind_is_id(kind) && a.name[0])
			idmap_trace_add(&t, "result: %s (backend %s, ttl %us)\n", a.name, a.backend,
				  a.ttl);
		else
			idmap_trace_add(&t, "result: %" PRIu32 " (backend %s, ttl %us)\n", a.id,
				  a.backend, a.ttl);
	} else {
		/* why, in words: -ENOENT is "nobody knows it", not a missing file */
		const char *why = r == -ENOENT && t.worst_cause == IDMAP_CAUSE_NO_ID ?
					  "found, but without an id" :
				  r == -ENOENT ? "no backend knows it" :
				  r == -EHOSTDOWN ? "a backend could not be asked" : strerror(-r);

		if (kind_is_sid(kind))
			/* the cifs.idmap upcall asks for no nobody fallback (idmap-desc.h) */
			idmap_trace_add(&t, "result: no mapping (the cifs.idmap key is rejected: a "
					"cifsacl mount shows its uid= or gid=): %s\n", why);
		else if (kind_has_nobody(kind))
			idmap_trace_add(&t, "result: nobody (%" PRIu32 ", ttl %us): %s\n",
					kind_is_group(kind) ? st->nobody_gid : st->nobody_uid,
					st->nobody_ttl, why);
		else
			idmap_trace_add(&t, "result: no mapping (the request fails): %s\n", why);
		explain_advice(st, &req, &t);
	}
	*ret_text = t.buf;
	return 0;
}
