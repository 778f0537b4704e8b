/* Record-marking framing (RFC 5531 §11), one fragment per message: header codec, an
 * incremental reassembler for the event loop and blocking send/receive for clients. */
#include <poll.h>
#include <sys/socket.h>

#include "macros.h"
#include "rpc-frame.h"
#include "time-util.h"
#include "unix-socket.h"

void rpc_frame_put_header(uint8_t hdr[RPC_FRAME_HDR_LEN], uint32_t len)
{
	uint32_t v = len | RPC_FRAME_LAST;

	hdr[0] = v >> 24;
	hdr[1] = v >> 16;
	hdr[2] = v >> 8;
	hdr[3] = v;
}

int rpc_frame_get_header(const uint8_t hdr[RPC_FRAME_HDR_LEN], size_t max, uint32_t *ret_len)
{
	uint32_t v = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 |
		     hdr[3];
	uint32_t len = v & ~RPC_FRAME_LAST;

	if (!(v & RPC_FRAME_LAST))
		return -EBADMSG;
	if (len == 0)
		return -EBADMSG;
	if (len > max)
		return -EMSGSIZE;
	*ret_len = len;
	return 0;
}

void rpc_framer_init(struct rpc_framer *fr, size_t max)
{
	*fr = (struct rpc_framer){ .max = max ? max : RPC_FRAME_MAX_DEFAULT };
}

void rpc_framer_done(struct rpc_framer *fr)
{
	free(fr->buf);
	rpc_framer_init(fr, fr->max);
}

int rpc_framer_reserve(struct rpc_framer *fr, size_t min, uint8_t **ret_ptr, size_t *ret_avail)
{
	size_t limit = fr->max + RPC_FRAME_HDR_LEN;
	size_t want;

	/* Move unconsumed bytes to the front. */
	if (fr->off > 0) {
		memmove(fr->buf, fr->buf + fr->off, fr->len - fr->off);
		fr->len -= fr->off;
		fr->off = 0;
	}
	want = fr->len + MAX(min, (size_t)1);
	if (want > limit)
		want = MAX(limit, fr->len + 1);
	if (want > fr->cap) {
		size_t ncap = MAX(fr->cap * 2, (size_t)4096);
		uint8_t *nb;

		while (ncap < want)
			ncap *= 2;
		ncap = MIN(ncap, MAX(limit, want));
		nb = realloc(fr->buf, ncap);
		if (!nb)
			return -ENOMEM;
		fr->buf = nb;
		fr->cap = ncap;
	}
	*ret_ptr = fr->buf + fr->len;
	*ret_avail = fr->cap - fr->len;
	return 0;
}

void rpc_framer_commit(struct rpc_framer *fr, size_t n)
{
	fr->len += n;
}

int rpc_framer_next(struct rpc_framer *fr, const uint8_t **ret_msg, size_t *ret_len)
{
	size_t have = fr->len - fr->off;
	uint32_t len;
	int r;

	if (have < RPC_FRAME_HDR_LEN)
		return 0;
	r = rpc_frame_get_header(fr->buf + fr->off, fr->max, &len);
	if (r < 0)
		return r;
	if (have < RPC_FRAME_HDR_LEN + (size_t)len)
		return 0;
	*ret_msg = fr->buf + fr->off + RPC_FRAME_HDR_LEN;
	*ret_len = len;
	fr->off += RPC_FRAME_HDR_LEN + len;
	if (fr->off == fr->len)
		fr->off = fr->len = 0;
	return 1;
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, deadline_poll_ms(deadline));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return negerrno();
		if (r == 0)
			return -ETIMEDOUT;
		return 0;
	}
}

int rpc_frame_send(int fd, const void *msg, size_t len, int pass_fd, int64_t deadline)
{
	uint8_t hdr[RPC_FRAME_HDR_LEN];
	struct iovec iov[2];
	size_t total, done = 0;

	if (len == 0 || len > 0x7fffffffu)
		return -EMSGSIZE;
	rpc_frame_put_header(hdr, len);
	total = len + RPC_FRAME_HDR_LEN;
	while (done < total) {
		ssize_t n;

		if (done == 0 && pass_fd >= 0) {
			/* The descriptor travels with the header bytes. */
			n = unix_send_fd(fd, hdr, sizeof(hdr), pass_fd);
		} else {
			struct msghdr mh = { .msg_iov = iov };

			if (done < RPC_FRAME_HDR_LEN) {
				iov[0] = (struct iovec){ hdr + done, RPC_FRAME_HDR_LEN - done };
				iov[1] = (struct iovec){ (void *)msg, len };
				mh.msg_iovlen = 2;
			} else {
				iov[0] = (struct iovec){ (uint8_t *)msg + done - RPC_FRAME_HDR_LEN,
							 total - done };
				mh.msg_iovlen = 1;
			}
			n = sendmsg(fd, &mh, MSG_NOSIGNAL);
			if (n < 0)
				n = negerrno();
		}
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN) {
			int r = wait_fd(fd, POLLOUT, deadline);

			if (r < 0)
				return r;
			continue;
		}
		if (n < 0)
			return n;
		done += n;
	}
	return 0;
}

static int read_exact(int fd, uint8_t *buf, size_t len, int64_t deadline, bool first)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			int r = wait_fd(fd, POLLIN, deadline);

			if (r < 0)
				return r;
			continue;
		}
		if (n < 0)
			return negerrno();
		if (n == 0)
			return first && done == 0 ? -EPIPE : -ECONNRESET;
		done += n;
	}
	return 0;
}

int rpc_frame_recv(int fd, size_t max, int64_t deadline, uint8_t **ret_msg, size_t *ret_len)
{
	uint8_t first[4096];
	_cleanup_free_ uint8_t *buf = NULL;
	size_t have = 0;
	uint32_t len;
	int r;

	/* Wait, then take the header and (usually) the whole message in one read.  Only
	 * the bytes of this record are read: the peek tells how many are there. */
	for (;;) {
		ssize_t n = recv(fd, first, sizeof(first), MSG_PEEK | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			r = wait_fd(fd, POLLIN, deadline);
			if (r < 0)
				return r;
			continue;
		}
		if (n < 0)
			return negerrno();
		if (n == 0)
			return -EPIPE;
		have = (size_t)n;
		break;
	}
	if (have < RPC_FRAME_HDR_LEN) {
		r = read_exact(fd, first, RPC_FRAME_HDR_LEN, deadline, true);
		if (r < 0)
			return r;
		have = 0;
	} else {
		have = MIN(have, (size_t)RPC_FRAME_HDR_LEN); /* consumed below */
	}
	r = rpc_frame_get_header(first, max, &len);
	if (r < 0)
		return r;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	if (have) {
		/* header still in the socket: read header + body together */
		struct iovec iov[2] = { { first, RPC_FRAME_HDR_LEN }, { buf, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		ssize_t n;

		do
			n = recvmsg(fd, &mh, MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno != EAGAIN)
			return negerrno();
		if (n < RPC_FRAME_HDR_LEN)
			return -EIO; /* the peeked header vanished: cannot happen on a stream */
		n -= RPC_FRAME_HDR_LEN;
		if ((size_t)n < len) {
			r = read_exact(fd, buf + n, len - n, deadline, false);
			if (r < 0)
				return r;
		}
	} else {
		r = read_exact(fd, buf, len, deadline, false);
		if (r < 0)
			return r;
	}
	*ret_msg = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}
