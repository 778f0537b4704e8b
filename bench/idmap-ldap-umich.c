/* What one new owner costs an NFS server's id mapper with names in LDAP, on this CPU
 * (no QEMU): nfsd asks name -> id, then id -> name for the reply's GETATTR.  Side by side,
 * in-process and on the same slapd: libnfsidmap's umich_ldap (what rpc.idmapd runs:
 * nfs4_name_to_uid, nfs4_uid_to_name) and nfskeys' ldap backend, with [LDAP] Unique-Ids
 * (nfskeys_idmap_lookup_pair, then the id's name from the cache it filled) and without it
 * (two searches, as umich_ldap).  Every answer is checked; each round takes names no side
 * has asked for.  Usage: idmap-ldap-umich IDMAPD_CONF NFSKEYS_CONF NOUNIQUE_CONF DOMAIN N
 * ROUNDS (entries buI, uidNumber 20000 + I, for I < 3 * N * ROUNDS). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <nfsidmap.h> /* needs sys/types.h first */

#include "nfskeys.h"

#define UID_BASE 20000

enum side { UMICH, NFSKEYS, NOUNIQUE, SIDES };
static const char *const side_name[SIDES] = { "libnfsidmap umich_ldap",
					      "nfskeys ldap, Unique-Ids = yes",
					      "nfskeys ldap, Unique-Ids = no" };

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One new owner, as nfsd asks for it; false when an answer is wrong. */
static bool owner_umich(const char *domain, unsigned i)
{
	char name[128], back[128];
	uid_t uid = (uid_t)-1;

	snprintf(name, sizeof(name), "bu%u@%s", i, domain);
	if (nfs4_name_to_uid(name, &uid) != 0 || uid != UID_BASE + i)
		return false;
	if (nfs4_uid_to_name(uid, (char *)domain, back, sizeof(back)) != 0)
		return false;
	return strcmp(back, name) == 0;
}

static bool owner_nfskeys(struct nfskeys_ctx *ctx, const char *domain, unsigned i)
{
	struct nfskeys_idmap_answer a, rev, back;
	char name[128], id[16];

	snprintf(name, sizeof(name), "bu%u@%s", i, domain);
	if (nfskeys_idmap_lookup_pair(ctx, NFSKEYS_IDMAP_NAME_TO_UID, name, 0, &a, &rev) != 0 ||
	    a.id != UID_BASE + i || (a.flags & NFSKEYS_IDMAP_ANSWER_NOBODY))
		return false;
	snprintf(id, sizeof(id), "%" PRIu32, a.id);
	if (nfskeys_idmap_lookup(ctx, NFSKEYS_IDMAP_UID_TO_NAME, id, &back) != 0)
		return false;
	return strcmp(back.name, name) == 0;
}

int main(int argc, char *argv[])
{
	struct nfskeys_ctx *ctx[SIDES] = { NULL };
	double best[SIDES];
	unsigned n, rounds, next = 0;

	if (argc != 7) {
		fprintf(stderr, "usage: %s IDMAPD_CONF NFSKEYS_CONF NOUNIQUE_CONF DOMAIN N ROUNDS\n",
			argv[0]);
		return 2;
	}
	n = (unsigned)atoi(argv[5]);
	rounds = (unsigned)atoi(argv[6]);
	if (!n || !rounds) {
		fprintf(stderr, "idmap-ldap-umich: N and ROUNDS must be positive\n");
		return 2;
	}
	if (nfs4_init_name_mapping(argv[1]) != 0) {
		fprintf(stderr, "idmap-ldap-umich: nfs4_init_name_mapping(%s) failed\n", argv[1]);
		return 1;
	}
	for (int s = NFSKEYS; s < SIDES; s++) {
		int r = nfskeys_ctx_new(argv[s + 1], &ctx[s]);

		if (r < 0) {
			fprintf(stderr, "idmap-ldap-umich: %s: %s\n", argv[s + 1], strerror(-r));
			return 1;
		}
	}
	for (int s = 0; s < SIDES; s++)
		best[s] = 1e30;
	/* rounds interleaved, the order turned each round (a shared machine's slow spell
	 * then falls on every side in turn); the best round counts */
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < SIDES; k++) {
			int s = (int)((k + r) % SIDES);
			double t0 = now_us(), t;

			for (unsigned i = next; i < next + n; i++) {
				bool ok = s == UMICH ? owner_umich(argv[4], i) :
						       owner_nfskeys(ctx[s], argv[4], i);

				if (!ok) {
					fprintf(stderr, "idmap-ldap-umich: %s: wrong answer for bu%u\n",
						side_name[s], i);
					return 1;
				}
			}
			t = (now_us() - t0) / n;
			if (t < best[s])
				best[s] = t;
			next += n;
		}
	}
	printf("%-34s %12s %10s\n", "new owners, name -> id -> name", "us/owner", "speed-up");
	for (int s = 0; s < SIDES; s++)
		printf("%-34s %12.1f %9.2fx\n", side_name[s], best[s], best[UMICH] / best[s]);
	for (int s = NFSKEYS; s < SIDES; s++)
		nfskeys_ctx_unref(ctx[s]);
	return 0;
}
