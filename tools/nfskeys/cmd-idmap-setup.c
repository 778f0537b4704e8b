/* nfskeys idmap's setup commands: import-conf converts an idmapd.conf into nfskeys.conf
 * settings, enable-upcalls installs the request-key routing for nfskeys-upcall and reports
 * what request-key will actually run. */
#include <ctype.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <keyutils.h>
#include <limits.h>
#include <sys/stat.h>

#include "cmd-idmap-private.h"
#include "helper-path.h"
#include "idmapd-client.h"
#include "ini.h"
#include "nfskeys-tool.h"
#include "request-key-conf.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX silently in its system header */
#include "idmap.h"

/* ---------------------------------------------------------------- import-conf */

struct import_state {
	FILE *out;
	char section[64];
	unsigned ignored;
};

static const char *const import_known[][2] = {
	{ "General", "Domain" },	 { "General", "Local-Realms" },
	{ "Mapping", "Nobody-User" },	 { "Mapping", "Nobody-Group" },
	{ "Translation", "Method" },	 { "Translation", "GSS-Methods" },
	{ "Translation", "No-Strip" },
};

static int import_value(void *userdata, const char *file, unsigned line, const char *section,
			const char *key, const char *value)
{
	struct import_state *st = userdata;
	const char *out_section = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(import_known); i++)
		if (strcaseeq(section, import_known[i][0]) && strcaseeq(key, import_known[i][1]))
			out_section = import_known[i][0];
	if (strcaseeq(section, "Static") || strcaseeq(section, "Regex"))
		out_section = strcaseeq(section, "Static") ? "Static" : "Regex";
	if (strcaseeq(section, "General") && strcaseeq(key, "Verbosity"))
		out_section = NULL;
	if (!out_section) {
		fprintf(st->out, "# not imported (no nfskeys equivalent): [%s] %s = %s\n", section,
			key, value);
		st->ignored++;
		return 0;
	}
	if (!streq(st->section, out_section)) {
		fprintf(st->out, "\n[%s]\n", out_section);
		snprintf(st->section, sizeof(st->section), "%s", out_section);
	}
	/* umich_ldap becomes our ldap backend */
	if (strcaseeq(key, "Method") || strcaseeq(key, "GSS-Methods")) {
		char buf[256];
		size_t o = 0;

		for (const char *p = value; *p && o < sizeof(buf) - 8; p++) {
			if (!strncasecmp(p, "umich_ldap", 10)) {
				memcpy(buf + o, "ldap", 4);
				o += 4;
				p += 9;
			} else {
				buf[o++] = *p;
			}
		}
		buf[o] = '\0';
		fprintf(st->out, "%s = %s\n", key, buf);
		return 0;
	}
	fprintf(st->out, "%s = %s\n", key, value);
	return 0;
}

/* idmapd.conf allows "key = value" with characters our strict INI reader accepts; it
 * also has [UMICH_SCHEMA] etc., reported as not imported. */
int cmd_idmap_import_conf(int argc, char *argv[])
{
	struct import_state st = { 0 };
	const char *in = "/etc/idmapd.conf", *outpath = NULL;
	char err[512];
	_cleanup_fclose_ FILE *f = NULL;
	int r;

	for (int i = 0; i < argc; i++) {
		if ((streq(argv[i], "-o") || streq(argv[i], "--output")) && i + 1 < argc)
			outpath = argv[++i];
		else if (argv[i][0] == '-')
			return tool_error("idmap import-conf: unknown option '%s'", argv[i]),
			       EXIT_USAGE;
		else
			in = argv[i];
	}
	if (outpath) {
		f = fopen(outpath, "wxe");
		if (!f)
			return tool_error("idmap import-conf: cannot create %s: %s%s", outpath,
					  strerror(errno),
					  errno == EEXIST ? " (refusing to overwrite)" : "");
		st.out = f;
	} else {
		st.out = stdout;
	}
	fprintf(st.out, "# nfskeys.conf settings imported from %s by 'nfskeys idmap import-conf'\n",
		in);
	r = ini_parse_file(in, NULL, import_value, &st, err, sizeof(err));
	if (r < 0) {
		if (r == -EINVAL)
			return tool_error("idmap import-conf: %s", err);
		return tool_error("idmap import-conf: cannot read %s: %s", in, strerror(-r));
	}
	if (st.ignored)
		fprintf(stderr, "nfskeys: idmap import-conf: %u setting(s) not imported (see the "
				"comments in the output)\n",
			st.ignored);
	if (outpath)
		fprintf(stderr, "nfskeys: wrote %s; put it into /etc/nfskeys/conf.d/ or merge it "
				"into nfskeys.conf\n",
			outpath);
	return EXIT_OK;
}

/* ---------------------------------------------------------------- enable-upcalls */

static const char *const upcall_routes[][2] = {
	{ "id_resolver", "uid:*" }, { "id_resolver", "gid:*" },	 { "id_resolver", "user:*" },
	{ "id_resolver", "group:*" }, { "cifs.idmap", "os:*" },	 { "cifs.idmap", "gs:*" },
	{ "cifs.idmap", "oi:*" },     { "cifs.idmap", "gi:*" },
};

static int find_helper(char *buf, size_t size)
{
	/* an install has bin/ and sbin/ (or one directory for both); the build tree keeps
	 * each program in its folder under tools/ (run from tools/nfskeys/, or its .libs/
	 * under libtool) */
	static const char *const rel[] = { "nfskeys-upcall", "../sbin/nfskeys-upcall",
					   "../upcall/nfskeys-upcall", "../../upcall/nfskeys-upcall" };
	char self[PATH_MAX - 64];

	if (self_dir(self, sizeof(self)) < 0)
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char real[PATH_MAX];

		snprintf(buf, size, "%s/%s", self, rel[i]);
		if (access(buf, X_OK) == 0) {
			if (realpath(buf, real))
				snprintf(buf, size, "%s", real);
			return 0;
		}
	}
	return -ENOENT;
}

/* Report the lines of other files that we take over (ours are more specific: request-key
 * prefers the match with the fewest wildcard characters), and warn about a line
 * request-key cannot read: it gives up on it and every upcall fails, ours included. */
static void report_line(const char *shown, unsigned line, const struct rk_rule *rule,
			const char *text, void *userdata)
{
	const char *base = strrchr(shown, '/');
	bool *any = userdata;

	if (!rule) {
		fprintf(stderr,
			"nfskeys: warning: %s:%u: '%.200s' is not a request-key rule: request-key "
			"gives up on it and every upcall fails, nfskeys-upcall's too; correct or "
			"remove it\n",
			shown, line, text);
		return;
	}
	if ((base && streq(base, "/nfskeys.conf")) || !streq(rule->op, "create") ||
	    (!streq(rule->type, "id_resolver") && !streq(rule->type, "cifs.idmap")))
		return;
	printf("overrides %s: %s keys (%s) were handled by %s\n", shown, rule->type, rule->desc,
	       rule->prog);
	*any = true;
}

/* DIR (request-key.d) and the request-key.conf beside it */
static void report_request_key(const char *dir)
{
	char conf[PATH_MAX + 32], *slash;
	bool any = false;

	snprintf(conf, sizeof(conf), "%s", dir);
	slash = strrchr(conf, '/');
	if (slash)
		strcpy(slash + 1, "request-key.conf");
	else
		snprintf(conf, sizeof(conf), "request-key.conf");
	rk_for_each_line(dir, conf, 0, report_line, &any);
	if (!any)
		printf("no other request-key file handled id_resolver or cifs.idmap keys\n");
}

int cmd_idmap_enable_upcalls(int argc, char *argv[])
{
	const char *dir = "/etc/request-key.d", *helper = NULL;
	char found[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
	bool print_only = false;
	FILE *f;

	for (int i = 0; i < argc; i++) {
		if (streq(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (streq(argv[i], "--helper") && i + 1 < argc)
			helper = argv[++i];
		else if (streq(argv[i], "--print"))
			print_only = true;
		else
			return tool_error("idmap enable-upcalls: unknown argument '%s'", argv[i]),
			       EXIT_USAGE;
	}
	if (!helper) {
		if (find_helper(found, sizeof(found)) < 0)
			return tool_error("idmap enable-upcalls: nfskeys-upcall not found next to "
					  "this program; give --helper PATH");
		helper = found;
	}
	if (helper[0] != '/')
		return tool_error("idmap enable-upcalls: --helper must be an absolute path");
	if (print_only) {
		f = stdout;
	} else {
		snprintf(path, sizeof(path), "%s/nfskeys.conf", dir);
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		f = fopen(tmp, "we");
		if (!f)
			return tool_error("idmap enable-upcalls: cannot write %s: %s", tmp,
					  strerror(errno));
	}
	fprintf(f, "# request-key routing of NFS id_resolver and CIFS cifs.idmap keys to\n"
		   "# nfskeys-upcall(8), written by 'nfskeys idmap enable-upcalls'.\n"
		   "# These lines name the description prefix, so they win over a '*' line in\n"
		   "# another file (request-key prefers the least wildcarded match).\n");
	for (size_t i = 0; i < ARRAY_SIZE(upcall_routes); i++)
		fprintf(f, "create\t%s\t%s\t*\t%s %%k %%d\n", upcall_routes[i][0],
			upcall_routes[i][1], helper);
	if (print_only)
		return EXIT_OK;
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return tool_error("idmap enable-upcalls: cannot install %s: %s", path,
				  strerror(errno));
	}
	printf("installed %s (helper %s)\n", path, helper);
	report_request_key(dir);
	return EXIT_OK;
}
