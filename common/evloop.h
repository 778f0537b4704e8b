/* A small single-threaded event loop for the daemons: epoll for descriptors, signalfd
 * for signals, one-shot timers (a min-heap; epoll_wait's timeout wakes the earliest), and
 * a thread-safe post queue (eventfd) through which worker threads hand results back to
 * the loop thread.  Everything except evloop_post() must be called from the loop
 * thread.  Internal; never installed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

struct evloop;
struct evio;
struct evtimer;

/* events are EPOLLIN / EPOLLOUT / ...; the callback may free its own source. */
typedef void (*evloop_io_fn)(struct evloop *loop, struct evio *io, int fd, uint32_t events,
			     void *userdata);
typedef void (*evloop_timer_fn)(struct evloop *loop, struct evtimer *t, void *userdata);
typedef void (*evloop_signal_fn)(struct evloop *loop, const struct signalfd_siginfo *si,
				 void *userdata);
typedef void (*evloop_post_fn)(struct evloop *loop, void *userdata);

int evloop_new(struct evloop **ret_loop);
/* Free the loop (its signal and post sources too); the caller frees its own io sources
 * and timers first.  NULL-safe; returns NULL. */
struct evloop *evloop_free(struct evloop *loop);

/* Watch fd for events.  The loop does not own fd. */
int evloop_add_io(struct evloop *loop, int fd, uint32_t events, evloop_io_fn fn, void *userdata,
		  struct evio **ret_io);
int evloop_io_set_events(struct evio *io, uint32_t events);
uint32_t evloop_io_get_events(const struct evio *io);
/* Stop watching and free (safe inside the io's own callback); NULL-safe. */
void evloop_io_free(struct evio *io);

/* Block the given signals in the calling thread (do it before starting threads so they
 * inherit the mask) and deliver them to fn through a signalfd.  One handler per loop. */
int evloop_add_signals(struct evloop *loop, const int *signals, size_t n, evloop_signal_fn fn,
		       void *userdata);

/* A one-shot timer that fires at CLOCK_MONOTONIC usec "when" (see time-util.h). */
int evloop_add_timer(struct evloop *loop, int64_t when, evloop_timer_fn fn, void *userdata,
		     struct evtimer **ret_timer);
/* Re-arm (also after it fired, inside or outside its callback). */
void evloop_timer_set(struct evtimer *t, int64_t when);
/* Disarm without freeing. */
void evloop_timer_cancel(struct evtimer *t);
/* Cancel and free (safe inside its own callback); NULL-safe. */
void evloop_timer_free(struct evtimer *t);

/* Thread-safe: run fn(loop, userdata) on the loop thread soon.  -ENOMEM. */
int evloop_post(struct evloop *loop, evloop_post_fn fn, void *userdata);
/* As evloop_post(); a post the loop never runs (it is freed first) hands userdata to drop
 * instead, so that what was posted is not leaked at stop. */
int evloop_post_owned(struct evloop *loop, evloop_post_fn fn, void *userdata,
		      void (*drop)(void *userdata));

/* Run until evloop_exit(); returns the code given to it, or a negative errno. */
int evloop_run(struct evloop *loop);
/* Make evloop_run() return code after the current iteration. */
void evloop_exit(struct evloop *loop, int code);
/* The monotonic time (usec) at the start of the current iteration. */
int64_t evloop_now(const struct evloop *loop);
