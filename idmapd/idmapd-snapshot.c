/* The answer cache across a restart ([Idmapd] Cache-Snapshot): at a clean stop the fresh
 * positive answers are written to a file (root's, 0600, replaced atomically), and at the
 * next start those still fresh by the wall clock are loaded back, so the first minutes
 * after a restart or an upgrade are answered from memory instead of by a storm of backend
 * lookups.  A snapshot is taken back only by the same ID-mapping configuration (a hash of
 * the sections that decide answers) and the same answer layout; anything else in the file
 * (another version, a cut or altered file) is refused as a whole and the daemon starts
 * cold. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "idmapd.h"

#define SNAP_MAGIC "NFSKSNP1"
#define SNAP_KEY_MAX 1024

struct snap_header {
	char magic[8];
	uint32_t answer_size; /* sizeof(struct nfskeys_idmap_answer) */
	uint32_t count;
	uint64_t fingerprint; /* of the configuration that made the answers */
	int64_t written;      /* wall clock, s */
};

struct snap_record {
	uint32_t kind;
	uint32_t klen;
	int64_t expires; /* wall clock, µs */
};

/* FNV-1a over the (section, key, value) triples of the sections that decide answers. */
struct fp {
	uint64_t h;
	const char *section;
};

static void fp_add(struct fp *f, const char *s)
{
	for (; *s; s++)
		f->h = (f->h ^ (unsigned char)*s) * 0x100000001b3ULL;
	f->h = (f->h ^ 0xff) * 0x100000001b3ULL;
}

static int fp_entry(void *userdata, const char *key, const char *value)
{
	struct fp *f = userdata;

	fp_add(f, f->section);
	fp_add(f, key);
	fp_add(f, value ? value : "");
	return 0;
}

uint64_t idmapd_snapshot_fingerprint(struct nfskeys_ctx *ctx)
{
	static const char *const sections[] = { "General", "Translation", "Mapping", "Static",
						"SID", "LDAP", "UMICH_SCHEMA", "Idmap" };
	struct fp f = { 0xcbf29ce484222325ULL, NULL };
	const char *domain = NULL;

	if (nfskeys_idmap_get_domain(ctx, &domain, NULL) == 0 && domain)
		fp_add(&f, domain);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		f.section = sections[i];
		(void)nfskeys_conf_foreach(ctx, sections[i], fp_entry, &f);
	}
	return f.h;
}

static int64_t wall_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

struct snap_writer {
	FILE *f;
	int64_t mono_now, wall_now;
	uint32_t count;
	bool failed;
};

static void write_one(void *userdata, unsigned kind, const char *key,
		      const struct nfskeys_idmap_answer *a, int64_t expires)
{
	struct snap_writer *w = userdata;
	struct snap_record r = { .kind = kind, .klen = (uint32_t)strlen(key) };

	/* a namespace configuration's answers: its number may mean another file next time */
	if (IDMAPD_KIND_PROFILE(kind) || r.klen == 0 || r.klen > SNAP_KEY_MAX)
		return;
	r.expires = w->wall_now + (expires - w->mono_now);
	if (fwrite(&r, sizeof(r), 1, w->f) != 1 || fwrite(a, sizeof(*a), 1, w->f) != 1 ||
	    fwrite(key, r.klen, 1, w->f) != 1)
		w->failed = true;
	w->count++;
}

int idmapd_snapshot_save(struct idmapd *d)
{
	struct snap_header h = { .magic = SNAP_MAGIC,
				 .answer_size = sizeof(struct nfskeys_idmap_answer) };
	struct snap_writer w = { .mono_now = mono_usec(), .wall_now = wall_usec() };
	char tmp[sizeof(d->set.snapshot) + 16];
	int fd;

	if (!d->set.snapshot[0])
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.new", d->set.snapshot);
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || !(w.f = fdopen(fd, "we"))) {
		daemon_log(LOG_WARNING, "cache snapshot %s: %m", tmp);
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	h.fingerprint = d->snapshot_fp;
	h.written = w.wall_now / USEC_PER_SEC;
	if (fwrite(&h, sizeof(h), 1, w.f) != 1)
		w.failed = true;
	idmap_cache_foreach_fresh(d->cache, w.mono_now, write_one, &w);
	h.count = w.count;
	if (fseek(w.f, 0, SEEK_SET) < 0 || fwrite(&h, sizeof(h), 1, w.f) != 1 ||
	    fflush(w.f) != 0 || fsync(fileno(w.f)) < 0)
		w.failed = true;
	if (fclose(w.f) != 0)
		w.failed = true;
	if (w.failed || rename(tmp, d->set.snapshot) < 0) {
		daemon_log(LOG_WARNING, "cache snapshot %s: cannot write it: %m", d->set.snapshot);
		(void)unlink(tmp);
		return -EIO;
	}
	daemon_log(LOG_INFO, "cache snapshot: %u answers saved to %s", w.count, d->set.snapshot);
	return 0;
}

/* Load the snapshot into the cache; the number of answers taken back, or -errno. */
int idmapd_snapshot_load(struct idmapd *d)
{
	struct nfskeys_idmap_answer a;
	struct snap_header h;
	struct snap_record r;
	char key[SNAP_KEY_MAX + 1];
	int64_t mono_now = mono_usec(), wall_now = wall_usec();
	struct stat st;
	const char *why = NULL;
	unsigned n = 0;
	FILE *f;
	int fd;

	if (!d->set.snapshot[0])
		return 0;
	fd = open(d->set.snapshot, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		daemon_log(LOG_WARNING, "cache snapshot %s: not a private file of this user: "
			   "not read", d->set.snapshot);
		close(fd);
		return -EPERM;
	}
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, SNAP_MAGIC, sizeof(h.magic)))
		why = "not a snapshot of this version";
	else if (h.answer_size != sizeof(a))
		why = "another answer layout";
	else if (h.fingerprint != d->snapshot_fp)
		why = "made with another ID-mapping configuration";
	for (uint32_t i = 0; !why && i < h.count; i++) {
		if (fread(&r, sizeof(r), 1, f) != 1 || r.klen == 0 || r.klen > SNAP_KEY_MAX ||
		    fread(&a, sizeof(a), 1, f) != 1 || fread(key, r.klen, 1, f) != 1) {
			why = "cut short or malformed";
			break;
		}
		key[r.klen] = '\0';
		a.name[sizeof(a.name) - 1] = '\0';
		a.backend[sizeof(a.backend) - 1] = '\0';
		if (r.kind == 0 || r.kind >= _NFSKEYS_IDMAP_KIND_MAX || a.kind != r.kind ||
		    a.n_groups > NFSKEYS_IDMAP_GROUPS_MAX || strlen(key) != r.klen) {
			why = "malformed";
			break;
		}
		if (r.expires <= wall_now)
			continue;
		if (idmap_cache_store(d->cache, r.kind, key, &a, 0, mono_now,
				      mono_now + (r.expires - wall_now)) == 0)
			n++;
	}
	fclose(f);
	if (why) {
		/* what was stored before a bad record is dropped with the rest: all or nothing */
		if (n)
			idmap_cache_clear(d->cache);
		daemon_log(LOG_WARNING, "cache snapshot %s: %s: starting cold", d->set.snapshot,
			   why);
		return -EINVAL;
	}
	daemon_log(LOG_INFO, "cache snapshot: %u answers still fresh taken back from %s", n,
		   d->set.snapshot);
	d->st.snapshot_restored = n;
	return (int)n;
}
