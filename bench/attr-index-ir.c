/* attr-index-ir: a fixed index workload to count instructions with callgrind (steady
 * on a loaded machine, where attr-bench's timed loops are not): N policies on random
 * directories (depth 1-16, fanout 4, a fixed seed), then Q lookups of random depth-16
 * paths from the fingerprint table, Q walking the trie, Q with sources.
 *   valgrind --tool=callgrind bench/attr-index-ir 100000 100000
 * then callgrind_annotate --inclusive=yes: attr_index_resolve and attr_index_put.
 * It uses only the attr_index_* entry points, so the same file builds against older
 * trees to compare. */
#include "attr-private.h"
#include "attr-paths.h"

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	size_t q = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	struct attr_index *ix;
	struct nfskeys_attr_policy *p;
	char buf[512];
	unsigned long sum = 0;

	if (attr_index_new(&ix) < 0 || nfskeys_attr_policy_new(&p) < 0)
		return 1;
	attr_index_set_fp_min(ix, 1000);
	for (size_t i = 0; i < n; i++) {
		random_path(buf, sizeof(buf), 1 + (int)(rnd() % 16));
		if (attr_index_put(ix, "nfs://srv", buf, NFSKEYS_ATTR_ACTIMEO, NULL, "60", 60, false) < 0)
			return 2;
	}
	attr_index_compact(ix);
	for (int mode = 0; mode < 3; mode++) {
		if (mode == 1)
			attr_index_set_fp_min(ix, UINT32_MAX);
		for (size_t i = 0; i < q; i++) {
			random_path(buf, sizeof(buf), 16);
			if (attr_index_resolve(ix, "nfs://srv", buf, mode == 2 ? NFSKEYS_ATTR_SOURCES : 0, p) < 0)
				return 3;
			sum += nfskeys_attr_policy_count(p);
		}
	}
	printf("%zu policies, %lu\n", attr_index_count(ix), sum);
	nfskeys_attr_policy_free(p);
	attr_index_free(ix);
	return 0;
}
