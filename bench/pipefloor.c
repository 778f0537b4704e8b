/* The physical floor under an NFS client's idmap pipe (bench/netns-kernel.ktest): a
 * responder that does nothing per upcall but what the pipe needs.  At start it reads the
 * users and groups once (getpwent, getgrent) into arrays sorted by name and by id; then,
 * for each client directory of <rpc_pipefs>/nfs/, it opens clnt* /idmap and answers each
 * struct idmap_msg the kernel writes there with one poll, one read, a binary search and
 * one write.  No logging, no cache to check, no allocation per upcall: what is left is the
 * kernel's round trip.  The domain is the NFSv4 domain of the names (name@domain);
 * a name of another domain or of nobody known maps to the nobody id, as rpc.idmapd does.
 *
 *   pipefloor [-n NOBODY-ID] DOMAIN RPC_PIPEFS
 *
 * Runs until SIGTERM or SIGINT, then prints how many upcalls it answered; inotify tells
 * it of clients that come (their pipe appears after their directory) and go (their pipe
 * hangs up). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nfs_idmap.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <unistd.h>

#define CLIENTS_MAX 64

_Static_assert(sizeof(struct idmap_msg) == 140, "struct idmap_msg is 140 bytes");

struct entry {
	char *name;
	uint32_t id;
};

struct table {
	struct entry *by_name, *by_id;
	size_t n;
};

struct client {
	char name[NAME_MAX + 1];
	int wd; /* on its directory while the pipe is not there yet, else -1 */
	int fd; /* the pipe, or -1 */
};

static struct table users, groups;
static struct client clients[CLIENTS_MAX];
static const char *domain;
static char nfs_dir[4096];
static uint32_t nobody = 65534;
static int ino_fd, nfs_wd;
static bool changed = true; /* the set of open pipes: poll's array to rebuild */
static volatile sig_atomic_t stopping;
static unsigned long long answered; /* upcalls answered */

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = ((const struct entry *)a)->id, y = ((const struct entry *)b)->id;

	return x < y ? -1 : x > y;
}

static int table_add(struct table *t, size_t *cap, const char *name, uint32_t id)
{
	if (strlen(name) >= IDMAP_NAMESZ)
		return 0; /* no message carries it */
	if (t->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct entry *e = realloc(t->by_name, ncap * sizeof(*e));

		if (!e)
			return -1;
		t->by_name = e;
		*cap = ncap;
	}
	t->by_name[t->n].name = strdup(name);
	if (!t->by_name[t->n].name)
		return -1;
	t->by_name[t->n++].id = id;
	return 0;
}

static int table_sort(struct table *t)
{
	t->by_id = malloc((t->n ? t->n : 1) * sizeof(*t->by_id));
	if (!t->by_id)
		return -1;
	memcpy(t->by_id, t->by_name, t->n * sizeof(*t->by_id));
	qsort(t->by_name, t->n, sizeof(*t->by_name), cmp_name);
	qsort(t->by_id, t->n, sizeof(*t->by_id), cmp_id);
	return 0;
}

static int load(void)
{
	size_t ucap = 0, gcap = 0;
	struct passwd *pw;
	struct group *gr;

	setpwent();
	while ((pw = getpwent()))
		if (table_add(&users, &ucap, pw->pw_name, pw->pw_uid) < 0)
			return -1;
	endpwent();
	setgrent();
	while ((gr = getgrent()))
		if (table_add(&groups, &gcap, gr->gr_name, gr->gr_gid) < 0)
			return -1;
	endgrent();
	return table_sort(&users) < 0 || table_sort(&groups) < 0 ? -1 : 0;
}

/* The kernel's message answered in place: the type, conversion and the key it sent (the
 * name or the id) stay as they came, as it checks them against its upcall. */
static void answer(struct idmap_msg *im)
{
	const struct table *t = im->im_type == IDMAP_TYPE_GROUP ? &groups : &users;
	struct entry key, *e;
	char *at;

	if (im->im_type != IDMAP_TYPE_USER && im->im_type != IDMAP_TYPE_GROUP) {
		im->im_status = IDMAP_STATUS_INVALIDMSG;
		return;
	}
	if (im->im_conv == IDMAP_CONV_NAMETOID) {
		im->im_name[IDMAP_NAMESZ - 1] = '\0';
		at = strchr(im->im_name, '@');
		im->im_id = nobody;
		im->im_status = IDMAP_STATUS_SUCCESS;
		if (!at || strcasecmp(at + 1, domain))
			return;
		*at = '\0';
		key.name = im->im_name;
		e = bsearch(&key, t->by_name, t->n, sizeof(*e), cmp_name);
		*at = '@';
		if (e)
			im->im_id = e->id;
		return;
	}
	if (im->im_conv != IDMAP_CONV_IDTONAME) {
		im->im_status = IDMAP_STATUS_INVALIDMSG;
		return;
	}
	key.id = im->im_id;
	e = bsearch(&key, t->by_id, t->n, sizeof(*e), cmp_id);
	if (!e || snprintf(im->im_name, IDMAP_NAMESZ, "%s@%s", e->name, domain) >= IDMAP_NAMESZ) {
		memset(im->im_name, 0, IDMAP_NAMESZ);
		im->im_status = IDMAP_STATUS_LOOKUPFAIL;
		return;
	}
	im->im_status = IDMAP_STATUS_SUCCESS;
}

static struct client *client_find(const char *name)
{
	for (int i = 0; i < CLIENTS_MAX; i++)
		if (clients[i].name[0] && !strcmp(clients[i].name, name))
			return &clients[i];
	return NULL;
}

static void client_drop(struct client *c)
{
	if (c->fd >= 0) {
		close(c->fd);
		changed = true;
	}
	if (c->wd >= 0)
		inotify_rm_watch(ino_fd, c->wd);
	c->fd = c->wd = -1;
	c->name[0] = '\0';
}

/* Open name/idmap, or watch name/ for it (the kernel makes the directory first). */
static void client_open(struct client *c)
{
	char path[sizeof(nfs_dir) + 2 * NAME_MAX];

	snprintf(path, sizeof(path), "%s/%s/idmap", nfs_dir, c->name);
	c->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd >= 0 || errno != ENOENT || c->wd >= 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", nfs_dir, c->name);
	c->wd = inotify_add_watch(ino_fd, path, IN_CREATE | IN_ONLYDIR);
	/* it may have come between the open and the watch */
	snprintf(path, sizeof(path), "%s/%s/idmap", nfs_dir, c->name);
	c->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
out:
	changed |= c->fd >= 0;
	if (c->fd >= 0 && c->wd >= 0) {
		inotify_rm_watch(ino_fd, c->wd);
		c->wd = -1;
	}
}

static void client_add(const char *name)
{
	struct client *c = NULL;

	if (strncmp(name, "clnt", 4) || strlen(name) > NAME_MAX || client_find(name))
		return;
	for (int i = 0; !c && i < CLIENTS_MAX; i++)
		if (!clients[i].name[0])
			c = &clients[i];
	if (!c) {
		fprintf(stderr, "pipefloor: more than %d clients: %s not served\n", CLIENTS_MAX,
			name);
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->fd = c->wd = -1;
	client_open(c);
}

static void inotify_drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			struct client *c = NULL;

			p += sizeof(*ev) + ev->len;
			if (ev->wd == nfs_wd && ev->len && (ev->mask & IN_CREATE)) {
				client_add(ev->name);
				continue;
			}
			if (ev->wd == nfs_wd && ev->len && (ev->mask & IN_DELETE)) {
				c = client_find(ev->name);
				if (c)
					client_drop(c);
				continue;
			}
			for (int i = 0; !c && i < CLIENTS_MAX; i++)
				if (clients[i].name[0] && clients[i].wd == ev->wd)
					c = &clients[i];
			if (c && (ev->mask & IN_IGNORED)) {
				c->wd = -1; /* its directory went */
				client_drop(c);
			} else if (c && c->fd < 0) {
				client_open(c);
			}
		}
	}
}

int main(int argc, char *argv[])
{
	struct pollfd pfd[CLIENTS_MAX + 1];
	struct client *pc[CLIENTS_MAX + 1];
	struct dirent *de;
	nfds_t n = 1;
	DIR *dir;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) >= 0) {
		if (opt != 'n') {
			fprintf(stderr, "usage: pipefloor [-n NOBODY-ID] DOMAIN RPC_PIPEFS\n");
			return 2;
		}
		nobody = (uint32_t)strtoul(optarg, NULL, 10);
	}
	if (argc - optind != 2 || !argv[optind][0]) {
		fprintf(stderr, "usage: pipefloor [-n NOBODY-ID] DOMAIN RPC_PIPEFS\n");
		return 2;
	}
	domain = argv[optind];
	snprintf(nfs_dir, sizeof(nfs_dir), "%s/nfs", argv[optind + 1]);
	if (load() < 0) {
		fprintf(stderr, "pipefloor: out of memory reading the users and groups\n");
		return 1;
	}
	ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	nfs_wd = ino_fd < 0 ?
			 -1 :
			 inotify_add_watch(ino_fd, nfs_dir, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	if (nfs_wd < 0) {
		fprintf(stderr, "pipefloor: cannot watch %s: %m\n", nfs_dir);
		return 1;
	}
	for (int i = 0; i < CLIENTS_MAX; i++)
		clients[i].fd = clients[i].wd = -1;
	dir = opendir(nfs_dir);
	if (!dir) {
		fprintf(stderr, "pipefloor: cannot read %s: %m\n", nfs_dir);
		return 1;
	}
	while ((de = readdir(dir)))
		client_add(de->d_name);
	closedir(dir);
	fprintf(stderr, "pipefloor: %zu users and %zu groups, serving %s\n", users.n, groups.n,
		nfs_dir);
	/* no SA_RESTART: poll returns EINTR and the loop ends */
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_stop }, NULL);
	sigaction(SIGINT, &(struct sigaction){ .sa_handler = on_stop }, NULL);
	pfd[0] = (struct pollfd){ .fd = ino_fd, .events = POLLIN };
	while (!stopping) {
		if (changed) {
			n = 1;
			for (int i = 0; i < CLIENTS_MAX; i++)
				if (clients[i].fd >= 0) {
					pc[n] = &clients[i];
					pfd[n++] = (struct pollfd){ .fd = clients[i].fd,
								    .events = POLLIN };
				}
			changed = false;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pipefloor: poll: %m\n");
			return 1;
		}
		for (nfds_t i = 1; i < n; i++) {
			struct idmap_msg im;
			ssize_t len;

			if (!pfd[i].revents || pc[i]->fd != pfd[i].fd)
				continue;
			len = read(pfd[i].fd, &im, sizeof(im));
			if (len < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (len != sizeof(im)) {
				/* the client went (EPIPE, hang-up) */
				client_drop(pc[i]);
				continue;
			}
			answer(&im);
			if (write(pfd[i].fd, &im, sizeof(im)) != sizeof(im))
				client_drop(pc[i]);
			else
				answered++;
		}
		if (pfd[0].revents)
			inotify_drain();
	}
	fprintf(stderr, "pipefloor: %llu upcalls answered\n", answered);
	return 0;
}
