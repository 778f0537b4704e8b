/* Dropping to a user's privileges for good: the one way root code acting for a user does
 * it (nfskeys doctor and status reading a user's credentials, the cifs.spnego upcall,
 * pam_nfskeys).  Groups first, then the gid, then the uid, all three ids of each; then a
 * check that the uid took and that root cannot be regained, so that a partial drop never
 * goes on.  Header only, so that any program or module can use it without linking an
 * internal library. */
#pragma once

#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* The gid, then the uid (all three ids of each), then the checks; the groups are set. */
static inline int become_user_ids(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;

	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid)
		return -EPERM;
	if (uid != 0 && setresuid(0, 0, 0) == 0)
		return -EPERM; /* still able to regain root: refuse to go on */
	return 0;
}

/* Become uid with primary group gid and the ngroups supplementary groups (looked up
 * before, as root), for good.  0; -errno when a step failed; -EPERM when uid is not the
 * real, effective and saved id afterwards or, for a uid other than 0, root can be
 * regained. */
static inline int become_user(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups)
{
	if (setgroups(ngroups, groups) < 0)
		return -errno;
	return become_user_ids(uid, gid);
}

/* become_user() with the supplementary groups of name in the group database
 * (initgroups(3)). */
static inline int become_user_named(const char *name, uid_t uid, gid_t gid)
{
	if (initgroups(name, gid) < 0)
		return -errno;
	return become_user_ids(uid, gid);
}
