/* The state file of nfskeys-attrd's sub-mounts: the mounts made here, saved after each
 * job and read at the first apply, then checked against the mount table (prune) so a
 * restarted daemon adopts its own mounts and never someone else's. */
#include <stdio.h>
#include <unistd.h>

#include "attrd-mounts-private.h"
#include "macros.h"
#include "nfskeys-attr-daemon.h"

/* ---------------------------------------------------------------- the state file */

/* One line per mount made here: "ID TARGET OPTIONS", the strings octal-escaped as in
 * mountinfo, so a restarted daemon adopts its mounts instead of stacking duplicates. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

void mounts_state_save(struct attrd_mounts *m)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;

	if (!m->state_path || asprintf(&tmp, "%s.tmp", m->state_path) < 0)
		return;
	f = fopen(tmp, "we");
	if (!f) {
		log_err(m->ctx, "cannot write %s: %m", tmp);
		return;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct mentry *e = &m->v[i];

		for (size_t j = 0; j < e->n_ids; j++) {
			fprintf(f, "%u ", e->ids[j]);
			put_escaped(f, e->target);
			fputc(' ', f);
			/* the options of the top mount; lower ones are only ever removed */
			put_escaped(f, j + 1 == e->n_ids && e->applied ? e->applied : "-");
			fputc('\n', f);
		}
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 ||
	    rename(tmp, m->state_path) < 0) {
		log_err(m->ctx, "cannot write %s: %m", m->state_path);
		unlink(tmp);
	}
}

/* Read the mounts a previous run made (they are checked against the table before use). */
void mounts_state_load(struct attrd_mounts *m)
{
	_cleanup_fclose_ FILE *f = fopen(m->state_path, "re");
	char line[8192];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char target[4096], opts[2048];
		unsigned id;
		struct mentry *e;

		if (sscanf(line, "%u %4095s %2047s", &id, target, opts) != 3)
			continue;
		unescape(target);
		unescape(opts);
		e = mounts_entry_find(m, target);
		if (!e)
			e = mounts_entry_add(m, target);
		if (!e || mounts_ids_push(e, id) < 0)
			return;
		mounts_set_str(&e->applied, streq(opts, "-") ? NULL : opts);
	}
}

/* The entry of mount id in tb (libmount's own lookup by id is 2.40's). */
static struct libmnt_fs *table_find_id(struct libmnt_table *tb, int id)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs = NULL;

	while (it && mnt_table_next_fs(tb, it, &fs) == 0)
		if (mnt_fs_get_id(fs) == id)
			break;
		else
			fs = NULL;
	mnt_free_iter(it);
	return fs;
}

/* A mount adopted from the state file: its parent is the first mount below it that is
 * not ours (needed to reach it again, and to remove it once no policy wants it). */
static void adopt_parent(struct attrd_mounts *m, struct libmnt_table *tb, struct mentry *e)
{
	struct libmnt_fs *fs = table_find_id(tb, (int)e->ids[0]);

	while (fs && mounts_ours(m->v, m->n, (unsigned)mnt_fs_get_id(fs)))
		fs = table_find_id(tb, mnt_fs_get_parent_id(fs));
	if (!fs || !mnt_fs_get_target(fs) || !startswith(e->target, mnt_fs_get_target(fs)))
		return;
	mounts_set_str(&e->parent_mp, mnt_fs_get_target(fs));
	e->parent_id = (unsigned)mnt_fs_get_id(fs);
}

/* Could fs be a mount of ours, made for e (at its target, or moved from there)? */
static bool could_be_ours(const struct mentry *e, struct libmnt_fs *fs)
{
	const char *t = mnt_fs_get_fstype(fs), *src = mnt_fs_get_source(fs);

	if (!t || !mnt_fs_get_target(fs))
		return false;
	/* moved: the source still names the directory the mount was made of */
	if (!streq(mnt_fs_get_target(fs), e->target))
		return e->source && src && streq(src, e->source) &&
		       (mounts_cifs_fstype(t) ||
			(startswith(t, "nfs") &&
			 mnt_fs_get_option(fs, "nosharecache", NULL, NULL) == 0));
	return (startswith(t, "nfs") && mnt_fs_get_option(fs, "nosharecache", NULL, NULL) == 0) ||
	       mounts_cifs_could_be_ours(fs);
}

/* A mount of ours whose directory was renamed (from another mount namespace, where it was
 * no mount point, so the kernel let it go): the mount went along to the new name.  It
 * no longer sits where its policy is, must not count as a parent, and its options were
 * never meant for that place: an orphan entry there holds it until a worker removes it. */
static void adopt_moved(struct attrd_mounts *m, struct libmnt_table *tb, const char *from,
			struct libmnt_fs *fs)
{
	const char *to = mnt_fs_get_target(fs);
	struct mentry *o = mounts_orphan_find(m, to);
	char *err = NULL;

	if (!o)
		o = mounts_entry_add(m, to);
	if (!o || mounts_ids_push(o, (unsigned)mnt_fs_get_id(fs)) < 0)
		return;
	o->orphan = true;
	o->wanted = false;
	o->state = MS_PENDING;
	if (!o->server)
		(void)mounts_server_of(mnt_fs_get_fs_options(fs), mnt_fs_get_source(fs),
				       &o->server);
	mounts_set_str(&o->source, mnt_fs_get_source(fs));
	if (asprintf(&err, "moved here from %s (its directory was renamed): to be unmounted",
		     from) >= 0) {
		free(o->error);
		o->error = err;
	}
	if (!o->parent_mp)
		adopt_parent(m, tb, o);
}

/* Why prune drops id of e, in the log: a mount of the state file not adopted (fs: the
 * mount with that id, NULL when none), or one of ours that went away. */
static void log_dropped(struct attrd_mounts *m, const struct mentry *e, unsigned id,
			struct libmnt_fs *fs, bool adopting)
{
	if (adopting)
		log_notice(m->ctx, "mount id %u at %s in %s: %s, not adopted", id, e->target,
			   m->state_path, fs ? "not a sub-mount of ours" : "no longer mounted");
	else if (!fs)
		log_notice(m->ctx, "mount id %u at %s is gone (unmounted outside nfskeys-attrd)",
			   id, e->target);
}

/* Forget mount ids the table no longer has at the entry's target (unmounted by someone,
 * or gone with their parent); one that moved elsewhere goes to an orphan entry there, to
 * be unmounted.  Entries a running job holds are the job's to update.  adopting: the ids
 * were just read from the state file, and each one kept is said to be adopted. */
void mounts_prune(struct attrd_mounts *m, struct libmnt_table *tb, bool adopting)
{
	struct moved {
		char *from;
		struct libmnt_fs *fs;
	} *mv = NULL;
	size_t n_mv = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct mentry *e = &m->v[i];
		size_t keep = 0;

		if (e->busy)
			continue;
		for (size_t j = 0; j < e->n_ids; j++) {
			struct libmnt_fs *fs = table_find_id(tb, (int)e->ids[j]);

			/* only an NFS nosharecache mount (or a CIFS one of that directory) at the
			 * recorded place: a stale file (a persistent Runtime-Dir across a reboot
			 * recycles mount ids) must not make someone else's mount ours, to be
			 * unmounted */
			if (!fs || !could_be_ours(e, fs)) {
				log_dropped(m, e, e->ids[j], fs, adopting);
				continue;
			}
			if (!streq(mnt_fs_get_target(fs), e->target)) {
				struct moved *n = realloc(mv, (n_mv + 1) * sizeof(*n));

				if (n) {
					mv = n;
					mv[n_mv].from = strdup(e->target);
					mv[n_mv].fs = fs;
					if (mv[n_mv].from)
						n_mv++;
				}
				continue;
			}
			e->ids[keep++] = e->ids[j];
			if (adopting)
				log_notice(m->ctx, "adopted %s on %s (mount id %u, layer %zu)",
					   mnt_fs_get_source(fs), e->target, e->ids[j], keep);
			/* adopted: its server (for its job) is the one it talks to */
			if (!e->server)
				(void)mounts_server_of(mnt_fs_get_fs_options(fs),
						       mnt_fs_get_source(fs), &e->server);
		}
		/* the options recorded are the top mount's: with it gone, those of the one
		 * below are not known (ids[n_ids - 1] is left as it was when dropped) */
		if (keep < e->n_ids && (keep == 0 || e->ids[keep - 1] != e->ids[e->n_ids - 1]))
			mounts_set_str(&e->applied, NULL);
		e->n_ids = keep;
		if (keep && !e->parent_mp)
			adopt_parent(m, tb, e);
	}
	/* after the walk: adding entries moves the table */
	for (size_t i = 0; i < n_mv; i++) {
		adopt_moved(m, tb, mv[i].from, mv[i].fs);
		free(mv[i].from);
	}
	free(mv);
}
