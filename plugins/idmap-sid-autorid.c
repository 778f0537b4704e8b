/* The "autorid" algorithm of the sid backend ([SID] Algorithm = autorid): the answers of
 * Samba winbind's idmap_autorid.  Ids Range-Min to Range-Max are cut into ranges of
 * Range-Size ids; range 0 is the pool (winbind's "*"/ALLOC range), the others go to
 * domains in order of first use: the range of "DOMAIN" holds RIDs 0 to size-1,
 * "DOMAIN#N" RIDs N*size to (N+1)*size-1, and id = range start + RID % size, a uid and a
 * gid alike.  The well-known SIDs winbind preallocates at its start have gids counted
 * down from the top of the pool, in its order, and no uid; other SIDs of the well-known
 * domains (S-1-1, S-1-2, S-1-3, S-1-5) are not mapped (winbind allocates them only when
 * its lookup of the SID gives a type, and Samba resolves none of those tried, e.g.
 * S-1-5-113).  BUILTIN (S-1-5-32) gets a range only when [SID] Domains lists it:
 * winbind on a member server maps no BUILTIN SID (its lookup finds no such domain).
 * The ranges are kept in a text file, flock()ed and re-read before each assignment, so
 * answers survive restarts and every process agrees; its "config" line holds the
 * configuration it was made with, and another one is refused. */
#include <fcntl.h>
#include <inttypes.h>
#include <strings.h>
#include <sys/file.h>

#include "conf-get.h"
#include "idmap-sid.h"
#include "idmap-util.h"

#define KEY_MAX 128 /* "S-1-5-21-a-b-c#N" with room to spare */

/* What winbind maps at its start, in this order, from the top of the pool down. */
static const char *const preallocated[] = {
	"S-1-1-0",  "S-1-2-0",	"S-1-2-1",  "S-1-3-0",	"S-1-3-1",  "S-1-3-2",	"S-1-3-3",
	"S-1-3-4",  "S-1-5-1",	"S-1-5-2",  "S-1-5-3",	"S-1-5-4",  "S-1-5-6",	"S-1-5-7",
	"S-1-5-8",  "S-1-5-9",	"S-1-5-10", "S-1-5-11", "S-1-5-12", "S-1-5-13", "S-1-5-14",
	"S-1-5-15", "S-1-5-17", "S-1-5-18", "S-1-5-19", "S-1-5-20",
};
#define N_PREALLOCATED (sizeof(preallocated) / sizeof(preallocated[0]))

struct autorid {
	uint32_t low, size, max_ranges;
	char *state_file;
	char (*ranges)[KEY_MAX]; /* range number -> key; "" when free, [0] the pool */
	char **domains;		 /* [SID] Domains: may get ranges when Auto-Domains is off */
	size_t n_domains;
};

void autorid_done(struct autorid *a)
{
	if (!a)
		return;
	free(a->state_file);
	free(a->ranges);
	for (size_t i = 0; i < a->n_domains; i++)
		free(a->domains[i]);
	free(a->domains);
	free(a);
}

static uint32_t pool_top(const struct autorid *a)
{
	return a->low + a->size - 1;
}

/* The state file's lines into a (replacing what a had).  -EINVAL (logged) when the file
 * was made with another configuration. */
static int read_state(struct nfskeys_ctx *ctx, struct autorid *a, FILE *f)
{
	char line[256], key[KEY_MAX];
	uint32_t n, s, m;

	rewind(f);
	for (uint32_t i = 1; i < a->max_ranges; i++)
		a->ranges[i][0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		/* a line without its newline is the unfinished end of an interrupted write */
		if (line[0] == '#' || !strchr(line, '\n'))
			continue;
		if (sscanf(line, "config %" SCNu32 " %" SCNu32 " %" SCNu32, &n, &s, &m) == 3) {
			if (n != a->low || s != a->size || m != a->max_ranges) {
				plog(ctx, LOG_ERR,
				     "idmap sid autorid: %s was made for Range-Min %u, Range-Size "
				     "%u, %u ranges, not %u, %u, %u: its answers would change",
				     a->state_file, n, s, m, a->low, a->size, a->max_ranges);
				return -EINVAL;
			}
		} else if (sscanf(line, "range %" SCNu32 " %127s", &n, key) == 2) {
			if (n > 0 && n < a->max_ranges && !a->ranges[n][0])
				snprintf(a->ranges[n], KEY_MAX, "%s", key);
		}
	}
	return 0;
}

/* Open and lock the state file and re-read it.  NULL (logged at debug level) when it
 * cannot be opened: assignments are then not persisted. */
static FILE *lock_state(struct nfskeys_ctx *ctx, struct autorid *a, int *error)
{
	int fd = open(a->state_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "r+") : NULL;

	*error = 0;
	if (!f) {
		plog(ctx, LOG_DEBUG, "idmap sid autorid: %s: %s; assignments not persisted",
		     a->state_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (flock(fileno(f), LOCK_EX) == 0)
		*error = read_state(ctx, a, f);
	return f;
}

/* Append one line (and the header first in a new file); a short write is cut back. */
static void append_state(struct nfskeys_ctx *ctx, struct autorid *a, FILE *f, const char *what)
{
	char buf[512];
	off_t end = lseek(fileno(f), 0, SEEK_END);
	int n = 0, done = 0;
	ssize_t k;

	if (end == 0)
		n = snprintf(
			buf, sizeof(buf),
			"# nfskeys idmap sid autorid ranges: config LOW SIZE RANGES, range N KEY\n"
			"config %u %u %u\n",
			a->low, a->size, a->max_ranges);
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s\n", what);
	errno = 0;
	while (end >= 0 && done < n && (k = write(fileno(f), buf + done, (size_t)(n - done))) > 0)
		done += (int)k;
	if (end < 0 || done < n || fdatasync(fileno(f)) < 0) {
		int e = errno ? errno : EIO;

		if (end >= 0 && ftruncate(fileno(f), end) < 0)
			e = errno;
		plog(ctx, LOG_WARNING, "idmap sid autorid: cannot write %s: %s", a->state_file,
		     strerror(e));
	}
}

/* The range of key, 0 for none (range 0 is the pool's). */
static int find_range(const struct autorid *a, const char *key)
{
	for (uint32_t i = 1; i < a->max_ranges; i++)
		if (!strcmp(a->ranges[i], key))
			return (int)i;
	return 0;
}

/* The range of key, assigned (the next free number) when it has none and may get one;
 * 0 when it has none and may not. */
static int get_range(struct nfskeys_ctx *ctx, struct autorid *a, const char *key, bool assign)
{
	_cleanup_fclose_ FILE *f = NULL;
	int r = find_range(a, key), e;
	uint32_t next;

	if (r > 0 || !assign)
		return r;
	f = lock_state(ctx, a, &e);
	if (e < 0)
		return e;
	r = find_range(a, key);
	if (r > 0)
		return r; /* another process assigned it meanwhile */
	for (next = 1; next < a->max_ranges && a->ranges[next][0]; next++)
		;
	if (next >= a->max_ranges)
		return -ENOSPC;
	snprintf(a->ranges[next], KEY_MAX, "%s", key);
	if (f) {
		char line[KEY_MAX + 32];

		snprintf(line, sizeof(line), "range %u %s", next, key);
		append_state(ctx, a, f, line);
	}
	return (int)next;
}

static bool is_wellknown_domain(const struct nfskeys_sid *dom)
{
	static const uint8_t base[5] = { 0 };

	return dom->revision == 1 && dom->num_subauth == 0 && !memcmp(dom->authority, base, 5) &&
	       (dom->authority[5] == 1 || dom->authority[5] == 2 || dom->authority[5] == 3 ||
		dom->authority[5] == 5);
}

static bool may_get_range(const struct sid_data *d, const struct nfskeys_sid *dom, const char *text)
{
	const struct autorid *a = d->ar;

	if (dom->num_subauth == 4 && dom->subauth[0] == 21 && dom->authority[5] == 5 &&
	    d->auto_domains)
		return true;
	for (size_t i = 0; i < a->n_domains; i++)
		if (!strcmp(a->domains[i], text))
			return true;
	return false;
}

int autorid_sid_to_id(struct nfskeys_ctx *ctx, struct sid_data *d,
		      struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	struct autorid *a = d->ar;
	struct nfskeys_sid dom = *req->sid;
	char text[KEY_MAX - 16], key[KEY_MAX];
	uint32_t rid, index;
	int r;

	if (dom.num_subauth == 0)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "'%s' has no RID", req->key);
	rid = dom.subauth[--dom.num_subauth];
	if (nfskeys_sid_to_string(&dom, text, sizeof(text)) < 0)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED, "'%s': domain too long", req->key);
	if (is_wellknown_domain(&dom)) {
		char sid[KEY_MAX];

		nfskeys_sid_to_string(req->sid, sid, sizeof(sid));
		for (size_t k = 0; k < N_PREALLOCATED; k++)
			if (!strcmp(preallocated[k], sid) &&
			    req->kind == NFSKEYS_IDMAP_SID_TO_GID) {
				ret->id = pool_top(a) - (uint32_t)k;
				return 0;
			}
		return util_reason(req, IDMAP_CAUSE_NO_SUCH,
				   "'%s' is a well-known SID: a gid, when autorid preallocates it",
				   req->key);
	}
	index = rid / a->size;
	if (index)
		snprintf(key, sizeof(key), "%s#%u", text, index);
	else
		snprintf(key, sizeof(key), "%s", text);
	/* a domain with its first range may get more, as in winbind */
	pthread_mutex_lock(&d->lock);
	r = get_range(ctx, a, key,
		      may_get_range(d, &dom, text) || (index && find_range(a, text) > 0));
	pthread_mutex_unlock(&d->lock);
	if (r == -ENOSPC)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "no free range left for '%s'", key);
	if (r < 0)
		return r;
	if (r == 0)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
				   "domain %s gets no autorid range: not in [SID] Domains", text);
	ret->id = a->low + (uint32_t)r * a->size + rid % a->size;
	return 0;
}

int autorid_id_to_sid(struct nfskeys_ctx *ctx, struct sid_data *d,
		      struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret)
{
	struct autorid *a = d->ar;
	uint32_t id = req->id, range, index = 0;
	char key[KEY_MAX] = "", *hash;
	int e;

	if (id < a->low || id - a->low >= (uint64_t)a->size * a->max_ranges)
		return util_reason(req, IDMAP_CAUSE_NOT_HANDLED,
				   "id %u is outside the autorid ranges", id);
	range = (id - a->low) / a->size;
	if (range == 0) {
		/* the preallocated well-known SIDs, gids only */
		if (req->kind == NFSKEYS_IDMAP_GID_TO_SID && id > pool_top(a) - N_PREALLOCATED)
			snprintf(key, sizeof(key), "%s", preallocated[pool_top(a) - id]);
		if (!key[0])
			return util_reason(req, IDMAP_CAUSE_NO_SUCH,
					   "id %u of the pool is no well-known SID's gid", id);
	} else {
		pthread_mutex_lock(&d->lock);
		if (!a->ranges[range][0]) {
			/* another process may have assigned it */
			_cleanup_fclose_ FILE *f = lock_state(ctx, a, &e);
		}
		snprintf(key, sizeof(key), "%s", a->ranges[range]);
		pthread_mutex_unlock(&d->lock);
		if (!key[0])
			return util_reason(req, IDMAP_CAUSE_NO_SUCH,
					   "range %u of id %u is not assigned", range, id);
		hash = strchr(key, '#');
		if (hash) {
			*hash = '\0';
			index = (uint32_t)strtoul(hash + 1, NULL, 10);
		}
	}
	if (nfskeys_sid_from_string(key, &ret->sid) < 0)
		return util_reason(req, IDMAP_CAUSE_NO_SUCH, "bad state entry '%s'", key);
	if (range != 0) {
		if (ret->sid.num_subauth >= NFSKEYS_SID_MAX_SUBAUTH)
			return util_reason(req, IDMAP_CAUSE_NO_SUCH, "bad state entry '%s'", key);
		ret->sid.subauth[ret->sid.num_subauth++] =
			index * a->size + (id - a->low) % a->size;
	}
	ret->id = id;
	return nfskeys_sid_to_string(&ret->sid, ret->name, sizeof(ret->name)) < 0 ? -EINVAL : 0;
}

/* Does [SID] give dom a range of its own (rid or ad)?  It then gets no autorid range. */
static bool has_own_range(const struct sid_data *d, const struct nfskeys_sid *dom)
{
	if (dom->num_subauth != 4 || dom->subauth[0] != 21)
		return false;
	for (size_t i = 0; i < d->n_fixed; i++)
		if (!memcmp(d->fixed[i].dom, &dom->subauth[1], sizeof(d->fixed[i].dom)))
			return true;
	return false;
}

/* Domains: the domain SIDs that get ranges when Auto-Domains is off; at start they get
 * them in the order given (what they would get in that order of first use). */
static int parse_domains(struct nfskeys_ctx *ctx, struct sid_data *d, const char *v)
{
	struct autorid *a = d->ar;
	char *copy = strdup(v), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ", \t", &save); t && r == 0;
	     t = strtok_r(NULL, ", \t", &save)) {
		struct nfskeys_sid sid;
		char text[KEY_MAX], **n;

		if (nfskeys_sid_from_string(t, &sid) < 0 ||
		    nfskeys_sid_to_string(&sid, text, sizeof(text)) < 0 ||
		    !(strcmp(text, "S-1-5-32") == 0 ||
		      (sid.num_subauth == 4 && sid.subauth[0] == 21 && sid.authority[5] == 5))) {
			plog(ctx, LOG_ERR,
			     "[SID] Domains: '%s' is not a domain SID S-1-5-21-A-B-C or S-1-5-32",
			     t);
			r = -EINVAL;
			break;
		}
		n = realloc(a->domains, (a->n_domains + 1) * sizeof(*n));
		if (!n || !(n[a->n_domains] = strdup(text))) {
			if (n)
				a->domains = n;
			r = -ENOMEM;
			break;
		}
		a->domains = n;
		a->n_domains++;
		if (has_own_range(d, &sid))
			continue;
		r = get_range(ctx, a, text, true);
		if (r == -ENOSPC) {
			plog(ctx, LOG_ERR, "[SID] Domains: no free autorid range left for %s",
			     text);
			r = -EINVAL;
		}
		r = r < 0 ? r : 0;
	}
	free(copy);
	return r;
}

int autorid_init(struct nfskeys_ctx *ctx, struct sid_data *d)
{
	struct autorid *a = calloc(1, sizeof(*a));
	const char *v;
	uint64_t span;
	FILE *f;
	int r;

	if (!a)
		return -ENOMEM;
	d->ar = a;
	/* winbind's "range = LOW-HIGH" takes HIGH in: (HIGH - LOW + 1) / size ranges */
	a->low = d->lower;
	a->size = d->size;
	span = (uint64_t)d->upper - d->lower + 1;
	if (d->upper < d->lower || span / d->size < 2 || span / d->size > (1u << 16)) {
		plog(ctx, LOG_ERR,
		     "[SID] Algorithm = autorid: Range-Min %u to Range-Max %u holds %" PRIu64
		     " ranges of Range-Size %u; need 2 (the pool and one domain) to %u",
		     d->lower, d->upper, d->upper < d->lower ? 0 : span / d->size, d->size,
		     1u << 16);
		return -EINVAL;
	}
	a->max_ranges = (uint32_t)(span / d->size);
	v = nfskeys_conf_get(ctx, "SID", "State-File");
	if (v && *v)
		a->state_file = strdup(v);
	else {
		const char *dir = nfskeys_conf_get(ctx, "General", "State-Dir");

		if (asprintf(&a->state_file, "%s/idmap-sid-autorid", dir && *dir ? dir : STATEDIR) <
		    0)
			a->state_file = NULL;
	}
	a->ranges = calloc(a->max_ranges, KEY_MAX);
	if (!a->state_file || !a->ranges)
		return -ENOMEM;
	snprintf(a->ranges[0], KEY_MAX, "ALLOC");
	f = fopen(a->state_file, "re");
	if (f) {
		r = read_state(ctx, a, f);
		fclose(f);
		if (r < 0)
			return r;
	}
	v = nfskeys_conf_get(ctx, "SID", "Domains");
	return v && *v ? parse_domains(ctx, d, v) : 0;
}
