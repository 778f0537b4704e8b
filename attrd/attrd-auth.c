/* nfskeys-attrd's authorization: who may change a directory's policy (root, the
 * admin group, or the directory's owner when the kernel does not make owners up), the
 * caller's groups read from /proc and checked against its uid. */
#include <grp.h>
#include <stdio.h>

#include "attrd.h"

/* Is gid among the caller's groups?  The supplementary groups come from
 * /proc/PID/status of the connecting process (SO_PEERCRED's pid), checked against its
 * uid so that a recycled pid cannot lend someone else's groups. */
static bool peer_in_group(const struct ucred *peer, gid_t gid)
{
	char path[64], line[4096];
	_cleanup_fclose_ FILE *f = NULL;
	bool uid_ok = false, found = false;

	if (peer->gid == gid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)peer->pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned ruid, euid;
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
			uid_ok = euid == peer->uid;
		if (startswith(line, "Groups:")) {
			char *save = NULL;
			for (char *t = strtok_r(line + 7, " \t\n", &save); t;
			     t = strtok_r(NULL, " \t\n", &save))
				if ((gid_t)strtoul(t, NULL, 10) == gid)
					found = true;
		}
	}
	return uid_ok && found;
}

/* May peer change the attributes of the directory st (identity id, shown as where)?
 * *ret_admin tells root and the admin group (no per-user limits) from owners. */
int attrd_authorize(struct attrd *d, const struct ucred *peer, const struct stat *st,
		    const struct nfskeys_attr_id *id, const char *where, bool *ret_admin, char *msg,
		    size_t msg_size)
{
	const char *fstype = nfskeys_attr_id_get_fstype(id);

	*ret_admin = true;
	if (peer->uid == 0)
		return 0;
	if (d->have_admin && peer_in_group(peer, d->admin_gid))
		return 0;
	*ret_admin = false;
	if (st->st_uid == peer->uid) {
		/* On a mount whose client makes owners up (cifs without Unix extensions or
		 * cifsacl, forceuid; afs) whoever mounted it "owns" every directory. */
		if (d->lim.synthesized_owners ||
		    !attr_owner_synthesized(fstype, attr_id_get_options(id)))
			return 0;
		snprintf(msg, msg_size,
			 "uid %u may not change the attributes of %s: its owner is made up by the "
			 "%s client (not the server's), so only root%s%s%s may "
			 "(see [Attrd] Trust-Synthesized-Owners)",
			 (unsigned)peer->uid, where, fstype,
			 d->have_admin ? " or members of group '" : "",
			 d->have_admin ? d->admin_group : "", d->have_admin ? "'" : "");
		log_notice(d->ctx, "refused for pid %d: %s", (int)peer->pid, msg);
		return -EPERM;
	}
	snprintf(msg, msg_size,
		 "uid %u may not change the attributes of %s: it belongs to uid %u, and only its "
		 "owner%s%s%s may",
		 (unsigned)peer->uid, where, (unsigned)st->st_uid,
		 d->have_admin ? ", root or members of group '" : " or root",
		 d->have_admin ? d->admin_group : "", d->have_admin ? "'" : "");
	log_notice(d->ctx, "refused for pid %d: %s", (int)peer->pid, msg);
	return -EPERM;
}
