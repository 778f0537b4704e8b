/* nfsattr's view of the daemon: its statistics (text, JSON or Prometheus) and the
 * sub-mounts it applies to live mounts. */
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

static int count_one(void *userdata, const struct nfskeys_attr_id *id,
		     const struct nfskeys_attr_policy *p)
{
	(*(size_t *)userdata)++;
	return 0;
}

int nfsattr_cmd_stats(struct opts *o, int argc, char **argv)
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
		return nfsattr_fail("cannot read statistics from nfskeys-attrd: %s", strerror(-r));
	/* no daemon: what the store holds */
	r = nfskeys_attr_list(o->ctx, NULL, count_one, &n);
	if (r < 0)
		return nfsattr_store_fail(r);
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
		/* paths are named by users, errors come from the kernel: escaped */
		printf("%-8s %s  %s  %s  layers=%u mount-id=%u server=%s", nfsattr_shown(m->state),
		       nfsattr_shown(m->target), nfsattr_shown(m->source),
		       nfsattr_shown(m->options), m->layers, m->mount_id,
		       *m->server ? nfsattr_shown(m->server) : "-");
		/* its server's worker is at work: long, and the server has stopped answering */
		if (m->waiting)
			printf(" waiting=%us", m->waiting);
		printf("%s%s\n", *m->error ? "  error: " : "", nfsattr_shown(m->error));
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
		printf(",\"server\":");
		json_print_string(stdout, m->server);
		printf(",\"waiting\":%u,\"layers\":%u,\"mount_id\":%u,\"since\":%lld}", m->waiting,
		       m->layers, m->mount_id, (long long)m->since);
	}
	so->n++;
}

/* What nfskeys-attrd applies to live mounts: where, with which options, what failed. */
int nfsattr_cmd_status(struct opts *o, int argc, char **argv)
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
		return nfsattr_fail("cannot reach nfskeys-attrd: %s", strerror(-r));
	}
	if (o->json)
		printf("{\"mounts\":[");
	r = attrd_client_mounts(c, &enabled, &more, status_one, &so);
	rpc_client_free(c);
	if (r < 0) {
		if (o->json)
			printf("]}\n");
		return nfsattr_fail("cannot read the sub-mounts from nfskeys-attrd: %s", strerror(-r));
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
