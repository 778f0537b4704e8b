/* The daemon shell (daemon.h): the command line, detaching with a readiness pipe, the
 * runtime directory, the pid file, the log, signals and the reload bracket, written once
 * for nfskeys-idmapd and nfskeys-attrd. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "cli.h"
#include "daemon.h"
#include "log-escape.h"
#include "evloop.h"
#include "time-util.h"
#include "unix-socket.h"

#define OPT_PID_FILE 0x100
#define OPT_HELP_CONFIG 0x101

/* The process's log: one per process, set up by daemon_parse_args(). */
static const char *log_name = "nfskeys";
static int log_level = LOG_INFO;
static bool log_syslog;

static const char *const prio_names[] = { "emerg", "alert", "crit", "error",
					  "warning", "notice", "info", "debug" };

void daemon_vlog(int prio, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];

	if (prio > log_level)
		return;
	log_vformat(line, sizeof(line), fmt, ap); /* keys and paths are the callers' text */
	if (log_syslog) {
		syslog(prio, "%s", line);
		return;
	}
	fprintf(stderr, "%s: %s: %s\n", log_name, prio_names[prio & 7], line);
}

void daemon_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	daemon_vlog(prio, fmt, ap);
	va_end(ap);
}

int daemon_log_level(void)
{
	return log_level;
}

int daemon_lib_priority(const struct daemon_shell *sh)
{
	return sh->verbose >= 2 ? LOG_DEBUG : sh->verbose == 1 ? LOG_INFO : LOG_NOTICE;
}

/* While a configuration is loaded (in this thread), the library's last error: it names
 * the bad setting, and the caller's one message carries it instead of a second line. */
static __thread char *capture_buf;
static __thread size_t capture_size;

void daemon_capture_errors(char *buf, size_t size)
{
	capture_buf = buf;
	capture_size = size;
	if (buf && size)
		buf[0] = '\0';
}

void daemon_lib_log(void *userdata, int prio, const char *file, int line, const char *fn,
		    const char *fmt, va_list ap)
{
	if (capture_buf && prio <= LOG_ERR) {
		vsnprintf(capture_buf, capture_size, fmt, ap);
		return;
	}
	daemon_vlog(prio, fmt, ap);
}

void daemon_rpc_log(void *userdata, int prio, const char *message)
{
	daemon_log(prio, "%s", message);
}

void daemon_notify(const char *state)
{
#ifdef HAVE_SYSTEMD
	sd_notify(0, state);
#endif
	daemon_log(LOG_DEBUG, "notify: %s", state);
}

/* ---------------------------------------------------------------- command line */

static void usage(const struct daemon_info *info, FILE *f)
{
	const struct daemon_option *o;

	fprintf(f, "Usage: %s [OPTIONS]\n\n%s\n\nOptions:\n", info->name, info->summary);
	fprintf(f, "  -c, --config FILE     configuration file (default %s/nfskeys/nfskeys.conf)\n",
		SYSCONFDIR);
	for (o = info->options; o && o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-21s %s\n", left, o->help);
	}
	fprintf(f,
		"  -f, --foreground      stay in front, log to stderr (else detach once listening)\n"
		"  -v, --verbose         more messages (repeat for debug)\n"
		"      --pid-file FILE   write the pid here (detached default: RUNTIME-DIR/%s)\n"
		"  -h, --help            show this help\n"
		"      --help-config[=all]  the configuration keys this daemon reads (or all\n"
		"                        of nfskeys): type, default, description\n"
		"  -V, --version         show the version\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGTERM and SIGINT stop.\n"
		"Exit status: 0 stopped, 1 failure, 2 usage, 3 configuration, 4 socket.\n",
		info->pid_name);
	if (info->footer)
		fprintf(f, "\n%s\n", info->footer);
}

int daemon_parse_args(struct daemon_shell *sh, const struct daemon_info *info, int argc,
		      char *argv[])
{
	struct option opts[32] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "help-config", optional_argument, NULL, OPT_HELP_CONFIG },
	};
	char shortopts[64] = "c:fvhV";
	size_t n = 7, sl = strlen(shortopts);
	int c;

	sh->info = info;
	sh->ready_fd = -1;
	log_name = info->name;
	for (const struct daemon_option *o = info->options; o && o->name; o++) {
		if (n + 1 >= ARRAY_SIZE(opts) || sl + 3 >= sizeof(shortopts))
			break;
		opts[n++] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					     NULL, o->key };
		shortopts[sl++] = (char)o->key;
		if (o->arg)
			shortopts[sl++] = ':';
		shortopts[sl] = '\0';
	}
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) >= 0) {
		const struct daemon_option *o;

		switch (c) {
		case 'c':
			sh->conf_path = optarg;
			continue;
		case 'f':
			sh->foreground = true;
			continue;
		case 'v':
			sh->verbose++;
			continue;
		case OPT_PID_FILE:
			sh->pid_file_arg = optarg;
			continue;
		case 'h':
			usage(info, stdout);
			return DAEMON_EXIT_OK;
		case 'V':
			return cli_version(info->name);
		case OPT_HELP_CONFIG:
			if (!info->help_config || (optarg && !streq(optarg, "all"))) {
				fprintf(stderr, "%s: --help-config takes no value but 'all'\n",
					info->name);
				return DAEMON_EXIT_USAGE;
			}
			/* from the schema alone: no configuration is read */
			info->help_config(stdout, optarg != NULL);
			return DAEMON_EXIT_OK;
		}
		for (o = info->options; o && o->name; o++)
			if (o->key == c)
				break;
		if (!o || !o->name) {
			usage(info, stderr);
			return DAEMON_EXIT_USAGE;
		}
		if (o->str)
			*o->str = optarg;
		sh->verbose += o->verbose_add;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", info->name, argv[optind]);
		return DAEMON_EXIT_USAGE;
	}
	/* The daemon works from / once detached: a relative -c must still name the file on
	 * every reload. */
	if (sh->conf_path && sh->conf_path[0] != '/') {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) &&
		    (size_t)snprintf(sh->conf_buf, sizeof(sh->conf_buf), "%s/%s", cwd,
				     sh->conf_path) < sizeof(sh->conf_buf))
			sh->conf_path = sh->conf_buf;
	}
	log_level = sh->verbose > 0 ? LOG_DEBUG : LOG_INFO;
	return -1;
}

/* ---------------------------------------------------------------- detaching, readiness */

int daemon_detach(struct daemon_shell *sh)
{
	int p[2], status;
	unsigned char code;
	pid_t pid;
	ssize_t n;

	if (sh->foreground)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return negerrno();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int r = negerrno();

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		sh->ready_fd = p[1];
		if (setsid() < 0)
			daemon_log(LOG_WARNING, "setsid: %m");
		return 0;
	}
	/* The parent: the child's status byte once it listens, or its exit code. */
	close(p[1]);
	do
		n = read(p[0], &code, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(code);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : DAEMON_EXIT_FAIL);
	fprintf(stderr, "%s: the daemon died before it was ready (signal %d)\n", sh->info->name,
		WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	_exit(DAEMON_EXIT_FAIL);
}

int daemon_socket_dir(const char *runtime_dir, const char *socket_path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(socket_path, '/');
	struct stat st;

	if (!slash)
		return 0; /* relative to the working directory, which exists */
	if (slash == socket_path)
		return 0; /* in / */
	if ((size_t)(slash - socket_path) >= sizeof(dir)) {
		daemon_log(LOG_ERR, "socket path too long: %s", socket_path);
		return -ENAMETOOLONG;
	}
	memcpy(dir, socket_path, slash - socket_path);
	dir[slash - socket_path] = '\0';
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		daemon_log(LOG_ERR, "cannot listen on %s: %s is not a directory", socket_path,
			   dir);
		return -ENOTDIR;
	}
	if (errno != ENOENT) {
		int r = negerrno();

		daemon_log(LOG_ERR, "cannot listen on %s: %s: %s", socket_path, dir,
			   strerror(-r));
		return r;
	}
	if (!runtime_dir || strcmp(dir, runtime_dir) != 0) {
		daemon_log(LOG_ERR,
			   "cannot listen on %s: directory %s does not exist (only the runtime "
			   "directory %s is created)",
			   socket_path, dir, runtime_dir ? runtime_dir : "(none)");
		return -ENOENT;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int r = negerrno();

		daemon_log(LOG_ERR, "cannot create the runtime directory %s: %s", dir,
			   strerror(-r));
		return r;
	}
	daemon_log(LOG_NOTICE, "created the runtime directory %s (mode 0755)", dir);
	return 0;
}

int daemon_listen(const char *runtime_dir, const char *socket_path, mode_t mode, int backlog,
		  int *ret_fd)
{
	char comm[64] = "", path[64];
	pid_t pid;
	FILE *f;
	int r;

	r = daemon_socket_dir(runtime_dir, socket_path);
	if (r < 0)
		return r;
	r = unix_listen(socket_path, mode, backlog, ret_fd);
	if (r == 0)
		return 0;
	if (r != -EADDRINUSE) {
		daemon_log(LOG_ERR, "cannot listen on %s: %s", socket_path, strerror(-r));
		return r;
	}
	pid = unix_listener_pid(socket_path);
	if (pid <= 0) {
		daemon_log(LOG_ERR,
			   "cannot listen on %s: %s (by a process whose pid is not visible here)",
			   socket_path, strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	/* (daemon_log escapes the whole line: comm is the process's own choice) */
	daemon_log(LOG_ERR, "cannot listen on %s: %s by %s%spid %d (stop it first)", socket_path,
		   strerror(-r), comm, *comm ? ", " : "", (int)pid);
	return r;
}

static void write_pid_file(struct daemon_shell *sh, const char *runtime_dir)
{
	char buf[PATH_MAX], line[32];
	const char *path = sh->pid_file_arg;
	int fd, len;

	if (!path && !sh->foreground && runtime_dir &&
	    (size_t)snprintf(buf, sizeof(buf), "%s/%s", runtime_dir, sh->info->pid_name) <
		    sizeof(buf))
		path = buf;
	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		daemon_log(LOG_WARNING, "cannot write the pid file %s: %m", path);
		return;
	}
	len = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	if (write(fd, line, len) != len)
		daemon_log(LOG_WARNING, "cannot write the pid file %s: %m", path);
	close(fd);
	sh->pid_file = strdup(path);
}

void daemon_ready(struct daemon_shell *sh, const char *runtime_dir, const char *status)
{
	char state[256];

	write_pid_file(sh, runtime_dir);
	snprintf(state, sizeof(state), "READY=1\nSTATUS=%s", status ? status : "running");
	daemon_notify(state);
	if (sh->ready_fd < 0)
		return;
	/* Detached: from here on the log goes to syslog and stdio to /dev/null. */
	openlog(sh->info->name, LOG_PID, LOG_DAEMON);
	log_syslog = true;
	{
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			if (fd > STDERR_FILENO)
				close(fd);
		}
	}
	if (chdir("/") < 0)
		daemon_log(LOG_WARNING, "chdir /: %m");
	{
		unsigned char ok = DAEMON_EXIT_OK;

		while (write(sh->ready_fd, &ok, 1) < 0 && errno == EINTR)
			;
	}
	close(sh->ready_fd);
	sh->ready_fd = -1;
}

void daemon_shell_done(struct daemon_shell *sh)
{
	if (sh->pid_file) {
		unlink(sh->pid_file);
		free(sh->pid_file);
		sh->pid_file = NULL;
	}
	if (sh->ready_fd >= 0) {
		close(sh->ready_fd);
		sh->ready_fd = -1;
	}
}

/* ---------------------------------------------------------------- signals, reload */

struct signal_ctx {
	void (*reload)(void *userdata);
	void *userdata;
};

static void on_signal(struct evloop *loop, const struct signalfd_siginfo *si, void *userdata)
{
	struct signal_ctx *s = userdata;

	if (si->ssi_signo == SIGHUP) {
		daemon_log(LOG_INFO, "SIGHUP: reloading the configuration");
		s->reload(s->userdata);
		return;
	}
	daemon_log(LOG_INFO, "signal %u: stopping", si->ssi_signo);
	daemon_notify("STOPPING=1");
	evloop_exit(loop, 0);
}

int daemon_add_signals(struct evloop *loop, void (*reload)(void *userdata), void *userdata)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	/* One loop per daemon process: the handler's context lives as long as the process. */
	static struct signal_ctx s;

	s.reload = reload;
	s.userdata = userdata;
	signal(SIGPIPE, SIG_IGN);
	return evloop_add_signals(loop, sigs, ARRAY_SIZE(sigs), on_signal, &s);
}

void daemon_reload_begin(void)
{
	char state[64];

	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 (uint64_t)mono_usec());
	daemon_notify(state);
}

void daemon_reload_end(int r, const char *msg)
{
	if (r < 0) {
		daemon_log(LOG_ERR, "reload failed, keeping the running configuration: %s", msg);
		daemon_notify("READY=1\nSTATUS=reload failed; running configuration kept");
	} else {
		daemon_log(LOG_NOTICE, "reloaded: %s", msg);
		daemon_notify("READY=1\nSTATUS=running");
	}
}
