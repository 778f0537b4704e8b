/* The calls between the ID-mapping engine's parts: the state and its loader
 * (idmap-loader.c), the chain walk (idmap-chain.c), the lookup (idmap-engine.c), the
 * explanation of an answer (idmap-explain.c) and the kernel's upcall formats
 * (idmap-kernel.c).  Not installed. */
#pragma once

#include "idmap-builtin.h"
#include "idmap-state.h"

/* A walk's record, for `explain`: every backend's verdict and the worst cause. */
struct trace {
	char *buf;
	size_t size, len;
	uint32_t worst_cause;
	char down_backend[24];
	char reason[256];
};

/* The installed backends, "nsswitch, sid, static" ("" when none). */
void idmap_installed_backends(char *buf, size_t size);
void _printf_(2, 3) idmap_trace_add(struct trace *t, const char *fmt, ...);
/* The context's engine state, made on first use. */
int idmap_state_get(struct nfskeys_ctx *ctx, struct idmap_state **ret);
/* Split and validate key into req (name/domain parts in buf). */
int idmap_request_prepare(struct idmap_state *st, unsigned kind, const char *key, char *buf,
			  size_t bufsize, struct nfskeys_sid *sid,
			  struct nfskeys_idmap_request *req);
/* Walk a chain.  On success ret is complete.  ret_reverse (may be NULL; kind 0 unless
 * filled): for a name -> id answer, the id -> name answer its backend took from the same
 * search (lookup_pair), for an id -> name answer the name -> id one, complete as a lookup
 * of that id (name) would give it, and only when no backend before it in the chain knows
 * the id (name).  With trace, every backend's verdict is appended to it. */
/* The key the reverse answer rev of ans is cached under: ans's name for a name -> id
 * reverse, else rev's id written into buf. */
const char *idmap_reverse_key(const struct nfskeys_idmap_answer *ans,
			      const struct nfskeys_idmap_answer *rev, char buf[16]);
int idmap_chain_run(struct nfskeys_ctx *ctx, struct idmap_state *st,
		    struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret,
		    struct nfskeys_idmap_answer *ret_reverse, struct trace *t,
		    struct backend **ret_backend);
