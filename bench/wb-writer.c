/* The writers of bench/wb-kernel.ktest (the writeback benchmark), each recording the
 * time of every call it makes, and the check of what they wrote:
 *
 *   wb-writer bulk FILE MIB SERIES     MIB sequential 1 MiB write()s, then fsync; SERIES
 *                                      gets "T_US WRITE_US" per write(); prints
 *                                      "bytes B write_s W total_s T" (total: with fsync)
 *   wb-writer inter FILE SECS SERIES   every 50 ms a 4 KiB write() + fsync() for SECS
 *                                      seconds or until SIGTERM; SERIES gets
 *                                      "T_US WRITE_US FSYNC_US"; prints "blocks N"
 *   wb-writer verify FILE BYTES BS     FILE is BYTES long and holds the pattern the
 *                                      writers wrote in BS-sized blocks (exit 1 if not)
 *
 * The pattern: 64-bit word i of the file (at byte 8 i) is i ^ PATTERN_SEED, so a block
 * written to the wrong place, lost or torn is found by verify.  T_US is microseconds
 * since the writer started (CLOCK_MONOTONIC). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PATTERN_SEED 0x6e66736b65797357ull
#define MIB (1024 * 1024)

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void fill(uint64_t *buf, size_t bytes, uint64_t off)
{
	for (size_t i = 0; i < bytes / 8; i++)
		buf[i] = (off / 8 + i) ^ PATTERN_SEED;
}

static int full_write(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

static unsigned long parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0) {
		fprintf(stderr, "wb-writer: %s '%s': a positive number\n", what, s);
		exit(2);
	}
	return v;
}

static FILE *open_series(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f) {
		fprintf(stderr, "wb-writer: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static int open_target(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "wb-writer: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static int bulk(const char *path, unsigned long mib, const char *series)
{
	uint64_t *buf = malloc(MIB), t0, t1, t_end;
	FILE *f = open_series(series);
	int fd = open_target(path), r;

	if (!buf)
		return 1;
	t0 = now_us();
	for (unsigned long b = 0; b < mib; b++) {
		uint64_t a, z;

		fill(buf, MIB, (uint64_t)b * MIB);
		a = now_us();
		r = full_write(fd, buf, MIB, (off_t)b * MIB);
		z = now_us();
		if (r < 0) {
			fprintf(stderr, "wb-writer: %s: write at %lu MiB: %s\n", path, b, strerror(-r));
			return 1;
		}
		fprintf(f, "%llu %llu\n", (unsigned long long)(a - t0), (unsigned long long)(z - a));
	}
	t1 = now_us();
	if (fsync(fd) < 0 || close(fd) < 0) {
		fprintf(stderr, "wb-writer: %s: fsync/close: %s\n", path, strerror(errno));
		return 1;
	}
	t_end = now_us();
	if (fclose(f) != 0)
		return 1;
	printf("bytes %llu write_s %.3f total_s %.3f\n", (unsigned long long)mib * MIB,
	       (double)(t1 - t0) / 1e6, (double)(t_end - t0) / 1e6);
	free(buf);
	return 0;
}

static int inter(const char *path, unsigned long secs, const char *series)
{
	uint64_t buf[4096 / 8], t0 = now_us(), next = t0;
	FILE *f = open_series(series);
	int fd = open_target(path), r;
	struct sigaction sa = { .sa_handler = on_term };
	unsigned long n = 0;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop && now_us() - t0 < (uint64_t)secs * 1000000u) {
		uint64_t a, b, c, now;

		fill(buf, sizeof(buf), (uint64_t)n * sizeof(buf));
		a = now_us();
		r = full_write(fd, buf, sizeof(buf), (off_t)n * (off_t)sizeof(buf));
		b = now_us();
		if (r == 0 && fsync(fd) < 0)
			r = -errno;
		c = now_us();
		if (r < 0) {
			fprintf(stderr, "wb-writer: %s: block %lu: %s\n", path, n, strerror(-r));
			return 1;
		}
		fprintf(f, "%llu %llu %llu\n", (unsigned long long)(a - t0),
			(unsigned long long)(b - a), (unsigned long long)(c - b));
		n++;
		/* every 50 ms from the start; a late call starts the next period at once */
		next += 50000;
		now = now_us();
		if (next > now) {
			struct timespec ts = { .tv_sec = (time_t)((next - now) / 1000000u),
					       .tv_nsec = (long)((next - now) % 1000000u) * 1000 };

			nanosleep(&ts, NULL);
		} else {
			next = now;
		}
	}
	if (close(fd) < 0 || fclose(f) != 0)
		return 1;
	printf("blocks %lu\n", n);
	return 0;
}

static int verify(const char *path, unsigned long long bytes, unsigned long bs)
{
	uint64_t *buf = malloc(bs);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned long long off = 0;
	off_t size;

	if (!buf || bs % 8) {
		fprintf(stderr, "wb-writer: block size %lu: a multiple of 8\n", bs);
		return 2;
	}
	if (fd < 0) {
		fprintf(stderr, "wb-writer: %s: %s\n", path, strerror(errno));
		return 1;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size < 0 || (unsigned long long)size != bytes) {
		fprintf(stderr, "wb-writer: %s: %lld bytes, expected %llu\n", path, (long long)size,
			bytes);
		return 1;
	}
	while (off < bytes) {
		size_t want = bytes - off < bs ? (size_t)(bytes - off) : bs;
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n != (ssize_t)want) {
			fprintf(stderr, "wb-writer: %s: short read at %llu\n", path, off);
			return 1;
		}
		for (size_t i = 0; i < want / 8; i++)
			if (buf[i] != ((off / 8 + i) ^ PATTERN_SEED)) {
				fprintf(stderr, "wb-writer: %s: wrong data at byte %llu\n", path,
					off + 8 * i);
				return 1;
			}
		off += want;
	}
	close(fd);
	free(buf);
	printf("%s: %llu bytes, pattern right\n", path, bytes);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 5 && strcmp(argv[1], "bulk") == 0)
		return bulk(argv[2], parse_num(argv[3], "MIB"), argv[4]);
	if (argc == 5 && strcmp(argv[1], "inter") == 0)
		return inter(argv[2], parse_num(argv[3], "SECS"), argv[4]);
	if (argc == 5 && strcmp(argv[1], "verify") == 0)
		return verify(argv[2], strtoull(argv[3], NULL, 10), parse_num(argv[4], "BS"));
	fprintf(stderr, "usage: wb-writer bulk FILE MIB SERIES | inter FILE SECS SERIES | "
			"verify FILE BYTES BS\n");
	return 2;
}
