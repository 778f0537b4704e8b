/* nfsattr: per-directory cache policy for network filesystems.  Reads (get, show, list,
 * export, mount-options) come straight from the store through libnfskeys, so they work
 * without the daemon; changes (set, unset) go to nfskeys-attrd with the directory passed
 * as an open descriptor, or, for root only and when asked (--direct), into the store. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <syslog.h>

#include "macros.h"
#include "cli.h"
#include "cli-table.h"
#include "attrd-client.h"
#include "nfsattr-json.h"
#include "nfskeys.h"
#include "stats.h"

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_CONFIG = 3,
	EXIT_REFUSED = 4,
	EXIT_NODAEMON = 5,
};

struct opts {
	bool json, direct, all, prometheus;
	const char *socket, *options, *fstype;
	struct nfskeys_ctx *ctx;
};

_printf_(1, 2) static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror("nfsattr", fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

static const struct cli_sub commands[];

static void usage(FILE *f)
{
	fputs("Usage: nfsattr [OPTIONS] COMMAND [ARGS...]\n"
	      "\n"
	      "Per-directory cache policy for NFS, CIFS/SMB and AFS, inherited by subtrees.\n"
	      "\n"
	      "Commands:\n",
	      f);
	cli_sub_usage(f, commands, 29);
	fputs("\n"
	      "TARGET is a local directory, SERVER:/EXPORT/SUB, //SERVER/SHARE/SUB, CELL:VOLUME,\n"
	      "or an identity as printed (nfs://SERVER/PATH, cifs://SERVER/SHARE/PATH, ...).\n"
	      "\n"
	      "Options:\n"
	      "  -c, --config FILE   configuration file\n"
	      "  -j, --json          machine-readable output\n"
	      "      --prometheus    stats in Prometheus text format\n"
	      "  -s, --socket PATH   nfskeys-attrd's socket\n"
	      "      --direct        root: write the store without the daemon\n"
	      "  -a, --all           unset: every attribute\n"
	      "  -t, --type TYPE     mount-options: nfs, nfs4, cifs, smb3 (default: from TARGET)\n"
	      "  -o, --options OPTS  mount-options: explicit options (they win)\n"
	      "  -v, --verbose       more messages\n"
	      "  -h, --help          show this help\n"
	      "  -V, --version       show the version\n"
	      "\n"
	      "Keys: cache=none|read|full fscache=on|off actimeo= acregmin= acregmax= acdirmin=\n"
	      "acdirmax= (seconds; s, m, h) lookupcache=all|positive|none cto=on|off\n"
	      "writeback=sync|async|throttled dirty_limit=BYTES (K, M, G) inherit=yes|no\n"
	      "user.NAME=TEXT.  See nfsattr(1).\n",
	      f);
}

/* ---------------------------------------------------------------- targets */

/* "nfs://srv/a/b" -> domain "nfs://srv", path "/a/b"; cifs and afs domains have two
 * parts (server/share, cell/volume). */
static int parse_identity(const char *s, struct nfskeys_attr_id **ret)
{
	static const struct {
		const char *scheme;
		int parts;
	} schemes[] = { { "nfs://", 1 }, { "local://", 1 }, { "cifs://", 2 }, { "afs://", 2 } };
	_cleanup_free_ char *domain = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(schemes); i++) {
		const char *p;
		int parts = schemes[i].parts;

		if (!startswith(s, schemes[i].scheme))
			continue;
		p = s + strlen(schemes[i].scheme);
		while (parts-- > 0) {
			const char *slash = strchr(p, '/');
			p = slash ? slash + (parts ? 1 : 0) : p + strlen(p);
			if (!slash && parts > 0)
				return -EINVAL;
		}
		domain = strndup(s, (size_t)(p - s));
		if (!domain)
			return -ENOMEM;
		return nfskeys_attr_id_new(domain, *p ? p : "/", ret);
	}
	return -EINVAL;
}

static int resolve_target(struct nfskeys_ctx *ctx, const char *arg, struct nfskeys_attr_id **ret)
{
	int r;

	if (strstr(arg, "://"))
		r = parse_identity(arg, ret);
	else if (arg[0] == '/' || arg[0] == '.' || access(arg, F_OK) == 0)
		r = nfskeys_attr_id_from_path(ctx, arg, ret);
	else
		r = nfskeys_attr_id_from_spec(arg, ret);
	if (r < 0)
		fail("%s: %s", arg,
		     r == -EINVAL ? "not a directory, SERVER:/EXPORT, //SERVER/SHARE, CELL:VOLUME "
				    "or nfs://, cifs://, afs://, local:// identity" :
				    strerror(-r));
	return r;
}

static char *id_string(const struct nfskeys_attr_id *id)
{
	char *s;

	if (asprintf(&s, "%s%s", nfskeys_attr_id_get_domain(id), nfskeys_attr_id_get_path(id)) < 0)
		return NULL;
	return s;
}

/* ---------------------------------------------------------------- output */

/* "attributes":[{"key":..,"value":..[,"source":..],"origin":"ldap"|"local"},...] */
static void print_json_attributes(const struct nfskeys_attr_policy *p, bool sources)
{
	struct nfskeys_attr_entry e;

	printf("\"attributes\":[");
	for (size_t i = 0; i < nfskeys_attr_policy_count(p); i++) {
		nfskeys_attr_policy_entry(p, i, &e);
		printf("%s{\"key\":", i ? "," : "");
		json_print_string(stdout, e.key);
		printf(",\"value\":");
		json_print_string(stdout, e.value);
		if (sources) {
			printf(",\"source\":");
			json_print_string(stdout, e.source);
		}
		printf(",\"origin\":\"%s\"}", e.from_ldap ? "ldap" : "local");
	}
	printf("]");
}

static void print_policy(const struct opts *o, const struct nfskeys_attr_id *id,
			 const struct nfskeys_attr_policy *p, bool sources)
{
	_cleanup_free_ char *where = id_string(id);
	size_t n = nfskeys_attr_policy_count(p);
	struct nfskeys_attr_entry e;

	if (o->json) {
		printf("{\"directory\":");
		json_print_string(stdout, where);
		printf(",\"domain\":");
		json_print_string(stdout, nfskeys_attr_id_get_domain(id));
		printf(",\"path\":");
		json_print_string(stdout, nfskeys_attr_id_get_path(id));
		if (nfskeys_attr_id_get_mountpoint(id)) {
			printf(",\"mountpoint\":");
			json_print_string(stdout, nfskeys_attr_id_get_mountpoint(id));
		}
		printf(",");
		print_json_attributes(p, sources);
		if (sources) {
			printf(",\"inheritance_cut\":");
			if (nfskeys_attr_policy_cut(p))
				json_print_string(stdout, nfskeys_attr_policy_cut(p));
			else
				printf("null");
		}
		printf("}\n");
		return;
	}
	printf("%s", where);
	/* where the directory was found, when that is not what its name says already */
	if (nfskeys_attr_id_get_mountpoint(id) && !streq(nfskeys_attr_id_get_mountpoint(id), "/"))
		printf("  (through the mount at %s)", nfskeys_attr_id_get_mountpoint(id));
	printf("\n");
	if (n == 0)
		printf("  (no attributes)\n");
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(p, i, &e);
		printf("  %-12s %-12s", e.key, e.value);
		if (sources)
			printf(" from %s", e.source);
		if (e.from_ldap)
			printf(" [ldap]");
		printf("\n");
	}
	if (sources && nfskeys_attr_policy_cut(p))
		printf("  inheritance stops at %s (inherit=no)\n", nfskeys_attr_policy_cut(p));
}

/* ---------------------------------------------------------------- commands */

static void daemon_attr(void *userdata, const char *key, const char *value, const char *source,
			bool from_ldap)
{
	(void)nfskeys_attr_policy_set(userdata, key, value, NULL, 0);
}

/* `get -s SOCK`: what that daemon holds, not the store the configuration names. */
static int lookup_daemon(struct opts *o, const struct nfskeys_attr_id *id,
			 struct nfskeys_attr_policy *p)
{
	struct rpc_client *c = NULL;
	int r = attrd_client_new(attrd_socket_path(o->ctx, o->socket), 10000, &c);

	if (r < 0) {
		fail("cannot reach nfskeys-attrd at %s: %s", attrd_socket_path(o->ctx, o->socket),
		     strerror(-r));
		return r;
	}
	r = attrd_client_lookup(c, nfskeys_attr_id_get_domain(id), nfskeys_attr_id_get_path(id), 0,
				daemon_attr, p, NULL);
	rpc_client_free(c);
	if (r < 0)
		fail("nfskeys-attrd at %s: %s", attrd_socket_path(o->ctx, o->socket),
		     strerror(-r));
	return r < 0 ? r : 0;
}

static int cmd_lookup(struct opts *o, int argc, char **argv, bool effective)
{
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_policy *p = NULL;
	int r;

	if (argc != 1) {
		fprintf(stderr, "nfsattr: %s takes one TARGET\n", effective ? "show" : "get");
		return EXIT_USAGE;
	}
	if (resolve_target(o->ctx, argv[0], &id) < 0)
		return EXIT_FAIL;
	r = nfskeys_attr_policy_new(&p);
	if (r == 0 && !effective && o->socket) {
		r = lookup_daemon(o, id, p);
		if (r == 0)
			print_policy(o, id, p, false);
		goto out;
	}
	if (r == 0)
		r = effective ? nfskeys_attr_effective(o->ctx, id, NFSKEYS_ATTR_SOURCES, p) :
				nfskeys_attr_explicit(o->ctx, id, p);
	if (r == 0)
		print_policy(o, id, p, effective);
	else
		fail("cannot read the policy store: %s", strerror(-r));
out:
	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

struct list_state {
	const struct opts *o;
	size_t n;
	bool export_mode;
};

static int list_one(void *userdata, const struct nfskeys_attr_id *id,
		    const struct nfskeys_attr_policy *p)
{
	struct list_state *ls = userdata;
	size_t n = nfskeys_attr_policy_count(p), shown = 0;
	struct nfskeys_attr_entry e;

	if (ls->export_mode) {
		for (size_t i = 0; i < n; i++) {
			nfskeys_attr_policy_entry(p, i, &e);
			if (e.from_ldap)
				continue; /* LDAP-sourced ones come back from LDAP */
			if (shown++ == 0) {
				printf("%s\n    {\"domain\":", ls->n++ ? "," : "");
				json_print_string(stdout, nfskeys_attr_id_get_domain(id));
				printf(",\"path\":");
				json_print_string(stdout, nfskeys_attr_id_get_path(id));
				printf(",\"attributes\":{");
			}
			printf("%s", shown > 1 ? "," : "");
			json_print_string(stdout, e.key);
			printf(":");
			json_print_string(stdout, e.value);
		}
		if (shown)
			printf("}}");
		return 0;
	}
	if (ls->o->json) {
		printf("%s", ls->n++ ? "," : "");
		printf("{\"domain\":");
		json_print_string(stdout, nfskeys_attr_id_get_domain(id));
		printf(",\"path\":");
		json_print_string(stdout, nfskeys_attr_id_get_path(id));
		printf(",");
		print_json_attributes(p, false);
		printf("}");
		return 0;
	}
	ls->n++;
	printf("%s%s", nfskeys_attr_id_get_domain(id), nfskeys_attr_id_get_path(id));
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(p, i, &e);
		printf(" %s=%s%s", e.key, e.value, e.from_ldap ? "[ldap]" : "");
	}
	printf("\n");
	return 0;
}

static int cmd_list(struct opts *o, int argc, char **argv, bool export_mode)
{
	struct nfskeys_attr_id *id = NULL;
	struct list_state ls = { .o = o, .export_mode = export_mode };
	int r;

	if (argc > 1) {
		fprintf(stderr, "nfsattr: %s takes at most one TARGET\n", export_mode ? "export" : "list");
		return EXIT_USAGE;
	}
	if (argc == 1 && resolve_target(o->ctx, argv[0], &id) < 0)
		return EXIT_FAIL;
	if (export_mode)
		printf("{\"nfskeys_attr_export\":1,\"policies\":[");
	else if (o->json)
		printf("[");
	r = nfskeys_attr_list(o->ctx, id, list_one, &ls);
	if (export_mode)
		printf("\n]}\n");
	else if (o->json)
		printf("]\n");
	nfskeys_attr_id_free(id);
	if (r < 0)
		return fail("cannot read the policy store: %s", strerror(-r));
	return EXIT_OK;
}

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
			attrd_socket_path(o->ctx, o->socket));
		return EXIT_NODAEMON;
	}
	if (r == -EPERM || r == -EACCES || r == -EDQUOT) {
		fprintf(stderr, "nfsattr: refused: %s\n", msg[0] ? msg : strerror(-r));
		return EXIT_REFUSED;
	}
	return fail("%s", msg[0] ? msg : strerror(-r));
}

static int open_dir(const char *path, int *ret_fd)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int r = negerrno();
		fail("%s: %s", path, strerror(-r));
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int direct_store(struct opts *o, struct nfskeys_attr_store **ret)
{
	int r;

	if (geteuid() != 0) {
		fail("--direct writes the store itself and is for root only");
		return -EPERM;
	}
	r = nfskeys_attr_store_open(o->ctx, NULL, NFSKEYS_ATTR_STORE_WRITE, ret);
	if (r < 0)
		fail("cannot open the policy store for writing: %s", strerror(-r));
	return r;
}

static int cmd_set(struct opts *o, int argc, char **argv)
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
			fail("%s", r == -EINVAL ? msg : strerror(-r));
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
			where = id_string(id);
		nfskeys_attr_id_free(id);
		nfskeys_attr_store_close(st);
		if (r < 0) {
			fail("%s: %s", argv[0], strerror(-r));
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
		printf("%s:", where);
		for (int i = 1; i < argc; i++)
			printf(" %s", argv[i]);
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

static int cmd_unset(struct opts *o, int argc, char **argv)
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
				return fail("unknown attribute '%s'", argv[i]);
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
			where = id_string(id);
		}
		nfskeys_attr_id_free(id);
		nfskeys_attr_store_close(st);
		if (r < 0)
			return fail("%s: %s", argv[0], strerror(-r));
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
		printf("%s: nothing to remove\n", argv[0]);
	else
		printf("%s: removed %u attribute%s\n", argv[0], changed, changed == 1 ? "" : "s");
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

static int cmd_import(struct opts *o, int argc, char **argv)
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
			return fail("%s: %m", argv[0]);
		text = read_all(f);
		if (f != stdin)
			fclose(f);
		if (!text)
			return fail("%s: cannot read it", argv[0]);
	}
	if (json_parse(text, &doc, err, sizeof(err)) < 0)
		return fail("%s: %s", argv[0], err);
	pols = json_get(doc, "policies");
	if (!pols || pols->type != JSON_ARRAY) {
		fail("%s: not an nfsattr export (no \"policies\" array)", argv[0]);
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
			fail("%s: policies[%zu]: needs \"domain\", \"path\" and \"attributes\"",
			     argv[0], n);
			goto out;
		}
		if (nfskeys_attr_id_new(dom->str, path->str, &ids[n]) < 0) {
			fail("%s: policies[%zu]: bad domain '%s' or path '%s'", argv[0], n, dom->str,
			     path->str);
			goto out;
		}
		if (nfskeys_attr_policy_new(&ps[n]) < 0)
			goto out;
		for (size_t k = 0; k < at->n; k++) {
			if (at->items[k]->type != JSON_STRING) {
				fail("%s: policies[%zu].attributes.%s: the value must be a string",
				     argv[0], n, at->keys[k]);
				goto out;
			}
			if (nfskeys_attr_policy_set(ps[n], at->keys[k], at->items[k]->str, err,
						    sizeof(err)) < 0) {
				fail("%s: policies[%zu]: %s", argv[0], n, err);
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
			fail("storing policies[%zu]: %s", i,
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

static int cmd_mount_options(struct opts *o, int argc, char **argv)
{
	struct nfskeys_attr_id *id = NULL;
	_cleanup_free_ char *out = NULL;
	const char *type;
	int r;

	if (argc != 1) {
		fprintf(stderr, "nfsattr: mount-options takes one TARGET\n");
		return EXIT_USAGE;
	}
	if (resolve_target(o->ctx, argv[0], &id) < 0)
		return EXIT_FAIL;
	type = o->fstype ? o->fstype : nfskeys_attr_id_get_fstype(id);
	r = nfskeys_attr_mount_options(o->ctx, id, type, o->options, &out);
	nfskeys_attr_id_free(id);
	if (r < 0)
		return fail("%s: %s", argv[0], strerror(-r));
	if (o->json) {
		printf("{\"options\":");
		json_print_string(stdout, out);
		printf("}\n");
	} else {
		printf("%s\n", out);
	}
	return EXIT_OK;
}

/* The writeback policy in effect (DESIGN.md §7): the mode writers follow, the dirty limit
 * the throttler of the export gets, and where each comes from. */
static int cmd_writeback(struct opts *o, int argc, char **argv)
{
	static const char *const modes[] = { "default", "sync", "async", "throttled" };
	static const char *const meaning[] = {
		"no writeback= in effect: as async, the kernel's own dirty throttling",
		"sync: writes are stable on return, nothing to throttle",
		"async: the kernel's own dirty throttling",
		"throttled: writers are paced by the nfskeys throttler (nfskeys_wb_throttle)",
	};
	struct nfskeys_attr_id *id = NULL;
	struct nfskeys_attr_policy *p = NULL;
	struct nfskeys_attr_entry wb = { 0 }, dl = { 0 };
	_cleanup_free_ char *where = NULL;
	const char *limit_from;
	bool have_wb, have_dl;
	uint64_t limit = 0;
	int mode = 0, r;

	if (argc != 1) {
		fprintf(stderr, "nfsattr: writeback takes one TARGET\n");
		return EXIT_USAGE;
	}
	if (resolve_target(o->ctx, argv[0], &id) < 0)
		return EXIT_FAIL;
	r = nfskeys_attr_policy_new(&p);
	if (r == 0)
		r = nfskeys_attr_effective(o->ctx, id, NFSKEYS_ATTR_SOURCES, p);
	if (r < 0) {
		fail("cannot read the policy store: %s", strerror(-r));
		goto out;
	}
	r = nfskeys_attr_wb_apply(o->ctx, id, NULL, &mode, &limit);
	if (r < 0) {
		/* the library said which setting is wrong */
		fail("%s: no writeback policy: %s", argv[0],
		     r == -ERANGE ? "[Writeback] Dirty-Limit is out of range" : strerror(-r));
		goto out;
	}
	if (mode < 0 || mode >= (int)ARRAY_SIZE(modes))
		mode = 0;
	have_wb = nfskeys_attr_policy_get(p, "writeback", &wb) == 0;
	have_dl = nfskeys_attr_policy_get(p, "dirty_limit", &dl) == 0;
	limit_from = have_dl ? dl.source :
		     nfskeys_conf_get(o->ctx, "Writeback", "Dirty-Limit") ? "[Writeback] Dirty-Limit" :
									   "built-in default";
	where = id_string(id);
	if (o->json) {
		printf("{\"directory\":");
		json_print_string(stdout, where);
		printf(",\"mode\":\"%s\",\"mode_source\":", modes[mode]);
		if (have_wb)
			json_print_string(stdout, wb.source);
		else
			printf("null");
		printf(",\"throttled\":%s,\"dirty_limit\":%" PRIu64 ",\"dirty_limit_source\":",
		       mode == 3 ? "true" : "false", limit);
		json_print_string(stdout, limit_from);
		printf(",\"dirty_limit_raised\":%s}\n",
		       have_dl && dl.number != limit ? "true" : "false");
	} else {
		printf("%s", where);
		if (nfskeys_attr_id_get_mountpoint(id))
			printf("  (via %s)", nfskeys_attr_id_get_mountpoint(id));
		printf("\n  writeback    %-12s %s%s\n", modes[mode], have_wb ? "from " : "",
		       have_wb ? wb.source : "(none in effect)");
		printf("  dirty_limit  %-12" PRIu64 " %s%s", limit, have_dl ? "from " : "", limit_from);
		if (have_dl && dl.number != limit)
			printf(" (%s raised to the throttler's minimum, 1M)", dl.value);
		printf("\n  writers:     %s\n", meaning[mode]);
	}
out:
	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

static int count_one(void *userdata, const struct nfskeys_attr_id *id,
		     const struct nfskeys_attr_policy *p)
{
	(*(size_t *)userdata)++;
	return 0;
}

static int cmd_stats(struct opts *o, int argc, char **argv)
{
	struct rpc_client *c = NULL;
	size_t n = 0;
	int r;

	if (argc != 0) {
		fprintf(stderr, "nfsattr: stats takes no arguments\n");
		return EXIT_USAGE;
	}
	r = attrd_client_new(attrd_socket_path(o->ctx, o->socket), 5000, &c);
	if (r == 0)
		r = attrd_client_print_stats(c, stdout,
					     o->json ? STATS_JSON :
					     o->prometheus ? STATS_PROMETHEUS : STATS_TEXT);
	rpc_client_free(c);
	if (r == 0)
		return EXIT_OK;
	if (r != -ENOENT && r != -ECONNREFUSED)
		return fail("cannot read statistics from nfskeys-attrd: %s", strerror(-r));
	/* no daemon: what the store holds */
	r = nfskeys_attr_list(o->ctx, NULL, count_one, &n);
	if (r < 0)
		return fail("cannot read the policy store: %s", strerror(-r));
	if (o->json)
		printf("{\"daemon\":false,\"policies\":%zu}\n", n);
	else
		printf("nfskeys-attrd: not running\npolicies: %zu\n", n);
	return EXIT_OK;
}

struct status_out {
	bool json;
	size_t n;
};

static void status_one(void *userdata, const struct attrd_client_mount *m)
{
	struct status_out *so = userdata;

	if (!so->json) {
		printf("%-8s %s  %s  %s  layers=%u mount-id=%u%s%s\n", m->state, m->target,
		       m->source, m->options, m->layers, m->mount_id, *m->error ? "  error: " : "",
		       m->error);
	} else {
		printf("%s\n    {\"target\":", so->n ? "," : "");
		json_print_string(stdout, m->target);
		printf(",\"source\":");
		json_print_string(stdout, m->source);
		printf(",\"options\":");
		json_print_string(stdout, m->options);
		printf(",\"state\":");
		json_print_string(stdout, m->state);
		printf(",\"error\":");
		json_print_string(stdout, m->error);
		printf(",\"layers\":%u,\"mount_id\":%u,\"since\":%lld}", m->layers, m->mount_id,
		       (long long)m->since);
	}
	so->n++;
}

/* What nfskeys-attrd applies to live mounts: where, with which options, what failed. */
static int cmd_status(struct opts *o, int argc, char **argv)
{
	struct rpc_client *c = NULL;
	struct status_out so = { .json = o->json };
	bool enabled = false;
	unsigned more = 0;
	int r;

	(void)argv;
	if (argc != 0) {
		fprintf(stderr, "nfsattr: status takes no arguments\n");
		return EXIT_USAGE;
	}
	r = attrd_client_new(attrd_socket_path(o->ctx, o->socket), 5000, &c);
	if (r < 0) {
		rpc_client_free(c);
		return fail("cannot reach nfskeys-attrd: %s", strerror(-r));
	}
	if (o->json)
		printf("{\"mounts\":[");
	r = attrd_client_mounts(c, &enabled, &more, status_one, &so);
	rpc_client_free(c);
	if (r < 0) {
		if (o->json)
			printf("]}\n");
		return fail("cannot read the sub-mounts from nfskeys-attrd: %s", strerror(-r));
	}
	if (o->json)
		printf("%s],\"apply_mounts\":%s,\"more\":%u}\n", so.n ? "\n  " : "",
		       enabled ? "true" : "false", more);
	else if (!enabled && so.n == 0)
		printf("sub-mounts for directory policy are off ([Mounts] Apply-Mounts = no)\n");
	else if (so.n == 0)
		printf("no sub-mounts: no NFS mount has a subtree whose policy needs one\n");
	else if (more)
		printf("(%u more not shown)\n", more);
	return EXIT_OK;
}

/* ---------------------------------------------------------------- commands */

static int sub_set(void *o, int argc, char *argv[])
{
	return cmd_set(o, argc, argv);
}
static int sub_unset(void *o, int argc, char *argv[])
{
	return cmd_unset(o, argc, argv);
}
static int sub_get(void *o, int argc, char *argv[])
{
	return cmd_lookup(o, argc, argv, false);
}
static int sub_show(void *o, int argc, char *argv[])
{
	return cmd_lookup(o, argc, argv, true);
}
static int sub_list(void *o, int argc, char *argv[])
{
	return cmd_list(o, argc, argv, false);
}
static int sub_export(void *o, int argc, char *argv[])
{
	return cmd_list(o, argc, argv, true);
}
static int sub_import(void *o, int argc, char *argv[])
{
	return cmd_import(o, argc, argv);
}
static int sub_mount_options(void *o, int argc, char *argv[])
{
	return cmd_mount_options(o, argc, argv);
}
static int sub_stats(void *o, int argc, char *argv[])
{
	return cmd_stats(o, argc, argv);
}
static int sub_status(void *o, int argc, char *argv[])
{
	return cmd_status(o, argc, argv);
}
static int sub_writeback(void *o, int argc, char *argv[])
{
	return cmd_writeback(o, argc, argv);
}

/* The dispatch, the help's command list and "nfsattr help --commands" read these rows. */
static const struct cli_sub commands[] = {
	{ "set", NULL, "PATH KEY=VALUE...", "set attributes (through nfskeys-attrd)", sub_set },
	{ "unset", NULL, "PATH KEY... | --all", "remove attributes", sub_unset },
	{ "get", NULL, "TARGET", "attributes set on exactly this directory", sub_get },
	{ "show", NULL, "TARGET", "attributes in effect, with where each comes from", sub_show },
	{ "list", NULL, "[TARGET]", "every directory with a policy (below TARGET)", sub_list },
	{ "export", NULL, "[TARGET]", "local policies as JSON", sub_export },
	{ "import", NULL, "FILE|-", "load an export (root)", sub_import },
	{ "mount-options", NULL, "TARGET", "mount options for the policy (-t TYPE, -o OPTS)",
	  sub_mount_options },
	{ "stats", NULL, NULL, "the daemon's statistics", sub_stats },
	{ "status", NULL, NULL, "the daemon's sub-mounts for policy on live mounts", sub_status },
	{ "writeback", NULL, "TARGET", "the writeback mode and dirty limit in effect",
	  sub_writeback },
	{},
};

int main(int argc, char *argv[])
{
	enum { OPT_DIRECT = 0x100, OPT_PROM, OPT_COMMANDS };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' }, { "direct", no_argument, NULL, OPT_DIRECT },
		{ "prometheus", no_argument, NULL, OPT_PROM }, { "all", no_argument, NULL, 'a' },
		{ "type", required_argument, NULL, 't' },   { "options", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },	    { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		/* "nfsattr help --commands" (not in the help: for tests): the command list */
		{ "commands", no_argument, NULL, OPT_COMMANDS },
		{}
	};
	struct opts o = { 0 };
	const char *config = NULL, *cmd;
	const struct cli_sub *sub;
	bool help = false, dump = false;
	int verbose = 0, c, r;

	while ((c = getopt_long(argc, argv, "c:js:at:o:vhV", longopts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 's':
			o.socket = optarg;
			break;
		case OPT_DIRECT:
			o.direct = true;
			break;
		case OPT_PROM:
			o.prometheus = true;
			break;
		case 'a':
			o.all = true;
			break;
		case 't':
			o.fstype = optarg;
			break;
		case 'o':
			o.options = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			help = true; /* after the command is known: a wrong one is an error */
			break;
		case OPT_COMMANDS:
			dump = true;
			break;
		default:
			return cli_std_option(c, "nfsattr", usage);
		}
	}
	if (optind >= argc && help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (streq(cmd, "help")) {
		if (dump)
			cli_sub_dump(stdout, NULL, commands);
		else
			usage(stdout);
		return EXIT_OK;
	}
	sub = cli_sub_find(commands, cmd);
	if (!sub) {
		fprintf(stderr, "nfsattr: unknown command '%s' (see nfsattr --help)\n", cmd);
		return EXIT_USAGE;
	}
	if (help) {
		usage(stdout);
		return EXIT_OK;
	}
	{
		unsigned skipped = 0;

		/* a file with an error is named (by the library) and gone past */
		r = nfskeys_ctx_new_partial(config, NULL, NULL, &o.ctx, &skipped);
		if (r == 0 && skipped)
			fprintf(stderr, "nfsattr: going on without what the errors above spoil\n");
	}
	if (r < 0) {
		if (r != -EINVAL && r != -ENOENT)
			fprintf(stderr, "nfsattr: cannot load configuration: %s\n", strerror(-r));
		return EXIT_CONFIG;
	}
	if (verbose)
		nfskeys_ctx_set_log_priority(o.ctx, verbose > 1 ? LOG_DEBUG : LOG_INFO);
	argc -= optind;
	argv += optind;
	r = sub->fn(&o, argc, argv);
	nfskeys_ctx_unref(o.ctx);
	return r;
}
