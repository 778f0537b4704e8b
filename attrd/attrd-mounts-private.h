/* What the parts of nfskeys-attrd's sub-mounts share: the table of entries, the jobs
 * handed to the worker threads (one per server), and the helpers used across
 * attrd-mounts.c (what is wanted, apply, life cycle), attrd-mounts-jobs.c (the workers),
 * attrd-mounts-servers.c (which server, which jobs), attrd-mounts-kernel.c,
 * attrd-mounts-state.c and attrd-mounts-table.c (the entries).  Calls go one way:
 * attrd-mounts.c -> jobs -> state -> kernel -> table (and the leaf files check, cifs,
 * servers); what attrd-mounts.c does when a job is back reaches the jobs as a callback
 * (job_back). */
#pragma once

#include <libmount.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct evio;
struct evloop;
struct evtimer;
struct nfskeys_attr_store;
struct nfskeys_ctx;

enum mstate { MS_PENDING, MS_APPLIED, MS_FAILED };

struct mentry {
	char *target;	/* local directory mounted over */
	char *source;	/* SERVER:/path */
	char *fstype;
	char *options;	/* policy options wanted there */
	char *applied;	/* options of the top mount made here, NULL when none */
	char *base;	/* the parent mount's options carried over */
	char *parent_mp;
	char *server;	/* the server the parent mount talks to (mounts_server_of()) */
	unsigned parent_id;
	unsigned long mnt_attr; /* MOUNT_ATTR_* of the parent mount */
	unsigned *ids;	/* our mounts at target, bottom first */
	size_t n_ids;
	enum mstate state;
	char *error;
	int64_t since;
	uint64_t seen;	/* the last apply generation a job of its server covered it in */
	bool wanted;
	bool busy;	/* in a running job's copy: the job's result replaces the kernel side */
	bool cifs;	/* a CIFS subtree: no nosharecache, no remount, checked by file id */
	char *blocked;	/* why no sub-mount can be made here (CIFS), NULL when one can */
	/* which directory the policy was set on (its rows, attr_store_dir_rows()): */
	char *handles;	/* the file handles recorded, space-separated; NULL: none */
	char *setters;	/* the uids other than root who set it, space-separated; NULL: none */
	bool orphan;	/* a mount of ours whose directory was moved here: only removed */
};

/* A table of entries and the context to log through: the loop's own, or a worker's copy. */
struct mset {
	struct nfskeys_ctx *ctx;
	gid_t admin_gid;	/* [Attrd] Admin-Group, when have_admin */
	bool have_admin;
	struct mentry *v;
	size_t n;
};

struct mjob;

struct attrd_mounts {
	struct nfskeys_ctx *ctx;
	struct nfskeys_attr_store *store;
	struct evloop *loop;
	struct libmnt_monitor *mon;
	struct evio *io;
	char *state_path;
	bool enabled, loaded;
	struct mentry *v;
	size_t n;
	uint64_t gen;		/* bumped by every outside change (attrd_mounts_apply()) */
	struct mjob *jobs;	/* the jobs in workers, one per server at most */
	size_t n_jobs;
	struct evtimer *retry;	/* armed while a wanted sub-mount has failed */
	unsigned retries;	/* in a row without every failure cleared: the backoff */
	int64_t retry_first;	/* [Mounts] Retry-Interval, usec */
	gid_t admin_gid;	/* [Attrd] Admin-Group, when have_admin */
	bool have_admin;
	/* attrd-mounts.c's part when a job is back (merged, saved): recompute what is wanted
	 * and re-arm the retry; called by the jobs, which sit below it */
	void (*job_back)(struct attrd_mounts *m);
};

/* At most this many workers at once (one per server with work): a user who mounts many
 * servers must not make a root daemon start threads without end; the other servers wait
 * for a free worker. */
#define MOUNTS_MAX_WORKERS 8

/* Work handed to a worker thread: a deep copy of one server's entries.  lock guards
 * current, posted and orphaned (the worker's and the loop's meeting point). */
struct mjob {
	struct attrd_mounts *m;
	struct evloop *loop;
	struct mjob *next;
	char *server;
	uint64_t gen;		/* the generation its entries were copied at */
	struct mset s;
	struct evtimer *slow;	/* warns (once) when the job has waited on the kernel long */
	int64_t started;
	pthread_mutex_t lock;
	const char *current;	/* the target being worked on (points into s) */
	bool posted;		/* the result is on its way to the loop */
	bool orphaned;		/* the table is gone: the worker frees the job itself */
};

/* attrd-mounts-table.c */
void mounts_set_str(char **p, const char *v);
void mounts_entry_done(struct mentry *e);
/* The entry of target (never an orphan); mounts_orphan_find(): the orphan at target. */
struct mentry *mounts_entry_find(struct attrd_mounts *m, const char *target);
struct mentry *mounts_orphan_find(struct attrd_mounts *m, const char *target);
struct mentry *mounts_entry_add(struct attrd_mounts *m, const char *target);

/* attrd-mounts-servers.c (no libmount, no threads: tests/unit/test-attrd-servers.c) */
static inline const char *mounts_server_name(const char *server)
{
	return server ? server : "";
}
int mounts_server_of(const char *fs_options, const char *source, char **ret);
size_t mounts_plan(const char *const *server, const bool *need, const uint64_t *seen, size_t n,
		   const char *const *running, size_t n_running, size_t max_workers,
		   const char **ret_start, bool *ret_waiting);

/* attrd-mounts-jobs.c */
void mounts_jobs_start(struct attrd_mounts *m);
void mounts_jobs_orphan(struct attrd_mounts *m);

/* attrd-mounts-kernel.c */
int mounts_ids_push(struct mentry *e, unsigned id);
bool mounts_ours(const struct mentry *v, size_t n, unsigned id);
void mounts_ensure(struct mset *m, struct mentry *e);
int mounts_remove_mounts(struct mset *m, struct mentry *e, const char *why);

/* attrd-mounts-cifs.c: CIFS (cifs, smb3) parents */
bool mounts_cifs_fstype(const char *fstype);
/* The parent's options a CIFS sub-mount carries (*ret_base), or why none can be made
 * (*ret_why: its credentials cannot be reused); exactly one of the two is set. */
int mounts_cifs_base(const char *super, char **ret_base, char **ret_why);
/* A malloc()ed copy of the comma-separated opts without the options named in drop (a NULL-
 * terminated list; "name" drops "name" and "name=..."); NULL when out of memory. */
static inline char *mount_options_without(const char *opts, const char *const drop[])
{
	char *out = strdup(opts ? opts : "");

	for (size_t i = 0; out && drop[i]; i++)
		while (mnt_optstr_remove_option(&out, drop[i]) == 0)
			;
	return out;
}
/* The attributes of the policy in effect at (domain, path) that CIFS has no mount option
 * for, "key=value,...", "" when none; NULL for want of memory. */
char *mounts_cifs_refused_at(struct nfskeys_attr_store *store, const char *domain,
			     const char *path);
/* The status line's reason for such attributes. */
char *mounts_cifs_refused_why(const char *refused);
/* For a multiuser parent (mountinfo shows no username=): "username=NAME" of its cruid=
 * user, as mount.cifs names the caller when given none; NULL when not needed.  Looks the
 * user up (NSS): for the worker only. */
int mounts_cifs_user_option(const char *base, char **ret_opt);
/* Is the root of the new mount mfd the directory open as at?  msg says why not. */
bool mounts_cifs_same_dir(const struct mentry *e, int mfd, int at, char *msg, size_t msg_size);

/* Could fs be a sub-mount made here: a CIFS mount of a directory (not a share's root)
 * whose name is the name of the directory it is mounted on. */
bool mounts_cifs_could_be_ours(struct libmnt_fs *fs);

/* attrd-mounts-check.c (no kernel, no store: tests/unit/test-attrd-mounts-check.c) */
/* The MOUNT_ATTR_* a sub-mount takes from its parent: the per-mount flags of mountinfo's
 * vfs_opts (ro, nosuid, nodev, noexec, nosymfollow, atime) and a read-only superblock
 * (super_opts).  *ret_refused names an attribute that cannot be carried over (an
 * idmapped parent), NULL when every one can. */
unsigned long mounts_attr_from_options(const char *vfs_opts, const char *super_opts,
				       const char **ret_refused);
/* raw: a mountinfo options field as the kernel prints it (octal escapes kept).  1 and the
 * option unescaped (malloc()ed) when a value holds an escaped comma: unescaped, it would
 * split into options of its own; 0 when none does; -ENOMEM. */
int mounts_options_unsafe(const char *raw, char **ret_option);
/* The file id recorded in a Linux NFS client file handle ("TYPE:HEX"), -EINVAL when the
 * handle is not one of a directory. */
int mounts_handle_fileid(const char *handle, uint64_t *ret);
/* Is the directory whose handle is got (NULL where its mount gives none; then, on NFS,
 * its file id ino) one of the space-separated handles?  1 yes, 0 no, -ENODATA when no
 * handle was recorded. */
int mounts_handle_matches(const char *handles, const char *got, bool nfs, uint64_t ino);
/* 1 and *ret_uid when one of the space-separated setters is neither owner nor (is_admin,
 * may be NULL) an admin; 0 when all are; -EINVAL for a malformed list. */
int mounts_setters_check(const char *setters, uid_t owner, bool (*is_admin)(uid_t, void *),
			 void *userdata, uid_t *ret_uid);

/* attrd-mounts-state.c */
void mounts_state_save(struct attrd_mounts *m);
void mounts_state_load(struct attrd_mounts *m);
void mounts_prune(struct attrd_mounts *m, struct libmnt_table *tb, bool adopting);
