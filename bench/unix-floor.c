/* The physical floor for nfskeys-idmapd's cached lookups: the same client shape as
 * bench/idmapd-load (N threads, each with one AF_UNIX stream connection and one request in
 * flight) against an echo server that does nothing but epoll_wait, read and write back.
 * No decoding, no cache: what is left is the kernel's socket and wake-up cost. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "percentile.h"

#define MSG_MAX 4096

struct worker {
	pthread_t thread;
	int fd;
	long requests;
	size_t size;
	uint64_t *lat_ns;
	bool failed;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *serve(void *arg)
{
	int lfd = *(int *)arg, ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd }, evs[64];
	char buf[MSG_MAX];

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0)
		return NULL;
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			ssize_t r;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = c };
				if (c >= 0)
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				continue;
			}
			r = read(fd, buf, sizeof(buf));
			if (r <= 0 || write(fd, buf, (size_t)r) != r) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
			}
		}
	}
	return NULL;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	char buf[MSG_MAX];

	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < w->requests; i++) {
		double t0 = now_us();
		size_t got = 0;

		if (write(w->fd, buf, w->size) != (ssize_t)w->size) {
			w->failed = true;
			return NULL;
		}
		while (got < w->size) {
			ssize_t r = read(w->fd, buf + got, w->size - got);

			if (r <= 0) {
				w->failed = true;
				return NULL;
			}
			got += (size_t)r;
		}
		w->lat_ns[i] = (uint64_t)((now_us() - t0) * 1e3);
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unix-floor [--clients N] [--requests N] [--size BYTES]\n"
		   "Echo round trips over AF_UNIX stream sockets, one request in flight per\n"
		   "client: the floor under nfskeys-idmapd's cached lookups.\n"
		   "  --process  run the echo server in its own process (as the daemon is),\n"
		   "             so each round trip pays the switch between address spaces\n");
}

int main(int argc, char *argv[])
{
	static const struct option lo[] = { { "clients", required_argument, NULL, 'c' },
					    { "requests", required_argument, NULL, 'n' },
					    { "size", required_argument, NULL, 's' },
					    { "process", no_argument, NULL, 'p' },
					    { "help", no_argument, NULL, 'h' },
					    {} };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long clients = 1, requests = 100000, total = 0;
	size_t size = 96;
	struct worker *ws;
	pthread_t srv;
	double t0, secs, sum = 0;
	uint64_t *all;
	int c, lfd, own_process = 0;
	pid_t child = -1;

	while ((c = getopt_long(argc, argv, "c:n:s:ph", lo, NULL)) >= 0) {
		switch (c) {
		case 'p':
			own_process = 1;
			break;
		case 'c':
			clients = strtol(optarg, NULL, 10);
			break;
		case 'n':
			requests = strtol(optarg, NULL, 10);
			break;
		case 's':
			size = strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (clients < 1 || clients > 1024 || requests < 1 || size < 1 || size > MSG_MAX) {
		fprintf(stderr, "unix-floor: clients 1-1024, requests >= 1, size 1-%d\n", MSG_MAX);
		return 2;
	}
	/* an abstract socket name: nothing to clean up */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "nfskeys-unix-floor-%d", getpid());
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1024) < 0) {
		perror("unix-floor: listen");
		return 1;
	}
	if (own_process) {
		child = fork();
		if (child < 0) {
			perror("unix-floor: fork");
			return 1;
		}
		if (child == 0) {
			serve(&lfd);
			_exit(0);
		}
		close(lfd);
	} else if (pthread_create(&srv, NULL, serve, &lfd) != 0)
		return 1;
	ws = calloc((size_t)clients, sizeof(*ws));
	all = calloc((size_t)(clients * requests), sizeof(*all));
	if (!ws || !all)
		return 1;
	for (long i = 0; i < clients; i++) {
		ws[i].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (ws[i].fd < 0 || connect(ws[i].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("unix-floor: connect");
			return 1;
		}
		ws[i].requests = requests;
		ws[i].size = size;
		ws[i].lat_ns = all + i * requests;
	}
	t0 = now_us();
	for (long i = 0; i < clients; i++)
		if (pthread_create(&ws[i].thread, NULL, run, &ws[i]) != 0)
			return 1;
	for (long i = 0; i < clients; i++) {
		pthread_join(ws[i].thread, NULL);
		if (ws[i].failed) {
			fprintf(stderr, "unix-floor: client %ld failed\n", i);
			return 1;
		}
		total += ws[i].requests;
	}
	secs = (now_us() - t0) / 1e6;
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	for (long i = 0; i < total; i++)
		sum += (double)all[i] / 1e3;
	percentile_sort(all, (size_t)total);
	printf("clients=%ld round_trips=%ld seconds=%.3f rate=%.0f/s mean_us=%.1f p50_us=%.1f "
	       "p99_us=%.1f\n",
	       clients, total, secs, (double)total / secs, sum / (double)total,
	       percentile(all, (size_t)total, 50) / 1e3, percentile(all, (size_t)total, 99) / 1e3);
	free(all);
	free(ws);
	return 0;
}
