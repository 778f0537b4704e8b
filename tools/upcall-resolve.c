/* The resolution step of nfskeys-upcall: in-process through the library's ID-mapping
 * engine.  Kept apart from the key handling so a daemon client can sit in front of it. */
#include "upcall.h"

int upcall_resolve(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key,
		   struct nfskeys_idmap_answer *answer)
{
	return nfskeys_idmap_lookup_full(ctx, kind, key, NFSKEYS_IDMAP_LOOKUP_NOBODY, answer);
}
