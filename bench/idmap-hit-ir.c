/* idmap-hit-ir: the library's cached lookup, to count instructions with callgrind: one
 * configuration with 100 [Static] names, each looked up once (misses, filling the cache),
 * then N cached nfskeys_idmap_name_to_uid() calls round the names.
 *   idmap-hit-ir CONF N
 * Public API only, so one binary measures two builds of libnfskeys.so (LD_LIBRARY_PATH):
 * bench/compare-ir.sh runs it for 20 000 and 40 000 calls and takes the difference. */
#include <stdio.h>
#include <stdlib.h>

#include "nfskeys.h"

int main(int argc, char **argv)
{
	struct nfskeys_ctx *ctx = NULL;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000, sum = 0;
	char names[100][32];
	uid_t uid;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: idmap-hit-ir CONF [N]\n");
		return 2;
	}
	r = nfskeys_ctx_new(argv[1], &ctx);
	if (r < 0) {
		fprintf(stderr, "idmap-hit-ir: %s: error %d\n", argv[1], r);
		return 1;
	}
	for (int i = 0; i < 100; i++)
		snprintf(names[i], sizeof(names[i]), "user%d@example.test", i);
	for (unsigned long i = 0; i < 100 + n; i++) {
		r = nfskeys_idmap_name_to_uid(ctx, names[i % 100], &uid, NULL);
		if (r < 0 || uid != 10000 + i % 100) {
			fprintf(stderr, "idmap-hit-ir: %s: wrong answer (%d)\n", names[i % 100], r);
			return 1;
		}
		sum += uid;
	}
	nfskeys_ctx_unref(ctx);
	printf("%lu\n", sum);
	return 0;
}
