/* Secret buffers: each in its own anonymous mapping, page-locked where the process may
 * lock memory, excluded from core dumps, and wiped with explicit_bzero() before the
 * pages are returned.  A process that ever holds one becomes non-dumpable (no core,
 * no ptrace or /proc/PID/mem by other processes of the same uid).  Own pages matter: mlock() does not nest, so two secrets sharing
 * a heap page would unlock each other when the first is freed. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <termios.h>

#include "libnfskeys-private.h"

struct nfskeys_secret {
	size_t mapped; /* bytes of the mapping that holds this header and the data */
	size_t capacity;
	size_t len;
	bool locked;
	unsigned char data[];
};

_public_ int nfskeys_secret_new(size_t capacity, struct nfskeys_secret **ret_secret)
{
	struct nfskeys_secret *s;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size;
	void *m;

	if (!ret_secret || capacity == 0 || capacity > 16 * 1024 * 1024)
		return -EINVAL;
	/* Before the secret exists: from now on no core dump, and only root may ptrace or
	 * read /proc/PID/mem (PR_SET_DUMPABLE stays 0 for the life of the process). */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	size = (sizeof(*s) + capacity + 1 + page - 1) / page * page;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	/* Best effort: a kernel without MADV_DONTDUMP still gets the wipe. */
	(void)madvise(m, size, MADV_DONTDUMP);
	s = m;
	s->mapped = size;
	s->capacity = capacity;
	/* mlock can fail under RLIMIT_MEMLOCK; the wipe on free still happens. */
	s->locked = mlock(m, size) == 0;
	*ret_secret = s;
	return 0;
}

_public_ struct nfskeys_secret *nfskeys_secret_free(struct nfskeys_secret *secret)
{
	size_t mapped;
	bool locked;

	if (!secret)
		return NULL;
	mapped = secret->mapped;
	locked = secret->locked;
	explicit_bzero(secret, mapped);
	if (locked)
		munlock(secret, mapped);
	munmap(secret, mapped);
	return NULL;
}

_public_ void *nfskeys_secret_data(struct nfskeys_secret *secret)
{
	return secret ? secret->data : NULL;
}

_public_ size_t nfskeys_secret_len(const struct nfskeys_secret *secret)
{
	return secret ? secret->len : 0;
}

_public_ size_t nfskeys_secret_capacity(const struct nfskeys_secret *secret)
{
	return secret ? secret->capacity : 0;
}

_public_ int nfskeys_secret_set_len(struct nfskeys_secret *secret, size_t len)
{
	if (!secret || len > secret->capacity)
		return -EINVAL;
	if (len < secret->len)
		explicit_bzero(secret->data + len, secret->len - len);
	secret->len = len;
	secret->data[len] = '\0';
	return 0;
}

/* Read bytes up to a newline or EOF into s; at most max bytes are kept, one more is read
 * to tell "too long" apart from "exactly max". */
/* A signal that would end the process while the terminal's echo is off (see
 * nfskeys_secret_read_password); 0 when none came. */
static volatile sig_atomic_t pw_signal;

static void pw_catch(int sig)
{
	pw_signal = sig;
}

static int read_line(int fd, struct nfskeys_secret *s, size_t max)
{
	size_t n = 0;

	for (;;) {
		unsigned char c;
		ssize_t k;

		if (pw_signal)
			return -EINTR;
		k = read(fd, &c, 1);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negerrno();
		}
		if (k == 0 && n == 0)
			return -ENODATA; /* end of input (^D on a terminal) before any byte */
		if (k == 0 || c == '\n')
			break;
		/* One '\r' past max is allowed: it is dropped below (CRLF input). */
		if (n > max || (n == max && c != '\r')) {
			/* Drain the rest of the line so it does not reach the next reader. */
			while ((k = read(fd, &c, 1)) > 0 && c != '\n')
				;
			explicit_bzero(&c, sizeof(c));
			nfskeys_secret_set_len(s, 0);
			return -EMSGSIZE;
		}
		s->data[n++] = c;
		explicit_bzero(&c, sizeof(c));
	}
	if (n > 0 && s->data[n - 1] == '\r')
		n--;
	return nfskeys_secret_set_len(s, n);
}

_public_ int nfskeys_secret_read_password(int fd, const char *prompt, size_t max,
					  struct nfskeys_secret **ret_secret)
{
	static const int pw_sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
	struct sigaction saved[ARRAY_SIZE(pw_sigs)];
	struct nfskeys_secret *s = NULL;
	struct termios old, noecho;
	bool tty;
	int r;

	if (fd < 0 || max == 0 || !ret_secret)
		return -EINVAL;
	r = nfskeys_secret_new(max + 1, &s);
	if (r < 0)
		return r;

	tty = isatty(fd) && tcgetattr(fd, &old) == 0;
	if (tty) {
		/* A signal that ends the process (^C, ^\\, a hang-up, kill) must not leave the
		 * terminal without echo: catch them while echo is off, restore the terminal,
		 * then deliver the signal again under the caller's own disposition. */
		struct sigaction sa = { .sa_handler = pw_catch }; /* no SA_RESTART: read stops */

		sigemptyset(&sa.sa_mask);
		pw_signal = 0;
		for (size_t i = 0; i < ARRAY_SIZE(pw_sigs); i++)
			sigaction(pw_sigs[i], &sa, &saved[i]);
		noecho = old;
		noecho.c_lflag &= ~(tcflag_t)ECHO;
		noecho.c_lflag |= ECHONL;
		if (prompt)
			fprintf(stderr, "%s", prompt);
		if (tcsetattr(fd, TCSAFLUSH, &noecho) < 0) {
			r = negerrno();
			goto out;
		}
	}
	r = read_line(fd, s, max);
	if (tty) {
		tcsetattr(fd, TCSAFLUSH, &old);
		if (r == -EINTR || r == -ENODATA)
			fputc('\n', stderr); /* ECHONL printed none: the next output starts a line */
	}
	if (r >= 0 && s->len == 0)
		r = -ENODATA;
out:
	if (r < 0)
		s = nfskeys_secret_free(s);
	if (tty) {
		int sig = pw_signal;

		for (size_t i = 0; i < ARRAY_SIZE(pw_sigs); i++)
			sigaction(pw_sigs[i], &saved[i], NULL);
		pw_signal = 0;
		if (sig) {
			/* the secret is wiped and the terminal restored: now the caller's
			 * disposition (by default: the process ends by this signal) */
			nfskeys_secret_free(s);
			raise(sig);
			return -EINTR;
		}
	}
	if (r < 0)
		return r;
	*ret_secret = s;
	return 0;
}
