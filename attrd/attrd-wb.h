/* Directory writeback policy applied to the kernel: with [Mounts] Apply-Mounts = yes,
 * nfskeys-attrd sets the dirty limit of every mounted NFS or CIFS filesystem whose root
 * has a dirty_limit or writeback=throttled policy in effect (the bdi knobs `nfskeys wb
 * apply` writes; writeback=throttled adds the adaptive limit of `nfskeys wb run`), keeps
 * it in step as mounts and policies come and go, and puts the kernel's values back when
 * the policy goes, and when the daemon stops.  doc/WRITEBACK.md, "Policy on live mounts". */
#pragma once

#include <stdbool.h>

struct attrd_wb;
struct evloop;
struct nfskeys_attr_store;
struct nfskeys_ctx;

/* runtime_dir: where the list of the bdis it set is kept (attrd-wb), so that a daemon
 * killed before it could put the kernel's values back does so at its next start. */
int attrd_wb_new(struct evloop *loop, const char *runtime_dir, struct attrd_wb **ret);
/* Restores every bdi it set, then frees; NULL-safe. */
void attrd_wb_free(struct attrd_wb *w);
/* Use this context and store from now on; enabled follows [Mounts] Apply-Mounts.
 * Disabled: every bdi it set gets the kernel's values back.  Then brings the bdis in
 * step. */
void attrd_wb_configure(struct attrd_wb *w, struct nfskeys_ctx *ctx,
			struct nfskeys_attr_store *store, bool enabled);
/* Bring the bdis in step with the policy and the mount table (after a policy change). */
void attrd_wb_apply(struct attrd_wb *w);
