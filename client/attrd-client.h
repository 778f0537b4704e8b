/* Typed client calls to nfskeys-attrd (proto/attr.x) for nfsattr, the tests and the
 * benchmarks, over the blocking RPC client of common/rpc-client.h.  Internal; never
 * installed. */
#pragma once

#include <stdio.h>

#include "nfskeys.h"
#include "rpc-client.h"

/* The socket to use, by nfskeys-attrd and its clients alike: explicit (non-NULL and not
 * empty), else [Attrd] Socket, else [General] Runtime-Dir/attrd.sock, else
 * RUNDIR/attrd.sock.  Returns a pointer into a static buffer or the configuration. */
const char *attrd_socket_path(struct nfskeys_ctx *ctx, const char *explicit_path);

int attrd_client_new(const char *path, int timeout_ms, struct rpc_client **ret_client);

/* Set the policy's attributes on the directory open as dirfd.  The daemon's verdict comes
 * back as a negative errno (-EPERM refused, -EINVAL bad attribute, ...) with its reason
 * in msg; transport failures as rpc_client_call() (-ENOENT/-ECONNREFUSED: no daemon).
 * ret_where (may be NULL): the identity the daemon stored it under, malloc()ed. */
int attrd_client_set(struct rpc_client *c, int dirfd, const struct nfskeys_attr_policy *policy,
		     char *msg, size_t msg_size, char **ret_where);
/* Remove keys (NULL-terminated; NULL removes every attribute) from dirfd's directory.
 * ret_changed (may be NULL): how many were removed. */
int attrd_client_unset(struct rpc_client *c, int dirfd, const char *const *keys, char *msg,
		       size_t msg_size, unsigned *ret_changed);

/* Read the policy of (domain, path): flags ATTRD_LOOKUP_EFFECTIVE / _SOURCES.  fn is
 * called for each attribute (source "" without _SOURCES); *ret_cut (may be NULL) gets
 * the inherit=no cut point or NULL, malloc()ed.  Returns the number of attributes. */
int attrd_client_lookup(struct rpc_client *c, const char *domain, const char *path,
			unsigned flags,
			void (*fn)(void *userdata, const char *key, const char *value,
				   const char *source, bool from_ldap),
			void *userdata, char **ret_cut);

int attrd_client_ping(struct rpc_client *c, char *release, size_t release_size,
		      uint32_t *ret_pid, uint64_t *ret_policies);
/* Ask the daemon to reload its configuration (root only); msg says why it failed. */
int attrd_client_reload(struct rpc_client *c, char *msg, size_t msg_size);
/* The sub-mounts the daemon keeps for policy on live mounts (ATTRD_MOUNTS): fn once per
 * entry; *ret_enabled is [Mounts] Apply-Mounts, *ret_more the entries not sent. */
struct attrd_client_mount {
	const char *target, *source, *options, *state, *error, *server;
	unsigned layers, mount_id, waiting;
	int64_t since;
};
int attrd_client_mounts(struct rpc_client *c, bool *ret_enabled, unsigned *ret_more,
			void (*fn)(void *userdata, const struct attrd_client_mount *m),
			void *userdata);
/* Print the daemon's statistics as text, JSON or Prometheus (enum stats_format). */
int attrd_client_print_stats(struct rpc_client *c, FILE *f, int format);
