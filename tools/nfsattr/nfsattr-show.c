/* nfsattr's reads: a target named by path or identity, the policy printed (text or JSON),
 * get and show (from the store, or from a daemon with -s), list and export, the mount
 * options for a policy, and the writeback mode and dirty limit in effect. */
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

	/* "//SERVER/SHARE" is a CIFS share before it is a path (the kernel would read it
	 * as "/SERVER/SHARE"; a local directory is named with one slash) */
	if (strstr(arg, "://"))
		r = parse_identity(arg, ret);
	else if ((startswith(arg, "//") && arg[2] != '/') || startswith(arg, "\\\\"))
		r = nfskeys_attr_id_from_spec(arg, ret);
	else if (arg[0] == '/' || arg[0] == '.' || access(arg, F_OK) == 0)
		r = nfskeys_attr_id_from_path(ctx, arg, ret);
	else
		r = nfskeys_attr_id_from_spec(arg, ret);
	if (r < 0)
		nfsattr_fail("%s: %s", arg,
		     r == -EINVAL ? "not a directory, SERVER:/EXPORT, //SERVER/SHARE, CELL:VOLUME "
				    "or nfs://, cifs://, afs://, local:// identity" :
				    strerror(-r));
	return r;
}

char *nfsattr_id_string(const struct nfskeys_attr_id *id)
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
	_cleanup_free_ char *where = nfsattr_id_string(id);
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
	/* a directory's name, user.* values and LDAP text are anyone's: escaped */
	printf("%s", nfsattr_shown(where));
	/* where the directory was found, when that is not what its name says already */
	if (nfskeys_attr_id_get_mountpoint(id) && !streq(nfskeys_attr_id_get_mountpoint(id), "/"))
		printf("  (through the mount at %s)",
		       nfsattr_shown(nfskeys_attr_id_get_mountpoint(id)));
	printf("\n");
	if (n == 0)
		printf("  (no attributes)\n");
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(p, i, &e);
		printf("  %-12s %-12s", nfsattr_shown(e.key), nfsattr_shown(e.value));
		if (sources)
			printf(" from %s", nfsattr_shown(e.source));
		if (e.from_ldap)
			printf(" [ldap]");
		printf("\n");
	}
	if (sources && nfskeys_attr_policy_cut(p))
		printf("  inheritance stops at %s (inherit=no)\n",
		       nfsattr_shown(nfskeys_attr_policy_cut(p)));
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
		nfsattr_fail("cannot reach nfskeys-attrd at %s: %s", attrd_socket_path(o->ctx, o->socket),
		     strerror(-r));
		return r;
	}
	r = attrd_client_lookup(c, nfskeys_attr_id_get_domain(id), nfskeys_attr_id_get_path(id), 0,
				daemon_attr, p, NULL);
	rpc_client_free(c);
	if (r < 0)
		nfsattr_fail("nfskeys-attrd at %s: %s", attrd_socket_path(o->ctx, o->socket),
		     strerror(-r));
	return r < 0 ? r : 0;
}

int nfsattr_cmd_lookup(struct opts *o, int argc, char **argv, bool effective)
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
		nfsattr_store_fail(r);
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
	printf("%s%s", nfsattr_shown(nfskeys_attr_id_get_domain(id)),
	       nfsattr_shown(nfskeys_attr_id_get_path(id)));
	for (size_t i = 0; i < n; i++) {
		nfskeys_attr_policy_entry(p, i, &e);
		printf(" %s=%s%s", nfsattr_shown(e.key), nfsattr_shown(e.value),
		       e.from_ldap ? "[ldap]" : "");
	}
	printf("\n");
	return 0;
}

int nfsattr_cmd_list(struct opts *o, int argc, char **argv, bool export_mode)
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
		return nfsattr_store_fail(r);
	return EXIT_OK;
}

int nfsattr_cmd_mount_options(struct opts *o, int argc, char **argv)
{
	struct nfskeys_attr_id *id = NULL;
	_cleanup_free_ char *out = NULL;
	const char *type;
	int r;

	if (argc != 1) {
		fprintf(stderr, "nfsattr: mount-options takes one TARGET\n");
		return EXIT_USAGE;
	}
	/* the options of another type would be silently none at all */
	if (o->fstype && !streq(o->fstype, "nfs") && !streq(o->fstype, "nfs4") &&
	    !streq(o->fstype, "cifs") && !streq(o->fstype, "smb3")) {
		fprintf(stderr,
			"nfsattr: -t %s: unknown filesystem type (nfs, nfs4, cifs or smb3)\n",
			nfsattr_shown(o->fstype));
		return EXIT_USAGE;
	}
	if (resolve_target(o->ctx, argv[0], &id) < 0)
		return EXIT_FAIL;
	type = o->fstype ? o->fstype : nfskeys_attr_id_get_fstype(id);
	r = nfskeys_attr_mount_options(o->ctx, id, type, o->options, &out);
	nfskeys_attr_id_free(id);
	if (r < 0)
		return nfsattr_fail("%s: %s", argv[0], strerror(-r));
	if (o->json) {
		printf("{\"options\":");
		json_print_string(stdout, out);
		printf("}\n");
	} else {
		printf("%s\n", nfsattr_shown(out));
	}
	return EXIT_OK;
}

/* The writeback policy in effect (doc/DESIGN.md §7): the mode writers follow, the dirty limit
 * the throttler of the export gets, and where each comes from. */
int nfsattr_cmd_writeback(struct opts *o, int argc, char **argv)
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
		nfsattr_store_fail(r);
		goto out;
	}
	r = nfskeys_attr_wb_apply(o->ctx, id, NULL, &mode, &limit);
	if (r < 0) {
		/* the library said which setting is wrong */
		nfsattr_fail("%s: no writeback policy: %s", argv[0],
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
	where = nfsattr_id_string(id);
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
		printf("%s", nfsattr_shown(where));
		if (nfskeys_attr_id_get_mountpoint(id))
			printf("  (via %s)", nfsattr_shown(nfskeys_attr_id_get_mountpoint(id)));
		printf("\n  writeback    %-12s %s%s\n", modes[mode], have_wb ? "from " : "",
		       have_wb ? nfsattr_shown(wb.source) : "(none in effect)");
		printf("  dirty_limit  %-12" PRIu64 " %s%s", limit, have_dl ? "from " : "",
		       nfsattr_shown(limit_from));
		if (have_dl && dl.number != limit)
			printf(" (%s raised to the throttler's minimum, 1M)",
			       nfsattr_shown(dl.value));
		printf("\n  writers:     %s\n", meaning[mode]);
	}
out:
	nfskeys_attr_policy_free(p);
	nfskeys_attr_id_free(id);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}
