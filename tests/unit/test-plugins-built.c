/* A dlopen test for every plugin this build makes ($NFSKEYS_BUILT_PLUGINS, the list of
 * pkgplugin_LTLIBRARIES): each opens with RTLD_NOW (no unresolved symbol), its entry
 * point returns a current descriptor naming the file, and the loader accepts it for the
 * kind it declares.  Plain TAP: a build without plugins yet is a SKIP. */
#include <dlfcn.h>
#include <stdarg.h>

#include "libnfskeys-private.h"
#include "plugin.h"

static unsigned n_test, n_failed;

_printf_(2, 3) static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", ok ? "ok" : "not ok", ++n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	n_failed += !ok;
}

static void quiet(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		  va_list ap)
{
}

int main(void)
{
	const char *list = getenv("NFSKEYS_BUILT_PLUGINS");
	const char *dir = getenv("NFSKEYS_PLUGIN_DIR");
	char names[64][128];
	size_t n = 0;

	/* "plugins/cred-cifs.la plugins/idmap-ldap.la" -> cred-cifs, idmap-ldap */
	for (const char *p = list ? list : ""; *p && n < ARRAY_SIZE(names);) {
		size_t len = strcspn(p, " \t");
		const char *base = p, *slash;
		if (len > 0) {
			for (slash = p; slash < p + len; slash++)
				if (*slash == '/')
					base = slash + 1;
			snprintf(names[n], sizeof(names[n]), "%.*s", (int)(p + len - base), base);
			if (strlen(names[n]) > 3 && streq(names[n] + strlen(names[n]) - 3, ".la"))
				names[n][strlen(names[n]) - 3] = '\0';
			n++;
		}
		p += len + strspn(p + len, " \t");
	}
	if (n == 0 || !dir) {
		printf("1..0 # SKIP no plugins built yet\n");
		return 0;
	}
	printf("1..%zu\n", 3 * n);
	for (size_t i = 0; i < n; i++) {
		struct nfskeys_ctx *ctx = NULL;
		const struct nfskeys_plugin *p = NULL, *loaded = NULL;
		nfskeys_plugin_entry_fn entry = NULL;
		char path[4096];
		void *h;
		int r = -1;

		snprintf(path, sizeof(path), "%s/%s.so", dir, names[i]);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		tap(h != NULL, "%s: dlopen(RTLD_NOW)%s%s", names[i], h ? "" : ": ",
		    h ? "" : dlerror());
		if (h)
			entry = (nfskeys_plugin_entry_fn)dlsym(h, NFSKEYS_PLUGIN_ENTRY);
		if (entry)
			p = entry();
		tap(p && p->abi == NFSKEYS_PLUGIN_ABI && p->size >= sizeof(*p) && p->name &&
			    streq(p->name, names[i]),
		    "%s: %s() returns a current descriptor naming the file", names[i],
		    NFSKEYS_PLUGIN_ENTRY);
		if (p && nfskeys_ctx_new_full("/dev/null", quiet, NULL, &ctx) == 0)
			r = plugin_load(ctx, names[i], p->kind, sizeof(uint32_t), &loaded);
		tap(r == 0 && loaded && streq(loaded->name, names[i]),
		    "%s: the loader accepts it as kind %u", names[i], p ? p->kind : 0);
		nfskeys_ctx_unref(ctx);
		if (h)
			dlclose(h);
	}
	return n_failed ? 1 : 0;
}
