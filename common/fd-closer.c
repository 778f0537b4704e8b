/* One detached thread that closes descriptors clients passed (fd-closer.h). */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "fd-closer.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int queue[FD_CLOSER_MAX];
static unsigned head, queued, pending; /* pending: queued + the one being closed */
static unsigned long total;
static bool started;

static void *closer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		int fd;

		while (queued == 0)
			pthread_cond_wait(&cond, &lock);
		fd = queue[head];
		head = (head + 1) % FD_CLOSER_MAX;
		queued--;
		pthread_mutex_unlock(&lock);
		close(fd); /* may block for ever (FUSE FLUSH): only this thread waits */
		pthread_mutex_lock(&lock);
		pending--;
	}
	return NULL;
}

void fd_closer_close(int fd)
{
	pthread_mutex_lock(&lock);
	total++;
	if (!started) {
		pthread_t t;
		sigset_t all, old;

		/* the thread takes no signals: the daemons read theirs from a signalfd */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		started = pthread_create(&t, NULL, closer_main, NULL) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (started)
			pthread_detach(t);
	}
	if (started && pending < FD_CLOSER_MAX) {
		queue[(head + queued) % FD_CLOSER_MAX] = fd;
		queued++;
		pending++;
		pthread_cond_signal(&cond);
	}
	/* else: leaked on purpose, see the header */
	pthread_mutex_unlock(&lock);
}

bool fd_closer_full(void)
{
	bool full;

	pthread_mutex_lock(&lock);
	full = pending >= FD_CLOSER_MAX;
	pthread_mutex_unlock(&lock);
	return full;
}

void fd_closer_stats(unsigned long *ret_total, unsigned *ret_pending)
{
	pthread_mutex_lock(&lock);
	*ret_total = total;
	*ret_pending = pending;
	pthread_mutex_unlock(&lock);
}
