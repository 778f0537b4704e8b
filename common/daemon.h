/* The daemon shell every nfskeys daemon is built on (doc/DESIGN.md §5): one command line
 * (-c/--config, -f/--foreground, -v/--verbose, --version, --help, --pid-file, plus each
 * daemon's own options, the --help text made from the same table), daemonizing with a
 * readiness pipe (the parent exits 0 only once the child listens, else with the child's
 * exit code), sd_notify READY/RELOADING/STOPPING under systemd, the pid file, the runtime
 * directory, one log function and format (stderr in front, syslog once detached), the
 * signals through signalfd, and the exit codes.  Internal; never installed. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "macros.h"

struct evloop;

/* Exit codes of every daemon (listed in nfskeys-idmapd(8) and nfskeys-attrd(8)). */
enum daemon_exit {
	DAEMON_EXIT_OK = 0,     /* stopped by SIGTERM/SIGINT, or --help/--version */
	DAEMON_EXIT_FAIL = 1,   /* any other failure to start or run */
	DAEMON_EXIT_USAGE = 2,  /* bad command line */
	DAEMON_EXIT_CONFIG = 3, /* the configuration cannot be loaded or has a bad value */
	DAEMON_EXIT_SOCKET = 4, /* the socket (or its directory) cannot be set up */
};

/* One option of a daemon besides the shell's own.  A string option stores its argument
 * in *str; a flag adds verbose_add to the verbosity (an alias such as idmapd's -d). */
struct daemon_option {
	const char *name;  /* long name */
	int key;           /* short letter */
	const char *arg;   /* argument name in --help; NULL for a flag */
	const char *help;
	const char **str;
	int verbose_add;
};

struct daemon_info {
	const char *name;                     /* "nfskeys-idmapd" */
	const char *summary;                  /* --help paragraph */
	const char *pid_name;                 /* default pid file in the runtime dir */
	const struct daemon_option *options;  /* ends with a zeroed entry */
	const char *footer;                   /* --help's last paragraph, or NULL */
	/* --help-config[=all]: print the daemon's configuration keys (all: every key) from
	 * the schema (conf-schema.h) */
	void (*help_config)(FILE *f, bool all);
};

struct daemon_shell {
	const struct daemon_info *info;
	const char *conf_path; /* -c, made absolute (the daemon chdirs to /); NULL: default */
	bool foreground;
	int verbose;
	const char *pid_file_arg;
	char *pid_file;        /* the one written, removed by daemon_shell_done() */
	int ready_fd;          /* write end of the readiness pipe, -1 when none */
	char conf_buf[4096];
};

/* Parse argv.  Returns -1 to go on, else the exit code (--help, --version, bad usage). */
int daemon_parse_args(struct daemon_shell *sh, const struct daemon_info *info, int argc,
		      char *argv[]);

/* Unless in the foreground: fork; the parent waits for daemon_ready() in the child and
 * exits 0, or exits with the child's exit code when it dies first (the child's messages
 * reach the parent's stderr until it is ready).  Returns in the child (or in the
 * foreground) 0, or a negative errno. */
int daemon_detach(struct daemon_shell *sh);

/* Make sure the socket can be created: the runtime directory is created (mode 0755)
 * when missing, with a message naming it; any other missing directory is an error that
 * names it.  0 or a negative errno (logged). */
int daemon_socket_dir(const char *runtime_dir, const char *socket_path);

/* Listen on socket_path (after daemon_socket_dir()) with unix_listen(); every failure is
 * logged naming the path, and a socket another process still listens on names that
 * process and its pid, so the admin knows which one to stop.  0 or a negative errno
 * (-EADDRINUSE: in use). */
int daemon_listen(const char *runtime_dir, const char *socket_path, mode_t mode, int backlog,
		  int *ret_fd);

/* Listening: write the pid file, tell systemd READY=1 (with status), tell the parent,
 * and once detached log to syslog, stdio on /dev/null, cwd /. */
void daemon_ready(struct daemon_shell *sh, const char *runtime_dir, const char *status);

/* At exit: remove the pid file. */
void daemon_shell_done(struct daemon_shell *sh);

/* Signals through the loop's signalfd: SIGHUP calls reload(userdata); SIGTERM and SIGINT
 * log, send STOPPING=1 and make evloop_run() return 0.  Call before starting threads. */
int daemon_add_signals(struct evloop *loop, void (*reload)(void *userdata), void *userdata);

/* Reload bracket: RELOADING=1 (with MONOTONIC_USEC) before building the new state;
 * after it, one log line ("reloaded: MSG" or "reload failed, keeping the running
 * configuration: MSG") and READY=1 with a status. */
void daemon_reload_begin(void);
void daemon_reload_end(int r, const char *msg);

/* sd_notify(0, state) under systemd (a no-op elsewhere); logged at debug. */
void daemon_notify(const char *state);

/* The service manager's descriptor store (daemon-fdstore.c): what a restart hands over.
 * enabled: under systemd with a store (FileDescriptorStoreMax=).  add: keep a copy of fd
 * under name (FDNAME rules: printable, no colon); remove: drop name's copy (its client went
 * away); take: the descriptor this run inherited under name, once (-ENOENT); close_rest:
 * close and drop every inherited one not taken; returns how many. */
bool daemon_fdstore_enabled(void);
int daemon_fdstore_add(int fd, const char *name);
void daemon_fdstore_remove(const char *name);
int daemon_fdstore_take(const char *name);
size_t daemon_fdstore_close_rest(void);

/* The log: "NAME: LEVEL: MESSAGE" on stderr in front, syslog(3) once detached. */
void daemon_log(int prio, const char *fmt, ...) _printf_(2, 3);
void daemon_vlog(int prio, const char *fmt, va_list ap) _printf_(2, 0);
int daemon_log_level(void);
/* The priority for the library's messages at this verbosity. */
int daemon_lib_priority(const struct daemon_shell *sh);
/* As an nfskeys_log_fn (the library's messages) and an rpc_server log function. */
void daemon_lib_log(void *userdata, int prio, const char *file, int line, const char *fn,
		    const char *fmt, va_list ap) _printf_(6, 0);
void daemon_rpc_log(void *userdata, int prio, const char *message);
/* From now on in this thread, the library's error messages go to buf (the last one
 * kept) instead of the log, for the caller to put in its own message; NULL to stop. */
void daemon_capture_errors(char *buf, size_t size);
