/* Directory policy applied to live NFS mounts (doc/LIVE-MOUNTS.md): nfskeys-attrd watches
 * the mount table (libmount's monitor) and gives every subtree whose mount options differ
 * from its parent directory's its own nosharecache sub-mount; keeps them in step with the
 * policy and remembers them across restarts (a state file in the runtime directory).
 * doc/LIVE-MOUNTS.md has the kernel's side, doc/SECURITY.md the threat and defence. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct attrd_mounts;
struct evloop;
struct nfskeys_attr_store;
struct nfskeys_ctx;

/* state_path: where the table of our mounts is kept (RUNDIR/attrd-mounts). */
int attrd_mounts_new(struct evloop *loop, const char *state_path, struct attrd_mounts **ret);
void attrd_mounts_free(struct attrd_mounts *m);

/* Use this context and store from now on ([Mounts] Apply-Mounts decides enabled); a
 * disabled table removes the mounts it made.  have_admin, admin_gid: [Attrd] Admin-Group
 * as the daemon resolved it at load (an admin's policy on someone else's directory passes
 * the owner re-check).  Then brings the mounts in step. */
void attrd_mounts_configure(struct attrd_mounts *m, struct nfskeys_ctx *ctx,
			    struct nfskeys_attr_store *store, bool enabled, bool have_admin,
			    gid_t admin_gid);
/* Bring the mounts in step with the policy and the mount table (after a change). */
void attrd_mounts_apply(struct attrd_mounts *m);

struct attrd_mount_info {
	const char *target, *source, *options, *state, *error;
	const char *server;	/* the server whose job makes it, "" when it has no address */
	unsigned layers, mount_id;
	unsigned waiting;	/* seconds that server's worker has been at work, 0: none runs */
	int64_t since;
};
bool attrd_mounts_enabled(const struct attrd_mounts *m);
size_t attrd_mounts_count(const struct attrd_mounts *m);
void attrd_mounts_get(const struct attrd_mounts *m, size_t i, struct attrd_mount_info *ret);
