/* The epoll + signalfd event loop with a timer heap and a cross-thread post queue
 * (eventfd); see evloop.h.  Sources removed during dispatch are freed only after the
 * current batch of events, so a stale epoll event never reaches freed memory. */
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "evloop.h"
#include "macros.h"
#include "time-util.h"

enum src_kind { SRC_IO, SRC_SIGNAL, SRC_POST };

struct evio {
	struct evloop *loop;
	enum src_kind kind;
	int fd;
	uint32_t events;
	evloop_io_fn fn;
	void *userdata;
	bool dead;
	struct evio *next_dead;
};

struct evtimer {
	struct evloop *loop;
	int64_t when;
	size_t idx; /* position in the heap, SIZE_MAX when disarmed */
	evloop_timer_fn fn;
	void *userdata;
};

struct post {
	evloop_post_fn fn;
	void (*drop)(void *userdata);
	void *userdata;
	struct post *next;
};

struct evloop {
	int epfd;
	int64_t now;
	bool exiting;
	int exit_code;
	struct evio *dead; /* freed after each dispatch batch */

	struct evtimer **heap;
	size_t nheap, heap_cap;

	struct evio *sig;
	int sigfd;
	evloop_signal_fn sig_fn;
	void *sig_userdata;

	struct evio *post_io;
	int post_fd;
	pthread_mutex_t post_lock;
	struct post *post_head, **post_tail;
};

static void loop_free_dead(struct evloop *loop)
{
	while (loop->dead) {
		struct evio *io = loop->dead;

		loop->dead = io->next_dead;
		free(io);
	}
}

static int io_register(struct evloop *loop, int fd, uint32_t events, enum src_kind kind,
		       evloop_io_fn fn, void *userdata, struct evio **ret)
{
	struct epoll_event ev = { .events = events };
	struct evio *io = calloc(1, sizeof(*io));

	if (!io)
		return -ENOMEM;
	*io = (struct evio){ .loop = loop, .kind = kind, .fd = fd, .events = events,
			     .fn = fn, .userdata = userdata };
	ev.data.ptr = io;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = negerrno();

		free(io);
		return r;
	}
	*ret = io;
	return 0;
}

static void post_drain(struct evloop *loop, struct evio *io, int fd, uint32_t events, void *ud);

int evloop_new(struct evloop **ret_loop)
{
	struct evloop *loop = calloc(1, sizeof(*loop));
	int r;

	if (!loop)
		return -ENOMEM;
	loop->sigfd = -1;
	loop->post_fd = -1;
	loop->post_tail = &loop->post_head;
	pthread_mutex_init(&loop->post_lock, NULL);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		r = negerrno();
		goto fail;
	}
	loop->post_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->post_fd < 0) {
		r = negerrno();
		goto fail;
	}
	r = io_register(loop, loop->post_fd, EPOLLIN, SRC_POST, post_drain, NULL, &loop->post_io);
	if (r < 0)
		goto fail;
	loop->now = mono_usec();
	*ret_loop = loop;
	return 0;
fail:
	evloop_free(loop);
	return r;
}

struct evloop *evloop_free(struct evloop *loop)
{
	if (!loop)
		return NULL;
	evloop_io_free(loop->sig);
	evloop_io_free(loop->post_io);
	loop_free_dead(loop);
	if (loop->sigfd >= 0)
		close(loop->sigfd);
	if (loop->post_fd >= 0)
		close(loop->post_fd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	for (size_t i = 0; i < loop->nheap; i++)
		loop->heap[i]->idx = SIZE_MAX;
	free(loop->heap);
	while (loop->post_head) {
		struct post *p = loop->post_head;

		loop->post_head = p->next;
		if (p->drop)
			p->drop(p->userdata);
		free(p);
	}
	pthread_mutex_destroy(&loop->post_lock);
	free(loop);
	return NULL;
}

int evloop_add_io(struct evloop *loop, int fd, uint32_t events, evloop_io_fn fn, void *userdata,
		  struct evio **ret_io)
{
	if (!loop || fd < 0 || !fn || !ret_io)
		return -EINVAL;
	return io_register(loop, fd, events, SRC_IO, fn, userdata, ret_io);
}

int evloop_io_set_events(struct evio *io, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = io };

	if (io->events == events)
		return 0;
	if (epoll_ctl(io->loop->epfd, EPOLL_CTL_MOD, io->fd, &ev) < 0)
		return negerrno();
	io->events = events;
	return 0;
}

uint32_t evloop_io_get_events(const struct evio *io)
{
	return io->events;
}

void evloop_io_free(struct evio *io)
{
	if (!io || io->dead)
		return;
	epoll_ctl(io->loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
	io->dead = true;
	io->next_dead = io->loop->dead;
	io->loop->dead = io;
}

/* ---- signals */

static void sig_dispatch(struct evloop *loop, struct evio *io, int fd, uint32_t events, void *ud)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si))
		loop->sig_fn(loop, &si, loop->sig_userdata);
}

int evloop_add_signals(struct evloop *loop, const int *signals, size_t n, evloop_signal_fn fn,
		       void *userdata)
{
	sigset_t mask;
	int r;

	if (loop->sigfd >= 0 || !fn)
		return -EBUSY;
	sigemptyset(&mask);
	for (size_t i = 0; i < n; i++)
		sigaddset(&mask, signals[i]);
	r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (r)
		return -r;
	loop->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (loop->sigfd < 0)
		return negerrno();
	loop->sig_fn = fn;
	loop->sig_userdata = userdata;
	return io_register(loop, loop->sigfd, EPOLLIN, SRC_SIGNAL, sig_dispatch, NULL, &loop->sig);
}

/* ---- timers: binary min-heap on "when" */

static void heap_swap(struct evloop *loop, size_t a, size_t b)
{
	struct evtimer *t = loop->heap[a];

	loop->heap[a] = loop->heap[b];
	loop->heap[b] = t;
	loop->heap[a]->idx = a;
	loop->heap[b]->idx = b;
}

static void heap_up(struct evloop *loop, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (loop->heap[p]->when <= loop->heap[i]->when)
			break;
		heap_swap(loop, p, i);
		i = p;
	}
}

static void heap_down(struct evloop *loop, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < loop->nheap && loop->heap[l]->when < loop->heap[m]->when)
			m = l;
		if (r < loop->nheap && loop->heap[r]->when < loop->heap[m]->when)
			m = r;
		if (m == i)
			return;
		heap_swap(loop, i, m);
		i = m;
	}
}

static void heap_remove(struct evloop *loop, struct evtimer *t)
{
	size_t i = t->idx, last = loop->nheap - 1;

	if (i != last) {
		heap_swap(loop, i, last);
		loop->nheap--;
		heap_down(loop, i);
		heap_up(loop, i);
	} else {
		loop->nheap--;
	}
	t->idx = SIZE_MAX;
}

static int heap_insert(struct evloop *loop, struct evtimer *t)
{
	if (loop->nheap == loop->heap_cap) {
		size_t ncap = loop->heap_cap ? loop->heap_cap * 2 : 16;
		struct evtimer **nh = realloc(loop->heap, ncap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		loop->heap = nh;
		loop->heap_cap = ncap;
	}
	t->idx = loop->nheap;
	loop->heap[loop->nheap++] = t;
	heap_up(loop, t->idx);
	return 0;
}

int evloop_add_timer(struct evloop *loop, int64_t when, evloop_timer_fn fn, void *userdata,
		     struct evtimer **ret_timer)
{
	struct evtimer *t;
	int r;

	if (!loop || !fn || !ret_timer)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct evtimer){ .loop = loop, .when = when, .fn = fn, .userdata = userdata };
	r = heap_insert(loop, t);
	if (r < 0) {
		free(t);
		return r;
	}
	*ret_timer = t;
	return 0;
}

void evloop_timer_cancel(struct evtimer *t)
{
	if (t && t->idx != SIZE_MAX)
		heap_remove(t->loop, t);
}

void evloop_timer_set(struct evtimer *t, int64_t when)
{
	struct evloop *loop = t->loop;

	if (t->idx != SIZE_MAX) {
		int64_t old = t->when;

		t->when = when;
		if (when < old)
			heap_up(loop, t->idx);
		else
			heap_down(loop, t->idx);
		return;
	}
	t->when = when;
	/* The heap only grows past its capacity here; keep the timer disarmed on ENOMEM
	 * rather than crash (the caller's timeout simply does not fire). */
	(void)heap_insert(loop, t);
}

void evloop_timer_free(struct evtimer *t)
{
	if (!t)
		return;
	evloop_timer_cancel(t);
	free(t);
}

/* ---- cross-thread posts */

static void post_drain(struct evloop *loop, struct evio *io, int fd, uint32_t events, void *ud)
{
	struct post *list;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&loop->post_lock);
	list = loop->post_head;
	loop->post_head = NULL;
	loop->post_tail = &loop->post_head;
	pthread_mutex_unlock(&loop->post_lock);
	while (list) {
		struct post *p = list;

		list = p->next;
		p->fn(loop, p->userdata);
		free(p);
	}
}

int evloop_post_owned(struct evloop *loop, evloop_post_fn fn, void *userdata,
		      void (*drop)(void *userdata))
{
	struct post *p = malloc(sizeof(*p));
	uint64_t one = 1;
	bool wake;

	if (!p)
		return -ENOMEM;
	*p = (struct post){ .fn = fn, .drop = drop, .userdata = userdata };
	pthread_mutex_lock(&loop->post_lock);
	wake = !loop->post_head;
	*loop->post_tail = p;
	loop->post_tail = &p->next;
	pthread_mutex_unlock(&loop->post_lock);
	if (wake && write(loop->post_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return negerrno();
	return 0;
}

int evloop_post(struct evloop *loop, evloop_post_fn fn, void *userdata)
{
	return evloop_post_owned(loop, fn, userdata, NULL);
}

/* ---- running */

static void run_timers(struct evloop *loop)
{
	while (loop->nheap > 0 && loop->heap[0]->when <= loop->now) {
		struct evtimer *t = loop->heap[0];

		heap_remove(loop, t);
		t->fn(loop, t, t->userdata);
	}
}

int evloop_run(struct evloop *loop)
{
	struct epoll_event evs[64];

	loop->exiting = false;
	while (!loop->exiting) {
		int timeout = -1, n;

		loop->now = mono_usec();
		run_timers(loop);
		if (loop->exiting)
			break;
		if (loop->nheap > 0) {
			int64_t d = loop->heap[0]->when - loop->now;

			timeout = d <= 0 ? 0 : (int)MIN(d / USEC_PER_MSEC + 1, (int64_t)INT32_MAX);
		}
		n = epoll_wait(loop->epfd, evs, ARRAY_SIZE(evs), timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		loop->now = mono_usec();
		for (int i = 0; i < n; i++) {
			struct evio *io = evs[i].data.ptr;

			if (io->dead)
				continue;
			io->fn(loop, io, io->fd, evs[i].events, io->userdata);
		}
		loop_free_dead(loop);
	}
	return loop->exit_code;
}

void evloop_exit(struct evloop *loop, int code)
{
	loop->exiting = true;
	loop->exit_code = code;
}

int64_t evloop_now(const struct evloop *loop)
{
	return loop->now;
}
