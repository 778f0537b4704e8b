/* Closing a descriptor a client passed can block for ever: close() of a file on a FUSE
 * mount waits for the server's answer to FLUSH.  The daemons never close such a
 * descriptor on their event-loop thread: it goes to one closer thread here.  A bounded
 * number may wait there (a hostile FUSE server can hold each one for ever); when full,
 * the RPC server stops accepting descriptors (the kernel then discards them unopened,
 * which runs no FLUSH).  Internal; never installed. */
#pragma once

#include <stdbool.h>

#define FD_CLOSER_MAX 64

/* Hand fd to the closer thread (started on first use).  Never blocks; when the closer
 * is full or cannot start, fd stays open for ever (counted): the caller checks
 * fd_closer_full() before receiving descriptors, so this does not happen in practice. */
void fd_closer_close(int fd);
/* Whether FD_CLOSER_MAX descriptors are waiting to be (or being) closed. */
bool fd_closer_full(void);
/* Descriptors handed over so far, and those still open (waiting or blocked in close). */
void fd_closer_stats(unsigned long *ret_total, unsigned *ret_pending);
