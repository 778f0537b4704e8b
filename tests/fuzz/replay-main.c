/* Replays inputs through a libFuzzer target without libFuzzer, so plain make check (any
 * compiler, any tree) runs every fuzz target over its seed corpus: each argument is a
 * file or a directory of files (replayed in name order).  A target abort()s when one of
 * its invariants fails, which fails the replay.  Prints how many inputs ran; exit 0 only
 * when at least one did. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int only_files(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

int main(int argc, char **argv)
{
	int n = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct dirent **names = NULL;
		struct stat st;
		int k;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		k = scandir(argv[i], &names, only_files, alphasort);
		if (k < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < k; j++) {
			char p[4096];

			snprintf(p, sizeof(p), "%s/%s", argv[i], names[j]->d_name);
			if (replay_file(p) < 0)
				return 1;
			n++;
			free(names[j]);
		}
		free(names);
	}
	printf("%d inputs replayed\n", n);
	return n > 0 ? 0 : 1;
}
