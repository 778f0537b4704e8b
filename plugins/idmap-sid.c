/* idmap backend "sid": algorithmic SID <-> id mapping that gives the same answers as
 * SSSD's libsss_idmap.  A domain SID "S-1-5-21-a-b-c" hashes (MurmurHash3 x86_32, seed
 * 0xdeadbeef) to one of (max-min)/size slices; id = slice_min + RID.  RIDs >= size live in
 * secondary slices named "<domain SID>-<first RID>".  Assignments are persisted in a
 * state file (flock()ed, re-read before each new assignment) so reverse lookups work
 * and every process agrees; fixed per-domain ranges ("rid" style) come from [SID].
 * [SID] Algorithm = autorid replaces the slices by winbind idmap_autorid's ranges
 * (idmap-sid-autorid.c); a domain's range "ad MIN - MAX" takes its ids from the
 * directory as winbind's idmap_ad does (idmap-sid-ad.c).
 * Known domains are also kept in a lock-free hash table keyed by the domain's text, so a
 * SID of a known domain maps without parsing it into a struct (pure_sid_to_id). */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "conf-get.h"
#include "idmap-sid.h"
#include "idmap-util.h"

#define HASH_SEED 0xdeadbeefu
#define MAX_SLICES_LIMIT (1u << 22)

/* MurmurHash3 x86_32 (Austin Appleby's public-domain algorithm), little-endian blocks. */
static uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static uint32_t murmur3_32(const void *key, size_t len, uint32_t seed)
{
	const uint8_t *p = key;
	size_t nblocks = len / 4;
	uint32_t h = seed, k;
	const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;

	for (size_t i = 0; i < nblocks; i++, p += 4) {
		k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		    (uint32_t)p[3] << 24;
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
		h = rotl32(h, 13);
		h = h * 5 + 0xe6546b64;
	}
	k = 0;
	switch (len & 3) {
	case 3:
		k ^= (uint32_t)p[2] << 16;
		/* fallthrough */
	case 2:
		k ^= (uint32_t)p[1] << 8;
		/* fallthrough */
	case 1:
		k ^= p[0];
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
	}
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/* The slice name as SSSD hashes it. */
static int slice_name(const uint32_t dom[3], uint32_t first_rid, char *buf, size_t size)
{
	if (first_rid)
		return snprintf(buf, size, "S-1-5-21-%" PRIu32 "-%" PRIu32 "-%" PRIu32 "-%" PRIu32,
				dom[0], dom[1], dom[2], first_rid);
	return snprintf(buf, size, "S-1-5-21-%" PRIu32 "-%" PRIu32 "-%" PRIu32, dom[0], dom[1],
			dom[2]);
}

/* Parse "S-1-5-21-a-b-c" (domain) or "S-1-5-21-a-b-c-R" (with first RID). */
static bool parse_slice_name(const char *s, uint32_t dom[3], uint32_t *first_rid)
{
	struct nfskeys_sid sid;

	if (nfskeys_sid_from_string(s, &sid) < 0 || sid.revision != 1 ||
	    memcmp(sid.authority, "\0\0\0\0\0\5", 6) != 0 || sid.subauth[0] != 21)
		return false;
	if (sid.num_subauth != 4 && sid.num_subauth != 5)
		return false;
	memcpy(dom, &sid.subauth[1], 3 * sizeof(uint32_t));
	*first_rid = sid.num_subauth == 5 ? sid.subauth[4] : 0;
	return true;
}

static ssize_t find_slice(struct sid_data *d, const uint32_t dom[3], uint32_t first_rid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->slices[i].first_rid == first_rid && d->slices[i].dom[0] == dom[0] &&
		    d->slices[i].dom[1] == dom[1] && d->slices[i].dom[2] == dom[2])
			return (ssize_t)i;
	return -1;
}

static bool slice_overlaps_fixed(struct sid_data *d, uint32_t slice)
{
	uint64_t min = (uint64_t)slice * d->size + d->lower, max = min + d->size - 1;

	for (size_t i = 0; i < d->n_fixed; i++)
		if (d->fixed[i].min <= max && d->fixed[i].max >= min)
			return true;
	return false;
}

static int add_slice(struct sid_data *d, const uint32_t dom[3], uint32_t first_rid,
		     uint32_t slice)
{
	if (slice >= d->max_slices || d->by_slice[slice] >= 0)
		return -EEXIST;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct slice *n = malloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (d->slices) {
			if (sid_retire(d, d->slices) < 0) {
				free(n);
				return -ENOMEM;
			}
			memcpy(n, d->slices, d->n * sizeof(*n));
		}
		__atomic_store_n(&d->slices, n, __ATOMIC_RELEASE);
		d->cap = cap;
	}
	memcpy(d->slices[d->n].dom, dom, 3 * sizeof(uint32_t));
	d->slices[d->n].first_rid = first_rid;
	d->slices[d->n].slice = slice;
	d->by_slice[slice] = (int32_t)d->n;
	__atomic_store_n(&d->n, d->n + 1, __ATOMIC_RELEASE);
	sid_fast_add_slice(d, dom, first_rid, slice);
	return 0;
}

/* Merge the state file's assignments (those that do not clash with ours). */
static void read_state(struct sid_data *d, FILE *f)
{
	char line[256];

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char name[200];
		uint32_t dom[3], first_rid, slice;

		/* a line without its newline is the unfinished end of an interrupted write */
		if (line[0] == '#' || !strchr(line, '\n') ||
		    sscanf(line, "%199s %" SCNu32, name, &slice) != 2)
			continue;
		if (!parse_slice_name(name, dom, &first_rid))
			continue;
		if (find_slice(d, dom, first_rid) < 0)
			(void)add_slice(d, dom, first_rid, slice);
	}
}

/* Pick the slice SSSD would: the hash, then the next free one (wrapping). */
static int choose_slice(struct sid_data *d, const uint32_t dom[3], uint32_t first_rid,
			uint32_t *ret)
{
	char name[200];
	int len = slice_name(dom, first_rid, name, sizeof(name));
	uint32_t orig = murmur3_32(name, (size_t)len, HASH_SEED) % d->max_slices, s = orig;

	do {
		if (d->by_slice[s] < 0 && !slice_overlaps_fixed(d, s)) {
			*ret = s;
			return 0;
		}
		s = (s + 1) % d->max_slices;
	} while (s != orig);
	return -ENOSPC;
}

/* Assign (and persist) the slice of dom/first_rid; called with d->lock held. */
static int assign_slice(struct nfskeys_ctx *ctx, struct sid_data *d, const uint32_t dom[3],
			uint32_t first_rid, ssize_t *ret_index)
{
	_cleanup_fclose_ FILE *f = NULL;
	char name[200];
	uint32_t slice;
	int fd, r;

	fd = open(d->state_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		f = fdopen(fd, "r+");
		if (!f)
			close(fd);
	}
	if (f) {
		if (flock(fileno(f), LOCK_EX) == 0)
			read_state(d, f);
		*ret_index = find_slice(d, dom, first_rid);
		if (*ret_index >= 0)
			return 0; /* another process assigned it meanwhile */
	} else {
		plog(ctx, LOG_DEBUG, "idmap sid: %s: %s; slice assignments not persisted",
		     d->state_file, strerror(errno));
	}
	r = choose_slice(d, dom, first_rid, &slice);
	if (r < 0)
		return r;
	r = add_slice(d, dom, first_rid, slice);
	if (r < 0)
		return r;
	if (f) {
		/* One write of whole lines; on a short write (a full disk) the file is cut back
		 * to where it was: a half line ("S-1-5-21-A-B-C 12" cut to "... 1") would
		 * read back as another slice. */
		char buf[sizeof(name) + 96];
		off_t end;
		ssize_t k;
		int n = 0, done = 0;

		slice_name(dom, first_rid, name, sizeof(name));
		end = lseek(fileno(f), 0, SEEK_END);
		if (end == 0)
			n = snprintf(buf, sizeof(buf),
				     "# nfskeys idmap sid slice assignments: slice-name slice\n");
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s %" PRIu32 "\n", name, slice);
		errno = 0;
		/* after a short write the rest fails with the reason (ENOSPC) */
		while (end >= 0 && done < n &&
		       (k = write(fileno(f), buf + done, (size_t)(n - done))) > 0)
			done += (int)k;
		if (end < 0 || done < n || fdatasync(fileno(f)) < 0) {
			int e = errno ? errno : EIO;

			if (end >= 0 && ftruncate(fileno(f), end) < 0)
				e = errno;
			plog(ctx, LOG_WARNING, "idmap sid: cannot write %s: %s", d->state_file,
			     strerror(e));
		}
	}
	*ret_index = (ssize_t)(d->n - 1);
	return 0;
}

static const struct fixed_range *find_fixed(struct sid_data *d, const uint32_t dom[3])
{
	for (size_t i = 0; i < d->n_fixed; i++)
		if (!memcmp(d->fixed[i].dom, dom, sizeof(d->fixed[i].dom)))
			return &d->fixed[i];
	return NULL;
}

struct init_state {
	struct nfskeys_ctx *ctx;
	struct sid_data *d;
	int error;
};

/* The settings a domain may have of its own for its ad range's directory */
static const char *const dom_key_names[] = { "AD-URI", "AD-Base", "AD-Bind-DN",
					     "AD-Bind-Password-File" };

/* "S-1-5-21-A-B-C.KEY = value" */
static int add_dom_key(struct init_state *is, const char *key, const char *value)
{
	struct sid_data *d = is->d;
	const char *dot = strchr(key, '.'), *name = NULL;
	char text[64]; /* S-1-5-21- and three numbers below 2^32 */
	uint32_t dom[3], first_rid;
	struct dom_key *n;

	for (size_t i = 0; i < ARRAY_SIZE(dom_key_names); i++)
		if (strcaseeq(dot + 1, dom_key_names[i]))
			name = dom_key_names[i];
	snprintf(text, sizeof(text), "%.*s", (int)(dot - key), key);
	if (!name || (size_t)(dot - key) >= sizeof(text) ||
	    !parse_slice_name(text, dom, &first_rid) || first_rid != 0) {
		plog(is->ctx, LOG_ERR,
		     "[SID] %s = %s: a domain's own setting is S-1-5-21-A-B-C.KEY with KEY "
		     "AD-URI, AD-Base, AD-Bind-DN or AD-Bind-Password-File",
		     key, value);
		is->error = -EINVAL;
		return -EINVAL;
	}
	n = realloc(d->dom_keys, (d->n_dom_keys + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->dom_keys = n;
	n = &d->dom_keys[d->n_dom_keys];
	memcpy(n->dom, dom, sizeof(n->dom));
	n->key = strdup(name);
	n->text = strdup(key);
	n->value = strdup(value);
	d->n_dom_keys++;
	return n->key && n->text && n->value ? 0 : -ENOMEM;
}

static int add_fixed(void *userdata, const char *key, const char *value)
{
	struct init_state *is = userdata;
	struct sid_data *d = is->d;
	struct fixed_range fr;
	uint32_t first_rid;
	struct fixed_range *n;
	const char *why;

	if (strncasecmp(key, "S-", 2) != 0)
		return 0;
	if (strchr(key, '.'))
		return add_dom_key(is, key, value);
	if (!parse_slice_name(key, fr.dom, &first_rid) || first_rid != 0) {
		plog(is->ctx, LOG_ERR, "[SID] %s = %s: %s is not a domain SID S-1-5-21-A-B-C", key,
		     value, key);
		is->error = -EINVAL;
		return -EINVAL;
	}
	fr.dir = NULL;
	if ((why = sid_parse_range(value, &fr))) {
		plog(is->ctx, LOG_ERR, "[SID] %s = %s: %s", key, value, why);
		is->error = -EINVAL;
		return -EINVAL;
	}
	n = realloc(d->fixed, (d->n_fixed + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->fixed = n;
	d->fixed[d->n_fixed++] = fr;
	return 0;
}

static void sid_done(void *data)
{
	struct sid_data *d = data;

	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	autorid_done(d->ar);
	for (size_t i = 0; i < d->n_fixed; i++)
		sid_ad_done(d->fixed[i].dir);
	for (size_t i = 0; i < d->n_dom_keys; i++) {
		free(d->dom_keys[i].key);
		free(d->dom_keys[i].text);
		free(d->dom_keys[i].value);
	}
	free(d->dom_keys);
	free(d->state_file);
	free(d->slices);
	for (size_t i = 0; i < d->n_retired; i++)
		free(d->retired[i]);
	free(d->retired);
	if (d->fast)
		for (uint32_t i = 0; i <= d->fast->mask; i++)
			free(d->fast->slots[i].secs);
	free(d->fast);
	free(d->by_slice);
	free(d->fixed);
	free(d);
}

static int sid_init(struct nfskeys_ctx *ctx, void **ret_data)
{
	struct sid_data *d = calloc(1, sizeof(*d));
	struct init_state is = { ctx, d, 0 };
	const char *v;
	char err[256];
	bool b;
	int r;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	/* numbers of the schema (common/conf-schema.c: bounds, default) */
	if ((r = conf_get_unsigned(ctx, "SID", "Range-Min", &d->lower, err, sizeof(err))) < 0 ||
	    (r = conf_get_unsigned(ctx, "SID", "Range-Max", &d->upper, err, sizeof(err))) < 0 ||
	    (r = conf_get_unsigned(ctx, "SID", "Range-Size", &d->size, err, sizeof(err))) < 0) {
		plog(ctx, LOG_ERR, "%s", err);
		goto fail;
	}
	v = nfskeys_conf_get(ctx, "SID", "Algorithm");
	if (v && strcmp(v, "sssd") && strcmp(v, "autorid")) {
		plog(ctx, LOG_ERR, "[SID] Algorithm = %s: expected sssd or autorid", v);
		r = -EINVAL;
		goto fail;
	}
	d->auto_domains = true;
	if (nfskeys_conf_get_bool(ctx, "SID", "Auto-Domains", &b) == 0)
		d->auto_domains = b;
	r = nfskeys_conf_foreach(ctx, "SID", add_fixed, &is);
	if (is.error < 0 || (r < 0 && r != -ENOENT)) {
		r = is.error < 0 ? is.error : r;
		goto fail;
	}
	for (size_t i = 0; i < d->n_dom_keys; i++) {
		const struct fixed_range *fr = find_fixed(d, d->dom_keys[i].dom);

		if (!fr || !fr->ad) {
			plog(ctx, LOG_ERR, "[SID] %s: that domain has no ad range",
			     d->dom_keys[i].text);
			r = -EINVAL;
			goto fail;
		}
	}
	for (size_t i = 0; i < d->n_fixed; i++)
		if (d->fixed[i].ad && (r = sid_ad_init(ctx, d, &d->fixed[i])) < 0)
			goto fail;
	if (v && !strcmp(v, "autorid")) {
		if ((r = autorid_init(ctx, d)) < 0)
			goto fail;
		d->fast = sid_fast_table_new(16); /* rid ranges only */
		if (!d->fast) {
			r = -ENOMEM;
			goto fail;
		}
		goto fast_fixed;
	}
	if (d->upper <= d->lower || (d->upper - d->lower) / d->size == 0 ||
	    (d->upper - d->lower) / d->size > MAX_SLICES_LIMIT) {
		plog(ctx, LOG_ERR, "[SID] Range-Min/Range-Max/Range-Size give %u slices; need 1 to %u",
		     (d->upper - d->lower) / d->size, MAX_SLICES_LIMIT);
		r = -EINVAL;
		goto fail;
	}
	d->max_slices = (d->upper - d->lower) / d->size;
	v = nfskeys_conf_get(ctx, "SID", "State-File");
	if (v && *v) {
		d->state_file = strdup(v);
	} else {
		const char *dir = nfskeys_conf_get(ctx, "General", "State-Dir");

		if (asprintf(&d->state_file, "%s/idmap-sid-slices", dir && *dir ? dir : STATEDIR) < 0)
			d->state_file = NULL;
	}
	d->by_slice = malloc(d->max_slices * sizeof(int32_t));
	if (!d->state_file || !d->by_slice) {
		r = -ENOMEM;
		goto fail;
	}
	memset(d->by_slice, 0xff, d->max_slices * sizeof(int32_t));
	d->fast = sid_fast_table_new(16);
	if (!d->fast) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < d->n_fixed; i++)
		if (!d->fixed[i].ad)
			sid_fast_add_fixed(d, &d->fixed[i]);
	{
		FILE *f = fopen(d->state_file, "re");

		if (f) {
			read_state(d, f);
			fclose(f);
		}
	}
	/* Known domains get their primary slices first, in the configured order. */
	v = nfskeys_conf_get(ctx, "SID", "Domains");
	if (v && *v) {
		char *copy = strdup(v), *save = NULL;

		if (!copy) {
			r = -ENOMEM;
			goto fail;
		}
		for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
			uint32_t dom[3], fr;
			ssize_t idx;

			if (!parse_slice_name(t, dom, &fr) || fr != 0) {
				plog(ctx, LOG_ERR, "[SID] Domains: '%s' is not a domain SID S-1-5-21-A-B-C",
				     t);
				free(copy);
				r = -EINVAL;
				goto fail;
			}
			if (!find_fixed(d, dom) && find_slice(d, dom, 0) < 0)
				(void)assign_slice(ctx, d, dom, 0, &idx);
		}
		free(copy);
	}
	*ret_data = d;
	return 0;
fast_fixed:
	for (size_t i = 0; i < d->n_fixed; i++)
		if (!d->fixed[i].ad)
			sid_fast_add_fixed(d, &d->fixed[i]);
	*ret_data = d;
	return 0;
fail:
	sid_done(d);
	return r;
}

static int sid_to_id(struct nfskeys_ctx *ctx, struct sid_data *d,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	const struct nfskeys_sid *sid = req->sid;
	const struct fixed_range *fr = NULL;
	uint32_t dom[3], rid, first_rid;
	ssize_t idx;
	int r = 0;

	if (sid->revision == 1 && !memcmp(sid->authority, "\0\0\0\0\0\5", 6) &&
	    sid->num_subauth == 5 && sid->subauth[0] == 21 &&
	    (fr = find_fixed(d, &sid->subauth[1])) && fr->ad)
		return sid_ad_sid_to_id(ctx, d, fr, req, ret);
	if (d->ar && !(sid->num_subauth == 5 && sid->subauth[0] == 21 && fr))
		return autorid_sid_to_id(ctx, d, req, ret);
	if (sid->revision != 1 || memcmp(sid->authority, "\0\0\0\0\0\5", 6) != 0 ||
	    sid->num_subauth != 5 || sid->subauth[0] != 21)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
				   "'%s' is not a domain account SID (S-1-5-21-A-B-C-RID); "
				   "BUILTIN and well-known SIDs are not mapped",
				   req->key);
	memcpy(dom, &sid->subauth[1], sizeof(dom));
	rid = sid->subauth[4];
	fr = find_fixed(d, dom);
	if (fr) {
		if (rid > fr->max - fr->min)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH,
					   "RID %u is beyond the fixed range %u-%u", rid, fr->min,
					   fr->max);
		ret->id = fr->min + rid;
		return 0;
	}
	first_rid = rid - rid % d->size;
	/* the common case, a slice already assigned: no lock (see struct sid_data) */
	{
		size_t n = __atomic_load_n(&d->n, __ATOMIC_ACQUIRE);
		const struct slice *sl = __atomic_load_n(&d->slices, __ATOMIC_ACQUIRE);

		for (size_t i = 0; i < n; i++)
			if (sl[i].first_rid == first_rid && sl[i].dom[0] == dom[0] &&
			    sl[i].dom[1] == dom[1] && sl[i].dom[2] == dom[2]) {
				ret->id = d->lower + sl[i].slice * d->size + (rid - first_rid);
				return 0;
			}
	}
	pthread_mutex_lock(&d->lock);
	idx = find_slice(d, dom, first_rid);
	if (idx < 0) {
		if (!d->auto_domains && find_slice(d, dom, 0) < 0) {
			pthread_mutex_unlock(&d->lock);
			return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
					   "domain of '%s' is not in [SID] Domains", req->key);
		}
		/* SSSD registers the primary slice of a domain before any secondary one. */
		if (first_rid != 0 && find_slice(d, dom, 0) < 0)
			r = assign_slice(ctx, d, dom, 0, &idx);
		if (r == 0)
			r = assign_slice(ctx, d, dom, first_rid, &idx);
	}
	if (r == 0)
		ret->id = d->lower + d->slices[idx].slice * d->size + (rid - first_rid);
	pthread_mutex_unlock(&d->lock);
	if (r < 0)
		return r == -ENOSPC ? util_reason(req, IDMAP_CAUSE_NO_SUCH, "out of slices") : r;
	return 0;
}

static int id_to_sid(struct nfskeys_ctx *ctx, struct sid_data *d,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	uint32_t id = req->id, dom[3], rid;
	bool found = false;

	for (size_t i = 0; i < d->n_fixed; i++)
		if (id >= d->fixed[i].min && id <= d->fixed[i].max) {
			if (d->fixed[i].ad)
				return sid_ad_id_to_sid(ctx, d, &d->fixed[i], req, ret);
			memcpy(dom, d->fixed[i].dom, sizeof(dom));
			rid = id - d->fixed[i].min;
			found = true;
			break;
		}
	if (!found && d->ar)
		return autorid_id_to_sid(ctx, d, req, ret);
	if (!found && id >= d->lower && id < d->lower + (uint64_t)d->max_slices * d->size) {
		uint32_t s = (id - d->lower) / d->size;
		FILE *f;

		pthread_mutex_lock(&d->lock);
		if (d->by_slice[s] < 0 && (f = fopen(d->state_file, "re"))) {
			/* another process may have assigned it */
			read_state(d, f);
			fclose(f);
		}
		if (d->by_slice[s] >= 0) {
			const struct slice *sl = &d->slices[d->by_slice[s]];

			memcpy(dom, sl->dom, sizeof(dom));
			rid = sl->first_rid + (id - d->lower) % d->size;
			found = true;
		}
		pthread_mutex_unlock(&d->lock);
	}
	if (!found)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH,
				   "id %u is in no assigned slice or fixed range", id);
	ret->id = id;
	ret->sid.revision = 1;
	ret->sid.authority[5] = 5;
	ret->sid.num_subauth = 5;
	ret->sid.subauth[0] = 21;
	memcpy(&ret->sid.subauth[1], dom, sizeof(dom));
	ret->sid.subauth[4] = rid;
	return nfskeys_sid_to_string(&ret->sid, ret->name, sizeof(ret->name)) < 0 ? -EINVAL : 0;
}

/* The hot path: "S-1-5-21-a-b-c-RID" of a domain the table knows, by hashing the text
 * "a-b-c" as given (a known domain's text is canonical, so an exact match is also the
 * validation: the slow path would parse the same numbers).  Anything else, including
 * non-canonical spellings of a known domain, is -EAGAIN: lookup() then decides. */
static int sid_pure_to_id(void *data, const char *text, uint32_t *ret_id)
{
	struct sid_data *d = data;
	const char *end, *q, *key;
	const struct fast_table *t;
	const struct fast_dom *e;
	uint64_t rid = 0;
	size_t len, klen;
	uint32_t hash;

	/* the shortest SID with a domain this table can hold: "S-1-5-21-1-2-3-4" */
	len = strlen(text);
	if (len < 16 || (text[0] | 0x20) != 's' || memcmp(text + 1, "-1-5-21-", 8) != 0)
		return -EAGAIN;
	end = text + len;
	/* the RID: 1 to 10 digits after the last '-' */
	for (q = end; q > text + 9 && (unsigned)(unsigned char)q[-1] - '0' <= 9; q--)
		;
	if (q == end || end - q > 10 || q[-1] != '-')
		return -EAGAIN;
	for (const char *c = q; c < end; c++)
		rid = rid * 10 + (uint64_t)(*c - '0');
	if (rid > UINT32_MAX)
		return -EAGAIN;
	key = text + 9;
	klen = (size_t)(q - 1 - key);
	if (klen < 5 || klen > sizeof(e->text))
		return -EAGAIN;
	hash = dom_hash(key, klen);
	t = __atomic_load_n(&d->fast, __ATOMIC_ACQUIRE);
	e = fast_slot((struct fast_table *)t, key, klen, hash);
	if (!e->klen)
		return -EAGAIN;
	if (e->fixed) {
		if (rid > e->fixed_span)
			return -EAGAIN; /* lookup() says why */
		*ret_id = e->fixed_min + (uint32_t)rid;
		return 0;
	}
	if (rid < d->size) {
		if (!__atomic_load_n(&e->primary, __ATOMIC_ACQUIRE))
			return -EAGAIN;
		*ret_id = e->base0 + (uint32_t)rid;
		return 0;
	}
	{
		const struct fast_secs *s = __atomic_load_n(&e->secs, __ATOMIC_ACQUIRE);
		uint32_t first_rid = (uint32_t)rid - (uint32_t)rid % d->size, n;

		n = s ? __atomic_load_n(&s->n, __ATOMIC_ACQUIRE) : 0;
		for (uint32_t i = 0; i < n; i++)
			if (s->v[i].first_rid == first_rid) {
				*ret_id = s->v[i].base + ((uint32_t)rid - first_rid);
				return 0;
			}
	}
	return -EAGAIN;
}

static int sid_lookup(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		      struct nfskeys_idmap_answer *ret)
{
	struct sid_data *d = data;

	switch (req->kind) {
	case NFSKEYS_IDMAP_SID_TO_UID:
	case NFSKEYS_IDMAP_SID_TO_GID:
		return sid_to_id(ctx, d, req, ret);
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		return id_to_sid(ctx, d, req, ret);
	default:
		return -ENOENT;
	}
}

static const struct nfskeys_idmap_ops ops = {
	.size = sizeof(ops),
	/* no nowait_kinds/lookup_nowait: a domain's first use persists its slice to the
	 * state file (I/O); the pure SID->id path (pure_sid_to_id) is already memory-only */
	.init = sid_init,
	.done = sid_done,
	.lookup = sid_lookup,
	.kinds = IDMAP_SID_KINDS,
	.pure_sid_to_id = sid_pure_to_id,
};

static const struct nfskeys_plugin plugin = {
	.abi = NFSKEYS_PLUGIN_ABI,
	.size = sizeof(plugin),
	.kind = NFSKEYS_PLUGIN_IDMAP,
	.name = "idmap-sid",
	.description = "algorithmic SID mapping compatible with SSSD's libsss_idmap",
	.ops = &ops,
	.ops_size = sizeof(ops),
};

_public_ const struct nfskeys_plugin *nfskeys_plugin_entry(void)
{
	return &plugin;
}
