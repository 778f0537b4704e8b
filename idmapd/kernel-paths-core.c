/* knfsd's idmap cache channels and the NFS client's rpc_pipefs idmap pipes, served from
 * nfskeys-idmapd's event loop.  Reads never block (O_NONBLOCK, one request per read),
 * every request is parsed by kernel-proto.c before anything else sees it, and the answer
 * goes back in one write().  Formats and kernel behaviour: doc/KERNEL-INTERFACES.md §1-2. */
/* Here: the configuration and the object as a whole (its API is kernel-paths.h);
 * knfsd's channels are in kernel-paths-knfsd.c, the client's pipes in
 * kernel-paths-pipes.c, a query's start (which both use) in kernel-paths-query.c. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "conf-get.h"
#include "daemon.h"
#include "ini.h"
#include "kernel-paths-private.h"
#include "kernel-proto.h"
#include "macros.h"
#include "time-util.h"

static const char *const src_names[_KPATH_SRC_MAX] = { "nfsd_idtoname", "nfsd_nametoid",
							"client_pipe" };

const char *kpath_src_name(enum kpath_src src)
{
	return src < _KPATH_SRC_MAX ? src_names[src] : "unknown";
}

/* ---------------------------------------------------------------- configuration */

void kpaths_config_default(struct kpaths_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->server_channels = KPATH_AUTO;
	cfg->client_pipe = KPATH_AUTO;
	snprintf(cfg->channel_dir, sizeof(cfg->channel_dir), "/proc/net/rpc");
	snprintf(cfg->nfs_conf, sizeof(cfg->nfs_conf), "/etc/nfs.conf");
	snprintf(cfg->sysctl_path, sizeof(cfg->sysctl_path), "/proc/sys/fs/nfs/idmap_cache_timeout");
	cfg->negative_ttl = 60;
	cfg->check_rpc_idmapd = true;
	cfg->prime_reverse = true;
	cfg->namespaces = true;
	cfg->namespace_scan = 2;
	cfg->namespaces_max = 4096;
}

static int mode_parse(const char *v, enum kpath_mode *ret)
{
	if (!strcasecmp(v, "auto"))
		*ret = KPATH_AUTO;
	else if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
		 !strcmp(v, "1"))
		*ret = KPATH_YES;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") ||
		 !strcmp(v, "0"))
		*ret = KPATH_NO;
	else
		return -EINVAL;
	return 0;
}

static int path_setting(struct nfskeys_ctx *ctx, const char *key, char *dst, size_t size,
			char *err, size_t errlen)
{
	const char *v = nfskeys_conf_get(ctx, "Kernel", key);

	if (!v)
		return 0;
	if (v[0] != '/' || strlen(v) >= size) {
		snprintf(err, errlen, "[Kernel] %s = %s: expected an absolute path", key, v);
		return -EINVAL;
	}
	snprintf(dst, size, "%s", v);
	return 0;
}

int kpaths_config_load(struct nfskeys_ctx *ctx, struct kpaths_config *cfg, char *err,
		       size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
	} modes[] = {
		{ "Server-Channels", offsetof(struct kpaths_config, server_channels) },
		{ "Client-Pipe", offsetof(struct kpaths_config, client_pipe) },
	};
	struct kpaths_config c;
	int64_t v;
	int r;

	kpaths_config_default(&c);
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		const char *s = nfskeys_conf_get(ctx, "Kernel", modes[i].key);

		if (s && mode_parse(s, (enum kpath_mode *)((char *)&c + modes[i].off)) < 0) {
			snprintf(err, errlen, "[Kernel] %s = %s: expected yes, no or auto",
				 modes[i].key, s);
			return -EINVAL;
		}
	}
	if ((r = path_setting(ctx, "Channel-Dir", c.channel_dir, sizeof(c.channel_dir), err,
			      errlen)) < 0 ||
	    (r = path_setting(ctx, "Pipefs-Directory", c.pipefs_dir, sizeof(c.pipefs_dir), err,
			      errlen)) < 0)
		return r;
	/* durations: bounds and defaults from the schema (common/conf-schema.c) */
	if ((r = conf_get_typed(ctx, "Kernel", "Negative-TTL", &v, err, errlen)) < 0)
		return -EINVAL;
	c.negative_ttl = (unsigned)v;
	if ((r = conf_get_typed(ctx, "Kernel", "Client-Cache-Timeout", &v, err, errlen)) < 0)
		return -EINVAL;
	c.client_cache_timeout = (unsigned)v;
	if ((r = conf_get_typed(ctx, "Kernel", "Prime-Reverse", &v, err, errlen)) < 0)
		return -EINVAL;
	c.prime_reverse = v != 0;
	if ((r = conf_get_typed(ctx, "Kernel", "Namespaces", &v, err, errlen)) < 0)
		return -EINVAL;
	c.namespaces = v == 0; /* auto|none */
	if ((r = conf_get_typed(ctx, "Kernel", "Namespace-Ids", &v, err, errlen)) < 0)
		return -EINVAL;
	c.namespace_owner_ids = v == 1; /* initial|owner */
	if ((r = conf_get_typed(ctx, "Kernel", "Namespace-Scan", &v, err, errlen)) < 0)
		return -EINVAL;
	c.namespace_scan = (unsigned)v;
	if ((r = conf_get_typed(ctx, "Kernel", "Namespaces-Max", &v, err, errlen)) < 0)
		return -EINVAL;
	c.namespaces_max = (unsigned)v;
	*cfg = c;
	return 0;
}

/* ---------------------------------------------------------------- helpers */

/* What rpc.idmapd's command line says it serves: -S only knfsd's channels, -C only the
 * client's pipes, both without either (rpc.idmapd(8)); -p and -c take an argument. */
static void rpc_idmapd_serves(const char *cmdline, size_t len, bool *server, bool *client)
{
	bool only_server = false, only_client = false;

	/* argv[0], then the arguments, NUL-separated */
	for (size_t i = strnlen(cmdline, len) + 1; i < len; i += strnlen(cmdline + i, len - i) + 1) {
		const char *a = cmdline + i;

		if (a[0] != '-' || a[1] == '-')
			continue;
		for (const char *o = a + 1; *o; o++) {
			if (*o == 'S')
				only_server = true;
			else if (*o == 'C')
				only_client = true;
			else if (*o == 'p' || *o == 'c')
				break; /* the rest is the option's argument */
		}
	}
	*server = !only_client;
	*client = !only_server;
}

/* The pid of a running rpc.idmapd that serves knfsd's channels (SERVER) or the client's
 * pipes (!SERVER), or 0. */
static pid_t find_rpc_idmapd(bool server)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!dir)
		return 0;
	while (!found && (de = readdir(dir))) {
		char path[NAME_MAX + 16], comm[32] = "", cmdline[4096];
		bool srv, cli;
		size_t n;
		FILE *f;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f) || strcmp(comm, "rpc.idmapd\n") != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(cmdline, 1, sizeof(cmdline) - 1, f);
		fclose(f);
		cmdline[n] = '\0';
		rpc_idmapd_serves(cmdline, n, &srv, &cli);
		if (server ? srv : cli)
			found = (pid_t)atoi(de->d_name);
	}
	closedir(dir);
	return found;
}

/* ---------------------------------------------------------------- the whole */

int kpaths_new(struct evloop *loop, const struct kpaths_config *cfg, kpaths_lookup_fn lookup,
	       kpaths_log_fn log, void *userdata, struct kpaths **ret, char *err, size_t errlen)
{
	struct kpaths *kp = calloc(1, sizeof(*kp));
	pid_t other = 0;
	char why[KPATH_DIR_MAX * 3];
	int r = 0;

	if (!kp)
		return -ENOMEM;
	kp->refs = 1;
	kp->loop = loop;
	kp->cfg = *cfg;
	kp->lookup = lookup;
	kp->log = log;
	kp->userdata = userdata;
	kp->chan[0].fd = kp->chan[1].fd = -1;
	kp->ino_fd = kp->nfs_wd = -1;
	kp->self_netns_fd = -1;
	/* the last run's marker: it stopped cleanly, so a pipe it handed over holds no message
	 * it read and left unanswered (the kernel would wait on that one for ever); after a
	 * crash the pipes are opened afresh instead, and closing the old ones fails what hung */
	{
		int m = daemon_fdstore_take("clean-stop");

		kp->adopt_pipes = m >= 0;
		if (m >= 0) {
			close(m);
			daemon_fdstore_remove("clean-stop");
		}
	}
	if (cfg->server_channels != KPATH_NO) {
		why[0] = '\0';
		other = cfg->check_rpc_idmapd ? find_rpc_idmapd(true) : 0;
		if (other) {
			snprintf(why, sizeof(why), "rpc.idmapd (pid %d) already serves knfsd's idmap "
				 "channels: stop it (systemctl stop nfs-idmapd) or set "
				 "[Kernel] Server-Channels = no", (int)other);
			r = -EBUSY;
		} else if ((r = kpaths_channel_open(kp, KNFSD_IDTONAME, why, sizeof(why))) == 0 &&
			   (r = kpaths_channel_open(kp, KNFSD_NAMETOID, why, sizeof(why))) == 0) {
			kp->serve_channels = true;
		}
		if (!kp->serve_channels) {
			kpaths_channel_close(&kp->chan[0]);
			kpaths_channel_close(&kp->chan[1]);
			if (cfg->server_channels == KPATH_YES) {
				snprintf(err, errlen, "[Kernel] Server-Channels = yes: %s", why);
				goto fail;
			}
			log(r == -ENOENT ? LOG_DEBUG : LOG_WARNING,
			    "not serving knfsd's idmap channels: %s", why);
			r = 0;
		}
	}
	if (cfg->client_pipe != KPATH_NO) {
		why[0] = '\0';
		other = cfg->check_rpc_idmapd ? find_rpc_idmapd(false) : 0;
		if (other) {
			snprintf(why, sizeof(why), "rpc.idmapd (pid %d) already serves the NFS client's "
				 "idmap pipes: stop it (systemctl stop nfs-idmapd) or set "
				 "[Kernel] Client-Pipe = no", (int)other);
			r = -EBUSY;
		} else {
			r = kpaths_pipes_start(kp, why, sizeof(why));
		}
		if (r == 0) {
			kp->serve_pipes = true;
			kpaths_set_client_timeout(kp);
			(void)kpaths_netns_start(kp);
		} else {
			kpaths_netns_stop(kp);
			evloop_io_free(kp->ino_io);
			kp->ino_io = NULL;
			if (kp->ino_fd >= 0)
				close(kp->ino_fd);
			kp->ino_fd = -1;
			if (cfg->client_pipe == KPATH_YES) {
				snprintf(err, errlen, "[Kernel] Client-Pipe = yes: %s", why);
				goto fail;
			}
			log(r == -ENOENT ? LOG_DEBUG : LOG_WARNING,
			    "not serving the NFS client's idmap pipes: %s", why);
			r = 0;
		}
	}
	if (kp->serve_channels)
		(void)kpaths_flush_server(kp);
	{
		/* what the last run handed over and this one did not take: gone clients */
		size_t n = daemon_fdstore_close_rest();

		if (kp->adopted)
			log(LOG_INFO, "%u descriptors (knfsd's channels, NFS client pipes) handed "
			    "over by the last run", kp->adopted);
		if (n)
			log(LOG_INFO, "%zu handed-over descriptors dropped%s", n,
			    kp->adopt_pipes ? "" : " (the last run did not stop cleanly)");
	}
	*ret = kp;
	return 0;
fail:
	kpaths_free(kp);
	return r < 0 ? r : -EINVAL;
}

void kpaths_free(struct kpaths *kp)
{
	if (!kp)
		return;
	kpaths_held_release_all(kp); /* sent while the channels are open */
	kpaths_channel_close(&kp->chan[0]);
	kpaths_channel_close(&kp->chan[1]);
	kpaths_netns_stop(kp);
	while (kp->pipes)
		kpaths_pipe_close(kp->pipes);
	evloop_io_free(kp->ino_io);
	if (kp->ino_fd >= 0)
		close(kp->ino_fd);
	kp->ino_fd = -1;
	kp->serve_channels = kp->serve_pipes = false;
	/* queries still out keep kp until they are answered (into nothing) */
	if (--kp->refs == 0)
		free(kp);
}

void kpaths_stop_reading(struct kpaths *kp)
{
	if (!kp)
		return;
	for (int i = 0; i < 2; i++) {
		evloop_io_free(kp->chan[i].io);
		kp->chan[i].io = NULL;
	}
	for (struct kpipe *p = kp->pipes; p; p = p->next) {
		evloop_io_free(p->io);
		p->io = NULL;
	}
	evloop_io_free(kp->ino_io);
	kp->ino_io = NULL;
	if (kp->ns_timer)
		evloop_timer_cancel(kp->ns_timer);
}

void kpaths_hand_over(struct kpaths *kp)
{
	int fd;

	if (!kp || !daemon_fdstore_enabled())
		return;
	kp->handing_over = true;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		daemon_fdstore_add(fd, "clean-stop");
		close(fd);
	}
}

void kpaths_update(struct kpaths *kp, const struct kpaths_config *cfg)
{
	if (!kp)
		return;
	kp->cfg.negative_ttl = cfg->negative_ttl;
	kp->cfg.client_cache_timeout = cfg->client_cache_timeout;
	kp->cfg.prime_reverse = cfg->prime_reverse;
	kp->cfg.namespace_scan = cfg->namespace_scan;
	kp->cfg.namespaces_max = cfg->namespaces_max;
	kpaths_set_client_timeout(kp);
}

void kpaths_describe(const struct kpaths *kp, char *buf, size_t size)
{
	if (!kp || (!kp->serve_channels && !kp->serve_pipes)) {
		snprintf(buf, size, "no kernel paths");
		return;
	}
	snprintf(buf, size, "%s%s%s%s%s%s", kp->serve_channels ? "knfsd idmap channels in " : "",
		 kp->serve_channels ? kp->cfg.channel_dir : "",
		 kp->serve_channels && kp->serve_pipes ? ", " : "",
		 kp->serve_pipes ? "NFS client idmap pipes in " : "",
		 kp->serve_pipes ? kp->pipefs : "",
		 kp->serve_pipes && kp->ns_timer ? " and other network namespaces'" : "");
}

void kquery_answer(struct kquery *q, int status, const struct nfskeys_idmap_answer *ans,
		   unsigned ttl)
{
	struct kpaths *kp = q->kp;

	if (!q->prime) /* not the kernel's request: its latency is nobody's wait */
		stats_hist_add(&kp->st[q->src].latency, mono_nsec() - q->start_ns);
	if (q->src == KPATH_PIPE)
		kpaths_pipe_answer(q, status, ans);
	else
		kpaths_channel_answer(q, status, ans, ttl);
	free(q);
	if (--kp->refs == 0)
		free(kp);
}

enum kpath_src kquery_source(const struct kquery *q)
{
	return q->src;
}

bool kquery_is_prime(const struct kquery *q)
{
	return q->prime;
}

bool kquery_will_prime(const struct kquery *q)
{
	return q && !q->prime && q->src == KPATH_NFSD_NAMETOID && q->kp->cfg.prime_reverse &&
	       q->kp->chan[KNFSD_IDTONAME].fd >= 0;
}

const struct kpath_stats *kpaths_stats(const struct kpaths *kp, enum kpath_src src)
{
	return kp && src < _KPATH_SRC_MAX ? &kp->st[src] : NULL;
}
