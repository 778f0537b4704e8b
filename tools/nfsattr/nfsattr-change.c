/* nfsattr's changes: set, unset and import, sent to nfskeys-attrd with the directory as
 * an open descriptor, or written into the store by root with --direct (then the daemon
 * is told to re-read it). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "macros.h"
#include "cli.h"
#include "cli-table.h"
#include "attrd-client.h"
#include "nfsattr-json.h"
#include "nfsattr-private.h"
#include "nfskeys.h"
#include "stats.h"

/* Tell a running daemon to re-read the store after a direct change. */
static void poke_daemon(struct opts *o)
{
	struct rpc_client *c = NULL;
	char msg[512];

	if (attrd_client_new(attrd_socket_path(o->ctx, o->socket), 5000, &c) < 0)
		return;
	if (attrd_client_reload(c, msg, sizeof(msg)) == 0)
		fprintf(stderr, "nfsattr: nfskeys-attrd reloaded the store\n");
	rpc_client_free(c);
}

static int daemon_error(struct opts *o, int r, const char *msg)
{
	if (msg[0] == '\0' && (r == -ENOENT || r == -ECONNREFUSED)) {
		fprintf(stderr,
			"nfsattr: nfskeys-attrd is not running (no listener on %s); root can write "
			"the store without it with --direct\n",
			nfsattr_shown(attrd_socket_path(o->ctx, o->socket)));
		return EXIT_NODAEMON;
	}
	if (r == -EPERM || r == -EACCES || r == -EDQUOT) {
		fprintf(stderr, "nfsattr: refused: %s\n",
			nfsattr_shown(msg[0] ? msg : strerror(-r)));
		return EXIT_REFUSED;
	}
	return nfsattr_fail("%s", msg[0] ? msg : strerror(-r));
}

static int open_dir(const char *path, int *ret_fd)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int r = negerrno();
		nfsattr_fail("%s: %s", path, strerror(-r));
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int direct_store(struct opts *o, struct nfskeys_attr_store **ret)
{
	int r;

	if (geteuid() != 0) {
		nfsattr_fail("--direct writes the store itself and is for root only");
		return -EPERM;
	}
	r = nfskeys_attr_store_open(o->ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, ret);
	if (r < 0)
		nfsattr_fail("cannot open the policy store for writing: %s", strerror(-r));
	return r;
}

int nfsattr_cmd_set(struct opts *o, int argc, char **argv)
{
	struct nfskeys_attr_policy *p = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *where = NULL;
	char msg[1024] = "";
	int r, ret = EXIT_FAIL;

	if (argc < 2) {
		fprintf(stderr, "nfsattr: set takes PATH KEY=VALUE...\n");
		return EXIT_USAGE;
	}
	if (nfskeys_attr_policy_new(&p) < 0)
		return EXIT_FAIL;
	for (int i = 1; i < argc; i++) {
		r = nfskeys_attr_policy_parse(p, argv[i], msg, sizeof(msg));
		if (r < 0) {
			nfsattr_fail("%s", r == -EINVAL ? msg : strerror(-r));
			goto out;
		}
	}
	if (open_dir(argv[0], &fd) < 0)
		goto out;
	if (o->direct) {
		struct nfskeys_attr_store *st = NULL;
		struct nfskeys_attr_id *id = NULL;

		if (direct_store(o, &st) < 0)
			goto out;
		r = nfskeys_attr_id_from_fd(o->ctx, fd, &id);
		if (r == 0)
			r = nfskeys_attr_store_set(st, id, p, 0, false);
		if (r == 0)
			where = nfsattr_id_string(id);
		nfskeys_attr_id_free(id);
		nfskeys_attr_store_close(st);
		if (r < 0) {
			nfsattr_fail("%s: %s", argv[0], strerror(-r));
			goto out;
		}
		poke_daemon(o);
	} else {
		struct rpc_client *c = NULL;

		r = attrd_client_new(attrd_socket_path(o->ctx, o->socket), 10000, &c);
		if (r == 0)
			r = attrd_client_set(c, fd, p, msg, sizeof(msg), &where);
		rpc_client_free(c);
		if (r < 0) {
			ret = daemon_error(o, r, msg);
			goto out;
		}
	}
	if (o->json) {
		printf("{\"directory\":");
		json_print_string(stdout, where);
		printf(",\"changed\":%zu}\n", nfskeys_attr_policy_count(p));
	} else {
		printf("%s:", nfsattr_shown(where));
		for (int i = 1; i < argc; i++)
			printf(" %s", nfsattr_shown(argv[i]));
		printf("\n");
	}
	ret = EXIT_OK;
out:
	nfskeys_attr_policy_free(p);
	return ret;
}

static bool key_known(const char *k)
{
	for (int i = 0; i < _NFSKEYS_ATTR_MAX; i++)
		if (streq(nfskeys_attr_key_name(i), k))
			return true;
	return startswith(k, "user.") && k[5];
}

int nfsattr_cmd_unset(struct opts *o, int argc, char **argv)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ const char **keys = NULL;
	_cleanup_free_ char *where = NULL;
	char msg[1024] = "";
	unsigned changed = 0;
	int r;

	if (argc < 1 || (argc == 1 && !o->all) || (argc > 1 && o->all)) {
		fprintf(stderr, "nfsattr: unset takes PATH KEY... or PATH --all\n");
		return EXIT_USAGE;
	}
	if (!o->all) {
		keys = calloc((size_t)argc, sizeof(*keys));
		if (!keys)
			return EXIT_FAIL;
		for (int i = 1; i < argc; i++) {
			if (!key_known(argv[i]))
				return nfsattr_fail("unknown attribute '%s'", argv[i]);
			keys[i - 1] = argv[i];
		}
	}
	if (open_dir(argv[0], &fd) < 0)
		return EXIT_FAIL;
	if (o->direct) {
		struct nfskeys_attr_store *st = NULL;
		struct nfskeys_attr_id *id = NULL;

		if (direct_store(o, &st) < 0)
			return EXIT_FAIL;
		r = nfskeys_attr_id_from_fd(o->ctx, fd, &id);
		if (r == 0)
			r = nfskeys_attr_store_unset(st, id, keys, false);
		if (r >= 0) {
			changed = (unsigned)r;
			where = nfsattr_id_string(id);
		}
		nfskeys_attr_id_free(id);
		nfskeys_attr_store_close(st);
		if (r < 0)
			return nfsattr_fail("%s: %s", argv[0], strerror(-r));
		poke_daemon(o);
	} else {
		struct rpc_client *c = NULL;

		r = attrd_client_new(attrd_socket_path(o->ctx, o->socket), 10000, &c);
		if (r == 0)
			r = attrd_client_unset(c, fd, keys, msg, sizeof(msg), &changed);
		rpc_client_free(c);
		if (r < 0)
			return daemon_error(o, r, msg);
	}
	if (o->json)
		printf("{\"changed\":%u}\n", changed);
	else if (changed == 0)
		printf("%s: nothing to remove\n", nfsattr_shown(argv[0]));
	else
		printf("%s: removed %u attribute%s\n", nfsattr_shown(argv[0]), changed,
		       changed == 1 ? "" : "s");
	return EXIT_OK;
}

static char *read_all(FILE *f)
{
	size_t cap = 4096, len = 0, n;
	char *buf = malloc(cap);

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = cap > (64u << 20) ? NULL : realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && streq(s + n - m, suffix);
}

static bool has_upper(const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		if (isupper((unsigned char)s[i]))
			return true;
	return false;
}

/* Why a row's domain and path can never match a directory, or NULL.  Lookups build the
 * identity the way the library names a mount (nfsattr show prints it): the domain is
 * nfs://SERVER, cifs://SERVER/SHARE, afs://CELL/VOLUME or local://MAJOR:MINOR, server,
 * share and cell in lower case, and everything below it is the path, from "/".  A row
 * split elsewhere ("nfs://srv/export" + "/dir") would be stored and never found. */
static const char *import_row_problem(const char *domain, const char *path)
{
	const char *rest, *slash;
	unsigned maj, min;
	int end = 0;

	if (path[0] != '/')
		return "\"path\" must start with / (everything below the domain, e.g. "
		       "\"/export/dir\")";
	if (startswith(domain, "nfs://")) {
		rest = domain + strlen("nfs://");
		if (strchr(rest, '/'))
			return "an NFS domain is nfs://SERVER alone; the export belongs in \"path\" "
			       "(\"domain\":\"nfs://srv\",\"path\":\"/export/dir\")";
		if (has_upper(rest, strlen(rest)))
			return "the server in an NFS domain is in lower case";
		return NULL;
	}
	if (startswith(domain, "cifs://") || startswith(domain, "afs://")) {
		bool cifs = startswith(domain, "cifs://");

		rest = domain + strlen(cifs ? "cifs://" : "afs://");
		slash = strchr(rest, '/');
		if (!slash || slash == rest || !slash[1] || strchr(slash + 1, '/'))
			return cifs ? "a CIFS domain is cifs://SERVER/SHARE; what is below the share "
				      "belongs in \"path\"" :
				      "an AFS domain is afs://CELL/VOLUME; what is below the volume "
				      "belongs in \"path\"";
		if (has_upper(rest, cifs ? strlen(rest) : (size_t)(slash - rest)))
			return cifs ? "the server and share in a CIFS domain are in lower case" :
				      "the cell in an AFS domain is in lower case";
		if (!cifs && (ends_with(slash, ".readonly") || ends_with(slash, ".backup")))
			return "an AFS domain names the volume without .readonly or .backup (its "
			       "snapshots share its policy)";
		return NULL;
	}
	if (startswith(domain, "local://")) {
		if (sscanf(domain + strlen("local://"), "%u:%u%n", &maj, &min, &end) != 2 ||
		    domain[strlen("local://") + (size_t)end] != '\0')
			return "a local domain is local://MAJOR:MINOR, the device's numbers";
		return NULL;
	}
	return "the domain starts with nfs://, cifs://, afs:// or local://";
}

int nfsattr_cmd_import(struct opts *o, int argc, char **argv)
{
	_cleanup_free_ char *text = NULL;
	struct json *doc = NULL;
	const struct json *pols = NULL;
	struct nfskeys_attr_store *st = NULL;
	struct nfskeys_attr_policy **ps = NULL;
	struct nfskeys_attr_id **ids = NULL;
	char err[512];
	size_t n = 0, attrs = 0;
	int r, ret = EXIT_FAIL;

	if (argc != 1) {
		fprintf(stderr, "nfsattr: import takes FILE or -\n");
		return EXIT_USAGE;
	}
	{
		FILE *f = streq(argv[0], "-") ? stdin : fopen(argv[0], "re");
		if (!f)
			return nfsattr_fail("%s: %m", argv[0]);
		text = read_all(f);
		if (f != stdin)
			fclose(f);
		if (!text)
			return nfsattr_fail("%s: cannot read it", argv[0]);
	}
	if (json_parse(text, &doc, err, sizeof(err)) < 0)
		return nfsattr_fail("%s: %s", argv[0], err);
	pols = json_get(doc, "policies");
	if (!pols || pols->type != JSON_ARRAY) {
		nfsattr_fail("%s: not an nfsattr export (no \"policies\" array)", argv[0]);
		goto out;
	}
	/* validate everything before writing anything */
	ps = calloc(pols->n + 1, sizeof(*ps));
	ids = calloc(pols->n + 1, sizeof(*ids));
	if (!ps || !ids)
		goto out;
	for (n = 0; n < pols->n; n++) {
		const struct json *e = pols->items[n];
		const struct json *dom = json_get(e, "domain"), *path = json_get(e, "path");
		const struct json *at = json_get(e, "attributes");

		if (!dom || dom->type != JSON_STRING || !path || path->type != JSON_STRING ||
		    !at || at->type != JSON_OBJECT) {
			nfsattr_fail("%s: policies[%zu]: needs \"domain\", \"path\" and \"attributes\"",
			     argv[0], n);
			goto out;
		}
		if (import_row_problem(dom->str, path->str)) {
			nfsattr_fail(
				"%s: policies[%zu]: domain '%s', path '%s' can never match: %s",
				argv[0], n, dom->str, path->str,
				import_row_problem(dom->str, path->str));
			goto out;
		}
		if (nfskeys_attr_id_new(dom->str, path->str, &ids[n]) < 0) {
			nfsattr_fail("%s: policies[%zu]: bad domain '%s' or path '%s'", argv[0], n, dom->str,
			     path->str);
			goto out;
		}
		if (nfskeys_attr_policy_new(&ps[n]) < 0)
			goto out;
		for (size_t k = 0; k < at->n; k++) {
			if (at->items[k]->type != JSON_STRING) {
				nfsattr_fail("%s: policies[%zu].attributes.%s: the value must be a string",
				     argv[0], n, at->keys[k]);
				goto out;
			}
			if (nfskeys_attr_policy_set(ps[n], at->keys[k], at->items[k]->str, err,
						    sizeof(err)) < 0) {
				nfsattr_fail("%s: policies[%zu]: %s", argv[0], n, err);
				goto out;
			}
			attrs++;
		}
	}
	if (direct_store(o, &st) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (nfskeys_attr_policy_count(ps[i]) == 0)
			continue;
		r = nfskeys_attr_store_set(st, ids[i], ps[i], 0, false);
		if (r < 0) {
			nfsattr_fail("storing policies[%zu]: %s", i,
			     r == -E2BIG ? "too many attributes on one directory" : strerror(-r));
			goto out;
		}
	}
	nfskeys_attr_store_close(st);
	st = NULL;
	poke_daemon(o);
	if (o->json)
		printf("{\"policies\":%zu,\"attributes\":%zu}\n", n, attrs);
	else
		printf("imported %zu directories, %zu attributes\n", n, attrs);
	ret = EXIT_OK;
out:
	nfskeys_attr_store_close(st);
	for (size_t i = 0; ps && ids && pols && i < pols->n; i++) {
		nfskeys_attr_policy_free(ps[i]);
		nfskeys_attr_id_free(ids[i]);
	}
	free(ps);
	free(ids);
	json_free(doc);
	return ret;
}
