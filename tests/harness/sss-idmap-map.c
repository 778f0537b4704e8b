/* libsss_idmap's answers for the keys of stdin, one a line, for tests comparing nfskeys's
 * sid backend with SSSD's algorithm (tests/integration/samba-idmap-parity.sh).
 *
 *   sss-idmap-map [LOWER UPPER RANGESIZE]
 *
 * A SID gives "SID ID", an id (decimal) gives "ID SID", either "KEY unmapped" when
 * libsss_idmap has no answer.  Domains are added as SSSD learns them: the domain of each
 * S-1-5-21-A-B-C-RID SID when first seen (sss_idmap_calculate_range, which takes the next
 * free slice when the hash's is taken, then sss_idmap_add_auto_domain_ex), so the order
 * of the input decides collisions, as the order of first use does for nfskeys.  The
 * bounds default to libsss_idmap's own (200000, 2000200000, 200000). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sss_idmap.h>

#define MAX_DOMAINS 1024

static char *domains[MAX_DOMAINS];
static unsigned n_domains;

static int parse_u32(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > UINT32_MAX)
		return -1;
	*ret = (uint32_t)v;
	return 0;
}

/* The domain of a S-1-5-21-A-B-C-RID SID into dom; false for any other SID. */
static bool domain_of(const char *sid, char *dom, size_t size)
{
	const char *rid = strrchr(sid, '-');
	int dashes = 0;

	if (strncmp(sid, "S-1-5-21-", 9) || !rid || (size_t)(rid - sid) >= size)
		return false;
	for (const char *p = sid; *p; p++)
		dashes += *p == '-';
	if (dashes != 7)
		return false;
	memcpy(dom, sid, (size_t)(rid - sid));
	dom[rid - sid] = '\0';
	return true;
}

static int learn_domain(struct sss_idmap_ctx *ctx, const char *sid)
{
	struct sss_idmap_range range;
	id_t slice = (id_t)-1;
	char dom[256], name[32];
	enum idmap_error_code err;

	if (!domain_of(sid, dom, sizeof(dom)))
		return 0;
	for (unsigned i = 0; i < n_domains; i++)
		if (!strcmp(domains[i], dom))
			return 0;
	if (n_domains == MAX_DOMAINS) {
		fprintf(stderr, "sss-idmap-map: more than %d domains\n", MAX_DOMAINS);
		return -1;
	}
	snprintf(name, sizeof(name), "dom%u", n_domains);
	err = sss_idmap_calculate_range(ctx, dom, &slice, &range);
	if (err == IDMAP_SUCCESS)
		err = sss_idmap_add_auto_domain_ex(ctx, name, dom, &range, NULL, 0, false, NULL,
						   NULL);
	if (err != IDMAP_SUCCESS) {
		fprintf(stderr, "sss-idmap-map: domain %s: %s\n", dom, idmap_error_string(err));
		return -1;
	}
	domains[n_domains] = strdup(dom);
	if (!domains[n_domains]) {
		perror("sss-idmap-map");
		return -1;
	}
	n_domains++;
	return 0;
}

int main(int argc, char *argv[])
{
	struct sss_idmap_ctx *ctx = NULL;
	uint32_t bounds[3];
	char line[512];

	if (argc != 1 && argc != 4) {
		fprintf(stderr, "usage: sss-idmap-map [LOWER UPPER RANGESIZE] <KEYS\n");
		return 2;
	}
	if (sss_idmap_init(NULL, NULL, NULL, &ctx) != IDMAP_SUCCESS) {
		fprintf(stderr, "sss-idmap-map: sss_idmap_init failed\n");
		return 1;
	}
	if (argc == 4) {
		for (int i = 0; i < 3; i++)
			if (parse_u32(argv[i + 1], &bounds[i]) < 0) {
				fprintf(stderr, "sss-idmap-map: '%s' is no id\n", argv[i + 1]);
				return 2;
			}
		if (sss_idmap_ctx_set_lower(ctx, bounds[0]) != IDMAP_SUCCESS ||
		    sss_idmap_ctx_set_upper(ctx, bounds[1]) != IDMAP_SUCCESS ||
		    sss_idmap_ctx_set_rangesize(ctx, bounds[2]) != IDMAP_SUCCESS) {
			fprintf(stderr, "sss-idmap-map: libsss_idmap refused the bounds\n");
			return 2;
		}
	}
	while (fgets(line, sizeof(line), stdin)) {
		enum idmap_error_code err;
		uint32_t id;

		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (parse_u32(line, &id) == 0) {
			char *sid = NULL;

			err = sss_idmap_unix_to_sid(ctx, id, &sid);
			printf("%s %s\n", line, err == IDMAP_SUCCESS ? sid : "unmapped");
			free(sid);
			continue;
		}
		if (learn_domain(ctx, line) < 0)
			return 1;
		err = sss_idmap_sid_to_unix(ctx, line, &id);
		if (err == IDMAP_SUCCESS)
			printf("%s %" PRIu32 "\n", line, id);
		else
			printf("%s unmapped\n", line);
	}
	sss_idmap_free(ctx);
	return 0;
}
