/* The plugin loader (see plugin.h).  Plugins are cached per context and closed when the
 * context goes away. */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>

#include "ctx-private.h"
#include "plugin.h"

struct plugin_slot {
	char *name;
	void *handle;
	const struct nfskeys_plugin *plugin;
};

struct plugin_registry {
	struct plugin_slot *slots;
	size_t n;
};

struct plugin_registry *plugin_registry_free(struct plugin_registry *reg)
{
	if (!reg)
		return NULL;
	for (size_t i = 0; i < reg->n; i++) {
		free(reg->slots[i].name);
		if (reg->slots[i].handle)
			dlclose(reg->slots[i].handle);
	}
	free(reg->slots);
	free(reg);
	return NULL;
}

const char *plugin_dir(void)
{
	const char *d = secure_getenv("NFSKEYS_PLUGIN_DIR");

	return d && *d ? d : PKGPLUGINDIR;
}

static bool plugin_name_valid(const char *name)
{
	if (!name || !*name || strlen(name) > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '-' &&
		    *c != '_')
			return false;
	return true;
}

static int plugin_check(struct nfskeys_ctx *ctx, const char *name,
			const struct nfskeys_plugin *p, uint32_t kind, uint32_t min_ops_size)
{
	if (!p) {
		log_err(ctx, "plugin %s: entry point returned NULL", name);
		return -EPROTO;
	}
	if (p->abi != NFSKEYS_PLUGIN_ABI) {
		log_err(ctx, "plugin %s: ABI %u, this library speaks %u", name, p->abi,
			NFSKEYS_PLUGIN_ABI);
		return -EPROTO;
	}
	if (p->size < sizeof(struct nfskeys_plugin)) {
		log_err(ctx, "plugin %s: header of %u bytes, need %zu", name, p->size,
			sizeof(struct nfskeys_plugin));
		return -EPROTO;
	}
	if (p->kind != kind) {
		log_err(ctx, "plugin %s: kind %u, expected %u", name, p->kind, kind);
		return -EPROTO;
	}
	if (!p->ops || p->ops_size < min_ops_size || *(const uint32_t *)p->ops != p->ops_size) {
		log_err(ctx, "plugin %s: operations table missing or too small", name);
		return -EPROTO;
	}
	if (!p->name || !streq(p->name, name)) {
		log_err(ctx, "plugin %s: calls itself '%s'", name, p->name ? p->name : "(null)");
		return -EPROTO;
	}
	return 0;
}

int plugin_load(struct nfskeys_ctx *ctx, const char *name, uint32_t kind, uint32_t min_ops_size,
		const struct nfskeys_plugin **ret)
{
	struct plugin_registry **regp;
	const struct nfskeys_plugin *p;
	nfskeys_plugin_entry_fn entry;
	struct plugin_slot *slots;
	char path[PATH_MAX];
	void *handle;
	int r;

	if (!ctx || !ret)
		return -EINVAL;
	regp = &ctx->plugins;
	if (!plugin_name_valid(name)) {
		log_err(ctx, "invalid plugin name '%s'", name ? name : "");
		return -EINVAL;
	}
	if (*regp) {
		for (size_t i = 0; i < (*regp)->n; i++) {
			if (!streq((*regp)->slots[i].name, name))
				continue;
			r = plugin_check(ctx, name, (*regp)->slots[i].plugin, kind, min_ops_size);
			if (r < 0)
				return r;
			*ret = (*regp)->slots[i].plugin;
			return 0;
		}
	} else {
		*regp = calloc(1, sizeof(**regp));
		if (!*regp)
			return -ENOMEM;
	}

	if (snprintf(path, sizeof(path), "%s/%s.so", plugin_dir(), name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (access(path, R_OK) < 0) {
		r = negerrno();
		log_debug(ctx, "plugin %s: %s: %s", name, path, strerror(-r));
		return r == -EACCES ? r : -ENOENT;
	}
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		log_err(ctx, "plugin %s: %s", name, dlerror());
		return -ELIBBAD;
	}
	entry = (nfskeys_plugin_entry_fn)dlsym(handle, NFSKEYS_PLUGIN_ENTRY);
	if (!entry) {
		log_err(ctx, "plugin %s: no %s symbol", name, NFSKEYS_PLUGIN_ENTRY);
		dlclose(handle);
		return -EPROTO;
	}
	p = entry();
	r = plugin_check(ctx, name, p, kind, min_ops_size);
	if (r < 0) {
		dlclose(handle);
		return r;
	}
	slots = realloc((*regp)->slots, ((*regp)->n + 1) * sizeof(*slots));
	if (!slots) {
		dlclose(handle);
		return -ENOMEM;
	}
	(*regp)->slots = slots;
	slots[(*regp)->n].name = strdup(name);
	if (!slots[(*regp)->n].name) {
		dlclose(handle);
		return -ENOMEM;
	}
	slots[(*regp)->n].handle = handle;
	slots[(*regp)->n].plugin = p;
	(*regp)->n++;
	log_debug(ctx, "plugin %s loaded from %s", name, path);
	*ret = p;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int plugin_list(uint32_t kind, char ***ret, size_t *ret_count)
{
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (!ret || !ret_count)
		return -EINVAL;
	d = opendir(plugin_dir());
	if (!d)
		return negerrno();
	while ((de = readdir(d))) {
		char path[PATH_MAX], **nn;
		size_t len = strlen(de->d_name);
		const struct nfskeys_plugin *p;
		nfskeys_plugin_entry_fn entry;
		void *h;

		if (len < 4 || !streq(de->d_name + len - 3, ".so"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", plugin_dir(), de->d_name) >=
		    (int)sizeof(path))
			continue;
		h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
		if (!h)
			continue;
		entry = (nfskeys_plugin_entry_fn)dlsym(h, NFSKEYS_PLUGIN_ENTRY);
		p = entry ? entry() : NULL;
		if (p && p->abi == NFSKEYS_PLUGIN_ABI && p->size >= sizeof(*p) && p->kind == kind &&
		    p->name) {
			nn = realloc(names, (n + 1) * sizeof(*nn));
			if (nn) {
				names = nn;
				names[n] = strdup(p->name);
				if (names[n])
					n++;
			}
		}
		dlclose(h);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	*ret = names;
	*ret_count = n;
	return 0;
}
