/* The answers nfskeys knows without a backend (libnfskeys/idmap-builtin.c): Samba's Unix
 * SIDs and the kernel's own names.  Called by the engine; needs only its state.  Not
 * installed. */
#pragma once

#include "idmap-state.h"

/* Samba's Unix SIDs (S-1-22-{1,2}-N, S-1-5-88-{1,2}-N) as the ids they
 * name, before any backend (parsed may be NULL: text is parsed then).  0 with ret filled;
 * -ENOENT for any other SID. */
int idmap_builtin_sid(const struct idmap_state *st, unsigned kind, const char *text,
		      const struct nfskeys_sid *parsed, struct nfskeys_idmap_answer *ret);
/* After a chain that found nothing: a bare decimal owner, the kernel's nobody names, an
 * id's S-1-22 SID.  0 with ret filled; -ENOENT. */
int idmap_builtin_fallback(const struct idmap_state *st, const struct nfskeys_idmap_request *req,
			   struct nfskeys_idmap_answer *ret);
